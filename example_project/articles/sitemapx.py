"""The example's sitemap sections, found by django-sitemapx's autodiscovery."""

from typing import Any

from django.db.models import Exists, OuterRef

import django_sitemapx as sitemapx
from example_project.articles.models import Article, ArticleImage, ArticleVideo, Category


@sitemapx.register(Article)
class ArticleSitemap(sitemapx.ModelSource):
    """Published articles, streamed as plain rows: no model instance per URL."""

    queryset = Article.objects.filter(is_published=True)
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    lastmod_field = "updated_at"
    changefreq = "weekly"
    priority = 0.6


sitemapx.default_registry.register(
    Category,
    url_name="category-detail",
    url_kwargs={"category": "slug"},
    changefreq="daily",
    priority=0.5,
)

sitemapx.default_registry.register(
    "pages", sitemapx.StaticSource, url_names=["home", "about"], priority=0.8
)


@sitemapx.register("article-images")
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


@sitemapx.register("news")
class NewsSitemap(sitemapx.NewsSource):
    """The last two days' articles, for Google News."""

    model = Article
    queryset = Article.objects.filter(is_published=True, published_at__isnull=False)
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    publication_date_field = "published_at"
    title_field = "title"
    news_publication = sitemapx.Publication("Sitemapx Demo Times", "en")


@sitemapx.register("videos")
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
