"""Whole sitemap documents as byte streams: the one path shared by views and export."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .conf import PROTOCOL_MAX_BYTES, PROTOCOL_MAX_URLS
from .locations import LocationBuilder, Site
from .overrides import adjust_index, apply_overrides
from .registry import SitemapRegistry
from .sources import PageSummary, Source
from .writer import (
    DocumentWriter,
    Entry,
    WriteStats,
    index_writer,
    sitemap_element,
    url_elements,
    urlset_writer,
)

logger = logging.getLogger("django_sitemapx")

# Maps (section, page number) to the path a document is served at.
PagePath = Callable[[str, int], str]


@dataclass(frozen=True)
class IndexEntry:
    """One page of one section, as the index lists it."""

    section: str
    page: PageSummary


def index_entries(registry: SitemapRegistry) -> list[IndexEntry]:
    """Every non-empty page of every section, in registration order."""
    entries = [
        IndexEntry(source.section, page) for source in registry for page in source.page_summaries()
    ]
    return adjust_index(entries)


def render_index(
    entries: list[IndexEntry], site: Site, page_path: PagePath
) -> Iterator[bytes] | None:
    """The ``<sitemapindex>`` bytes, or None when no section has any page."""
    if not entries:
        return None
    writer = index_writer(max_urls=PROTOCOL_MAX_URLS, max_bytes=PROTOCOL_MAX_BYTES)
    elements = [
        sitemap_element(
            site.prefix + page_path(entry.section, entry.page.number), entry.page.lastmod
        )
        for entry in entries
    ]
    body = writer.render(elements)
    if writer.stats.skipped_total:
        logger.error(
            "The sitemap index was cut at %s of %s pages (protocol limits); raise the "
            "sections' limit or split the site.",
            writer.stats.urls,
            len(entries),
        )
    return iter([body, writer.close()])


def render_page(source: Source, page: int, site: Site) -> Iterator[bytes] | None:
    """The ``<urlset>`` of one page as a stream, or None if it would hold no URL.

    The first chunk is produced before returning, so an empty or fully skipped
    page is known before any response starts (an empty ``<urlset>`` is invalid).
    """
    writer = urlset_writer(max_urls=source.get_limit(), max_bytes=PROTOCOL_MAX_BYTES)
    stats = writer.stats
    entries = source.iter_entries(page, LocationBuilder(site), stats)
    chunks = apply_overrides(entries)
    try:
        for chunk in chunks:
            first = writer.render(url_elements(chunk))
            if first:
                return _stream(first, chunks, writer, source, page, entries)
    except BaseException:
        _close(entries)
        raise
    _log_skips(source, page, stats)
    return None


def _stream(
    first: bytes,
    chunks: Iterator[list[Entry]],
    writer: DocumentWriter,
    source: Source,
    page: int,
    entries: Iterator[Any],
) -> Iterator[bytes]:
    yield first
    try:
        for chunk in chunks:
            data = writer.render(url_elements(chunk))
            if data:
                yield data
    except BaseException:  # an error, or the client went away (GeneratorExit)
        _close(entries)
        raise
    yield writer.close()
    _log_skips(source, page, writer.stats)


def _close(entries: Iterator[Any]) -> None:
    # A suspended source generator may hold an open server-side cursor. Left to
    # the garbage collector (a traceback keeps it in a reference cycle), its
    # cleanup can run in the middle of a later query on the same connection,
    # and psycopg then waits forever for its own connection lock.
    close = getattr(entries, "close", None)
    if close is not None:
        close()


def _log_skips(source: Source, page: int, stats: WriteStats) -> None:
    if stats.skipped:
        logger.warning(
            "Sitemap section %r page %s: %s entries left out or trimmed %s",
            source.section,
            page,
            stats.skipped_total,
            dict(sorted(stats.skipped.items())),
            extra={"section": source.section, "page": page, "skipped": dict(stats.skipped)},
        )
