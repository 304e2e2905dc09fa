"""The example's sitemap sections, found by django-sitemapx's autodiscovery."""

import django_sitemapx as sitemapx
from example_project.articles.models import Article, Author, Category


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

# A UUID primary key: pages are ranges of UUIDs, dense and stable like integer ones.
sitemapx.default_registry.register(
    Author,
    url_name="author-detail",
    url_kwargs={"author": "id"},
    lastmod_field="updated_at",
    changefreq="monthly",
    priority=0.4,
)

sitemapx.default_registry.register(
    "pages", sitemapx.StaticSource, url_names=["home", "about"], priority=0.8
)
