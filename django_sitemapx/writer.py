"""Entries in, XML bytes out.

This module knows nothing of Django's ORM or of requests: it escapes entries
whose values are already protocol text (see ``values``) and frames them as a
``<urlset>`` or ``<sitemapindex>`` document within the protocol's limits. The
views and the export both use it, so a document is the same bytes whichever
produced it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .entries import XHTML_NAMESPACE, Entry, Extras
from .exceptions import SkipReason

SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_CLOSE = "</urlset>\n"
INDEX_OPEN = f'{XML_DECLARATION}<sitemapindex xmlns="{SITEMAP_NAMESPACE}">\n'
INDEX_CLOSE = "</sitemapindex>\n"

# Characters outside the XML 1.0 "Char" production can never appear in a
# document, not even as character references.
_ILLEGAL_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_ILLEGAL_ASCII = bytes([c for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)])
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "'": "&apos;", '"': "&quot;"})


_LINK = '<xhtml:link rel="alternate" hreflang="'
_LINK_DECLARING = f'<xhtml:link xmlns:xhtml="{XHTML_NAMESPACE}" rel="alternate" hreflang="'


def urlset_open(namespaces: Mapping[str, str] | None = None) -> str:
    """The XML declaration and ``<urlset>`` tag, declaring ``{prefix: uri}`` extensions."""
    declared = "".join(f' xmlns:{prefix}="{uri}"' for prefix, uri in (namespaces or {}).items())
    return f'{XML_DECLARATION}<urlset xmlns="{SITEMAP_NAMESPACE}"{declared}>\n'


def has_illegal_xml_chars(text: str) -> bool:
    """True if ``text`` holds a character that may not appear in XML 1.0."""
    if text.isascii():
        # The writer checks every chunk: for ASCII (nearly always) only C0
        # controls can be illegal, and bytes.translate finds them about six
        # times faster than the regular expression.
        data = text.encode("ascii")
        return len(data.translate(None, _ILLEGAL_ASCII)) != len(data)
    return _ILLEGAL_XML_CHARS.search(text) is not None


@dataclass
class WriteStats:
    """What a document holds and what was left out of it, by reason."""

    urls: int = 0
    bytes: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: SkipReason, count: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + count

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def url_elements(entries: Sequence[Entry], *, xhtml_declared: bool = False) -> list[str]:
    """The ``<url>`` element of each entry.

    Alternates are ``<xhtml:link>`` elements: a document whose root declares the
    ``xhtml`` prefix says so with ``xhtml_declared``; otherwise each link
    declares it itself, so the document is valid either way.
    """
    # The hot path of every sitemap: str.translate() costs microseconds per URI,
    # so it runs only on chunks holding something to escape; the common shape
    # (all three optional values present, no extension) is one f-string.
    if _needs_escape("".join([entry[0] for entry in entries])):
        entries = [(entry[0].translate(_ESCAPES), *entry[1:]) for entry in entries]  # type: ignore[misc]
    return [
        f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod><changefreq>{changefreq}"
        f"</changefreq><priority>{priority}</priority></url>\n"
        if lastmod is not None and changefreq is not None and priority is not None and not extras
        else _url_element(loc, lastmod, changefreq, priority, extras, xhtml_declared)
        for loc, lastmod, changefreq, priority, extras in entries
    ]


def _needs_escape(text: str) -> bool:
    return "&" in text or "<" in text or ">" in text or "'" in text or '"' in text


def _url_element(
    loc: str,
    lastmod: str | None,
    changefreq: str | None,
    priority: str | None,
    extras: Extras | None,
    xhtml_declared: bool,
) -> str:
    parts = ["<url><loc>", loc, "</loc>"]
    if lastmod is not None:
        parts += ["<lastmod>", lastmod, "</lastmod>"]
    if changefreq is not None:
        parts += ["<changefreq>", changefreq, "</changefreq>"]
    if priority is not None:
        parts += ["<priority>", priority, "</priority>"]
    if extras:
        link = _LINK if xhtml_declared else _LINK_DECLARING
        for hreflang, href in extras.alternates:
            parts += [
                link,
                hreflang.translate(_ESCAPES),
                '" href="',
                href.translate(_ESCAPES),
                '"/>',
            ]
    parts.append("</url>\n")
    return "".join(parts)


def sitemap_element(loc: str, lastmod: str | None) -> str:
    """One ``<sitemap>`` element of an index."""
    if lastmod is None:
        return f"<sitemap><loc>{loc.translate(_ESCAPES)}</loc></sitemap>\n"
    return f"<sitemap><loc>{loc.translate(_ESCAPES)}</loc><lastmod>{lastmod}</lastmod></sitemap>\n"


class DocumentWriter:
    """Frames rendered elements as one document and keeps it within protocol limits.

    ``namespaces`` are the extension prefixes its root declares (``{prefix: uri}``).

    ``render`` returns the bytes of a chunk of elements (the opening tag comes
    with the first non-empty chunk), ``close`` the closing tag. Elements past
    ``max_urls``, larger than ``max_element_bytes``, or that would take the
    document over ``max_bytes`` are counted in ``stats`` and left out.

    ``max_element_bytes`` is the source's promise (``Source.max_url_bytes()``)
    that pages are sized on: enforcing it per element keeps every page within
    ``max_bytes``, so the document-size trim below is only a backstop for a
    custom source whose pages hold more than it can.
    """

    def __init__(
        self,
        opening: str,
        closing: str,
        *,
        max_urls: int,
        max_bytes: int,
        namespaces: Mapping[str, str] | None = None,
        max_element_bytes: int | None = None,
    ) -> None:
        self._opening = opening
        self.max_element_bytes = max_element_bytes
        self.namespaces = dict(namespaces or {})
        self._closing = closing
        self._closing_size = len(closing.encode())
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.stats = WriteStats()
        self.started = False

    def render_entries(self, entries: Sequence[Entry]) -> bytes:
        """The bytes of a chunk of entries, as ``<url>`` elements (see :meth:`render`)."""
        xhtml = self.namespaces.get("xhtml") == XHTML_NAMESPACE
        return self.render(url_elements(entries, xhtml_declared=xhtml))

    def render(self, elements: Iterable[str]) -> bytes:
        """Encode already-rendered elements, enforcing the count and size limits."""
        stats = self.stats
        room = self.max_urls - stats.urls
        chunk = list(elements)
        if len(chunk) > room:
            stats.skip(SkipReason.OVER_URL_LIMIT, len(chunk) - room)
            chunk = chunk[: max(room, 0)]
        if not chunk:
            return b""
        text = "".join(chunk)
        if has_illegal_xml_chars(text):
            # Sources built on this app never get here (locations are percent-
            # encoded, values validated); a custom source might. One scan per
            # chunk keeps the guarantee cheap.
            clean = [element for element in chunk if not _ILLEGAL_XML_CHARS.search(element)]
            stats.skip(SkipReason.ILLEGAL_CHARACTERS, len(chunk) - len(clean))
            chunk, text = clean, "".join(clean)
            if not chunk:
                return b""
        if self.max_element_bytes is not None:
            chunk, text = self._within_element_bound(chunk, text, self.max_element_bytes)
            if not chunk:
                return b""
        head = b"" if self.started else self._opening.encode()
        data = head + text.encode()
        budget = self.max_bytes - self._closing_size - stats.bytes
        if len(data) > budget:
            data, kept = self._trim_to(head, chunk, budget)
            stats.skip(SkipReason.OVER_SIZE_LIMIT, len(chunk) - kept)
            chunk = chunk[:kept]
            if not kept:
                return b""
        self.started = True
        stats.urls += len(chunk)
        stats.bytes += len(data)
        return data

    def _within_element_bound(
        self, chunk: list[str], text: str, bound: int
    ) -> tuple[list[str], str]:
        # ASCII (nearly always: URIs are percent-encoded) has one byte per character.
        ascii_text = text.isascii()
        sizes = list(map(len, chunk)) if ascii_text else [len(e.encode()) for e in chunk]
        if max(sizes) <= bound:
            return chunk, text
        kept = [element for element, size in zip(chunk, sizes, strict=True) if size <= bound]
        self.stats.skip(SkipReason.OVER_SIZE_LIMIT, len(chunk) - len(kept))
        return kept, "".join(kept)

    def close(self) -> bytes:
        """The closing tag, or nothing if no element was ever written."""
        if not self.started:
            return b""
        self.stats.bytes += self._closing_size
        return self._closing.encode()

    @staticmethod
    def _trim_to(head: bytes, chunk: list[str], budget: int) -> tuple[bytes, int]:
        size = len(head)
        kept = 0
        for element in chunk:
            element_size = len(element.encode())
            if size + element_size > budget:
                break
            size += element_size
            kept += 1
        if kept == 0:
            return b"", 0
        return head + "".join(chunk[:kept]).encode(), kept


def urlset_writer(
    *,
    max_urls: int,
    max_bytes: int,
    namespaces: Mapping[str, str] | None = None,
    max_element_bytes: int | None = None,
) -> DocumentWriter:
    """A writer for a ``<urlset>`` document declaring the extension ``namespaces``."""
    return DocumentWriter(
        urlset_open(namespaces),
        URLSET_CLOSE,
        max_urls=max_urls,
        max_bytes=max_bytes,
        namespaces=namespaces,
        max_element_bytes=max_element_bytes,
    )


def index_writer(*, max_urls: int, max_bytes: int) -> DocumentWriter:
    """A writer for a ``<sitemapindex>`` document."""
    return DocumentWriter(INDEX_OPEN, INDEX_CLOSE, max_urls=max_urls, max_bytes=max_bytes)
