"""The test suite's URLs, with both CMSs' pages under a prefix each."""

from django.urls import include, path

from tests.urls import urlpatterns as test_urlpatterns

urlpatterns = [
    path("wagtail/", include("wagtail.urls")),
    path("cms/", include("cms.urls")),
    *test_urlpatterns,
]
