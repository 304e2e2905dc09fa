"""``/sitemap.xml`` kept a ``<urlset>`` (one section), as contrib's ``views.sitemap`` served it.

The pattern the migration guide shows: the section's first page at ``sitemap.xml``,
before this app's URLs, and the index at a path of its own.
"""

from django.urls import include, path

from django_sitemapx import views

urlpatterns = [
    path("sitemap.xml", views.section, {"section": "simple"}),
    path("sitemap_index.xml", views.index, {"section_url_name": "django_sitemapx:section"}),
    path("", include("django_sitemapx.urls")),
]
