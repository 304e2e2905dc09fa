"""Sources over an in-memory list of items, paged like ``django.contrib.sitemaps``.

``ContribSitemapSource``, which serves a contrib ``Sitemap`` itself, is in ``contrib``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.urls import NoReverseMatch, get_resolver, get_script_prefix, get_urlconf, reverse
from django.utils import translation

from .. import conf
from ..entries import EntryStream, EntryTuple, SkipCounter
from ..exceptions import Skip
from ..locations import iri_to_uri, usable_location
from ..values import VALUE_NAMES, formatted, lastmod_text_or_none, latest_lastmod
from .base import (
    MAX_ESCAPED_LOCATION_BYTES,
    MAX_ORIGIN_LENGTH,
    Page,
    PageSummary,
    Source,
    escaped_length,
    is_overridden,
)
from .extras import extras_reader, with_extras
from .languages import LanguageVersions, language_chunks

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
            self._summary(number, items)
            for number, items in enumerate(self._pages(), start=1)
            if self._has_usable(items)
        ]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        pages = self._pages()
        if not 1 <= number <= len(pages):
            return None
        items = pages[number - 1]
        if not self._has_usable(items):
            return None
        summary = summary or self._summary(number, items)
        return Page(summary, functools.partial(self._entries, items))

    def _pages(self) -> list[list[Any]]:
        items = list(self.items())
        limit = self.rows_per_page()
        return [items[start : start + limit] for start in range(0, len(items), limit)]

    def _has_usable(self, items: list[Any]) -> bool:
        """Whether a page has an item whose location can be written (on some host).

        The index lists only such pages, so it never lists one that answers 404
        because every location is malformed; see ``usable_location``.
        """
        return any(usable_location(self.location(item)) for item in items)

    def _summary(self, number: int, items: list[Any]) -> PageSummary:
        raw = [self._raw_value(item, "lastmod") for item in items]
        undated = sum(1 for value in raw if lastmod_text_or_none(value) is None)
        return PageSummary(number, len(items), latest_lastmod(raw), undated)

    def _raw_value(self, item: Any, name: str) -> Any:
        if isinstance(item, Mapping) and name in item:
            return item[name]
        attribute = getattr(self, name)
        return attribute(item) if callable(attribute) else attribute

    def _entries(self, items: list[Any], builder: LocationBuilder) -> EntryStream:
        if self.i18n:
            yield from self._language_entries(items, builder)
            return
        skips = SkipCounter()
        count = skips.count
        extras = extras_reader(self, builder, count)
        size = conf.CHUNK_SIZE
        for start in range(0, len(items), size):
            chunk: list[EntryTuple] = []
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
                chunk.append((loc, lastmod, changefreq, priority, None))
                kept.append(item)
            if extras is not None:
                kept, chunk, found = with_extras(extras, kept, chunk)
                chunk = [
                    (loc, lastmod, changefreq, priority, value)
                    for (loc, lastmod, changefreq, priority, _none), value in zip(
                        chunk, found, strict=True
                    )
                ]
            if chunk:
                yield chunk
        yield from skips.flush()

    def _language_entries(self, items: list[Any], builder: LocationBuilder) -> EntryStream:
        """One entry per (item, language), each item located once per language."""
        skips = SkipCounter()
        count = skips.count

        versions = LanguageVersions(self, builder)

        def locate(code: str, batch: list[Any]) -> list[str | Skip]:
            located = versions.builders[code]  # the language's host
            return [self._located(item, located) for item in batch]

        def values(listed: list[Any]) -> list[list[str | None]]:
            return [
                [formatted(name, self._raw_value(item, name), count) for item in listed]
                for name in VALUE_NAMES
            ]

        yield from language_chunks(
            iter(items),
            locate,
            values,
            versions,
            self.get_languages_for_item if self.has_languages_per_item else None,
            skips,
            extras_reader(self, builder, count),
            self.get_x_default_for_item if self.has_x_default_per_item else None,
        )

    def _located(self, item: Any, builder: LocationBuilder) -> str | Skip:
        try:
            return builder.absolute(self.location(item))
        except Skip as skip:
            return skip


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

    def max_location_bytes(self) -> int:
        """The longest of its URL names reversed, in every language: the paths are known."""
        if is_overridden(self, StaticSource, "items") or is_overridden(
            self, StaticSource, "location"
        ):
            return super().max_location_bytes()
        codes: list[str | None] = list(self.get_languages()) if self.i18n else [None]
        key = (
            get_resolver(get_urlconf()),
            get_script_prefix(),
            tuple(codes),
            repr(self.url_names),
        )
        memo = self.__dict__.get("_location_bound")
        if memo is not None and memo[0] == key:
            return int(memo[1])
        bound = self._reversed_bound(codes)
        self.__dict__["_location_bound"] = (key, bound)
        return bound

    def _reversed_bound(self, codes: list[str | None]) -> int:
        longest = 0
        for code in codes:
            active = translation.override(code) if code else contextlib.nullcontext()
            with active:
                for item in self.items():
                    try:
                        path = iri_to_uri(self.location(item))
                    except NoReverseMatch:  # reported by the checks; skipped when served
                        continue
                    longest = max(longest, escaped_length(path))
        return min(MAX_ORIGIN_LENGTH + longest, MAX_ESCAPED_LOCATION_BYTES)
