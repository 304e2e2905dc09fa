"""Plain pages, so that every URL in the example sitemap resolves."""

import uuid

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from example_project.articles.models import Article, Author, Category


def home(request: HttpRequest) -> HttpResponse:
    categories = Category.objects.all()
    return render(request, "articles/home.html", {"categories": categories})


def about(request: HttpRequest) -> HttpResponse:
    return render(request, "articles/about.html")


def category_detail(request: HttpRequest, category: str) -> HttpResponse:
    category_obj = get_object_or_404(Category, slug=category)
    articles = category_obj.articles.filter(is_published=True)[:50]
    return render(
        request, "articles/category.html", {"category": category_obj, "articles": articles}
    )


def article_detail(request: HttpRequest, category: str, slug: str) -> HttpResponse:
    article = get_object_or_404(
        Article.objects.select_related("category"),
        category__slug=category,
        slug=slug,
        is_published=True,
    )
    return render(request, "articles/article.html", {"article": article})


def author_detail(request: HttpRequest, author: uuid.UUID) -> HttpResponse:
    return render(
        request, "articles/author.html", {"author": get_object_or_404(Author, id=author)}
    )
