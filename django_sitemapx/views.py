"""Thin views: resolve the site and the document, then let ``serving`` answer."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponseBase
from django.urls import NoReverseMatch, reverse

from .conf import app_settings
from .exceptions import NotRegistered
from .registry import SitemapRegistry
from .registry import site as default_registry
from .serving import GZIP_CONTENT_TYPE, XML_CONTENT_TYPE, index_document, page_document, serve
from .sites import site_for_request
from .stored import stored_response

CONTENT_TYPE = XML_CONTENT_TYPE
URL_NAMESPACE = "django_sitemapx"
# Larger than any page number a 50,000-row page of a 64-bit key can need.
_MAX_PAGE_DIGITS = 15


def page_path(section: str, page: int) -> str:
    """The path a section page is served at, e.g. ``/sitemap-article-2.xml``."""
    return reverse(f"{URL_NAMESPACE}:section", kwargs={"section": section, "page": str(page)})


def gzip_page_path(section: str, page: int) -> str:
    """The path of a page's gzip file, e.g. ``/sitemap-article-2.xml.gz``."""
    return reverse(f"{URL_NAMESPACE}:section-gz", kwargs={"section": section, "page": str(page)})


def index(
    request: HttpRequest,
    registry: SitemapRegistry | None = None,
    section_url_name: str | None = None,
    gz: bool = False,
) -> HttpResponseBase:
    """The ``<sitemapindex>`` of every non-empty page; 404 when there is none.

    ``section_url_name`` names the URL of the section view the index links to;
    by default ``section`` (``section-gz`` with ``SITEMAPX_GZIP``) in the
    namespace the index was reached through. Give it when routing a custom
    ``registry`` through URL patterns of your own. ``gz`` serves the index
    itself as a gzip file.
    """
    if app_settings.SERVE_FROM_STORAGE:
        return stored_response(request, GZIP_CONTENT_TYPE if gz else CONTENT_TYPE)
    paths = _section_paths(request, section_url_name)
    site = site_for_request(request)
    return serve(request, index_document(registry or default_registry, site, paths), gz)


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
        return stored_response(request, GZIP_CONTENT_TYPE if gz else CONTENT_TYPE)
    registry = registry or default_registry
    try:
        source = registry.get(section)
    except NotRegistered:
        raise Http404(f"No sitemap section {section!r}.") from None
    number = parse_page(page)
    site = site_for_request(request, source.protocol)
    return serve(request, page_document(source, number, site), gz)


def _section_paths(request: HttpRequest, url_name: str | None) -> Callable[[str, int], str]:
    match = request.resolver_match
    namespace = match.namespace if match is not None and match.namespace else URL_NAMESPACE
    name = url_name or f"{namespace}:{'section-gz' if app_settings.GZIP else 'section'}"
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
