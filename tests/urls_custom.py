"""A URLconf serving a second registry through URL patterns of its own."""

from django.urls import path, re_path

import django_sitemapx as sitemapx
from django_sitemapx import views
from tests.urls import urlpatterns as default_urlpatterns

custom = sitemapx.SitemapRegistry()
custom.register("extra", sitemapx.StaticSource, url_names=["about"])

urlpatterns = [
    path(
        "custom/sitemap.xml",
        views.index,
        {"registry": custom, "section_url_name": "custom-section"},
    ),
    re_path(
        r"^custom/sitemap-(?P<section>[-a-zA-Z0-9_]+)-(?P<page>[^/]+)\.xml$",
        views.section,
        {"registry": custom},
        name="custom-section",
    ),
    *default_urlpatterns,
]
