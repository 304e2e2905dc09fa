"""The sitemap URLs at the root, then a project pattern that also ends in ``.txt``."""

from django.http import HttpRequest, HttpResponse
from django.urls import include, path


def note(request: HttpRequest, name: str) -> HttpResponse:
    return HttpResponse(f"note {name}", content_type="text/plain")


urlpatterns = [
    path("", include("django_sitemapx.urls")),
    path("<str:name>.txt", note),
]
