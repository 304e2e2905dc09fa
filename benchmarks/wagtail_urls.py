"""The Wagtail benchmark's URLs: both sitemaps, Wagtail's pages under a language prefix."""

from django.conf.urls.i18n import i18n_patterns
from django.urls import include, path
from wagtail.contrib.sitemaps.views import sitemap

urlpatterns = [
    path("wagtail-sitemap.xml", sitemap),
    path("", include("django_sitemapx.urls")),
    *i18n_patterns(path("", include("wagtail.urls")), prefix_default_language=False),
]

from django_sitemapx import default_registry  # noqa: E402
from django_sitemapx.contrib.wagtail import WagtailPageSource  # noqa: E402

if "pages" not in default_registry.sections:
    # EventPage's own get_sitemap_urls() lists one URL (none of them has a schedule).
    default_registry.register("pages", WagtailPageSource)
