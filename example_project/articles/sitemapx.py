"""The example's sitemap sections, found by django-sitemapx's autodiscovery.

Two sites from one project (see docs/guide/sites.md): with the example's
settings, ``localhost`` and ``127.0.0.1`` serve the magazine (articles,
categories, pages) and ``news.localhost`` serves the news desk (news articles
and the news front page). Without ``EXAMPLE_MAIN_HOSTS`` and
``EXAMPLE_NEWS_HOST`` every section is served on every host.
"""

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

import django_sitemapx as sitemapx
from example_project.articles.models import Article, Category


class ArticleSitemap(sitemapx.ModelSource):
    """Published articles, streamed as plain rows: no model instance per URL.

    Served on every host; on the news host, only the news category's.
    """

    queryset = Article.objects.filter(is_published=True)
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    lastmod_field = "updated_at"
    changefreq = "weekly"
    priority = 0.6
    news_host: str | None = None

    def get_queryset(self) -> QuerySet[Any]:
        rows = super().get_queryset()
        # self.origin is the host being served (None in system checks).
        if self.origin is not None and self.news_host and self.origin.host == self.news_host:
            rows = rows.filter(category__slug="news")
        return rows


def register_sections(
    registry: sitemapx.SitemapRegistry,
    *,
    main_hosts: Sequence[str] | None = None,
    news_host: str | None = None,
) -> None:
    """The example's sections, the magazine's limited to ``main_hosts`` (None: every host)."""
    registry.register(Article, ArticleSitemap, news_host=news_host)
    # Category listings and the static pages exist in every language of LANGUAGES:
    # one <url> per language, each listing all of them (and x-default, the English page).
    registry.register(
        Category,
        url_name="category-detail",
        url_kwargs={"category": "slug"},
        changefreq="daily",
        priority=0.5,
        sites=main_hosts,
        i18n=True,
        alternates=True,
        x_default=True,
    )
    registry.register(
        "pages",
        sitemapx.StaticSource,
        url_names=["home", "about"],
        priority=0.8,
        sites=main_hosts,
        i18n=True,
        alternates=True,
        x_default=True,
    )
    if news_host:
        registry.register(
            "news-front",
            sitemapx.StaticSource,
            url_names=[("category-detail", {"category": "news"})],
            changefreq="hourly",
            sites=[news_host],
        )


register_sections(
    sitemapx.default_registry,
    main_hosts=getattr(settings, "EXAMPLE_MAIN_HOSTS", None),
    news_host=getattr(settings, "EXAMPLE_NEWS_HOST", None),
)
