"""A multilingual URLconf: ``i18n_patterns`` prefixes and a pattern translated per language.

The translated route needs no message catalog: a lazy string evaluated in the
active language, which is what ``gettext_lazy`` gives ``path()``.
"""

from django.conf.urls.i18n import i18n_patterns
from django.http import HttpResponse
from django.urls import include, path
from django.utils.functional import lazy
from django.utils.translation import get_language

ARTICLES = {"en": "articles/", "de": "artikel/", "pt-br": "artigos/", "fr": "articles/"}


def _articles_route() -> str:
    return ARTICLES.get(get_language() or "en", "articles/") + "<slug:category>/<str:slug>/"


def view(request, **kwargs):  # type: ignore[no-untyped-def]
    return HttpResponse("ok")


urlpatterns = [
    *i18n_patterns(
        path("", view, name="home"),
        path("about/", view, name="about"),
        path(lazy(_articles_route, str)(), view, name="article-detail"),
        path("doc/<path:path>", view, name="document"),
    ),
    path("", include("django_sitemapx.urls")),
]
