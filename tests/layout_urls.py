"""The sitemap served under a prefix, for the export's file layout tests."""

from django.urls import include, path

urlpatterns = [path("maps/", include("django_sitemapx.urls"))]
