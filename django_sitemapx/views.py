"""Thin views: find the origin and the document, then let ``serving`` answer."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponseBase
from django.urls import NoReverseMatch, reverse

from .conf import app_settings
from .documents import URL_NAMESPACE
from .exceptions import NotRegistered
from .locations.hosts import origin_for_request
from .registry import SitemapRegistry, default_registry
from .serving import content_type, index_document, page_document, serve
from .serving.storage import exported_file_response

# Page numbers of a 64-bit key (up to 9,223,372,036,854,775,807 with a limit of 1)
# have at most 19 digits; a longer one is refused before it reaches a source.
_MAX_PAGE_DIGITS = 19


def index(
    request: HttpRequest,
    registry: SitemapRegistry | None = None,
    section_url_name: str | None = None,
    gz: bool = False,
) -> HttpResponseBase:
    """The ``<sitemapindex>`` of every non-empty page served on the host; 404 when there is none.

    ``section_url_name`` names the URL of the section view the index links to;
    by default ``section`` (``section-gz`` with ``SITEMAPX_INDEX_LINKS_GZIP``)
    in the namespace the index was reached through. Give it when routing a
    custom ``registry`` through URL patterns of your own. ``gz`` serves the
    index itself as a gzip file.
    """
    if app_settings.SERVE_FROM_STORAGE:
        return exported_file_response(request, content_type(gz))
    paths = _section_paths(request, section_url_name)
    origin = origin_for_request(request)
    return serve(request, index_document(registry or default_registry, origin, paths), gz)


def section(
    request: HttpRequest,
    section: str,
    page: str,
    registry: SitemapRegistry | None = None,
    gz: bool = False,
) -> HttpResponseBase:
    """One page of one section; 404 for an unknown section or a bad or empty page."""
    if app_settings.SERVE_FROM_STORAGE:
        parse_page(page)
        return exported_file_response(request, content_type(gz))
    try:
        source = (registry or default_registry).get(section)
    except NotRegistered:
        raise Http404(f"No sitemap section {section!r}.") from None
    number = parse_page(page)
    origin = origin_for_request(request, source.protocol)
    if not source.serves(origin):
        raise Http404(f"The sitemap section {section!r} is not served on this host.")
    return serve(request, page_document(source.for_origin(origin), number, origin), gz)


def _section_paths(request: HttpRequest, url_name: str | None) -> Callable[[str, int], str]:
    match = request.resolver_match
    namespace = match.namespace if match is not None and match.namespace else URL_NAMESPACE
    name = (
        url_name or f"{namespace}:{'section-gz' if app_settings.INDEX_LINKS_GZIP else 'section'}"
    )
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
