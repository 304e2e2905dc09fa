"""The example site's URLs without the sitemap's views (an export-only site with the admin)."""

from django.urls import URLResolver

from example_project.urls import urlpatterns as example_urlpatterns

urlpatterns = [
    pattern
    for pattern in example_urlpatterns
    if not (isinstance(pattern, URLResolver) and pattern.app_name == "django_sitemapx")
]
