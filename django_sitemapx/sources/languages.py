"""The language versions of an item: one entry per language, each listing them all.

Shared by every source with ``i18n``: which of an item's languages count, how
each code is spelled as ``hreflang``, the entries of one item built from its
located versions, and the loop that makes a page's chunks of them
(:func:`language_chunks`). The entries of one item share one ``Extras``, so
the alternates are reciprocal by construction: every version lists the same
set, itself included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from django.utils import translation

from .. import conf
from ..entries import EntryStream, EntryTuple, Extras, SkipCounter
from ..exceptions import Skip, SkipReason
from ..values import format_hreflang
from .extras import with_extras

if TYPE_CHECKING:
    from .base import Source
    from .extras import ExtrasReader

# (language code, absolute URI) of one located version of an item.
Located = tuple[str, str]
# A batch's URIs in one language (active while it runs): a URI, or the Skip, per item.
Locate = Callable[[str, list[Any]], Sequence[str | Skip]]
# The lastmod, changefreq and priority columns of the items listed.
ReadValues = Callable[[list[Any]], Sequence[Iterable[str | None]]]


class LanguageVersions:
    """One document's view of a multilingual source's languages (read once per document)."""

    def __init__(self, source: Source) -> None:
        self.codes = source.get_languages()
        self._known = frozenset(self.codes)
        self._hreflang = {code: format_hreflang(code) for code in self.codes}
        self.alternates = source.alternates
        self._x_default = source.x_default_language()

    def for_item(self, codes: Iterable[str], count: Callable[[SkipReason], None]) -> Sequence[str]:
        """``codes`` (from ``get_languages_for_item``) less repeats and unknown languages."""
        kept: dict[str, None] = {}
        for code in codes:
            if code in self._known:
                kept[code] = None
            else:
                count(SkipReason.UNKNOWN_LANGUAGE)
        return list(kept)

    def located(
        self,
        codes: Iterable[str],
        uris: Mapping[str, Sequence[str | Skip]],
        index: int,
        count: Callable[[SkipReason], None],
    ) -> list[Located]:
        """Item ``index``'s version in each of ``codes`` whose location was made
        (``uris[code][index]``); a location refused is counted, not listed."""
        found: list[Located] = []
        for code in codes:
            uri = uris[code][index]
            if isinstance(uri, Skip):
                count(uri.reason)
            else:
                found.append((code, uri))
        return found

    def entries(
        self,
        located: Sequence[Located],
        lastmod: str | None,
        changefreq: str | None,
        priority: str | None,
        extension: Extras | None = None,
        x_default: str | bool | None = True,
    ) -> list[EntryTuple]:
        """The entries of one item, one per located version, in the order given.

        ``extension`` holds the item's images, videos and news, written with
        every version. ``x_default`` is the item's own x-default language
        (``get_x_default_for_item``), None for none; True: the section's.
        """
        # Plain tuples, for the entries and the alternates alike (an Entry and an
        # Alternate are tuples too): this runs once per item of a page.
        if not self.alternates:
            return [(uri, lastmod, changefreq, priority, extension) for _code, uri in located]
        hreflang = self._hreflang
        links = [(hreflang[code], uri) for code, uri in located]
        default = self._x_default if x_default is True else x_default
        if default is not None and default is not False:
            for code, uri in located:
                if code == default:
                    links.append(("x-default", uri))
                    break
        extras = (
            Extras(tuple(links))
            if extension is None
            else extension._replace(alternates=tuple(links))
        )
        return [(uri, lastmod, changefreq, priority, extras) for _code, uri in located]


def language_chunks(
    items: Iterator[Any],
    locate: Locate,
    values: ReadValues,
    versions: LanguageVersions,
    languages: Callable[[Any], Iterable[str]] | None,
    skipped: SkipCounter,
    extras: ExtrasReader | None,
    x_defaults: Callable[[Any], str | None] | None = None,
) -> EntryStream:
    """Every language version of each item, one chunk per batch, each followed by its skips.

    Items are read once; each batch is located once per language, with that
    language active (``translation.override``), so ``i18n_patterns`` prefixes
    and translated patterns come out as ``reverse()`` gives them. ``languages``
    is ``get_languages_for_item`` when it is overridden, else None (every
    language). An item's images, videos and news, read once per batch, go with
    every one of its versions; ``values`` reads the items listed.
    """
    count = skipped.count
    all_codes = versions.codes
    entries = versions.entries
    per_batch = max(1, conf.CHUNK_SIZE // len(all_codes))
    while batch := list(islice(items, per_batch)):
        located: dict[str, Sequence[str | Skip]] = {}
        for code in all_codes:
            with translation.override(code):
                located[code] = locate(code, batch)
        listed: list[list[Located]] = []
        listed_items: list[Any] = []
        for index, item in enumerate(batch):
            codes = all_codes if languages is None else versions.for_item(languages(item), count)
            found = versions.located(codes, located, index, count)
            if found:
                listed.append(found)
                listed_items.append(item)
        listed_items, listed, extensions = with_extras(extras, listed_items, listed)
        chunk: list[EntryTuple] = []
        defaults: list[str | bool | None] = (
            [True] * len(listed_items)
            if x_defaults is None
            else [x_defaults(item) for item in listed_items]
        )
        for found, lastmod, changefreq, priority, extension, default in zip(
            listed, *values(listed_items), extensions, defaults, strict=True
        ):
            chunk += entries(found, lastmod, changefreq, priority, extension, default)
        if chunk:
            yield chunk
        yield from skipped.flush()
