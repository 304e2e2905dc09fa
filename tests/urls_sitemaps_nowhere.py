"""The example's pages without the sitemap URLs (an export-only site)."""

from tests.urls_sitemaps_elsewhere import pages

urlpatterns = list(pages)
