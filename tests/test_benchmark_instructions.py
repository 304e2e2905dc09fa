"""The instruction-count harness: its client requests, its reading of Callgrind, its table."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from benchmarks.instructions import VARIANTS, Callgrind, instructions, table


def result(variant: str, count: int, urls: int = 1_000) -> dict[str, object]:
    return {"variant": variant, "urls": urls, "documents": 2, "instructions": count}


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the requests are x86-64 code")
def test_client_requests_are_no_ops_outside_valgrind() -> None:
    callgrind = Callgrind()
    assert callgrind.running() is False
    callgrind.start()
    callgrind.stop()


def test_the_total_is_read_from_callgrinds_output(tmp_path: Path) -> None:
    out = tmp_path / "callgrind.out"
    out.write_text(
        "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nfl=x\n1 5\ntotals: 123456\n"
    )
    assert instructions(out) == 123_456


def test_each_sitemapx_variant_is_paired_with_a_contrib_one() -> None:
    for variant in VARIANTS.values():
        if variant.name.startswith("sitemapx-"):
            assert VARIANTS[variant.pair].name.startswith("contrib")
            assert VARIANTS[variant.pair].data == variant.data


def test_the_table_gives_contrib_over_sitemapx_per_url_and_the_change() -> None:
    results = [result("sitemapx-streamed", 10_000_000), result("contrib", 200_000_000)]
    baseline = {
        "sitemapx-streamed": result("sitemapx-streamed", 8_000_000),
        "contrib": result("contrib", 200_000_000),
    }
    text = table(results, baseline, measured=True)
    assert (
        "| sitemapx-streamed | article section, no cache | 1,000 | 2 | 10,000,000 | 10,000 |"
        in text
    )
    assert "| 8,000,000 | +2,000,000 (+25.0000%) |" in text
    assert "| contrib ÷ sitemapx-streamed | 20.00 | 25.00 |" in text
