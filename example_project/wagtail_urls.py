"""URLs of the Wagtail demo: the sitemap, robots.txt, Wagtail's editor, then its pages.

Pages in English at ``/page-1/``, in French at ``/fr/page-1/`` (Wagtail's
documented ``i18n_patterns`` set-up), on each site's host.
"""

from django.conf.urls.i18n import i18n_patterns
from django.contrib import admin
from django.urls import include, path
from wagtail import urls as wagtail_urls
from wagtail.admin import urls as wagtailadmin_urls

from django_sitemapx.views import robots_txt

urlpatterns = [
    path("admin/", admin.site.urls),
    path("cms/", include(wagtailadmin_urls)),
    path("robots.txt", robots_txt, name="robots-txt"),
    path("", include("django_sitemapx.urls")),
    *i18n_patterns(path("", include(wagtail_urls)), prefix_default_language=False),
]
