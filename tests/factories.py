"""Factories for the tests (the example's, plus the test app's)."""

import factory

from example_project.articles.factories import ArticleFactory, CategoryFactory
from tests.testapp.models import Document

__all__ = ["ArticleFactory", "CategoryFactory", "DocumentFactory"]


class DocumentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Document

    path = factory.Sequence(lambda n: f"/docs/{n}/")
