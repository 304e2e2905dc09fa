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
from django.db.models import Exists, OuterRef, QuerySet

import django_sitemapx as sitemapx
from example_project.articles.models import (
    Article,
    ArticleImage,
    ArticleVideo,
    Author,
    Category,
)


class NewsDeskRows(sitemapx.ModelSource):
    """A section whose rows, on the news desk's host (``news_host``), are the news category's."""

    news_host: str | None = None

    def get_queryset(self) -> QuerySet[Any]:
        rows = super().get_queryset()
        # self.origin is the host being served (None in system checks).
        if self.origin is not None and self.news_host and self.origin.host == self.news_host:
            rows = rows.filter(category__slug="news")
        return rows


class ArticleSitemap(NewsDeskRows):
    """Published articles, streamed as plain rows: no model instance per URL.

    Served on every host; on the news host, only the news category's.
    """

    queryset = Article.objects.filter(is_published=True)
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    lastmod_field = "updated_at"
    changefreq = "weekly"
    priority = 0.6


class ArticleImageSitemap(sitemapx.ModelSource):
    """An image sitemap: the published articles that have images, with their images.

    Google reads image tags in the main sitemap or in a separate one, "equally
    fine"; a separate section keeps the article pages at 50,000 URLs. The images
    come from ``ArticleImage`` rows, one query per chunk of articles.
    """

    model = Article
    queryset = Article.objects.filter(
        Exists(ArticleImage.objects.filter(article=OuterRef("pk"))), is_published=True
    )
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    lastmod_field = "updated_at"
    images = sitemapx.RelatedImages("images", loc="url", order_by=["position", "pk"])
    # The demo shows at most five images per article: pages are sized for that.
    max_images = 5


class NewsSitemap(NewsDeskRows, sitemapx.NewsSource):
    """The last two days' articles, for Google News."""

    model = Article
    queryset = Article.objects.filter(is_published=True, published_at__isnull=False)
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    publication_date_field = "published_at"
    title_field = "title"
    news_publication = sitemapx.Publication("Sitemapx Demo Times", "en")


class VideoSitemap(sitemapx.ModelSource):
    """Articles with a video: a ``videos()`` method over the row's video fields."""

    model = ArticleVideo
    queryset = ArticleVideo.objects.filter(article__is_published=True)
    url_name = "article-detail"
    url_kwargs = {"category": "article__category__slug", "slug": "article__slug"}
    fields = (
        "title",
        "description",
        "thumbnail_url",
        "content_url",
        "duration",
        "family_friendly",
    )
    lastmod_field = None
    max_videos = 1

    def videos(self, row: Any) -> list[sitemapx.Video]:
        return [
            sitemapx.Video(
                thumbnail_loc=row.thumbnail_url,
                title=row.title,
                description=row.description,
                content_loc=row.content_url,
                duration=row.duration,
                family_friendly=row.family_friendly,
            )
        ]


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
    # A UUID primary key: pages are ranges of UUIDs, dense and stable like integer ones.
    registry.register(
        Author,
        url_name="author-detail",
        url_kwargs={"author": "id"},
        lastmod_field="updated_at",
        changefreq="monthly",
        priority=0.4,
        sites=main_hosts,
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
    registry.register("article-images", ArticleImageSitemap, sites=main_hosts)
    registry.register("news", NewsSitemap, news_host=news_host)
    registry.register("videos", VideoSitemap, sites=main_hosts)
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
