"""A URLconf for the contrib drop-in tests: ours, i18n_patterns, and contrib's old paths."""

from django.conf.urls.i18n import i18n_patterns
from django.http import HttpRequest, HttpResponse
from django.urls import include, path

from django_sitemapx.redirects import contrib_redirects


def translated_thing(request: HttpRequest, pk: int) -> HttpResponse:
    return HttpResponse()


urlpatterns = [
    *contrib_redirects(),
    path("", include("django_sitemapx.urls")),
    *i18n_patterns(path("translated/<int:pk>/", translated_thing, name="translated-thing")),
]

urlpatterns += contrib_redirects(index="sitemaps/index.xml")
urlpatterns += contrib_redirects(section="old/<section>.xml")
