"""The sitemap itself under ``i18n_patterns`` (``prefix_default_language=True``, Django's
default): ``/en/sitemap.xml``, ``/de/sitemap.xml`` ... each a document of its own language.

Needs ``LocaleMiddleware``, which activates the language the path's prefix names.
"""

from django.conf.urls.i18n import i18n_patterns
from django.urls import include, path

from tests.i18n_urls import view

urlpatterns = i18n_patterns(
    path("articles/<slug:category>/<str:slug>/", view, name="article-detail"),
    path("", include("django_sitemapx.urls")),
)
