"""Test-only views: an article changed over HTTP, and pages for the sitemap audit."""

from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from example_project.articles.models import Article
from tests.testapp.models import Tag


@csrf_exempt
@require_POST
def rename_article(request: HttpRequest, pk: int) -> HttpResponse:
    article = get_object_or_404(Article, pk=pk)
    article.slug = request.POST["slug"]
    article.save()
    return HttpResponse("renamed")


# -- pages the sitemap audit (tests/audit) asks for, each with one problem ----------------

_PAGE = (
    "<!doctype html><html><head><title>{title}</title>{head}</head>"
    "<body><main><h1>{title}</h1></main></body></html>"
)


def audit_page(request: HttpRequest, head: str = "", title: str = "Fine") -> HttpResponse:
    """A page a search engine indexes, or one that says otherwise in its ``<head>``."""
    return HttpResponse(_PAGE.format(title=title, head=head))


def audit_gone(request: HttpRequest) -> HttpResponse:
    raise Http404("gone")


def audit_moved(request: HttpRequest) -> HttpResponse:
    return HttpResponsePermanentRedirect("/audit/fine/")


def audit_header_noindex(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(_PAGE.format(title="Header", head=""))
    response.headers["X-Robots-Tag"] = "googlebot: noindex, nofollow"
    return response


def audit_writes(request: HttpRequest) -> HttpResponse:
    """A page that counts its views in the database, as some sites do on GET."""
    Tag.objects.create(slug=f"seen-{Tag.objects.count()}")
    return HttpResponse(_PAGE.format(title="Counted", head=""))


def audit_streamed(request: HttpRequest) -> StreamingHttpResponse:
    """A page streamed in parts, its noindex in the first one."""
    head = '<meta name="robots" content="noindex">'
    parts = _PAGE.format(title="Streamed", head=head).split("<body>")
    return StreamingHttpResponse(iter([parts[0], "<body>", parts[1]]))
