"""The locale tests' URLs: Wagtail's pages under a language prefix, as Wagtail documents."""

from django.conf.urls.i18n import i18n_patterns
from django.urls import include, path
from wagtail.admin import urls as wagtailadmin_urls

from tests.urls import urlpatterns as test_urlpatterns

urlpatterns = [
    *test_urlpatterns,
    path("cms/", include(wagtailadmin_urls)),
    *i18n_patterns(path("pages/", include("wagtail.urls")), prefix_default_language=False),
]
