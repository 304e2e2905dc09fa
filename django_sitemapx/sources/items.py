"""Sources over an in-memory list of items, paged like ``django.contrib.sitemaps``.

``ContribSitemapSource``, which serves a contrib ``Sitemap`` itself, is in ``contrib``.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.urls import reverse

from ..conf import app_settings
from ..entries import Entry, EntryStream, Skipped
from ..exceptions import InvalidValue, Skip, SkipReason
from ..values import VALUE_NAMES, formatted, lastmod_text, latest_lastmod
from .base import Page, PageSummary, Source
from .extensions import extras_reader

if TYPE_CHECKING:
    from ..locations import LocationBuilder


class ItemSource(Source):
    """A section built from ``items()``, an in-memory sequence, as in contrib.

    An item may be a location string, a mapping with a ``"location"`` key (and
    optionally ``"lastmod"``, ``"changefreq"``, ``"priority"``, which win over
    the source's values), or any object with ``get_absolute_url()``. Pass a
    callable as the ``items`` option to register a function as a source.
    ``items()`` is called once per document.
    """

    def items(self) -> Iterable[Any]:
        """The items of this section."""
        return []

    def location(self, item: Any) -> str:
        """A path or same-host absolute URL for ``item``."""
        if isinstance(item, str):
            return item
        if isinstance(item, Mapping):
            return str(item["location"])
        return str(item.get_absolute_url())

    def page_summaries(self) -> list[PageSummary]:
        return [
            self._summary(number, items) for number, items in enumerate(self._pages(), start=1)
        ]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        pages = self._pages()
        if not 1 <= number <= len(pages):
            return None
        items = pages[number - 1]
        summary = summary or self._summary(number, items)
        return Page(summary, functools.partial(self._entries, items))

    def _pages(self) -> list[list[Any]]:
        items = list(self.items())
        limit = self.rows_per_page()
        return [items[start : start + limit] for start in range(0, len(items), limit)]

    def _summary(self, number: int, items: list[Any]) -> PageSummary:
        raw = [self._raw_value(item, "lastmod") for item in items]
        undated = sum(1 for value in raw if _lastmod_or_none(value) is None)
        return PageSummary(number, len(items), latest_lastmod(raw), undated)

    def _raw_value(self, item: Any, name: str) -> Any:
        if isinstance(item, Mapping) and name in item:
            return item[name]
        attribute = getattr(self, name)
        return attribute(item) if callable(attribute) else attribute

    def _entries(self, items: list[Any], builder: LocationBuilder) -> EntryStream:
        skipped: Counter[SkipReason] = Counter()

        def count(reason: SkipReason) -> None:
            skipped[reason] += 1

        extras = extras_reader(self, builder, count)
        size = app_settings.CHUNK_SIZE
        for start in range(0, len(items), size):
            chunk: list[Entry] = []
            kept: list[Any] = []
            for item in items[start : start + size]:
                try:
                    loc = builder.absolute(self.location(item))
                except Skip as skip:
                    count(skip.reason)
                    continue
                lastmod, changefreq, priority = (
                    formatted(name, self._raw_value(item, name), count) for name in VALUE_NAMES
                )
                chunk.append((loc, lastmod, changefreq, priority, None))  # type: ignore[arg-type]
                kept.append(item)
            if extras is not None and kept:
                found = extras(kept)
                chunk = [
                    (*entry[:4], value) if value is not None else entry  # type: ignore[misc]
                    for entry, value in zip(chunk, found, strict=True)
                    if not isinstance(value, SkipReason)
                ]
                skipped.update(value for value in found if isinstance(value, SkipReason))
            if chunk:
                yield chunk
        for reason, number in skipped.items():
            yield Skipped(reason, number)


def _lastmod_or_none(value: Any) -> str | None:
    try:
        return lastmod_text(value)
    except InvalidValue:
        return None


class StaticSource(ItemSource):
    """Named URL patterns (home, about, ...): ``url_names=["home", "about"]``.

    An entry of ``url_names`` is a URL name, or a ``(name, kwargs)`` pair.
    """

    url_names: Sequence[str | tuple[str, Mapping[str, Any]]] = ()

    def items(self) -> Iterable[Any]:
        return list(self.url_names)

    def location(self, item: Any) -> str:
        if isinstance(item, tuple):
            name, kwargs = item
            return reverse(name, kwargs=dict(kwargs))
        return reverse(item)
