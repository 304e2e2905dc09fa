"""The sections ``fill_report.py`` measures: plain, images, video and multilingual.

One registry of its own, served at ``/fill/sitemap.xml``; the articles' pages in
five languages (``i18n_patterns``) for the multilingual section.
"""

from django.conf.urls.i18n import i18n_patterns
from django.urls import path, re_path

import django_sitemapx as sitemapx
from django_sitemapx import views
from django_sitemapx.registry import SitemapRegistry
from example_project.articles import views as article_views
from example_project.articles.models import Article
from example_project.urls import urlpatterns as example_urlpatterns

registry = SitemapRegistry()
KWARGS = {"category": "category__slug", "slug": "slug"}
DETAIL = {"url_name": "article-detail", "url_kwargs": KWARGS}
PUBLISHED = Article.objects.filter(is_published=True)

registry.register(Article, section="plain", queryset=PUBLISHED, **DETAIL)
registry.register(
    Article,
    section="images",
    queryset=PUBLISHED,
    images=sitemapx.RelatedImages("images", loc="url", order_by=["position"]),
    max_images=5,
    **DETAIL,
)
registry.register(
    Article,
    section="videos",
    queryset=PUBLISHED.filter(video__isnull=False),
    videos=sitemapx.RelatedVideos(
        "video",
        thumbnail_loc="thumbnail_url",
        title="title",
        description="description",
        content_loc="content_url",
    ),
    **DETAIL,
)
registry.register(
    Article,
    section="multilingual",
    queryset=PUBLISHED,
    url_name="fill-article-detail",
    url_kwargs=KWARGS,
    i18n=True,
    alternates=True,
    x_default=True,
)

urlpatterns = [
    path("fill/sitemap.xml", views.index, {"registry": registry}),
    re_path(
        r"^fill/sitemap-(?P<section>[-a-z]+)-(?P<page>[0-9]+)\.xml$",
        views.section,
        {"registry": registry},
    ),
    *example_urlpatterns,
    *i18n_patterns(
        path(
            "a/<slug:category>/<str:slug>/",
            article_views.article_detail,
            name="fill-article-detail",
        ),
    ),
]
