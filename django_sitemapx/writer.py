"""Entries in, XML bytes out.

This module knows nothing of Django's ORM or of requests: it escapes entries
whose values are already protocol text (see ``values``) and frames them as a
``<urlset>`` or ``<sitemapindex>`` document within the protocol's limits. The
views and the export both use it, so a document is the same bytes whichever
produced it.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter

from .entries import (
    IMAGE_NAMESPACE,
    NEWS_NAMESPACE,
    VIDEO_NAMESPACE,
    XHTML_NAMESPACE,
    Alternate,
    Chunk,
    EntryTuple,
    Extras,
    NewsElement,
    PlainChunk,
    RenderedChunk,
    VideoElement,
    interleave,
)
from .exceptions import SkipReason

SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
# The prefix the writer writes each child namespace's elements with: alternates
# (xhtml) and the image, video and news extensions.
CHILD_NAMESPACES = {
    "xhtml": XHTML_NAMESPACE,
    "image": IMAGE_NAMESPACE,
    "video": VIDEO_NAMESPACE,
    "news": NEWS_NAMESPACE,
}

XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_CLOSE = "</urlset>\n"
INDEX_OPEN = f'{XML_DECLARATION}<sitemapindex xmlns="{SITEMAP_NAMESPACE}">\n'
INDEX_CLOSE = "</sitemapindex>\n"

# Characters outside the XML 1.0 "Char" production can never appear in a
# document, not even as character references (the ranges of a regex class).
NOT_XML_CHAR_RANGES = "\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff"
_ILLEGAL_XML_CHARS = re.compile(f"[{NOT_XML_CHAR_RANGES}]")
_ILLEGAL_ASCII = [chr(c) for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)]
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "'": "&apos;", '"': "&quot;"})
# The loc (the extras) of every entry of a chunk, read by map() in C: a few
# nanoseconds a row faster than unpacking each entry in a comprehension.
_LOC = itemgetter(0)
_EXTRAS = itemgetter(4)


_LINK = '<xhtml:link rel="alternate" hreflang="'
_LINK_DECLARING = f'<xhtml:link xmlns:xhtml="{XHTML_NAMESPACE}" rel="alternate" hreflang="'


def declared_prefixes(namespaces: Mapping[str, str] | None) -> frozenset[str]:
    """The prefixes of the writer's child elements (``xhtml``, ``image``, ...) that a root
    declaring ``namespaces`` (``{prefix: uri}``) declares: their elements need not."""
    return frozenset(
        prefix for prefix, uri in (namespaces or {}).items() if CHILD_NAMESPACES.get(prefix) == uri
    )


def stylesheet_instruction(href: str | None) -> str:
    """``<?xml-stylesheet type="text/css" href="..."?>`` and a newline; ``""`` for no ``href``.

    The pseudo-attribute takes the predefined entities (W3C "Associating Style
    Sheets with XML documents"), so ``href`` is escaped as an attribute is, which
    also keeps ``?>`` out of the instruction.
    """
    if not href:
        return ""
    return f'<?xml-stylesheet type="text/css" href="{href.translate(_ESCAPES)}"?>\n'


def urlset_open(namespaces: Mapping[str, str] | None = None, stylesheet: str | None = None) -> str:
    """The XML declaration and ``<urlset>`` tag, declaring ``{prefix: uri}`` extensions.

    ``stylesheet`` is the URL of a CSS stylesheet for people who open the document
    in a browser (see :func:`stylesheet_instruction`).
    """
    declared = "".join(f' xmlns:{prefix}="{uri}"' for prefix, uri in (namespaces or {}).items())
    return (
        f"{XML_DECLARATION}{stylesheet_instruction(stylesheet)}"
        f'<urlset xmlns="{SITEMAP_NAMESPACE}"{declared}>\n'
    )


def index_open(stylesheet: str | None = None) -> str:
    """The XML declaration and ``<sitemapindex>`` tag (a ``stylesheet`` as for ``urlset_open``)."""
    tag = INDEX_OPEN.removeprefix(XML_DECLARATION)
    return f"{XML_DECLARATION}{stylesheet_instruction(stylesheet)}{tag}"


def has_illegal_xml_chars(text: str) -> bool:
    """True if ``text`` holds a character that may not appear in XML 1.0."""
    if text.isascii():
        # The writer checks every chunk: for ASCII (nearly always) only C0
        # controls can be illegal. One "in" per control character is a memchr()
        # each: about five times faster than bytes.translate(), thirty times
        # faster than the regular expression.
        return any(char in text for char in _ILLEGAL_ASCII)
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


def url_elements(
    entries: Sequence[EntryTuple],
    *,
    xhtml_declared: bool = False,
    declared: Collection[str] = (),
) -> list[str]:
    """The ``<url>`` element of each entry.

    Alternates are ``<xhtml:link>`` elements, then come ``<image:image>``,
    ``<video:video>`` and ``<news:news>``. ``declared`` names the extension
    prefixes (``xhtml``, ``image``, ``video``, ``news``) the document's root
    declares (``xhtml_declared`` is ``"xhtml" in declared``); an element whose
    prefix the root does not declare declares it itself, so the document is
    valid either way.
    """
    if xhtml_declared:
        declared = {*declared, "xhtml"}
    # The hot path of every sitemap: str.translate() costs microseconds per URI,
    # so it runs only on chunks holding something to escape; the common shape
    # (all three optional values present, no extension) is one f-string.
    if needs_escape("".join(map(_LOC, entries))):
        entries = [
            (loc.translate(_ESCAPES), lastmod, changefreq, priority, extras)
            for loc, lastmod, changefreq, priority, extras in entries
        ]
    if not any(map(_EXTRAS, entries)):
        return [
            f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod><changefreq>{changefreq}"
            f"</changefreq><priority>{priority}</priority></url>\n"
            if lastmod is not None and changefreq is not None and priority is not None
            else _url_element(loc, lastmod, changefreq, priority, "")
            for loc, lastmod, changefreq, priority, _extras in entries
        ]
    # Every language version of an item shares one Extras value: its elements
    # (the alternates, images, videos and news) are rendered once, not per version.
    rendered: dict[int, str] = {}
    # The chunk's alternates checked for a character to escape at once, not entry by
    # entry: with none, an entry's alternates alone are one f-string per link, here.
    link = _LINK if "xhtml" in declared else _LINK_DECLARING
    alternates_of = [extras[0] for extras in map(_EXTRAS, entries) if extras]
    plain_links = not needs_escape(
        "".join(chain.from_iterable(chain.from_iterable(alternates_of)))
    )
    elements = []
    for loc, lastmod, changefreq, priority, extras in entries:
        children = ""
        if extras:
            found = rendered.get(id(extras))
            if found is None:
                alternates, images, videos, news = extras
                if plain_links and not images and not videos and news is None:
                    found = "".join(
                        [f'{link}{code}" href="{href}"/>' for code, href in alternates]
                    )
                else:
                    found = _extension_elements(extras, declared)
                rendered[id(extras)] = found
            children = found
        # _url_element()'s two common shapes, without a call per entry.
        if lastmod is None:
            elements.append(_url_element(loc, lastmod, changefreq, priority, children))
        elif changefreq is None and priority is None:
            elements.append(f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod>{children}</url>\n")
        elif changefreq is not None and priority is not None:
            elements.append(
                f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod><changefreq>{changefreq}"
                f"</changefreq><priority>{priority}</priority>{children}</url>\n"
            )
        else:
            elements.append(_url_element(loc, lastmod, changefreq, priority, children))
    return elements


def url_template(
    changefreq: str | None,
    priority: str | None,
    hreflangs: Sequence[str] = (),
    *,
    declared: Collection[str] = (),
) -> tuple[str, ...]:
    """The literals of the ``<url>`` element :func:`url_elements` writes for an entry with
    a lastmod, ``changefreq``, ``priority`` and alternates of ``hreflangs``, in order.

    The element is ``literals[0] + loc + literals[1] + lastmod + literals[2] + href``
    of the first alternate ``+ literals[3] + ...``, for values needing no escape: a
    source writing many rows of one shape fills the template per row and builds no
    entry (``entries.RenderedChunk``). Made by this writer from a probe entry, so
    that it is the writer's own element whatever the writer's format.
    """
    marks = [f"\x00{number}\x00" for number in range(2 + len(hreflangs))]
    alternates = tuple(
        Alternate(hreflang, mark) for hreflang, mark in zip(hreflangs, marks[2:], strict=True)
    )
    extras = Extras(alternates=alternates) if alternates else None
    (element,) = url_elements(
        [(marks[0], marks[1], changefreq, priority, extras)], declared=declared
    )
    literals = []
    for mark in marks:
        literal, found, element = element.partition(mark)
        if not found:  # never: every value is written once, as it is
            raise ValueError(f"no place for value {mark!r} in {element!r}")
        literals.append(literal)
    literals.append(element)
    return tuple(literals)


def plain_url_elements(chunk: PlainChunk) -> list[str]:
    """The ``<url>`` element of each row of ``chunk``: what :func:`url_elements` gives
    for its entries, one f-string per row, straight from its columns."""
    # What follows the last column: the fixed values, and the lastmod when it
    # is fixed too; a column of lastmods is one more column between the two.
    tail = [
        _text_element("changefreq", chunk.changefreq),
        _text_element("priority", chunk.priority),
        "</url>\n",
    ]
    literals = ["<url><loc>" + chunk.literals[0], *chunk.literals[1:]]
    values: tuple[list[str], ...] = chunk.columns
    if chunk.lastmods is None:
        literals[-1] += "".join(["</loc>", _text_element("lastmod", chunk.lastmod), *tail])
    else:
        literals[-1] += "</loc><lastmod>"
        literals.append("".join(["</lastmod>", *tail]))
        values = (*values, chunk.lastmods)
    return interleave(literals, values, chunk.count)


def _text_element(name: str, value: str | None) -> str:
    return "" if value is None else f"<{name}>{value}</{name}>"


def needs_escape(text: str) -> bool:
    """True if ``text`` holds a character the writer escapes."""
    return "&" in text or "<" in text or ">" in text or "'" in text or '"' in text


def _url_element(
    loc: str,
    lastmod: str | None,
    changefreq: str | None,
    priority: str | None,
    children: str,
) -> str:
    if lastmod is not None and changefreq is not None and priority is not None:
        return (
            f"<url><loc>{loc}</loc><lastmod>{lastmod}</lastmod><changefreq>{changefreq}"
            f"</changefreq><priority>{priority}</priority>{children}</url>\n"
        )
    parts = ["<url><loc>", loc, "</loc>"]
    if lastmod is not None:
        parts += ["<lastmod>", lastmod, "</lastmod>"]
    if changefreq is not None:
        parts += ["<changefreq>", changefreq, "</changefreq>"]
    if priority is not None:
        parts += ["<priority>", priority, "</priority>"]
    parts += [children, "</url>\n"]
    return "".join(parts)


def _extension_elements(extras: Extras, declared: Collection[str]) -> str:
    """The ``<xhtml:link>``, image, video and news elements of one ``<url>``."""
    parts: list[str] = []
    if extras.alternates:
        link = _LINK if "xhtml" in declared else _LINK_DECLARING
        alternates = extras.alternates
        if needs_escape("".join(map("".join, alternates))):
            alternates = tuple(
                (hreflang.translate(_ESCAPES), href.translate(_ESCAPES))
                for hreflang, href in alternates
            )
        # One f-string per link: the writer's hot path on a translated site.
        parts += [f'{link}{hreflang}" href="{href}"/>' for hreflang, href in alternates]
    if extras.images:
        image = "<image:image>" if "image" in declared else _IMAGE_DECLARING
        uris = extras.images
        if needs_escape("".join(uris)):
            uris = tuple(uri.translate(_ESCAPES) for uri in uris)
        for uri in uris:
            parts += [image, "<image:loc>", uri, "</image:loc></image:image>"]
    for video in extras.videos:
        _video_element(parts, video, "video" in declared)
    if extras.news is not None:
        _news_element(parts, extras.news, "news" in declared)
    return "".join(parts)


_IMAGE_DECLARING = f'<image:image xmlns:image="{IMAGE_NAMESPACE}">'


def _text(parts: list[str], name: str, value: str | None) -> None:
    if value is not None:
        parts += ["<", name, ">", value.translate(_ESCAPES), "</", name, ">"]


def _video_element(parts: list[str], video: VideoElement, declared: bool) -> None:
    # The order is the schema's sequence.
    parts.append("<video:video>" if declared else f'<video:video xmlns:video="{VIDEO_NAMESPACE}">')
    _text(parts, "video:thumbnail_loc", video.thumbnail_loc)
    _text(parts, "video:title", video.title)
    _text(parts, "video:description", video.description)
    _text(parts, "video:content_loc", video.content_loc)
    _text(parts, "video:player_loc", video.player_loc)
    _text(parts, "video:duration", video.duration)
    _text(parts, "video:expiration_date", video.expiration_date)
    _text(parts, "video:rating", video.rating)
    _text(parts, "video:view_count", video.view_count)
    _text(parts, "video:publication_date", video.publication_date)
    for tag in video.tags:
        _text(parts, "video:tag", tag)
    _text(parts, "video:family_friendly", video.family_friendly)
    if video.restriction is not None:
        relationship, countries = video.restriction
        parts += ['<video:restriction relationship="', relationship, '">', countries]
        parts.append("</video:restriction>")
    _text(parts, "video:requires_subscription", video.requires_subscription)
    if video.uploader is not None:
        if video.uploader_info is not None:
            parts += ['<video:uploader info="', video.uploader_info.translate(_ESCAPES), '">']
        else:
            parts.append("<video:uploader>")
        parts += [video.uploader.translate(_ESCAPES), "</video:uploader>"]
    if video.platform is not None:
        relationship, platforms = video.platform
        parts += ['<video:platform relationship="', relationship, '">', platforms]
        parts.append("</video:platform>")
    _text(parts, "video:live", video.live)
    parts.append("</video:video>")


def _news_element(parts: list[str], news: NewsElement, declared: bool) -> None:
    parts.append("<news:news>" if declared else f'<news:news xmlns:news="{NEWS_NAMESPACE}">')
    parts.append("<news:publication>")
    _text(parts, "news:name", news.name)
    _text(parts, "news:language", news.language)
    parts.append("</news:publication>")
    _text(parts, "news:publication_date", news.publication_date)
    _text(parts, "news:title", news.title)
    parts.append("</news:news>")


def sitemap_element(loc: str, lastmod: str | None) -> str:
    """One ``<sitemap>`` element of an index."""
    if lastmod is None:
        return f"<sitemap><loc>{loc.translate(_ESCAPES)}</loc></sitemap>\n"
    return f"<sitemap><loc>{loc.translate(_ESCAPES)}</loc><lastmod>{lastmod}</lastmod></sitemap>\n"


# The share of its byte limit past which a document records each element's size.
NEAR_SHARE = 0.85


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
        # The extension prefixes the root declares for the writer's own elements.
        self._declared = declared_prefixes(self.namespaces)
        self._closing = closing
        self._closing_size = len(closing.encode())
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.stats = WriteStats()
        self.started = False
        # Whether an element was left out for the document's byte limit (not its own size).
        self.overflowed = False
        # Each element's size in the chunks that end past NEAR_SHARE of max_bytes:
        # (URLs before the chunk, bytes before its first element, sizes). Where a page
        # that goes over its limit is cut is measured from them (``urls_within``).
        self._near: list[tuple[int, int, list[int]]] = []
        self._near_from = NEAR_SHARE * max_bytes
        # When a list: each element's size in bytes is added to it as it is written
        # (the export cuts pages in blocks of elements by them).
        self.sizes: list[int] | None = None

    def render_entries(self, entries: Chunk) -> bytes:
        """The bytes of a chunk of entries, as ``<url>`` elements (see :meth:`render`)."""
        if isinstance(entries, RenderedChunk):
            if entries.declared <= self._declared:
                return self.render(entries.elements, legal=entries.legal)
            entries = entries.entries()  # written for a root declaring more than this one
        if isinstance(entries, PlainChunk):
            # Every row's values proven legal: only what all rows share is left to check.
            shared = (*entries.literals, entries.lastmod, entries.changefreq, entries.priority)
            legal = entries.legal and not has_illegal_xml_chars("".join(filter(None, shared)))
            return self.render(plain_url_elements(entries), legal=legal)
        return self.render(url_elements(entries, declared=self._declared))

    def render(self, elements: Iterable[str], *, legal: bool = False) -> bytes:
        """Encode already-rendered elements, enforcing the count and size limits.

        ``legal``: their maker proved they hold no character outside XML 1.0.
        """
        stats = self.stats
        room = self.max_urls - stats.urls
        chunk = list(elements)
        if len(chunk) > room:
            stats.skip(SkipReason.OVER_URL_LIMIT, len(chunk) - room)
            chunk = chunk[: max(room, 0)]
        if not chunk:
            return b""
        text = "".join(chunk)
        if not legal and has_illegal_xml_chars(text):
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
            self.overflowed = True
            data, kept = self._trim_to(head, chunk, budget)
            stats.skip(SkipReason.OVER_SIZE_LIMIT, len(chunk) - kept)
            chunk = chunk[:kept]
            if not kept:
                return b""
        if stats.bytes + len(data) > self._near_from:
            # Near the limit only (a few chunks of a large page): one size per element.
            sizes = list(map(len, chunk)) if data.isascii() else [len(e.encode()) for e in chunk]
            self._near.append((stats.urls, stats.bytes + len(head), sizes))
        self.started = True
        stats.urls += len(chunk)
        stats.bytes += len(data)
        if self.sizes is not None:
            if head:
                self.sizes.append(len(head))  # the opening tag, as an element of its own
            if data.isascii():
                self.sizes.extend(map(len, chunk))
            else:
                self.sizes.extend(len(element.encode()) for element in chunk)
        return data

    def urls_within(self, size: int) -> int | None:
        """How many of the elements written so far fit in ``size`` bytes, closing tag included.

        Measured from each element's size near the limit (``NEAR_SHARE``); None
        when ``size`` is below what was measured.
        """
        budget = size - self._closing_size
        if not self._near or self._near[0][1] > budget:
            return None
        fitting = 0
        for urls, start, sizes in self._near:
            total = start
            for index, element_size in enumerate(sizes):
                total += element_size
                if total > budget:
                    return urls + index
            fitting = urls + len(sizes)
        return fitting

    def _within_element_bound(
        self, chunk: list[str], text: str, bound: int
    ) -> tuple[list[str], str]:
        # ASCII (nearly always: URIs are percent-encoded) has one byte per character.
        ascii_text = text.isascii()
        if ascii_text and max(map(len, chunk)) <= bound:
            return chunk, text  # the common case: no list of sizes
        sizes = list(map(len, chunk)) if ascii_text else [len(e.encode()) for e in chunk]
        if max(sizes) <= bound:
            return chunk, text
        kept = [element for element, size in zip(chunk, sizes, strict=True) if size <= bound]
        self.stats.skip(SkipReason.OVER_SIZE_LIMIT, len(chunk) - len(kept))
        return kept, "".join(kept)

    def fits(self, more_urls: int) -> bool:
        """Whether ``more_urls`` more elements, each within ``max_element_bytes``, fit.

        Once true, nothing that follows can take the document over ``max_bytes``:
        what was rendered so far can be sent (see ``documents.render_page``).
        """
        if self.max_element_bytes is None:
            return False
        more = max(0, min(more_urls, self.max_urls - self.stats.urls))
        worst = self.stats.bytes + more * self.max_element_bytes + self._closing_size
        return worst <= self.max_bytes

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
    stylesheet: str | None = None,
) -> DocumentWriter:
    """A writer for a ``<urlset>`` document declaring the extension ``namespaces``."""
    return DocumentWriter(
        urlset_open(namespaces, stylesheet),
        URLSET_CLOSE,
        max_urls=max_urls,
        max_bytes=max_bytes,
        namespaces=namespaces,
        max_element_bytes=max_element_bytes,
    )


def index_writer(
    *, max_urls: int, max_bytes: int, stylesheet: str | None = None
) -> DocumentWriter:
    """A writer for a ``<sitemapindex>`` document."""
    return DocumentWriter(
        index_open(stylesheet), INDEX_CLOSE, max_urls=max_urls, max_bytes=max_bytes
    )
