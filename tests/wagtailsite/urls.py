"""The test suite's URLs, with Wagtail's admin under ``/cms/`` and its pages under ``/pages/``."""

from django.urls import include, path
from wagtail.admin import urls as wagtailadmin_urls

from tests.urls import urlpatterns as test_urlpatterns

urlpatterns = [
    *test_urlpatterns,
    path("cms/", include(wagtailadmin_urls)),
    path("pages/", include("wagtail.urls")),
]
