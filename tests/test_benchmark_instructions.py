"""The instruction-count harness: its client requests, its reading of Callgrind, its table."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

import pytest

from benchmarks.instructions import (
    VARIANTS,
    Callgrind,
    instructions,
    summary,
    table,
    verdict,
)


def result(variant: str, *counts: int, urls: int = 1_000) -> dict[str, Any]:
    samples = [
        {"variant": variant, "urls": urls, "documents": 2, "instructions": count}
        for count in counts
    ]
    return summary(samples, rows=urls)


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


def test_a_variant_is_its_median_layout_with_its_range() -> None:
    figures = result("sitemapx-streamed", 103, 100, 101)
    assert (figures["instructions"], figures["lowest"], figures["highest"]) == (101, 100, 103)
    assert figures["samples"] == [103, 100, 101]


def test_a_change_is_more_only_beyond_both_ranges() -> None:
    before = result("sitemapx-streamed", 100, 104)
    assert verdict(result("sitemapx-streamed", 105, 106), before) == "**more**"
    assert verdict(result("sitemapx-streamed", 103, 120), before) == "within noise"
    assert verdict(result("sitemapx-streamed", 90, 99), before) == "less"
    assert verdict(result("sitemapx-streamed", 200), before) == "-"


def test_the_table_gives_contrib_over_sitemapx_per_url_and_the_change() -> None:
    results = [
        result("sitemapx-streamed", 10_000_000, 9_990_000, 10_010_000),
        result("contrib", 200_000_000),
    ]
    baseline = {
        "sitemapx-streamed": result("sitemapx-streamed", 8_000_000, 7_990_000, 8_010_000),
        "contrib": result("contrib", 200_000_000),
    }
    text = table(results, baseline, measured=True)
    assert (
        "| sitemapx-streamed | article section, no cache | 1,000 | 2 | 10,000,000 | 10,000 "
        "| 9,990,000 to 10,010,000 (0.20%) | 8,000,000 | +2,000,000 (+25.000%) | **more** |"
    ) in text
    assert "| contrib ÷ sitemapx-streamed | 20.00 | 25.00 |" in text
