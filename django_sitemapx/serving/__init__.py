"""From a document to a response: a cache hit, a 304, or a miss built into the cache.

A miss is built to the end at the server's pace (the plain variant, and the
gzip one if asked for), then sent from the chunks built, never read back, and
stored: by the store thread on a network cache (``background``), which releases
the build lock once it is stored; how fast its first client reads, or whether
the cache keeps it, changes nothing. A hit has every byte in hand before its response starts; a
part missing is a miss. Of many requests missing the same document at once,
one builds it and the others wait for the stored copy; at most
``SITEMAPX_CACHE_BUILDS`` documents are built at once per cache, and a request
that finds no build slot in time is answered 503. Without a working cache a
document is streamed as it is rendered.

- ``cache``: cache keys, records and build locks (generations: ``generations``);
- ``background``: the store thread, storing built documents off the request;
- ``local``: the per-process copies of recently served documents;
- ``conditional``: ETag, Last-Modified and 304s;
- ``streams``: gzip, keeping the bytes for the cache, ASGI;
- ``storage``: serving exported files instead of building documents.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.conf.urls.i18n import is_language_prefix_patterns_used
from django.core.handlers.asgi import ASGIRequest
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    StreamingHttpResponse,
)
from django.http.request import split_domain_port
from django.utils import translation

from ..compression import gzip_bytes, gzip_compressor
from ..conf import app_settings, default_language
from ..documents import (
    DocumentStream,
    PagePath,
    index_parts,
    listed_pages,
    render_index,
    render_page,
    section_schemes,
    stylesheet_url,
)
from ..generations import (
    global_generation,
    host_index_generation,
    index_generation,
    page_generations,
    section_generation,
)
from ..locations import Origin
from ..locations.origins import served_hosts, uses_sites_framework
from ..registry import SitemapRegistry
from ..skips import Skips, record_skips
from ..skips import held as held_skips
from ..sources import PageSummary, Source
from .cache import Built, DocumentCache, Lock, Record, document_key, host_part, path_part
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

    ``identity`` holds everything that changes its bytes but the language and
    the path (``serve`` adds those), ``generations`` the cache generations it
    depends on, ``origin`` the host it is served for. ``prepare`` reads what is known before
    the body, or raises ``Http404`` for a document with no URL.
    """

    identity: tuple[str, ...]
    generations: tuple[str, ...]
    origin: Origin
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
        (host_part(origin), "index", str(part), listed, _stylesheet_part()),
        (global_generation(), index_generation(), host_index_generation(origin.host)),
        origin,
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
            # The page's capacity: a change of limit, languages or URL pattern
            # renumbers the pages.
            f"limit{source.get_limit()}:rows{source.rows_per_page()}",
            _stylesheet_part(),
        ),
        (
            global_generation(),
            section_generation(source.section),
            *page_generations(source.section, source.generations_name(), number),
        ),
        origin,
        prepare,
    )


def _stylesheet_part() -> str:
    # The stylesheet instruction is in the bytes: a new one is a new document.
    return "css:" + path_part(stylesheet_url() or "")


def serve(request: HttpRequest, spec: DocumentSpec, gz: bool) -> HttpResponseBase:
    """The response for a document: from cache, 304, or built and sent whole.

    Raises ``Http404`` when the document would hold no URL. The document is
    made in the language of its URL (``url_language``), whatever the client
    asks for, so every client gets the same bytes and the cache one copy.
    """
    language = url_language(request)
    with translation.override(language):
        return _serve(request, spec, gz, language)


def _serve(request: HttpRequest, spec: DocumentSpec, gz: bool, language: str) -> HttpResponseBase:
    store = DocumentCache()
    if not _admitted(store, spec.origin):
        raise Http404("This host is not one the sitemap is served on.")
    current = store.current(spec.generations)
    if current is None:
        return _uncached(request, spec, gz, language)
    # The path tells apart documents of registries routed elsewhere; both
    # variants (.xml and .xml.gz) share one key.
    identity = (*spec.identity, language, path_part(request.path_info.removesuffix(".gz")))
    slot: Lock | None = None
    held: Record | Lock | None = None
    prepared: Prepared | None = None
    try:
        if None in current:
            # Nothing is stored under a generation that does not exist yet: a
            # miss. Whether the document exists is learnt before any key is
            # written, so a page that does not exist leaves nothing behind.
            slot = _build_slot(store)
            if slot is None:
                return _busy()
            prepared = spec.prepare()
            created = store.create(spec.generations, current)
            if created is None:
                return _uncached(request, spec, gz, language)
            tokens, unmoved = created
            if not unmoved:
                # A change came between the read and the tokens: read it again,
                # after them, so the document stored under them is not stale.
                prepared = None
        else:
            tokens = [token for token in current if token is not None]
        key = document_key(identity, tokens)
        held = store.record(key) or store.claim(key)
        if held is None and store.available:
            if slot is not None:  # no slot held while waiting for another's build
                store.release(slot)
                slot = None
            held = store.wait(key, app_settings.CACHE_WAIT)
        if isinstance(held, Record):
            response = _from_cache(request, store, key, held, gz)
            if response is not None:
                return response
            # A part left the cache (evicted, flushed): rebuild the document and store it again.
            held = store.lock(key)
        if slot is None:
            slot = _build_slot(store)
            if slot is None:
                return _busy()
        if prepared is None:
            prepared = spec.prepare()
        validators = make_validators(key, prepared.etag_basis, prepared.lastmods)
        response = not_modified(request, validators, gz)
        if response is not None:
            return response
        if isinstance(held, Lock):
            # Built whole at the server's pace before any byte is sent: a slow or
            # vanished client costs this one build, and the requests waiting for
            # it are served from the stored copy as soon as it exists. This
            # client gets what was built, whether or not the cache keeps it; the
            # lock and slot go with the document to be stored (``DocumentCache.keep``).
            lock, held = held, None
            builder, slot = slot, None
            skipped: list[Skips] = []
            try:
                with held_skips() as skipped:
                    bodies = _build(_render(prepared), gz)
            except BaseException:
                store.unlock(lock, builder)  # both in one round trip
                for skips in skipped:  # a page whose every entry was left out: a 404
                    record_skips(*skips)
                raise
            served = bodies[GZ if gz else XML]
            # Stored, then the lock and the slot released, on the store thread
            # when the cache is a network one: this request sends meanwhile.
            store.keep(
                Built(
                    key,
                    validators.etag,
                    validators.last_modified,
                    prepared.expires,
                    bodies,
                    lock,
                    builder,
                    skipped,
                )
            )
            return _whole(request, served, validators, gz)
        # Another request is building it and did not finish in time: stream this
        # one's own copy, in the build slot until its last byte.
        stream = _render(prepared)
        on_close = _releasing(store, slot, stream.close)
        slot = None
        body_stream = ClosingBody(_in_language(encode(stream, gz), language), on_close)
        return _streaming(request, body_stream, validators, gz)
    finally:
        if isinstance(held, Lock):
            store.unlock(held)
        if slot is not None:
            store.release(slot)


def url_language(request: HttpRequest) -> str:
    """The language of a sitemap URL: its prefix under ``i18n_patterns``, else ``LANGUAGE_CODE``.

    Never the client's ``Accept-Language`` or cookie: a document's bytes and
    its cache key follow its URL alone.
    """
    urlconf = getattr(request, "urlconf", None) or settings.ROOT_URLCONF
    if is_language_prefix_patterns_used(urlconf)[0]:
        language = translation.get_language_from_path(request.path_info)
        if language:
            return language
    return default_language()


def _admitted(store: DocumentCache, origin: Origin) -> bool:
    """Whether documents are served for ``origin``'s host (see ``SITEMAPX_WILDCARD_HOSTS``).

    The hosts of ``SITEMAPX_HOSTS``, of the Sites framework and the exact names
    of ``ALLOWED_HOSTS`` are a bounded set already; a host let in only by a
    wildcard takes one of a bounded number of host slots in the cache.
    """
    if app_settings.HOSTS is not None:
        hosts = served_hosts()
        return origin.host in hosts or origin.host.rpartition(":")[0] in hosts
    if uses_sites_framework():
        return True
    name = split_domain_port(origin.host)[0] or origin.host
    if any(pattern == name for pattern in _allowed_hosts()):
        return True
    return store.admits(host_part(origin))


def _allowed_hosts() -> list[str]:
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:  # what Django lets in then
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return [pattern.lower() for pattern in allowed]


def _build_slot(store: DocumentCache) -> Lock | None:
    return store.build_slot(app_settings.CACHE_BUILD_WAIT)


def _busy() -> HttpResponse:
    """503 with ``Retry-After``: every build slot stayed taken (``SITEMAPX_CACHE_BUILDS``)."""
    response = HttpResponse(
        "Sitemap documents are being built; retry shortly.\n",
        status=503,
        content_type="text/plain; charset=utf-8",
    )
    response.headers["Retry-After"] = str(max(1, math.ceil(app_settings.CACHE_WAIT)))
    response.headers["Cache-Control"] = "no-store"
    return response


def _releasing(store: DocumentCache, slot: Lock, close: Callable[[], None]) -> Callable[[], None]:
    def on_close() -> None:
        try:
            close()
        finally:
            store.release(slot)

    return on_close


def _in_language(stream: Iterator[bytes], language: str) -> Iterator[bytes]:
    """``stream`` rendered in ``language``: a streamed body runs after the view returned."""
    while True:
        with translation.override(language):
            chunk = next(stream, None)
        if chunk is None:
            return
        yield chunk


def _from_cache(
    request: HttpRequest, store: DocumentCache, key: str, record: Record, gz: bool
) -> HttpResponseBase | None:
    validators = Validators(record.etag, record.last_modified)
    response = not_modified(request, validators, gz)
    if response is not None:
        return response
    body = _stored_body(store, key, record, gz)
    if body is None:
        return None
    response = HttpResponse(body, content_type=content_type(gz))
    response.headers["Content-Length"] = str(len(body))
    set_headers(response, validators, gz)
    return response


def _stored_body(store: DocumentCache, key: str, record: Record, gz: bool) -> bytes | None:
    """The stored bytes of a variant; None if some part is gone (a miss)."""
    if not gz or GZ in record.parts:
        return store.body(key, record, GZ if gz else XML)
    # Stored as built for a plain request: gzipped now, once, and kept.
    plain = store.body(key, record, XML)
    if plain is None:
        return None
    packed = gzip_bytes(plain)
    store.add_variant(key, record, GZ, packed)
    return packed


def _whole(
    request: HttpRequest, chunks: list[bytes], validators: Validators, gz: bool
) -> HttpResponseBase:
    """A built document, every byte in hand: its chunks as built, with its length."""
    response = _streaming(request, iter(chunks), validators, gz)
    response.headers["Content-Length"] = str(sum(map(len, chunks)))
    return response


def _build(stream: DocumentStream, gz: bool) -> dict[str, list[bytes]]:
    """Render ``stream`` to the end: the plain variant's chunks, and the gzip one's if ``gz``.

    The gzip variant is made only when it is asked for (a plain request leaves
    it to the first gzip request, ``_from_cache``). The chunks are kept as they
    come, never joined here: they are sent as they are, and the cache joins
    what it stores (``DocumentCache.put``).
    """
    compressor = gzip_compressor() if gz else None
    plain: list[bytes] = []
    packed: list[bytes] = []
    try:
        for chunk in stream:
            plain.append(chunk)
            if compressor is not None and (out := compressor.compress(chunk)):
                packed.append(out)
        if compressor is not None:
            packed.append(compressor.flush())
    finally:
        stream.close()
    return {XML: plain, GZ: packed} if gz else {XML: plain}


def _uncached(
    request: HttpRequest, spec: DocumentSpec, gz: bool, language: str
) -> HttpResponseBase:
    # Without generations nothing catches a change that leaves the row count
    # and lastmod alone, so conditional requests get the full document.
    prepared = spec.prepare()
    validators = make_validators(
        ":".join(("uncached", *spec.identity, language)), prepared.etag_basis, prepared.lastmods
    )
    stream = _render(prepared)
    body = ClosingBody(_in_language(encode(stream, gz), language), stream.close)
    return _streaming(request, body, validators, gz)


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
