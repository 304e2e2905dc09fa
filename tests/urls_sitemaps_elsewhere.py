"""The example's pages with the sitemap URLs under ``maps/`` instead of at the root."""

from django.urls import URLResolver, include, path

from example_project.urls import urlpatterns as example_urlpatterns

# The example's pages, without its root include of django_sitemapx.urls.
pages = [
    pattern
    for pattern in example_urlpatterns
    if not (isinstance(pattern, URLResolver) and pattern.app_name == "django_sitemapx")
]

urlpatterns = [*pages, path("maps/", include("django_sitemapx.urls"))]
