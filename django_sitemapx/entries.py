"""What flows from a source to the writer: entries, one ``<url>`` of a page each.

A source streams a page as chunks (lists) of entries, with a :class:`Skipped`
count wherever it left entries (or values) out (a :class:`SkipCounter` keeps
the count), so the writer counts every skip without the source knowing how it
is counted. Nothing here imports Django: sources, overrides and the writer all
use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import NamedTuple

from .exceptions import SkipReason

# The namespace of ``<xhtml:link>``, the element alternates are written as.
XHTML_NAMESPACE = "http://www.w3.org/1999/xhtml"
# The namespaces of Google's image, video and news extensions (``<image:image>``,
# ``<video:video>``, ``<news:news>``).
IMAGE_NAMESPACE = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NAMESPACE = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NAMESPACE = "http://www.google.com/schemas/sitemap-news/0.9"


class Alternate(NamedTuple):
    """A language version of a URL: ``<xhtml:link rel="alternate" hreflang href>``."""

    hreflang: str
    href: str


class VideoElement(NamedTuple):
    """One ``<video:video>``, every value already protocol text (see ``extensions``).

    ``restriction`` and ``platform`` are ``(relationship, space-separated values)``.
    The fields are ``extensions.values.Video``'s, in the order the writer writes
    them (the schema's); ``tests/test_extensions.py`` checks that the three agree.
    """

    thumbnail_loc: str
    title: str
    description: str
    content_loc: str | None = None
    player_loc: str | None = None
    duration: str | None = None
    expiration_date: str | None = None
    rating: str | None = None
    view_count: str | None = None
    publication_date: str | None = None
    tags: tuple[str, ...] = ()
    family_friendly: str | None = None
    restriction: tuple[str, str] | None = None
    requires_subscription: str | None = None
    uploader: str | None = None
    uploader_info: str | None = None
    platform: tuple[str, str] | None = None
    live: str | None = None


class NewsElement(NamedTuple):
    """The ``<news:news>`` of a URL, every value already protocol text."""

    name: str
    language: str
    publication_date: str
    title: str


class Extras(NamedTuple):
    """What a ``<url>`` carries beyond the protocol's four values.

    Kept out of :class:`Entry` itself, so the common entry (no extension
    element) stays a flat tuple with ``None`` here. ``alternates`` are
    ``(hreflang, href)`` pairs: :class:`Alternate`, or plain pairs as the hot
    path builds them. ``images`` are absolute image URIs
    (``<image:image><image:loc>``).
    """

    alternates: tuple[tuple[str, str], ...] = ()
    images: tuple[str, ...] = ()
    videos: tuple[VideoElement, ...] = ()
    news: NewsElement | None = None


class Entry(NamedTuple):
    """One URL of a page, every value already protocol text.

    ``loc`` is an absolute URI (ASCII, percent-encoded); ``lastmod`` W3C
    Datetime text; ``changefreq`` one of the seven values; ``priority`` a
    decimal from ``0.0`` to ``1.0``. ``values`` formats them and
    ``LocationBuilder`` makes the URI. A plain 5-tuple in this order is an
    entry too (:data:`EntryTuple`): the hot path builds them with ``zip()``.
    """

    loc: str
    lastmod: str | None = None
    changefreq: str | None = None
    priority: str | None = None
    extras: Extras | None = None


class Skipped(NamedTuple):
    """``total`` entries (or values) of a page left out for ``reason``."""

    reason: SkipReason
    total: int = 1


# An entry as the hot path builds it: a plain tuple, (loc, lastmod, changefreq,
# priority, extras). An Entry is one, so code that reads entries takes these and
# unpacks them; building an Entry per row would cost three times the tuple.
EntryTuple = tuple[str, str | None, str | None, str | None, Extras | None]

# A page as a source streams it: chunks of entries (lists of Entry or of plain
# tuples) and Skipped counts.
EntryStream = Iterator[Sequence[EntryTuple] | Skipped]


class SkipCounter:
    """What a source left out of a page, counted by reason until it streams the count.

    Call :meth:`count` for each entry (or value) left out; ``count`` also fits
    wherever a function taking a ``SkipReason`` is asked for. Then ``yield from
    counter.flush()``, after each chunk or once after the last: it gives one
    :class:`Skipped` count per reason and starts again from zero, so nothing
    is counted twice::

        counter = SkipCounter()
        for path in paths:
            try:
                entries.append(Entry(builder.absolute(path)))
            except Skip as skip:
                counter.count(skip.reason)
        yield entries
        yield from counter.flush()
    """

    __slots__ = ("_totals",)

    def __init__(self) -> None:
        self._totals: dict[SkipReason, int] = {}

    def count(self, reason: SkipReason, total: int = 1) -> None:
        """Count ``total`` entries (or values) left out for ``reason``."""
        self._totals[reason] = self._totals.get(reason, 0) + total

    def flush(self) -> list[Skipped]:
        """A ``Skipped`` count per reason counted since the last flush; the counts restart."""
        if not self._totals:
            return []
        counts = [Skipped(reason, total) for reason, total in self._totals.items()]
        self._totals.clear()
        return counts


def interleave(literals: Sequence[str], values: Sequence[list[str]], count: int) -> list[str]:
    """``literals[0] + values[0][i] + literals[1] + ...`` for each of ``count`` rows.

    ``literals`` has one more item than ``values``, each a column of ``count`` strings.
    """
    # Comprehensions over f-strings: no Python call per row, and zip() reuses its tuple.
    if not values:
        return [literals[0]] * count
    if len(values) == 1:
        a, b = literals
        return [f"{a}{v}{b}" for v in values[0]]
    if len(values) == 2:
        a, b, c = literals
        return [f"{a}{v}{b}{w}{c}" for v, w in zip(*values, strict=True)]
    if len(values) == 3:
        a, b, c, d = literals
        return [f"{a}{v}{b}{w}{c}{x}{d}" for v, w, x in zip(*values, strict=True)]
    if len(values) == 4:
        a, b, c, d, e = literals
        return [f"{a}{v}{b}{w}{c}{x}{d}{y}{e}" for v, w, x, y in zip(*values, strict=True)]
    tail = literals[1:]
    return [
        literals[0] + "".join(v + t for v, t in zip(row, tail, strict=True))
        for row in zip(*values, strict=True)
    ]


@dataclass(frozen=True)
class PlainChunk:
    """A chunk of entries still held as columns: the writer renders it without building them.

    The ``loc`` of row *i* is ``literals[0] + columns[0][i] + literals[1] + ...``,
    its lastmod ``lastmods[i]`` (``lastmod`` for every row when ``lastmods`` is
    None); every row has ``changefreq`` and ``priority`` and no extras. Whoever
    makes one vouches that no value needs XML escaping or is None (in
    ``lastmods``) and that every ``loc`` is within the protocol's length limit:
    the entries are then exactly the ones the writer would have been given.
    With ``legal``, it also vouches that no value of ``columns`` or ``lastmods``
    holds a character outside XML 1.0: the writer then checks only the values
    every row shares, not the whole text of the chunk.
    """

    count: int
    literals: tuple[str, ...]
    columns: tuple[list[str], ...]
    lastmods: list[str] | None
    lastmod: str | None
    changefreq: str | None
    priority: str | None
    legal: bool = False

    def __len__(self) -> int:
        return self.count

    def locations(self) -> list[str]:
        """The ``loc`` of every row."""
        return interleave(self.literals, self.columns, self.count)

    def entries(self) -> list[EntryTuple]:
        """The chunk as entries, for whoever needs more than its XML (overrides)."""
        count = self.count
        lastmods = repeat(self.lastmod, count) if self.lastmods is None else self.lastmods
        changefreqs, priorities = repeat(self.changefreq, count), repeat(self.priority, count)
        extras: Iterator[Extras | None] = repeat(None, count)
        return list(zip(self.locations(), lastmods, changefreqs, priorities, extras, strict=True))


@dataclass(frozen=True)
class RenderedChunk:
    """A chunk of entries its source rendered already: the writer encodes its ``elements``.

    Each of ``elements`` is the ``<url>`` element the writer's ``url_elements()``
    gives for the entry at the same place of ``entries()``, written for a
    ``<urlset>`` declaring the prefixes ``declared`` names (a writer declaring
    fewer renders ``entries()`` instead). Whoever makes one vouches for that:
    values escaped, every ``loc`` within the protocol's length limit. With
    ``legal``, it also vouches that no element holds a character outside XML 1.0.
    ``make_entries`` makes the entries, for whoever needs more than the XML
    (overrides, rules); it counts no skip again.
    """

    elements: list[str]
    make_entries: Callable[[], list[EntryTuple]]
    declared: frozenset[str] = frozenset()
    legal: bool = False

    def __len__(self) -> int:
        return len(self.elements)

    def entries(self) -> list[EntryTuple]:
        """The chunk as entries, for whoever needs more than its XML (overrides)."""
        return self.make_entries()


# A chunk of a page, as a source streams it to the writer.
Chunk = Sequence[EntryTuple] | PlainChunk | RenderedChunk
# A page as a source streams it to the writer: a chunk may come as a PlainChunk or a
# RenderedChunk (when the writer asks for them: ``PlainChunkEntries.chunks``).
ChunkStream = Iterator[Chunk | Skipped]


def close_stream(stream: object) -> None:
    """Close ``stream`` now if it can be closed (a generator, a source's batches, a body).

    A suspended source generator may hold an open server-side cursor. Left to
    the garbage collector (a traceback keeps it in a reference cycle), its
    cleanup can run in the middle of a later query on the same connection, and
    psycopg then waits forever for its own connection lock: whoever stops
    reading a stream early closes it.
    """
    close = getattr(stream, "close", None)
    if close is not None:
        close()
