"""From a document to a response: a cache hit, a 304, or a streamed miss that fills the cache.

A miss is streamed to its client while the bytes are kept aside; both variants
(plain and gzip) are stored once the document is complete, so a client that
disconnects leaves nothing in the cache. Of many requests missing the same
document at once, one builds it and the others wait for the stored copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
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

from .cache import (
    DocumentCache,
    Stored,
    document_key,
    global_generation,
    host_part,
    index_generation,
    page_generation,
    path_part,
    section_generation,
    token_time,
)
from .conf import app_settings
from .documents import PagePath, index_entries, render_index, render_page
from .locations import Site
from .registry import SitemapRegistry
from .sources import Source
from .streams import Filling, async_stream, encode
from .validators import Validators, make_validators, not_modified, page_summary, set_headers

XML_CONTENT_TYPE = "application/xml; charset=utf-8"
# A .xml.gz file, not an encoded transfer: no Content-Encoding (crawlers have
# been seen to fail on "Content-Encoding: gzip" for .gz sitemaps).
GZIP_CONTENT_TYPE = "application/gzip"
XML, GZ = "xml", "gz"

Render = Callable[[], Iterator[bytes] | None]


@dataclass(frozen=True)
class Prepared:
    """What is known of a document before its body: enough for its validators."""

    summary: str
    lastmods: tuple[str | None, ...]
    render: Render


@dataclass(frozen=True)
class Document:
    """A sitemap document: what identifies its bytes, its generations, how to make it."""

    identity: tuple[str, ...]
    generations: tuple[str, ...]
    prepare: Callable[[], Prepared | None]


def index_document(registry: SitemapRegistry, site: Site, page_path: PagePath) -> Document:
    """The index of ``registry`` for ``site``, listing pages at ``page_path``."""

    def prepare() -> Prepared | None:
        entries = index_entries(registry)
        if not entries:
            return None
        summary = ";".join(
            f"{entry.section}:{entry.page.number}:{entry.page.rows}:{entry.page.lastmod}"
            for entry in entries
        )
        lastmods = tuple(entry.page.lastmod for entry in entries)
        return Prepared(summary, lastmods, lambda: render_index(entries, site, page_path))

    listed = GZ if app_settings.GZIP else XML
    return Document(
        (host_part(site.protocol, site.domain), "index", _language(), listed),
        (global_generation(), index_generation()),
        prepare,
    )


def page_document(source: Source, page: int, site: Site) -> Document:
    """Page ``page`` of ``source`` for ``site``."""

    def prepare() -> Prepared | None:
        summary = page_summary(source, page)
        if summary is None:
            return None
        return Prepared(
            f"{summary.rows}:{summary.lastmod}",
            (summary.lastmod,),
            lambda: render_page(source, page, site),
        )

    return Document(
        (
            host_part(site.protocol, site.domain),
            source.section,
            str(page),
            _language(),
            f"limit{source.get_limit()}",
        ),
        (
            global_generation(),
            section_generation(source.section),
            page_generation(source.section, page),
        ),
        prepare,
    )


def serve(request: HttpRequest, document: Document, gz: bool) -> HttpResponseBase:
    """The response for ``document``: from cache, 304, or built and streamed.

    Raises ``Http404`` when the document would hold no URL.
    """
    store = DocumentCache()
    tokens = store.tokens(document.generations)
    if tokens is None:
        return _uncached(request, document, gz)
    # The path tells apart documents of registries routed elsewhere; both
    # variants (.xml and .xml.gz) share one key.
    path = path_part(request.path_info.removesuffix(".gz"))
    key = document_key((*document.identity, path), tokens)
    stored = store.record(key)
    lock: str | None = None
    if stored is None:
        stored, lock = store.claim(key)
        if stored is None and lock is None and store.available:
            stored, lock = store.wait(key, float(app_settings.CACHE_WAIT))
    if stored is not None:
        response = _from_cache(request, store, key, stored, gz)
        if response is not None:
            return response
        if lock is None:  # a part was evicted: rebuild and store it again
            lock = store.lock(key)
    try:
        return _build(request, document, gz, store, key, tokens, lock)
    except BaseException:
        if lock is not None:
            store.unlock(key, lock)
        raise


def _from_cache(
    request: HttpRequest, store: DocumentCache, key: str, stored: Stored, gz: bool
) -> HttpResponseBase | None:
    validators = Validators(stored.etag, stored.last_modified)
    response = not_modified(request, validators, gz)
    if response is not None:
        return response
    body = store.body(key, stored, GZ if gz else XML)
    if body is None:
        return None
    response = HttpResponse(body, content_type=GZIP_CONTENT_TYPE if gz else XML_CONTENT_TYPE)
    response.headers["Content-Length"] = str(len(body))
    set_headers(response, validators, gz)
    return response


def _build(
    request: HttpRequest,
    document: Document,
    gz: bool,
    store: DocumentCache,
    key: str,
    tokens: Sequence[str],
    lock: str | None,
) -> HttpResponseBase:
    prepared = _prepare(document)
    validators = make_validators(
        key, prepared.summary, prepared.lastmods, [token_time(token) for token in tokens]
    )
    response = not_modified(request, validators, gz)
    if response is not None:
        if lock is not None:
            store.unlock(key, lock)
        return response
    stream = _render(prepared)
    if lock is None:
        return _streaming(request, encode(stream, gz, None), validators, gz)

    def keep(plain: bytes, packed: bytes) -> None:
        record = Stored(validators.etag, validators.last_modified, {})
        store.store(key, record, {XML: plain, GZ: packed})

    filling = Filling(encode(stream, gz, keep), lambda: store.unlock(key, lock))
    return _streaming(request, filling, validators, gz)


def _uncached(request: HttpRequest, document: Document, gz: bool) -> HttpResponseBase:
    # Without generations nothing catches a change that leaves the row count
    # and lastmod alone, so conditional requests get the full document.
    prepared = _prepare(document)
    validators = make_validators(
        ":".join(("uncached", *document.identity)), prepared.summary, prepared.lastmods, ()
    )
    return _streaming(request, encode(_render(prepared), gz, None), validators, gz)


def _prepare(document: Document) -> Prepared:
    prepared = document.prepare()
    if prepared is None:
        raise Http404("This sitemap document has no URL.")
    return prepared


def _render(prepared: Prepared) -> Iterator[bytes]:
    stream = prepared.render()
    if stream is None:
        raise Http404("This sitemap document has no URL.")
    return stream


def _streaming(
    request: HttpRequest, stream: Iterator[bytes], validators: Validators, gz: bool
) -> HttpResponseBase:
    content_type = GZIP_CONTENT_TYPE if gz else XML_CONTENT_TYPE
    if isinstance(request, ASGIRequest):
        # A sync iterator would be consumed whole before the first byte under ASGI.
        response = StreamingHttpResponse(async_stream(stream), content_type=content_type)
    else:
        response = StreamingHttpResponse(stream, content_type=content_type)
    set_headers(response, validators, gz)
    return response


def _language() -> str:
    return translation.get_language() or "-"
