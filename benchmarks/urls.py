"""The example site plus everything the benchmark compares django-sitemapx with.

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
from django.urls import path
from django.views.decorators.cache import cache_page

from benchmarks import references
from example_project.articles.models import Article
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

urlpatterns = [
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
