"""URLs of the example site: the sitemap (and IndexNow key file) at the root, robots.txt.

Home, about and the category listings exist in every language of ``LANGUAGES``
(``/about/``, ``/de/about/``, ``/fr/about/``): their sitemap sections list each
language version with ``hreflang`` alternates. Articles have one URL each.
"""

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path

from django_sitemapx.views import robots_txt
from example_project.articles import views

urlpatterns = [
    path("articles/<slug:category>/<str:slug>/", views.article_detail, name="article-detail"),
    path("authors/<uuid:author>/", views.author_detail, name="author-detail"),
    path("admin/", admin.site.urls),
    path("robots.txt", robots_txt, name="robots-txt"),
    path("", include("django_sitemapx.urls")),
    # The sitemap for people (opt-in): sections and their pages in HTML.
    path("sitemap/", include("django_sitemapx.html.urls")),
    *i18n_patterns(
        path("", views.home, name="home"),
        path("about/", views.about, name="about"),
        path("articles/<slug:category>/", views.category_detail, name="category-detail"),
        prefix_default_language=False,
    ),
]
