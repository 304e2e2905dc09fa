"""The language versions of an item: one entry per language, each listing them all.

Shared by every source with ``i18n``: which of an item's languages count, how
each code is spelled as ``hreflang``, and the entries of one item built from
its located versions. The entries of one item share one ``Extras``, so the
alternates are reciprocal by construction: every version lists the same set,
itself included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..entries import EntryTuple, Extras
from ..exceptions import Skip, SkipReason
from ..values import format_hreflang

if TYPE_CHECKING:
    from .base import Source

# (language code, absolute URI) of one located version of an item.
Located = tuple[str, str]


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
    ) -> list[EntryTuple]:
        """The entries of one item, one per located version, in the order given.

        ``extension`` holds the item's images, videos and news, written with
        every version.
        """
        # Plain tuples, for the entries and the alternates alike (an Entry and an
        # Alternate are tuples too): this runs once per item of a page.
        if not self.alternates:
            return [(uri, lastmod, changefreq, priority, extension) for _code, uri in located]
        hreflang = self._hreflang
        links = [(hreflang[code], uri) for code, uri in located]
        if self._x_default is not None:
            for code, uri in located:
                if code == self._x_default:
                    links.append(("x-default", uri))
                    break
        extras = (
            Extras(tuple(links))
            if extension is None
            else extension._replace(alternates=tuple(links))
        )
        return [(uri, lastmod, changefreq, priority, extras) for _code, uri in located]
