"""Whole documents as streams, and the paths they are served (and exported) at."""

from __future__ import annotations

import logging
from collections import Counter
from unittest import mock

import pytest
from django.test import override_settings

from django_sitemapx import conf
from django_sitemapx.documents import (
    DocumentStream,
    index_path,
    listed_pages,
    page_entries,
    page_path,
    read_chunks,
    render_index,
    render_page,
)
from django_sitemapx.entries import Entry, EntryStream, Skipped
from django_sitemapx.exceptions import SkipReason
from django_sitemapx.locations import LocationBuilder, Origin
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource, ListedPage, Page, PageSummary
from tests.conftest import locs, validate_sitemap
from tests.support.collector import garbage_collector_off
from tests.support.sources import ClosingWatchedSource

# Rendering a document reads the editors' overrides from the database.
pytestmark = pytest.mark.django_db

ORIGIN = Origin("https", "example.com")


# -- paths -----------------------------------------------------------------------------


def test_paths_come_from_the_urlconf() -> None:
    assert index_path() == "/sitemap.xml"
    assert page_path("news", 2) == "/sitemap-news-2.xml"


@override_settings(ROOT_URLCONF="tests.layout_urls")
def test_a_url_prefix_is_in_the_paths() -> None:
    assert index_path() == "/maps/sitemap.xml"
    assert page_path("news", 2) == "/maps/sitemap-news-2.xml"


@override_settings(ROOT_URLCONF="tests.bare_urls")
def test_without_the_views_the_paths_are_the_default_ones() -> None:
    assert index_path() == "/sitemap.xml"
    assert page_path("news", 2) == "/sitemap-news-2.xml"


# -- pages -----------------------------------------------------------------------------


def _page(source: ItemSource, number: int = 1) -> Page:
    page = source.page(number)
    assert page is not None
    return page


@mock.patch.object(conf, "CHUNK_SIZE", 2)
def test_a_page_streams_its_urls_and_counts_them_as_it_goes(registry: SitemapRegistry) -> None:
    source = registry.register("news", items=lambda: [f"/news/{n}/" for n in range(5)])
    stream = render_page(source, _page(source), ORIGIN)
    assert isinstance(stream, DocumentStream)
    # The first chunk is rendered before the stream is returned; the rest as read.
    assert stream.stats.urls == 2
    chunks = list(stream)
    assert len(chunks) > 2 and all(isinstance(chunk, bytes) for chunk in chunks)
    assert stream.stats.urls == 5
    assert stream.stats.bytes == len(b"".join(chunks))
    assert locs(validate_sitemap(b"".join(chunks))) == [
        f"https://example.com/news/{n}/" for n in range(5)
    ]


def test_skipped_entries_are_counted_and_logged(
    registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    source = registry.register(
        "mixed", items=lambda: ["/ok/", "https://other.example/x/", "/bad\x01/", "/" + "a" * 3000]
    )
    stream = render_page(source, _page(source), ORIGIN)
    assert stream is not None
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        data = b"".join(stream)
    assert locs(validate_sitemap(data)) == ["https://example.com/ok/"]
    assert stream.stats.urls == 1
    assert stream.stats.skipped == {"other_host": 1, "control_characters": 1, "too_long": 1}
    assert "3 entries left out" in caplog.text


def test_a_page_with_no_url_left_is_none(
    registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    source = registry.register("bad", items=lambda: ["https://other.example/", "/x\x01/"])
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        assert render_page(source, _page(source), ORIGIN) is None
    assert "2 entries left out" in caplog.text


def test_reading_a_stream_gives_its_chunks_and_adds_its_skips_by_reason() -> None:
    def stream() -> EntryStream:
        yield [Entry("https://e.com/a")]
        yield Skipped(SkipReason.TOO_LONG, 2)
        yield [("https://e.com/b", None, None, None, None)]
        yield Skipped(SkipReason.TOO_LONG)
        yield Skipped(SkipReason.OTHER_HOST)

    skipped = {"too_long": 1}
    chunks = list(read_chunks(stream(), skipped))
    assert chunks == [[Entry("https://e.com/a")], [Entry("https://e.com/b")]]
    assert skipped == {"too_long": 4, "other_host": 1}


def test_a_pages_entries_for_people_are_counted_as_its_document_counts_them(
    registry: SitemapRegistry,
) -> None:
    source = registry.register("mixed", items=lambda: ["/a/"], limit=2)

    def entries(builder: LocationBuilder) -> EntryStream:
        yield [Entry(builder.absolute(f"/{name}/")) for name in "abc"]
        yield Skipped(SkipReason.OTHER_HOST)

    skipped: Counter[str] = Counter()
    page = Page(PageSummary(1, 4, None), entries)
    assert page_entries(source, page, ORIGIN, skipped) == [
        Entry("https://example.com/a/"),
        Entry("https://example.com/b/"),
    ]
    # The third entry is past the source's limit: the writer would leave it out too.
    assert skipped == {"other_host": 1, "over_url_limit": 1}


@mock.patch.object(conf, "CHUNK_SIZE", 2)
@pytest.mark.parametrize("read", [0, 1, 2])
def test_closing_a_page_stream_closes_its_source_at_once(
    registry: SitemapRegistry, read: int
) -> None:
    source = registry.register(
        "news", ClosingWatchedSource, items=lambda: [f"/n/{n}/" for n in range(9)]
    )
    ClosingWatchedSource.log = []
    with garbage_collector_off():
        stream = render_page(source, _page(source), ORIGIN)
        assert stream is not None
        chunks = iter(stream)
        for _ in range(read):
            next(chunks)
        assert ClosingWatchedSource.log == []
        stream.close()
        assert ClosingWatchedSource.log == ["closed"]


# -- the index -------------------------------------------------------------------------


def test_the_index_lists_every_page_at_its_path(registry: SitemapRegistry) -> None:
    registry.register("news", items=lambda: [f"/news/{n}/" for n in range(5)], limit=2)
    registry.register("empty", items=list)
    entries = listed_pages(registry)
    assert [(e.section, e.summary.number, e.summary.rows) for e in entries] == [
        ("news", 1, 2),
        ("news", 2, 2),
        ("news", 3, 1),
    ]
    stream = render_index(entries, ORIGIN, lambda section, page: f"/files/{section}.{page}.xml")
    assert stream is not None
    data = b"".join(stream)
    assert locs(validate_sitemap(data)) == [
        "https://example.com/files/news.1.xml",
        "https://example.com/files/news.2.xml",
        "https://example.com/files/news.3.xml",
    ]
    assert stream.stats.urls == 3
    assert stream.stats.bytes == len(data)


def test_an_index_of_nothing_is_none() -> None:
    assert render_index([], ORIGIN, page_path) is None


def test_an_index_over_the_protocol_limit_is_cut_and_logged(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("django_sitemapx.documents.PROTOCOL_MAX_URLS", 2)
    entries = [ListedPage("news", PageSummary(n, 1, None)) for n in range(1, 4)]
    with caplog.at_level(logging.ERROR, logger="django_sitemapx"):
        stream = render_index(entries, ORIGIN, page_path)
        assert stream is not None
        data = b"".join(stream)
    assert len(locs(validate_sitemap(data))) == 2
    assert stream.stats.urls == 2 and stream.stats.skipped_total == 1
    assert "cut at 2 of 3 pages" in caplog.text
