"""URLs for ``images_bench.py``: the same image sitemap from django-sitemapx and from contrib.

Contrib has no image support: its documented way is a custom template reading
``url.item``. Its ``items()`` prefetches the images (``prefetch_related``), one
query per page rather than one per article, so the comparison is fair to it.
"""

from typing import Any

from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps import views as contrib_views
from django.db.models import Max
from django.urls import path, re_path

import django_sitemapx as sitemapx
from django_sitemapx import views
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article
from example_project.urls import urlpatterns as example_urlpatterns

registry = SitemapRegistry()


class ImageArticles(sitemapx.ModelSource):
    """Every article with its three images, read from ArticleImage per chunk of rows."""

    model = Article
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    lastmod_field = "updated_at"
    images = sitemapx.RelatedImages("images", loc="url", order_by=["position"])
    max_images = 3


registry.register("images", ImageArticles)


class ContribImages(Sitemap):  # type: ignore[type-arg]
    # Not 50,000: prefetch_related's IN list over a 50,000-item page exceeds SQLite's
    # 32,766 query parameters ("too many SQL variables").
    limit = 30_000

    def items(self) -> Any:
        return Article.objects.select_related("category").prefetch_related("images").order_by("pk")

    def lastmod(self, item: Article) -> Any:
        return item.updated_at

    def get_latest_lastmod(self) -> Any:
        # Contrib's own would evaluate items() whole, prefetching the images of
        # every article in one IN list, which SQLite refuses past 32,766 values.
        return Article.objects.aggregate(latest=Max("updated_at"))["latest"]


CONTRIB = {"images": ContribImages}
TEMPLATE = "benchmarks/image_sitemap.xml"

urlpatterns = [
    path("sitemap.xml", views.index, {"registry": registry}),
    re_path(
        r"^sitemap-(?P<section>[-a-z]+)-(?P<page>[0-9]+)\.xml$",
        views.section,
        {"registry": registry},
    ),
    path(
        "contrib/sitemap.xml",
        contrib_views.index,
        {"sitemaps": CONTRIB, "sitemap_url_name": "contrib-section"},
    ),
    path(
        "contrib/sitemap-<section>.xml",
        contrib_views.sitemap,
        {"sitemaps": CONTRIB, "template_name": TEMPLATE},
        name="contrib-section",
    ),
    # The example's own patterns (its i18n_patterns cannot be include()d).
    *example_urlpatterns,
]
