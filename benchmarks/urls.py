"""The example site plus everything the benchmark compares django-sitemapx with.

- ``/bench/sitemap.xml`` and its pages: django-sitemapx with one section, ``article``,
  the example's article section as it is (published articles, ``url_name``), so that
  its index, like contrib's, holds the articles and nothing else (the example's own
  ``/sitemap.xml`` also lists its categories, pages, images, videos and news);
- ``/contrib/...``: ``django.contrib.sitemaps`` with a ``GenericSitemap`` over the
  same published articles (``select_related`` so that ``get_absolute_url()`` runs
  no query per row: contrib at its best), uncached and under ``cache_page``;
- ``/reference/values/<page>.xml`` and ``/reference/cursor/<page>.xml``: the
  plain-Python references (see ``references.py``);
- ``/trivial/``: the same bytes as a sitemap page, from memory.
"""

from typing import Any

from django.contrib.sitemaps import GenericSitemap, Sitemap
from django.contrib.sitemaps import views as contrib_views
from django.urls import path, re_path
from django.views.decorators.cache import cache_page

from benchmarks import references
from django_sitemapx import views as sitemapx_views
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article
from example_project.articles.sitemapx import ArticleSitemap
from example_project.urls import urlpatterns as example_urlpatterns

ARTICLES: dict[str, Any] = {
    "queryset": Article.objects.filter(is_published=True)
    .select_related("category")
    .order_by("pk"),
    "date_field": "updated_at",
}
CONTRIB_SITEMAPS: dict[str, "Sitemap[Any]"] = {
    "article": GenericSitemap(ARTICLES, priority=0.6, changefreq="weekly")
}
CACHE_SECONDS = 3600

ARTICLES_ONLY = SitemapRegistry()
ARTICLES_ONLY.register("article", ArticleSitemap)

urlpatterns = [
    path(
        "bench/sitemap.xml",
        sitemapx_views.index,
        {"registry": ARTICLES_ONLY, "section_url_name": "bench-section"},
    ),
    re_path(
        r"^bench/sitemap-(?P<section>[-a-z]+)-(?P<page>[0-9]+)\.xml$",
        sitemapx_views.section,
        {"registry": ARTICLES_ONLY},
        name="bench-section",
    ),
    path(
        "contrib/sitemap.xml",
        contrib_views.index,
        {"sitemaps": CONTRIB_SITEMAPS, "sitemap_url_name": "contrib-section"},
    ),
    path(
        "contrib/sitemap-<section>.xml",
        contrib_views.sitemap,
        {"sitemaps": CONTRIB_SITEMAPS},
        name="contrib-section",
    ),
    path(
        "contrib-cached/sitemap.xml",
        cache_page(CACHE_SECONDS)(contrib_views.index),
        {"sitemaps": CONTRIB_SITEMAPS, "sitemap_url_name": "contrib-cached-section"},
    ),
    path(
        "contrib-cached/sitemap-<section>.xml",
        cache_page(CACHE_SECONDS)(contrib_views.sitemap),
        {"sitemaps": CONTRIB_SITEMAPS},
        name="contrib-cached-section",
    ),
    path("reference/values/<int:page>.xml", references.values_page),
    path("reference/cursor/<int:page>.xml", references.cursor_page),
    path("trivial/", references.trivial),
    *example_urlpatterns,
]
