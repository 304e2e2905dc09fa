"""``path("sitemap/", include("django_sitemapx.html.urls"))``: the sitemap for people.

- ``sitemap/``: every section and its pages (``?p=2`` for more).
- ``sitemap/<section>/<page>/``: the URLs of one page (``?p=2`` for more).
"""

from __future__ import annotations

from django.urls import path

from . import sitemap_index, sitemap_page

app_name = "django_sitemapx_html"

urlpatterns = [
    path("", sitemap_index, name="index"),
    # The page as written: the view refuses "01" or "+1" as the XML's does (404).
    path("<slug:section>/<str:page>/", sitemap_page, name="page"),
]
