"""``path("", include("django_sitemapx.urls"))`` serves the sitemap at the site root.

- ``/sitemap.xml``: the index.
- ``/sitemap-index-<n>.xml``: index files 2, 3 ... of a sitemap of more than 50,000 pages.
- ``/sitemap-<section>-<page>.xml``: page ``page`` (1, 2, ...) of ``section``.
- ``/sitemap.xml.gz`` and ``/sitemap-<section>-<page>.xml.gz``: the same documents
  gzip-compressed, served as ``application/gzip`` files.
- ``/<key>.txt``: the IndexNow key file, only for ``SITEMAPX_INDEXNOW_KEY`` (any
  other path falls through to the project's patterns).

robots.txt is routed by the project (``views.robots_txt``), since many projects
already serve one.
"""

from __future__ import annotations

from django.urls import path, re_path, register_converter

from . import views
from .conf import INDEXNOW_KEY_PATTERN, app_settings
from .documents import URL_NAMESPACE


class IndexNowKeyConverter:
    """Matches only the configured IndexNow key, read per request."""

    regex = INDEXNOW_KEY_PATTERN

    def to_python(self, value: str) -> str:
        if value != app_settings.INDEXNOW_KEY:
            raise ValueError("not the IndexNow key")  # no match: the next pattern is tried
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(IndexNowKeyConverter, "sitemapx_indexnow_key")

app_name = URL_NAMESPACE

urlpatterns = [
    path("sitemap.xml", views.index, name="index"),
    path("sitemap.xml.gz", views.index, {"gz": True}, name="index-gz"),
    # Before the sections' patterns, which would read it as section "index".
    re_path(r"^sitemap-index-(?P<part>[0-9]+)\.xml$", views.index_part, name="index-part"),
    re_path(
        r"^sitemap-index-(?P<part>[0-9]+)\.xml\.gz$",
        views.index_part,
        {"gz": True},
        name="index-part-gz",
    ),
    # The page holds no "-": the section ends at the last "-", which makes each
    # pattern linear in the path's length (a page of "[^/]+" tried every split of
    # a path of dashes: quadratic). A section name may hold "-", a page never does.
    re_path(
        r"^sitemap-(?P<section>[-a-zA-Z0-9_]+)-(?P<page>[^-/]+)\.xml$",
        views.section,
        name="section",
    ),
    re_path(
        r"^sitemap-(?P<section>[-a-zA-Z0-9_]+)-(?P<page>[^-/]+)\.xml\.gz$",
        views.section,
        {"gz": True},
        name="section-gz",
    ),
    path("<sitemapx_indexnow_key:key>.txt", views.indexnow_key, name="indexnow-key"),
]
