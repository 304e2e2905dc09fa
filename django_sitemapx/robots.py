"""robots.txt: the ``Sitemap`` line that lets crawlers find the index, for one host.

Crawlers read ``Sitemap: <absolute URL>`` lines from robots.txt (sitemaps.org,
"Informing search engine crawlers"; RFC 9309 leaves such records to other
specifications). A robots.txt is fetched per host, so the line names the index
for the requested host's origin, or the exported files' base URL when they are
served from elsewhere (``SITEMAPX_FILES_BASE_URL``): a sitemap on another host
is accepted for the site because the site's robots.txt points at it.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest

from .conf import app_settings
from .documents import index_path
from .locations import Origin
from .locations.hosts import files_root_from_url, origin_for_request


def sitemap_index_url(origin: Origin) -> str:
    """The absolute URL of the sitemap index crawlers of ``origin`` are told about."""
    files_base_url = app_settings.FILES_BASE_URL
    if files_base_url:
        files_origin, prefix = files_root_from_url(files_base_url)
        return files_origin.prefix + prefix + index_path()
    return origin.prefix + index_path()


def sitemap_index_url_for_request(request: HttpRequest) -> str | None:
    """:func:`sitemap_index_url` for the request's host; None for a host the site doesn't serve."""
    try:
        origin = origin_for_request(request)
    except Http404:  # the Sites framework knows no site for this host
        return None
    return sitemap_index_url(origin)


def sitemap_lines(request: HttpRequest) -> str:
    """The robots.txt ``Sitemap:`` line for the request's host, with its newline; or ``""``.

    For a robots.txt view of your own: ``rules + "\\n" + sitemap_lines(request)``.
    """
    url = sitemap_index_url_for_request(request)
    return f"Sitemap: {url}\n" if url is not None else ""


def rules_text() -> str:
    """``SITEMAPX_ROBOTS_RULES``, ending with exactly one newline (empty stays empty)."""
    rules = app_settings.ROBOTS_RULES.strip("\n")
    return rules + "\n" if rules else ""
