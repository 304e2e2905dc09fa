"""``path("sitemap/", include("django_sitemapx.html.urls"))``: the sitemap for people.

- ``sitemap/``: every section and its pages (``?p=2`` for more).
- ``sitemap/<section>/<page>/``: the URLs of one page (``?p=2`` for more).
"""

from __future__ import annotations

from django.urls import re_path

from . import sitemap_index, sitemap_page

app_name = "django_sitemapx_html"

urlpatterns = [
    re_path(r"^$", sitemap_index, name="index"),
    # As the XML pages' pattern: linear in the path's length.
    re_path(r"^(?P<section>[-a-zA-Z0-9_]+)/(?P<page>[0-9]+)/$", sitemap_page, name="page"),
]
