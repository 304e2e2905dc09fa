"""Thin views: resolve the site, then stream the document from ``documents``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

from asgiref.sync import sync_to_async
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.asgi import ASGIRequest
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.urls import NoReverseMatch, reverse

from .conf import app_settings
from .documents import index_entries, render_index, render_page
from .exceptions import NotRegistered
from .registry import SitemapRegistry
from .registry import site as default_registry
from .sites import site_for_request
from .stored import stored_response

CONTENT_TYPE = "application/xml; charset=utf-8"
URL_NAMESPACE = "django_sitemapx"
# Larger than any page number a 50,000-row page of a 64-bit key can need.
_MAX_PAGE_DIGITS = 15


def page_path(section: str, page: int) -> str:
    """The path a section page is served at, e.g. ``/sitemap-article-2.xml``."""
    return reverse(f"{URL_NAMESPACE}:section", kwargs={"section": section, "page": str(page)})


def index(
    request: HttpRequest,
    registry: SitemapRegistry | None = None,
    section_url_name: str | None = None,
) -> StreamingHttpResponse:
    """The ``<sitemapindex>`` of every non-empty page; 404 when there is none.

    ``section_url_name`` names the URL of the section view the index links to;
    by default ``section`` in the namespace the index was reached through. Give
    it when routing a custom ``registry`` through URL patterns of your own.
    """
    if app_settings.SERVE_FROM_STORAGE:
        return stored_response(request, CONTENT_TYPE)
    registry = registry or default_registry
    paths = _section_paths(request, section_url_name)
    stream = render_index(index_entries(registry), site_for_request(request), paths)
    if stream is None:
        raise Http404("The sitemap has no URL yet.")
    return _response(request, stream)


def section(
    request: HttpRequest, section: str, page: str, registry: SitemapRegistry | None = None
) -> StreamingHttpResponse:
    """One page of one section; 404 for an unknown section or a bad or empty page."""
    if app_settings.SERVE_FROM_STORAGE:
        parse_page(page)
        return stored_response(request, CONTENT_TYPE)
    registry = registry or default_registry
    try:
        source = registry.get(section)
    except NotRegistered:
        raise Http404(f"No sitemap section {section!r}.") from None
    number = parse_page(page)
    stream = render_page(source, number, site_for_request(request, source.protocol))
    if stream is None:
        raise Http404(f"Sitemap section {section!r} has no page {number}.")
    return _response(request, stream)


def _section_paths(request: HttpRequest, url_name: str | None) -> Callable[[str, int], str]:
    match = request.resolver_match
    namespace = match.namespace if match is not None and match.namespace else URL_NAMESPACE
    name = url_name or f"{namespace}:section"
    current_app = match.namespace if match is not None else None

    def path(section: str, page: int) -> str:
        try:
            return reverse(
                name, kwargs={"section": section, "page": str(page)}, current_app=current_app
            )
        except NoReverseMatch:
            raise ImproperlyConfigured(
                f"The sitemap index links its pages through the URL {name!r}, which does not "
                "reverse: include django_sitemapx.urls, or pass section_url_name."
            ) from None

    return path


def parse_page(page: str) -> int:
    """A positive page number in canonical form ("1", not "01" or "+1"), else 404."""
    if not (page.isascii() and page.isdigit()) or page.startswith("0"):
        raise Http404("A sitemap page number is a positive integer.")
    if len(page) > _MAX_PAGE_DIGITS:
        raise Http404("No such sitemap page.")
    return int(page)


def _response(request: HttpRequest, stream: Iterator[bytes]) -> StreamingHttpResponse:
    if isinstance(request, ASGIRequest):
        # A sync iterator would be consumed whole before the first byte under ASGI.
        return StreamingHttpResponse(_async_stream(stream), content_type=CONTENT_TYPE)
    return StreamingHttpResponse(stream, content_type=CONTENT_TYPE)


async def _async_stream(stream: Iterator[bytes]) -> AsyncIterator[bytes]:
    def pull() -> bytes | None:
        return next(stream, None)

    def close() -> None:
        close_stream = getattr(stream, "close", None)
        if close_stream is not None:
            close_stream()

    pull_async = sync_to_async(pull, thread_sensitive=True)
    try:
        while True:
            chunk = await pull_async()
            if chunk is None:
                return
            yield chunk
    finally:
        # A client that leaves mid-stream must not leave the database cursor
        # open until garbage collection, on whatever thread that happens.
        await sync_to_async(close, thread_sensitive=True)()
