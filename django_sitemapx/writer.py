"""Rows in, XML bytes out.

This module knows nothing of Django's ORM or of requests: it formats values,
escapes them and frames them as ``<urlset>`` or ``<sitemapindex>`` documents.
The view and the export both use it, so a document is the same bytes whichever
produced it.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from .exceptions import InvalidValue

SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_OPEN = f'{XML_DECLARATION}<urlset xmlns="{SITEMAP_NAMESPACE}">\n'
URLSET_CLOSE = "</urlset>\n"
INDEX_OPEN = f'{XML_DECLARATION}<sitemapindex xmlns="{SITEMAP_NAMESPACE}">\n'
INDEX_CLOSE = "</sitemapindex>\n"

# Characters outside the XML 1.0 "Char" production can never appear in a
# document, not even as character references.
_ILLEGAL_XML_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_ILLEGAL_ASCII = bytes([c for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)])
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "'": "&apos;", '"': "&quot;"})

# An entry: (absolute URI, lastmod text or None, changefreq or None, priority text or None).
Entry = tuple[str, str | None, str | None, str | None]


def escape(text: str) -> str:
    """Entity-escape ``& < > ' "``; refuse characters XML 1.0 forbids."""
    if _ILLEGAL_XML_CHARS.search(text):
        raise InvalidValue(f"{text!r} contains characters that XML 1.0 forbids")
    return text.translate(_ESCAPES)


def has_illegal_xml_chars(text: str) -> bool:
    """True if ``text`` holds a character that may not appear in XML 1.0."""
    if text.isascii():
        # The writer checks every chunk: for ASCII (nearly always) only C0
        # controls can be illegal, and bytes.translate finds them about six
        # times faster than the regular expression.
        data = text.encode("ascii")
        return len(data.translate(None, _ILLEGAL_ASCII)) != len(data)
    return _ILLEGAL_XML_CHARS.search(text) is not None


def format_lastmod(value: datetime.date | datetime.datetime, tz: datetime.tzinfo) -> str:
    """W3C Datetime: a date, or a date-time to the second with an explicit offset.

    A naive datetime is taken to be in ``tz`` (the project's time zone).
    """
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            value = value.replace(tzinfo=tz)
        text = value.replace(microsecond=0).isoformat()
        return text
    if isinstance(value, datetime.date):
        return value.isoformat()
    raise InvalidValue(f"lastmod must be a date or datetime, not {type(value).__name__}")


def format_priority(value: float | Decimal | str) -> str:
    """Validate a priority (0.0 to 1.0) and write it with at most three decimals."""
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise InvalidValue(f"priority {value!r} is not a number") from None
    if not number.is_finite() or not Decimal(0) <= number <= Decimal(1):
        raise InvalidValue(f"priority {value!r} is outside 0.0 to 1.0")
    text = f"{number.quantize(Decimal('0.001')):f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def validate_changefreq(value: str) -> str:
    """Return ``value`` if it is one of the seven protocol values."""
    if value not in CHANGEFREQS:
        raise InvalidValue(f"changefreq {value!r} is not one of {', '.join(CHANGEFREQS)}")
    return value


@dataclass
class WriteStats:
    """What a document holds and what was left out of it."""

    urls: int = 0
    bytes: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str, count: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + count

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())


def url_element(
    loc: str, lastmod: str | None, changefreq: str | None, priority: str | None
) -> str:
    """One ``<url>`` element; ``loc`` must already be a URI (ASCII, no illegal characters)."""
    return _url_element(loc.translate(_ESCAPES), lastmod, changefreq, priority)


def url_elements(entries: Sequence[Entry]) -> list[str]:
    """The ``<url>`` element of each entry, exactly as ``url_element`` writes it."""
    # The hot path of every sitemap: str.translate() costs microseconds per URI,
    # so it runs only on chunks holding something to escape; the common shape
    # (all three optional values present) is written by one f-string.
    if _needs_escape("".join([entry[0] for entry in entries])):
        entries = [(entry[0].translate(_ESCAPES), *entry[1:]) for entry in entries]
    return [
        f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod><changefreq>{changefreq}"
        f"</changefreq><priority>{priority}</priority></url>\n"
        if lastmod is not None and changefreq is not None and priority is not None
        else _url_element(loc, lastmod, changefreq, priority)
        for loc, lastmod, changefreq, priority in entries
    ]


def _needs_escape(text: str) -> bool:
    return "&" in text or "<" in text or ">" in text or "'" in text or '"' in text


def _url_element(
    loc: str, lastmod: str | None, changefreq: str | None, priority: str | None
) -> str:
    parts = ["<url><loc>", loc, "</loc>"]
    if lastmod is not None:
        parts += ["<lastmod>", lastmod, "</lastmod>"]
    if changefreq is not None:
        parts += ["<changefreq>", changefreq, "</changefreq>"]
    if priority is not None:
        parts += ["<priority>", priority, "</priority>"]
    parts.append("</url>\n")
    return "".join(parts)


def sitemap_element(loc: str, lastmod: str | None) -> str:
    """One ``<sitemap>`` element of an index."""
    if lastmod is None:
        return f"<sitemap><loc>{loc.translate(_ESCAPES)}</loc></sitemap>\n"
    return f"<sitemap><loc>{loc.translate(_ESCAPES)}</loc><lastmod>{lastmod}</lastmod></sitemap>\n"


class DocumentWriter:
    """Frames chunks of elements as one document and keeps it within protocol limits.

    ``render_chunk`` returns the bytes for a chunk of entries (the opening tag
    comes with the first non-empty chunk), ``close`` the closing tag. Entries
    past ``max_urls`` or that would take the document over ``max_bytes`` are
    counted in ``stats`` and left out.
    """

    def __init__(self, opening: str, closing: str, *, max_urls: int, max_bytes: int) -> None:
        self._opening = opening
        self._closing = closing
        self._closing_size = len(closing.encode())
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.stats = WriteStats()
        self.started = False

    def render(self, elements: Iterable[str]) -> bytes:
        """Encode already-rendered elements, enforcing the count and size limits."""
        stats = self.stats
        room = self.max_urls - stats.urls
        chunk = list(elements)
        if len(chunk) > room:
            stats.skip("over_url_limit", len(chunk) - room)
            chunk = chunk[: max(room, 0)]
        if not chunk:
            return b""
        text = "".join(chunk)
        if has_illegal_xml_chars(text):
            # Sources built on this app never get here (locations are percent-
            # encoded, values validated); a custom source might. One scan per
            # chunk keeps the guarantee cheap.
            clean = [element for element in chunk if not _ILLEGAL_XML_CHARS.search(element)]
            stats.skip("illegal_characters", len(chunk) - len(clean))
            chunk, text = clean, "".join(clean)
            if not chunk:
                return b""
        head = b"" if self.started else self._opening.encode()
        data = head + text.encode()
        budget = self.max_bytes - self._closing_size - stats.bytes
        if len(data) > budget:
            data, kept = self._trim_to(head, chunk, budget)
            stats.skip("over_size_limit", len(chunk) - kept)
            chunk = chunk[:kept]
            if not kept:
                return b""
        self.started = True
        stats.urls += len(chunk)
        stats.bytes += len(data)
        return data

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


def urlset_writer(*, max_urls: int, max_bytes: int) -> DocumentWriter:
    """A writer for a ``<urlset>`` document."""
    return DocumentWriter(URLSET_OPEN, URLSET_CLOSE, max_urls=max_urls, max_bytes=max_bytes)


def index_writer(*, max_urls: int, max_bytes: int) -> DocumentWriter:
    """A writer for a ``<sitemapindex>`` document."""
    return DocumentWriter(INDEX_OPEN, INDEX_CLOSE, max_urls=max_urls, max_bytes=max_bytes)
