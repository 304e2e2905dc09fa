"""The example's sitemap sections, found by django-sitemapx's autodiscovery."""

import django_sitemapx as sitemapx
from example_project.articles.models import Article, Category


@sitemapx.register(Article)
class ArticleSitemap(sitemapx.ModelSource):
    """Published articles, streamed as plain rows: no model instance per URL."""

    queryset = Article.objects.filter(is_published=True)
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    lastmod_field = "updated_at"
    changefreq = "weekly"
    priority = 0.6


# Category listings and the static pages exist in every language of LANGUAGES: one
# <url> per language, each listing all of them (and x-default, the English page).
sitemapx.default_registry.register(
    Category,
    url_name="category-detail",
    url_kwargs={"category": "slug"},
    changefreq="daily",
    priority=0.5,
    i18n=True,
    alternates=True,
    x_default=True,
)

sitemapx.default_registry.register(
    "pages",
    sitemapx.StaticSource,
    url_names=["home", "about"],
    priority=0.8,
    i18n=True,
    alternates=True,
    x_default=True,
)
