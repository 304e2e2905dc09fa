"""Applying editors' overrides to the entries and the index of a sitemap.

Entries are matched by ``normalise.uri_key``: one ``location__in`` query per
chunk of entries, never one per URL, and nothing kept between chunks, so memory
grows with the chunk size as before. Excluded entries are dropped; the other
overridden values replace the source's.

The index cannot look at every URL, so a forced lastmod reaches it through the
section and page stored on the override when it was saved (see
``locate.place_override``): a page's lastmod in the index is the later of its
own and the forced lastmods of the overrides placed on it.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TypeVar

from django.db.models import Max
from django.utils import timezone

from .conf import app_settings
from .normalise import uri_key
from .sources import PageSummary
from .values import lastmod_text
from .writer import Entry, format_priority

# One override as the hot path reads it: (exclude, lastmod, changefreq, priority).
OverrideValues = tuple[bool, str | None, str | None, str | None]


def apply_overrides(chunks: Iterable[list[Entry]]) -> Iterator[list[Entry]]:
    """Yield each chunk with overrides applied: one query per chunk."""
    if not app_settings.OVERRIDES:
        yield from chunks
        return
    for chunk in chunks:
        yield apply_to_chunk(chunk)


def apply_to_chunk(chunk: list[Entry]) -> list[Entry]:
    """One chunk of entries with its overrides applied (one query)."""
    if not chunk:
        return chunk
    keys = [uri_key(entry[0]) for entry in chunk]
    found = fetch(set(keys))
    if not found:
        return chunk
    result: list[Entry] = []
    for key, entry in zip(keys, chunk, strict=True):
        values = found.get(key)
        if values is None:
            result.append(entry)
            continue
        exclude, lastmod, changefreq, priority = values
        if exclude:
            continue
        result.append(
            (
                entry[0],
                entry[1] if lastmod is None else lastmod,
                entry[2] if changefreq is None else changefreq,
                entry[3] if priority is None else priority,
            )
        )
    return result


def fetch(keys: Iterable[str]) -> dict[str, OverrideValues]:
    """The overrides of these location keys, formatted as protocol text."""
    from .models import Override

    rows = Override.objects.filter(location__in=list(keys)).values_list(
        "location", "exclude", "lastmod", "changefreq", "priority"
    )
    return {location: _format(row) for location, *row in rows}


def _format(row: list[Any]) -> OverrideValues:
    exclude, lastmod, changefreq, priority = row
    return (
        bool(exclude),
        lastmod_text(lastmod),
        changefreq or None,
        None if priority is None else format_priority(priority),
    )


class _IndexEntry(Protocol):
    @property
    def section(self) -> str: ...

    @property
    def page(self) -> PageSummary: ...


IndexEntryT = TypeVar("IndexEntryT", bound=_IndexEntry)


def adjust_index(entries: list[IndexEntryT]) -> list[IndexEntryT]:
    """Raise each page's lastmod to the latest forced lastmod placed on it (one query)."""
    if not entries or not app_settings.OVERRIDES:
        return entries
    forced = forced_page_lastmods()
    if not forced:
        return entries
    adjusted = []
    for entry in entries:
        latest = forced.get((entry.section, entry.page.number))
        if latest is not None and is_later(latest, entry.page.lastmod):
            page = dataclasses.replace(entry.page, lastmod=lastmod_text(latest))
            entry = dataclasses.replace(entry, page=page)  # type: ignore[type-var]
        adjusted.append(entry)
    return adjusted


def forced_page_lastmods() -> dict[tuple[str, int], datetime.datetime]:
    """``(section, page) -> latest forced lastmod`` of the placed, included overrides."""
    from .models import Override

    rows = (
        Override.objects.filter(lastmod__isnull=False, exclude=False, page__isnull=False)
        .exclude(section="")
        .order_by()
        .values_list("section", "page")
        .annotate(latest=Max("lastmod"))
    )
    return {(section, page): latest for section, page, latest in rows}


def is_later(value: datetime.datetime, text: str | None) -> bool:
    """Whether ``value`` is later than a W3C Datetime text (a missing one is earliest)."""
    if text is None:
        return True
    try:
        other = datetime.datetime.fromisoformat(text)
    except ValueError:
        return True
    if timezone.is_naive(other):
        other = timezone.make_aware(other, timezone.get_default_timezone())
    return value > other
