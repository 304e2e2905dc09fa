"""The benchmark report's verdicts: a --quick smoke run measures nothing, and says so."""

from __future__ import annotations

from benchmarks.report import NOT_MEASURED, ratios_markdown

ITEMS = [
    {
        "database": "sqlite",
        "n": 10_000,
        "ratio": "URLs/s",
        "value": 3.0,
        "target": ">= 20",
        "met": False,
    },
    {
        "database": "sqlite",
        "n": 10_000,
        "ratio": "RSS",
        "value": 40.0,
        "target": "< 100",
        "met": True,
    },
]


def test_a_full_run_gives_its_verdicts() -> None:
    table = ratios_markdown(ITEMS)
    assert "| **no** |" in table and "| yes |" in table


def test_a_quick_run_labels_every_target_not_measured() -> None:
    table = ratios_markdown(ITEMS, measured=False)
    assert "**no**" not in table and "| yes |" not in table
    assert table.count(f"| {NOT_MEASURED} |") == len(ITEMS)
