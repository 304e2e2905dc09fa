"""A test-only view: changes an article over HTTP, as an editor's form would."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from example_project.articles.models import Article


@csrf_exempt
@require_POST
def rename_article(request: HttpRequest, pk: int) -> HttpResponse:
    article = get_object_or_404(Article, pk=pk)
    article.slug = request.POST["slug"]
    article.save()
    return HttpResponse("renamed")
