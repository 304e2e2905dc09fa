"""Articles in five languages (``i18n_patterns``), served by django-sitemapx and by contrib.

- ``/sitemap.xml`` and its pages: the example's sections plus ``multilingual``, a
  ``ModelSource`` over the published articles with ``i18n``, ``alternates`` and
  ``x_default``: one ``<url>`` per (article, language), each with six links;
- ``/contrib/sitemap.xml``: a ``django.contrib.sitemaps.Sitemap`` over the same rows
  with ``i18n = True, alternates = True, x_default = True``, its queryset with
  ``select_related("category")`` so that ``get_absolute_url()`` runs no query per
  row (contrib at its best).
"""

from typing import Any

from django.conf.urls.i18n import i18n_patterns
from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps import views as contrib_views
from django.urls import path, reverse

import django_sitemapx as sitemapx
from example_project.articles import views
from example_project.articles.models import Article
from example_project.urls import urlpatterns as example_urlpatterns

PUBLISHED = Article.objects.filter(is_published=True)


class ContribArticles(Sitemap):  # type: ignore[type-arg]
    i18n = True
    alternates = True
    x_default = True
    changefreq = "weekly"
    priority = 0.6

    def items(self) -> Any:
        return PUBLISHED.select_related("category").order_by("pk")

    def location(self, item: Article) -> str:
        kwargs = {"category": item.category.slug, "slug": item.slug}
        return reverse("i18n-article-detail", kwargs=kwargs)

    def lastmod(self, item: Article) -> Any:
        return item.updated_at


CONTRIB_SITEMAPS = {"multilingual": ContribArticles}

if "multilingual" not in sitemapx.default_registry:
    sitemapx.default_registry.register(
        Article,
        section="multilingual",
        queryset=PUBLISHED,
        url_name="i18n-article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        lastmod_field="updated_at",
        changefreq="weekly",
        priority=0.6,
        i18n=True,
        alternates=True,
        x_default=True,
    )

urlpatterns = [
    path(
        "contrib/sitemap.xml",
        contrib_views.index,
        {"sitemaps": CONTRIB_SITEMAPS, "sitemap_url_name": "contrib-i18n-section"},
    ),
    path(
        "contrib/sitemap-<section>.xml",
        contrib_views.sitemap,
        {"sitemaps": CONTRIB_SITEMAPS},
        name="contrib-i18n-section",
    ),
    *example_urlpatterns,
    *i18n_patterns(
        path("a/<slug:category>/<str:slug>/", views.article_detail, name="i18n-article-detail"),
    ),
]
