"""The test suite's URLs, with Wagtail's pages under ``/pages/``."""

from django.urls import include, path

from tests.urls import urlpatterns as test_urlpatterns

urlpatterns = [
    *test_urlpatterns,
    path("pages/", include("wagtail.urls")),
]
