"""Sources for tests that watch how a document ends, and reading a source's pages."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django_sitemapx.documents import read_chunks
from django_sitemapx.entries import EntryStream
from django_sitemapx.locations import LocationBuilder
from django_sitemapx.sources import ItemSource, Page, PageSummary, Source


def page_stream(
    source: Source, builder: LocationBuilder, number: int = 1
) -> tuple[list[tuple[Any, ...]], Counter[str]] | None:
    """The entries of page ``number`` and its skips by reason; None if there is no such page."""
    found = source.page(number)
    if found is None:
        return None
    entries: list[tuple[Any, ...]] = []
    skipped: Counter[str] = Counter()
    for chunk in read_chunks(found.entries(builder), skipped):
        entries.extend(chunk)
    return entries, skipped


class ClosingWatchedSource(ItemSource):
    """Two hundred locations whose entries come from a generator that logs being closed.

    The generator is kept in a reference cycle, as a cursor or a traceback can
    keep a real source's: only an explicit ``close()`` ends it at once.
    """

    log: list[str] = []

    def items(self) -> list[str]:
        return [f"/watched/{n}/" for n in range(200)]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        page = super().page(number, summary)
        if page is None:
            return None
        entries = page.entries

        def watched(builder: LocationBuilder, cycle: list[Any]) -> EntryStream:
            try:
                yield from entries(builder)
            finally:
                ClosingWatchedSource.log.append("closed")

        def cyclic(builder: LocationBuilder) -> EntryStream:
            cycle: list[Any] = []
            stream = watched(builder, cycle)
            cycle.append(stream)  # the generator's frame holds the list that holds it
            return stream

        return Page(page.summary, cyclic)
