"""URL patterns for the chunked location tests: every built-in converter, and two others."""

from django.http import HttpRequest, HttpResponse
from django.urls import path, re_path, register_converter
from django.urls.converters import StringConverter

from tests.urls import urlpatterns as default_urlpatterns


class Lowercase(StringConverter):
    """A subclass of a built-in converter: its own regex (or to_url) is not known to be safe."""

    regex = "[a-z0-9]+"


register_converter(Lowercase, "lower")


def view(request: HttpRequest, **kwargs: object) -> HttpResponse:
    return HttpResponse()


urlpatterns = [
    path("n/<int:number>/", view, name="by-int"),
    path("word/<str:word>/", view, name="by-word"),
    path("three/<slug:a>/<str:b>/<path:c>/end", view, name="three"),
    path("<path:rest>", view, name="path-first"),
    re_path(r"^re/(?P<slug>[a-z0-9]+)/$", view, name="regex"),
    path("lower/<lower:word>/", view, name="custom"),
    *default_urlpatterns,
]

# URLs whose paths only reverse() itself writes right, so no plain template may apply.
NO_PLAIN_TEMPLATE = [
    ("path-first", {"rest": "rest"}),  # "/" + a value starting with "/" needs reverse()'s fix
    ("regex", {"slug": "slug"}),  # re_path: converters unknown
    ("custom", {"word": "word"}),  # a converter of the project's own
]
