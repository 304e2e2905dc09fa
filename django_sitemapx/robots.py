"""robots.txt: the ``Sitemap`` line that lets crawlers find the index, for one host.

Crawlers read ``Sitemap: <absolute URL>`` lines from robots.txt (sitemaps.org,
"Informing search engine crawlers"; RFC 9309 leaves such records to other
specifications). A robots.txt is fetched per host, so the line names the index
for the requested host's origin, or the exported files' base URL when they are
served from elsewhere (``SITEMAPX_FILES_BASE_URL``): a sitemap on another host
is accepted for the site because the site's robots.txt points at it.
"""

from __future__ import annotations

import logging

from django.http import Http404, HttpRequest

from .conf import app_settings
from .documents import index_path, index_paths
from .locations import URL_CONTROL_CHARS, Origin
from .locations.origins import files_root_from_url, origin_for_request
from .registry import SitemapRegistry, default_registry

logger = logging.getLogger("django_sitemapx")


def sitemap_index_url(origin: Origin) -> str:
    """The absolute URL of the sitemap index crawlers of ``origin`` are told about."""
    return _base(origin) + index_path()


def sitemap_index_urls(origin: Origin, registry: SitemapRegistry | None = None) -> list[str]:
    """Every index file of ``origin``: none for a host that serves no section (its index
    is a 404), and ``/sitemap-index-2.xml`` ... beside ``/sitemap.xml`` for a sitemap of
    more pages than one index lists (a sitemap index cannot list another index).
    """
    registry = registry or default_registry
    if not registry.for_origin(origin):
        return []
    base = _base(origin)
    try:
        paths = index_paths(registry, origin)
    except Exception:
        # robots.txt is fetched for the whole site: a section that cannot list its
        # pages (its own error, logged here and answered by its index) must not take
        # it down; the first index file always exists.
        logger.exception("robots.txt: the sitemap's index files could not be counted")
        paths = [index_path()]
    return [base + path for path in paths]


def _base(origin: Origin) -> str:
    files_base_url = app_settings.FILES_BASE_URL
    if files_base_url:
        files_origin, prefix = files_root_from_url(files_base_url)
        return files_origin.prefix + prefix
    return origin.prefix


def sitemap_index_url_for_request(request: HttpRequest) -> str | None:
    """:func:`sitemap_index_url` for the request's host; None for a host the site doesn't serve."""
    try:
        origin = origin_for_request(request)
    except Http404:  # the Sites framework knows no site for this host
        return None
    return sitemap_index_url(origin)


def sitemap_lines(request: HttpRequest, registry: SitemapRegistry | None = None) -> str:
    """The robots.txt ``Sitemap:`` lines for the request's host, each with its newline.

    One per index file (see :func:`sitemap_index_urls`); ``""`` for a host that
    serves no section. For a robots.txt view of your own:
    ``rules + "\\n" + sitemap_lines(request)``.
    """
    try:
        origin = origin_for_request(request)
    except Http404:  # the Sites framework knows no site for this host
        return ""
    urls = sitemap_index_urls(origin, registry)
    # One line each, whatever a URL holds: a line break would add a rule of its own.
    return "".join(f"Sitemap: {url}\n" for url in urls if not URL_CONTROL_CHARS.search(url))


def rules_text() -> str:
    """``SITEMAPX_ROBOTS_RULES``, ending with exactly one newline (empty stays empty)."""
    rules = app_settings.ROBOTS_RULES.strip("\n")
    return rules + "\n" if rules else ""
