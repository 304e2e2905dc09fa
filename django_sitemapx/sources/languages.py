"""The language versions of an item: one entry per language, each listing them all.

Shared by every source with ``i18n``: which of an item's languages count, how
each code is spelled as ``hreflang``, the entries of one item built from its
located versions, and the loop that makes a page's chunks of them
(:func:`language_chunks`). The entries of one item share one ``Extras``, so
the alternates are reciprocal by construction: every version lists the same
set, itself included.

With a host per language (``Source.get_language_hosts``), each version is
located on its language's host, and a host's documents list only the versions
of its own languages: every host's documents locate every version the same
way, so the alternates are the same set on each host, and reciprocal across
them. A language whose host the project does not serve (``served_hosts()``),
or that does not serve the section, is located nowhere: it is neither listed
nor anyone's alternate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any

from django.utils import translation

from .. import conf
from ..entries import EntryStream, EntryTuple, Extras, SkipCounter
from ..exceptions import Skip, SkipReason
from ..locations import LocationBuilder, Origin
from ..locations.hosts import canonical_host
from ..locations.origins import served_hosts
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
    """One document's view of a multilingual source's languages (read once per document).

    ``codes`` are the languages located, each by its own ``builders[code]``;
    ``listed`` those whose versions this document lists (None: all of them).
    """

    def __init__(self, source: Source, builder: LocationBuilder) -> None:
        every = source.get_languages()
        self._known = frozenset(every)
        self._hreflang = {code: format_hreflang(code) for code in every}
        self.alternates = source.alternates
        self._x_default = source.x_default_language()
        self.builders, self.listed = _placed(source, builder, every)
        self.codes = [code for code in every if code in self.builders]

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
            column = uris.get(code)
            if column is None:
                continue  # a language on a host the section is not served on
            uri = column[index]
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
        listed = self.listed
        if not self.alternates:
            return [
                (uri, lastmod, changefreq, priority, extension)
                for code, uri in located
                if listed is None or code in listed
            ]
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
        return [
            (uri, lastmod, changefreq, priority, extras)
            for code, uri in located
            if listed is None or code in listed
        ]


def _placed(
    source: Source, builder: LocationBuilder, codes: list[str]
) -> tuple[dict[str, LocationBuilder], frozenset[str] | None]:
    """Each language's builder, and the languages this document lists (None: all)."""
    hosts = source.get_language_hosts()
    if not hosts:
        return dict.fromkeys(codes, builder), None
    origin = builder.origin
    own = canonical_host(origin.host, origin.scheme)
    served = {canonical_host(name, origin.scheme) for name in served_hosts()}
    builders: dict[str, LocationBuilder] = {}
    listed: set[str] = set()
    others: dict[str, LocationBuilder | None] = {}
    for code in codes:
        host = hosts.get(code, own)  # a language without a host: on every host, as before
        if code in hosts and host not in served:
            continue  # written only for hosts the project serves
        if host == own:
            builders[code] = builder
            listed.add(code)
            continue
        if not source.alternates:
            continue  # listed elsewhere, and named by no alternate here: not located
        if host not in others:
            other = Origin(origin.scheme, host)
            others[host] = LocationBuilder(other) if source.serves(other) else None
        found = others[host]
        if found is not None:
            builders[code] = found
    return builders, frozenset(listed)


def alternate_hosts(source: Source, origin: Origin) -> list[str]:
    """The other hosts whose URLs a document of ``source`` on ``origin`` may name as alternates."""
    if not (source.i18n and source.alternates):
        return []
    own = canonical_host(origin.host, origin.scheme)
    return sorted({host for host in source.get_language_hosts().values() if host != own})


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
    per_batch = max(1, conf.CHUNK_SIZE // max(1, len(all_codes)))
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
