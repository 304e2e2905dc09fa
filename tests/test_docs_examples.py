"""The examples of "Writing your own source" (docs/reference/sources.md) run as printed."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest

from django_sitemapx import PageSummary, default_registry
from django_sitemapx.documents import render_page
from django_sitemapx.locations import Origin
from django_sitemapx.sources import Source
from tests.conftest import NS, ROOT, locs, validate_sitemap

# Rendering a document reads the editors' overrides from the database.
pytestmark = pytest.mark.django_db

SOURCES = ROOT / "docs" / "reference" / "sources.md"
Run = Callable[[str], None]
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
ORIGIN = Origin("https", "example.com")


def _examples(heading: str) -> list[str]:
    """The Python blocks of section ``heading`` of the sources reference, in order."""
    section = SOURCES.read_text().split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return PYTHON_BLOCK.findall(section)


@pytest.fixture
def run_example() -> Iterator[Run]:
    """Run one example in a namespace of its own, registering into an empty default registry."""
    with default_registry.temporarily_empty():

        def run(code: str) -> None:
            exec(compile(code, str(SOURCES), "exec"), {"__name__": "docs_example"})

        yield run


def _document(source: Source, number: int) -> tuple[bytes, dict[str, int]]:
    page = source.page(number)
    assert page is not None
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    return b"".join(stream), stream.stats.skipped


def test_the_section_shows_an_item_source_then_a_source() -> None:
    item_source, source = _examples("Writing your own source")
    assert "sitemapx.ItemSource" in item_source
    assert "sitemapx.Source" in source and "SkipCounter()" in source


def test_the_item_source_example_serves_its_items(run_example: Run) -> None:
    run_example(_examples("Writing your own source")[0])
    source = default_registry.get("products")
    assert source.page_summaries() == [PageSummary(1, 2, "2024-06-02")]
    data, skipped = _document(source, 1)
    root = validate_sitemap(data)
    assert locs(root) == [
        "https://example.com/products/kettle/",
        "https://example.com/products/teapot/",
    ]
    assert [el.text for el in root.iterfind(".//sm:lastmod", NS)] == ["2024-05-01", "2024-06-02"]
    assert {el.text for el in root.iterfind(".//sm:changefreq", NS)} == {"weekly"}
    assert {el.text for el in root.iterfind(".//sm:priority", NS)} == {"0.5"}
    assert skipped == {}


def test_the_source_example_serves_its_pages_and_counts_what_it_skips(run_example: Run) -> None:
    run_example(_examples("Writing your own source")[1])
    source = default_registry.get("archive")
    assert source.page_summaries() == [
        PageSummary(1, 2, "1999-12-31", undated=1),
        PageSummary(2, 2, None, undated=2),
    ]
    first, skipped = _document(source, 1)
    assert locs(validate_sitemap(first)) == [
        "https://example.com/archive/1999/",
        "https://example.com/archive/2000/",
    ]
    assert skipped == {}
    second, skipped = _document(source, 2)
    assert locs(validate_sitemap(second)) == ["https://example.com/archive/2001/"]
    # The URL on another host is left out, and its Skipped record counted with the page.
    assert skipped == {"other_host": 1}
    assert source.page(3) is None
