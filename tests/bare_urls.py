"""A URLconf without the sitemap's views (an export-only site)."""

urlpatterns: list[object] = []
