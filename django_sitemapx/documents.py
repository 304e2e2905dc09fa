"""Whole sitemap documents as byte streams, and the paths they are served at.

The views and the export both render through here, so a served document and
an exported file are the same bytes.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from typing import overload

from django.templatetags.static import static
from django.urls import NoReverseMatch, reverse

from .conf import PROTOCOL_MAX_BYTES, PROTOCOL_MAX_URLS, app_settings
from .entries import Chunk, ChunkStream, EntryStream, EntryTuple, Skipped, close_stream
from .exceptions import VALUE_REASONS, SkipReason
from .locations import LocationBuilder, Origin
from .overrides import adjust_index, apply_overrides
from .registry import SitemapRegistry
from .skips import record_skips
from .sources import ListedPage, Page, Source
from .sources.base import PlainChunkEntries
from .sources.languages import alternate_hosts
from .writer import (
    DocumentWriter,
    WriteStats,
    index_writer,
    sitemap_element,
    urlset_writer,
)

logger = logging.getLogger("django_sitemapx")

# The namespace of django_sitemapx.urls (its app_name), which every reverse() here names.
URL_NAMESPACE = "django_sitemapx"

# Maps (section, page number) to the path a document is served at.
PagePath = Callable[[str, int], str]


def served_here() -> bool:
    """True when this site's URLconf includes ``django_sitemapx.urls`` (not export-only)."""
    try:
        reverse(f"{URL_NAMESPACE}:index")
    except NoReverseMatch:
        return False
    return True


def index_path() -> str:
    """The path of the index: from the URLconf, else ``/sitemap.xml``."""
    try:
        return reverse(f"{URL_NAMESPACE}:index")
    except NoReverseMatch:  # an export-only site need not include django_sitemapx.urls
        return "/sitemap.xml"


# One index file lists at most this many pages (the protocol's limit); the pages
# past it go to /sitemap-index-2.xml, /sitemap-index-3.xml and so on.
INDEX_CAPACITY = PROTOCOL_MAX_URLS


def index_part_path(part: int) -> str:
    """The path of index file ``part``: 1 is :func:`index_path`, then ``/sitemap-index-2.xml``."""
    if part == 1:
        return index_path()
    try:
        return reverse(f"{URL_NAMESPACE}:index-part", kwargs={"part": str(part)})
    except NoReverseMatch:
        return f"/sitemap-index-{part}.xml"


def index_parts(listed: list[ListedPage]) -> list[list[ListedPage]]:
    """``listed`` in index files of at most ``INDEX_CAPACITY`` pages each, in order."""
    return [
        listed[start : start + INDEX_CAPACITY] for start in range(0, len(listed), INDEX_CAPACITY)
    ]


def index_paths(registry: SitemapRegistry, origin: Origin | None = None) -> list[str]:
    """The path of every index file of ``registry`` (on ``origin``): list them all (robots.txt)."""
    parts = index_parts(listed_pages(registry, origin))
    return [index_part_path(number) for number in range(1, max(len(parts), 1) + 1)]


def stylesheet_url() -> str | None:
    """The URL of ``SITEMAPX_XML_STYLESHEET`` as the documents link it; None: no stylesheet.

    A URL or a path from the root is used as it is; any other value names a static file.
    """
    value = app_settings.XML_STYLESHEET
    if not value:
        return None
    if value.startswith("/") or "://" in value:
        return value
    return static(value)


def page_path(section: str, number: int) -> str:
    """The path of a page, e.g. ``/sitemap-article-2.xml``: from the URLconf, else at the top."""
    kwargs = {"section": section, "page": str(number)}
    try:
        return reverse(f"{URL_NAMESPACE}:section", kwargs=kwargs)
    except NoReverseMatch:
        return f"/sitemap-{section}-{number}.xml"


class DocumentStream:
    """A document's bytes, chunk by chunk; ``stats`` counts what was written so far."""

    def __init__(
        self, chunks: Iterator[bytes], stats: WriteStats, source: ChunkStream | None = None
    ) -> None:
        self._chunks = chunks
        self.stats = stats
        self._source = source

    def __iter__(self) -> Iterator[bytes]:
        return self._chunks

    def close(self) -> None:
        """Stop early (the client went away): release the source's cursor now."""
        close_stream(self._chunks)
        # The source was started for the first chunk: closing the chunks before
        # one was read would not reach it.
        close_stream(self._source)


def section_schemes(registry: SitemapRegistry, default: str) -> dict[str, str]:
    """Each section's scheme (its ``protocol``, else ``default``) for the index's links."""
    return {source.section: source.scheme(default) for source in registry}


def listed_pages(registry: SitemapRegistry, origin: Origin | None = None) -> list[ListedPage]:
    """Every non-empty page of every section served on ``origin``, in registration order.

    Each source counts its rows as served on that host (see ``Source.for_origin``);
    with no ``origin``, every section of the registry is listed, unbound.
    """
    sources = list(registry) if origin is None else registry.for_origin(origin)
    listed = [
        ListedPage(source.section, summary)
        for source in sources
        for summary in source.page_summaries()
    ]
    if origin is None:
        return adjust_index(listed)
    fallbacks = {
        source.section: fallback for source in sources if (fallback := source.fallback_host())
    }
    return adjust_index(listed, origin.host, fallbacks)


def render_index(
    listed: list[ListedPage],
    origin: Origin,
    page_path: PagePath,
    schemes: Mapping[str, str] | None = None,
) -> DocumentStream | None:
    """The ``<sitemapindex>`` listing ``listed`` at ``page_path``; None if there is none.

    ``schemes`` gives a section's scheme where it is not the origin's (a source's
    ``protocol``), so the index links each page with the scheme its URLs have.
    """
    if not listed:
        return None
    writer = index_writer(
        max_urls=PROTOCOL_MAX_URLS, max_bytes=PROTOCOL_MAX_BYTES, stylesheet=stylesheet_url()
    )
    prefixes = {
        section: Origin(scheme, origin.host).prefix for section, scheme in (schemes or {}).items()
    }
    elements = [
        sitemap_element(
            prefixes.get(listed_page.section, origin.prefix)
            + page_path(listed_page.section, listed_page.summary.number),
            listed_page.summary.lastmod,
        )
        for listed_page in listed
    ]
    body = writer.render(elements)
    if writer.stats.skipped_total:
        logger.error(
            "The sitemap index was cut at %s of %s pages (protocol limits); raise the "
            "sections' limit or split the site.",
            writer.stats.urls,
            len(listed),
        )
    return DocumentStream(iter([body, writer.close()]), writer.stats)


def page_entries(
    source: Source, page: Page, origin: Origin, skipped: Counter[str]
) -> list[EntryTuple]:
    """The entries of ``page`` as its document lists them, overrides applied, for people to read.

    The admin's page browser reads these rather than the XML. ``skipped`` counts
    the entries the source left out, by reason; entries past the source's limit,
    which the writer would leave out too, are counted as ``over_url_limit``.
    """
    stream = page.entries(LocationBuilder(origin))
    entries: list[EntryTuple] = []
    try:
        chunks = read_chunks(stream, skipped)
        if source.overridable:
            chunks = apply_overrides(
                chunks,
                source.section,
                origin.host,
                alternate_hosts(source, origin),
                source.fallback_host(),
            )
        for chunk in chunks:
            entries.extend(chunk)
    finally:
        close_stream(stream)
    limit = source.get_limit()
    if len(entries) > limit:
        skipped[SkipReason.OVER_URL_LIMIT] += len(entries) - limit
        del entries[limit:]
    return entries


@overload
def read_chunks(
    stream: EntryStream, skipped: MutableMapping[str, int]
) -> Iterator[Sequence[EntryTuple]]: ...
@overload
def read_chunks(stream: ChunkStream, skipped: MutableMapping[str, int]) -> Iterator[Chunk]: ...
def read_chunks(stream: ChunkStream, skipped: MutableMapping[str, int]) -> Iterator[Chunk]:
    """The chunks of a page's ``stream``; its ``Skipped`` counts are added to ``skipped``.

    Every reader of a page's entries reads them through here: the writer
    (``skipped`` is its ``WriteStats.skipped``), the admin's page browser and
    its URL inspector. ``skipped`` maps a ``SkipReason`` to a total.
    """
    for item in stream:
        if isinstance(item, Skipped):
            skipped[item.reason] = skipped.get(item.reason, 0) + item.total
        else:
            yield item


# A page that went over the byte limit is split and rendered again at most this often.
_REPAGES = 3


def render_page(
    source: Source, page: Page, origin: Origin, *, repages: int = _REPAGES
) -> DocumentStream | None:
    """The ``<urlset>`` of ``page`` of ``source`` as a stream; None if it would hold no URL.

    The first chunk is produced before returning, so an empty or fully skipped
    page is known before any response starts (an empty ``<urlset>`` is invalid).

    Bytes are held back until the rest of the page cannot take it over the
    protocol's 50 MB (``DocumentWriter.fits``): pages sized by the URL limit
    (``ModelSource``) send their first byte once that is certain. A page that
    goes over it before then loses no URL: its source splits it
    (``Source.page_overflowed``) and the page is rendered again, nothing sent.
    """
    writer = urlset_writer(
        max_urls=source.get_limit(),
        max_bytes=PROTOCOL_MAX_BYTES,
        namespaces=source.get_namespaces(),
        max_element_bytes=source.max_url_bytes(),
        stylesheet=stylesheet_url(),
    )
    entries, builder = page.entries, LocationBuilder(origin)
    # A PlainChunk is rendered from its columns, a RenderedChunk as its source wrote it:
    # no entry built.
    stream = (
        entries.chunks(builder) if isinstance(entries, PlainChunkEntries) else entries(builder)
    )
    chunks: Iterator[Chunk] = read_chunks(stream, writer.stats.skipped)
    if source.overridable:
        chunks = apply_overrides(
            chunks,
            source.section,
            origin.host,
            alternate_hosts(source, origin),
            source.fallback_host(),
        )
    try:
        for chunk in chunks:
            first = writer.render_entries(chunk)
            if first:
                rendering = _Rendering(source, page, origin, writer, stream, repages)
                body = rendering.body(first, chunks)
                return DocumentStream(body, writer.stats, stream)
    except BaseException:
        close_stream(stream)
        raise
    _log_skips(source.section, page.summary.number, writer.stats)
    return None


class _Rendering:
    """The body of one page being rendered (see ``render_page``)."""

    def __init__(
        self,
        source: Source,
        page: Page,
        origin: Origin,
        writer: DocumentWriter,
        stream: ChunkStream,
        repages: int,
    ) -> None:
        self.source = source
        self.number = page.summary.number
        self.origin = origin
        self.writer = writer
        self.stream = stream
        self.repages = repages
        self.urls = source.max_page_urls()

    def body(self, first: bytes, chunks: Iterator[Chunk]) -> Iterator[bytes]:
        writer, stream = self.writer, self.stream
        held: list[bytes] | None = []
        try:
            # The first chunk, rendered already, is checked as the others are.
            for chunk in itertools.chain([None], chunks):
                data = first if chunk is None else writer.render_entries(chunk)
                if held is None:
                    if data:
                        yield data
                    continue
                if data:
                    held.append(data)
                if writer.overflowed:
                    again = self._again()
                    if again is not None:
                        yield from again
                        return
                    # Kept as it is (the writer counted what it left out).
                    yield from held
                    held = None
                    continue
                if writer.fits(self.urls - writer.stats.urls):
                    yield from held  # as they are: joining them would copy the page
                    held = None
            if held is not None:
                yield from held
        except BaseException:  # an error, or the client went away (GeneratorExit)
            close_stream(stream)
            raise
        yield writer.close()
        _log_skips(self.source.section, self.number, writer.stats)
        self.source.page_built(self.number, writer.stats.urls, writer.stats.bytes)

    def _again(self) -> Iterator[bytes] | None:
        """The page rendered again once its source split it; None if it was not split."""
        writer = self.writer
        if not self.repages or not self.source.page_overflowed(
            self.number, writer.stats.urls, writer.stats.bytes, fitting=writer.urls_within
        ):
            return None
        close_stream(self.stream)
        page = self.source.page_at(self.number, self.origin)
        again = (
            render_page(self.source, page, self.origin, repages=self.repages - 1)
            if page is not None
            else None
        )
        if again is None:
            return None
        return self._following(again)

    def _following(self, again: DocumentStream) -> Iterator[bytes]:
        try:
            yield from again
        finally:
            again.close()
            # What was sent is the new rendering's: its counts stand for the page.
            self.writer.stats.urls = again.stats.urls
            self.writer.stats.bytes = again.stats.bytes
            self.writer.stats.skipped.clear()
            self.writer.stats.skipped.update(again.stats.skipped)


def _log_skips(section: str, number: int, stats: WriteStats) -> None:
    record_skips(section, number, stats.skipped)
    if stats.skipped:
        # An entry kept without an invalid value is not an entry left out.
        dropped = sum(n for reason, n in stats.skipped.items() if reason in VALUE_REASONS)
        logger.warning(
            "Sitemap section %r page %s: %s entries left out, %s values dropped %s",
            section,
            number,
            stats.skipped_total - dropped,
            dropped,
            dict(sorted(stats.skipped.items())),
            extra={"section": section, "page": number, "skipped": dict(stats.skipped)},
        )
