"""The demo's one section: every Wagtail site's pages, each on its own host."""

from django_sitemapx import default_registry
from django_sitemapx.contrib.wagtail import WagtailPageSource

# DemoEventPage lists two URLs (itself and its tickets page).
default_registry.register("wagtail", WagtailPageSource, max_urls_per_page=2)
