"""From a document to a response: a cache hit, a 304, or a miss built into the cache.

A miss is built to the end at the server's pace, both variants (plain and gzip)
stored part by part as they are produced, and only then served from the stored
copy: how fast its first client reads, or whether it stays, changes nothing.
Of many requests missing the same document at once, one builds it and the
others wait for the stored copy. Without a working cache a document is
streamed as it is rendered.

- ``cache``: cache keys, records and build locks (generations: ``generations``);
- ``local``: the per-process copies of recently served documents;
- ``conditional``: ETag, Last-Modified and 304s;
- ``streams``: gzip, keeping the bytes for the cache, ASGI;
- ``storage``: serving exported files instead of building documents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.core.handlers.asgi import ASGIRequest
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    StreamingHttpResponse,
)
from django.utils import translation

from ..compression import gzip_compressor
from ..conf import app_settings
from ..documents import (
    DocumentStream,
    PagePath,
    index_parts,
    listed_pages,
    render_index,
    render_page,
    section_schemes,
)
from ..generations import (
    global_generation,
    index_generation,
    page_generation,
    section_generation,
)
from ..locations import Origin
from ..registry import SitemapRegistry
from ..sources import PageSummary, Source
from .cache import DocumentCache, Record, document_key, host_part, path_part
from .conditional import Validators, make_validators, not_modified, set_headers
from .streams import AsyncBody, ClosingBody, encode

XML_CONTENT_TYPE = "application/xml; charset=utf-8"
# A .xml.gz file, not an encoded transfer: no Content-Encoding (crawlers have
# been seen to fail on "Content-Encoding: gzip" for .gz sitemaps).
GZIP_CONTENT_TYPE = "application/gzip"
XML, GZ = "xml", "gz"


def content_type(gz: bool) -> str:
    """The ``Content-Type`` of a document's plain or gzip variant."""
    return GZIP_CONTENT_TYPE if gz else XML_CONTENT_TYPE


@dataclass(frozen=True)
class Prepared:
    """What is known of a document before its body: enough for its validators.

    ``etag_basis`` is the text the ETag digests besides the key: row counts and lastmods.
    ``lastmods`` has each part's greatest lastmod, None for a part with an undated URL.
    """

    etag_basis: str
    lastmods: tuple[str | None, ...]
    render: Callable[[], DocumentStream | None]
    # When the document stops being true by itself (seconds since the epoch):
    # a news page whose oldest item ages out. None: only invalidation stales it.
    expires: float | None = None


@dataclass(frozen=True)
class DocumentSpec:
    """Names a document for the cache and says how to make it.

    ``identity`` holds everything that changes its bytes, ``generations`` the
    cache generations it depends on. ``prepare`` reads what is known before
    the body, or raises ``Http404`` for a document with no URL.
    """

    identity: tuple[str, ...]
    generations: tuple[str, ...]
    prepare: Callable[[], Prepared]


def index_document(
    registry: SitemapRegistry, origin: Origin, page_path: PagePath, part: int = 1
) -> DocumentSpec:
    """Index file ``part`` of ``registry`` for ``origin``, listing pages at ``page_path``.

    Part 1 is ``/sitemap.xml``; a sitemap of more than ``INDEX_CAPACITY`` pages
    lists the rest in parts 2, 3 ... (``/sitemap-index-2.xml``).
    """

    def prepare() -> Prepared:
        parts = index_parts(listed_pages(registry, origin))
        if len(parts) < part:
            raise Http404(
                "The sitemap has no URL on this host." if part == 1 else "No such sitemap index."
            )
        listed = parts[part - 1]
        basis = ";".join(
            f"{listed_page.section}:{listed_page.summary.number}:{listed_page.summary.rows}:{listed_page.summary.lastmod}"
            for listed_page in listed
        )
        lastmods = tuple(dated_lastmod(listed_page.summary) for listed_page in listed)
        schemes = section_schemes(registry, origin.scheme)
        expiries = [when for source in registry if (when := source.expires()) is not None]
        return Prepared(
            basis,
            lastmods,
            lambda: render_index(listed, origin, page_path, schemes),
            min(expiries, default=None),
        )

    listed = GZ if app_settings.INDEX_LINKS_GZIP else XML
    return DocumentSpec(
        (host_part(origin), "index", str(part), _language(), listed),
        (global_generation(), index_generation()),
        prepare,
    )


def page_document(source: Source, number: int, origin: Origin) -> DocumentSpec:
    """Page ``number`` of ``source`` for ``origin``.

    ``source`` is the one bound to the host (``Source.for_origin``); the key holds
    the host, so a section that filters its rows by host is cached per host.
    """

    def prepare() -> Prepared:
        expires = source.expires()  # before the rows are read: never later than they say
        page = source.page_at(number, origin)
        if page is None:
            raise Http404("This sitemap page has no URL.")
        summary = page.summary
        return Prepared(
            f"{summary.rows}:{summary.lastmod}:{summary.undated}",
            (dated_lastmod(summary),),
            lambda: render_page(source, page, origin),
            expires,
        )

    return DocumentSpec(
        (
            host_part(origin),
            source.section,
            str(number),
            _language(),
            # The page's capacity: a change of limit, languages or URL pattern
            # renumbers the pages.
            f"limit{source.get_limit()}:rows{source.rows_per_page()}",
        ),
        (
            global_generation(),
            section_generation(source.section),
            page_generation(source.section, number),
        ),
        prepare,
    )


def serve(request: HttpRequest, spec: DocumentSpec, gz: bool) -> HttpResponseBase:
    """The response for a document: from cache, 304, or built and streamed.

    Raises ``Http404`` when the document would hold no URL.
    """
    store = DocumentCache()
    tokens = store.tokens(spec.generations)
    if tokens is None:
        return _uncached(request, spec, gz)
    # The path tells apart documents of registries routed elsewhere; both
    # variants (.xml and .xml.gz) share one key.
    path = path_part(request.path_info.removesuffix(".gz"))
    key = document_key((*spec.identity, path), tokens)
    held = store.record(key) or store.claim(key)
    if held is None and store.available:
        held = store.wait(key, app_settings.CACHE_WAIT)
    if isinstance(held, Record):
        response = _from_cache(request, store, key, held, gz)
        if response is not None:
            return response
        held = store.lock(key)  # a part was evicted: rebuild the document and store it again
    lock = held
    try:
        prepared = spec.prepare()
        validators = make_validators(key, prepared.etag_basis, prepared.lastmods)
        response = not_modified(request, validators, gz)
        if response is not None:
            if lock is not None:
                store.unlock(lock)
            return response
        if lock is not None:
            # Built and stored at the server's pace, before any byte is sent: a
            # slow or vanished client costs this one build, and the requests
            # waiting for it are served from the stored copy as soon as it exists.
            try:
                record = _build(store, key, _render(prepared), validators, prepared.expires)
            finally:
                store.unlock(lock)
            if record is not None and record.parts.get(GZ if gz else XML):
                body = store.parts(key, record, GZ if gz else XML)
                return _streaming(request, body, validators, gz)
            # The cache could not keep it (failing, or evicting at once): build it
            # again, streamed to this client alone.
        stream = _render(prepared)
        body = ClosingBody(encode(stream, gz), stream.close)
        return _streaming(request, body, validators, gz)
    except BaseException:
        if lock is not None:
            store.unlock(lock)
        raise


def _from_cache(
    request: HttpRequest, store: DocumentCache, key: str, record: Record, gz: bool
) -> HttpResponseBase | None:
    validators = Validators(record.etag, record.last_modified)
    response = not_modified(request, validators, gz)
    if response is not None:
        return response
    body = store.body(key, record, GZ if gz else XML)
    if body is None:
        return None
    response = HttpResponse(body, content_type=content_type(gz))
    response.headers["Content-Length"] = str(len(body))
    set_headers(response, validators, gz)
    return response


def _build(
    store: DocumentCache,
    key: str,
    stream: DocumentStream,
    validators: Validators,
    expires: float | None = None,
) -> Record | None:
    """Render ``stream`` to the end into the cache, both variants; None if the cache failed.

    Memory stays flat: each variant is stored part by part as it is produced.
    ``expires`` is the document's own expiry (see ``Prepared``): the record
    carries it, and nothing is kept past it.
    """
    writer = store.part_writer(key, expires)
    compressor = gzip_compressor()
    try:
        for chunk in stream:
            packed = compressor.compress(chunk)
            if not writer.add(XML, chunk) or not writer.add(GZ, packed):
                return None
        if not writer.add(GZ, compressor.flush()):
            return None
    finally:
        stream.close()
    return writer.finish(validators.etag, validators.last_modified)


def _uncached(request: HttpRequest, spec: DocumentSpec, gz: bool) -> HttpResponseBase:
    # Without generations nothing catches a change that leaves the row count
    # and lastmod alone, so conditional requests get the full document.
    prepared = spec.prepare()
    validators = make_validators(
        ":".join(("uncached", *spec.identity)), prepared.etag_basis, prepared.lastmods
    )
    stream = _render(prepared)
    return _streaming(request, ClosingBody(encode(stream, gz), stream.close), validators, gz)


def _render(prepared: Prepared) -> DocumentStream:
    stream = prepared.render()
    if stream is None:
        raise Http404("This sitemap document has no URL.")
    return stream


def _streaming(
    request: HttpRequest, stream: Iterator[bytes], validators: Validators, gz: bool
) -> HttpResponseBase:
    if isinstance(request, ASGIRequest):
        # A sync iterator would be consumed whole before the first byte under ASGI.
        response = StreamingHttpResponse(AsyncBody(stream), content_type=content_type(gz))
    else:
        response = StreamingHttpResponse(stream, content_type=content_type(gz))
    set_headers(response, validators, gz)
    return response


def dated_lastmod(summary: PageSummary) -> str | None:
    """A page's greatest lastmod if every URL of it has one, else None (no Last-Modified)."""
    return summary.lastmod if not summary.undated else None


def _language() -> str:
    return translation.get_language() or "-"
