"""``path("", include("django_sitemapx.urls"))`` serves the sitemap at the site root.

- ``/sitemap.xml``: the index.
- ``/sitemap-<section>-<page>.xml``: page ``page`` (1, 2, ...) of ``section``.
"""

from __future__ import annotations

from django.urls import path, re_path

from . import views

app_name = "django_sitemapx"

urlpatterns = [
    path("sitemap.xml", views.index, name="index"),
    re_path(
        r"^sitemap-(?P<section>[-a-zA-Z0-9_]+)-(?P<page>[^/]+)\.xml$",
        views.section,
        name="section",
    ),
]
