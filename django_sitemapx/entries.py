"""The record that flows from a source to the writer: one ``<url>`` of a page.

A source streams a page as chunks (lists) of :class:`Entry`, with a
:class:`Skipped` record wherever it left entries (or values) out, so the
writer counts every skip without the source knowing how it is counted.
Nothing here imports Django: sources, overrides and the writer all use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from .exceptions import SkipReason

# The namespace of ``<xhtml:link>``, the element alternates are written as.
XHTML_NAMESPACE = "http://www.w3.org/1999/xhtml"


class Alternate(NamedTuple):
    """A language version of a URL: ``<xhtml:link rel="alternate" hreflang href>``."""

    hreflang: str
    href: str


class Extras(NamedTuple):
    """What a ``<url>`` carries beyond the protocol's four values.

    Kept out of :class:`Entry` itself, so the common entry (no extension
    element) stays a flat tuple with ``None`` here.
    """

    alternates: tuple[Alternate, ...] = ()


class Entry(NamedTuple):
    """One URL of a page, every value already protocol text.

    ``loc`` is an absolute URI (ASCII, percent-encoded); ``lastmod`` W3C
    Datetime text; ``changefreq`` one of the seven values; ``priority`` a
    decimal from ``0.0`` to ``1.0``. ``values`` formats them and
    ``LocationBuilder`` makes the URI. A plain 5-tuple in this order is an
    entry too: the hot path builds them with ``zip()``.
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


# A page as a source streams it.
EntryStream = Iterator[list[Entry] | Skipped]
