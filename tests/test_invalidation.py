"""``invalidate()`` and the pages a changed row belongs to."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from django_sitemapx.cache import (
    DocumentCache,
    global_generation,
    index_generation,
    page_generation,
    section_generation,
)
from django_sitemapx.invalidation import invalidate, related_models, row_pages

import django_sitemapx as sitemapx
from django_sitemapx.exceptions import NotRegistered
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.signals import sitemap_invalidated
from example_project.articles.models import Article, Category
from tests.factories import ArticleFactory, CategoryFactory, DocumentFactory
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

NAMES = [
    global_generation(),
    index_generation(),
    section_generation("article"),
    page_generation("article", 1),
    page_generation("article", 2),
]


def _changed(action: Any) -> list[str]:
    store = DocumentCache()
    before = store.tokens(NAMES)
    action()
    after = store.tokens(NAMES)
    assert before is not None and after is not None
    return [name for name, old, new in zip(NAMES, before, after, strict=True) if old != new]


def test_invalidate_everything() -> None:
    assert _changed(lambda: invalidate()) == [global_generation()]


def test_invalidate_a_section() -> None:
    assert _changed(lambda: invalidate("article")) == [
        index_generation(),
        section_generation("article"),
    ]


def test_invalidate_a_page() -> None:
    assert _changed(lambda: invalidate("article", 2)) == [
        index_generation(),
        page_generation("article", 2),
    ]


def test_invalidate_is_exported_and_checks_its_arguments() -> None:
    assert sitemapx.invalidate is invalidate
    with pytest.raises(NotRegistered):
        invalidate("nope")
    with pytest.raises(TypeError):
        invalidate(page=3)


def test_invalidate_sends_a_signal() -> None:
    received: list[dict[str, Any]] = []

    def receiver(**kwargs: Any) -> None:
        received.append({"section": kwargs["section"], "page": kwargs["page"]})

    sitemap_invalidated.connect(receiver)
    try:
        invalidate("article", 1)
        invalidate()
    finally:
        sitemap_invalidated.disconnect(receiver)
    assert received == [{"section": "article", "page": 1}, {"section": None, "page": None}]


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_invalidate_reports_an_unreachable_cache() -> None:
    assert invalidate() is False


def test_a_row_is_on_the_page_of_its_key(registry: SitemapRegistry) -> None:
    registry.register(Document, limit=10)
    assert row_pages(Document(id=1)) == [("document", 1)]
    assert row_pages(Document(id=10)) == [("document", 1)]
    assert row_pages(Document(id=11)) == [("document", 2)]
    assert row_pages(Document(id=0)) == []  # never listed
    assert row_pages(Category(id=3)) == []  # not registered


def test_a_model_read_through_a_relation_names_the_whole_section() -> None:
    source = sitemapx.site.get("article")
    assert isinstance(source, sitemapx.ModelSource)
    assert related_models(source) == {Category}
    pages = row_pages(Category(id=1, slug="c"))
    assert ("article", None) in pages
    assert ("category", 1) in pages


def test_saving_a_row_invalidates_its_page_and_the_index_only(
    registry: SitemapRegistry,
) -> None:
    registry.register(Article, section="article", limit=2)
    ArticleFactory.create_batch(3)  # ids continue from other tests: find the page
    article = Article.objects.order_by("-id").first()
    assert article is not None
    page = (article.id - 1) // 2 + 1
    other = page_generation("article", page + 1)
    store = DocumentCache()
    names = [index_generation(), page_generation("article", page), other]
    before = store.tokens(names)
    article.title = "changed"
    article.save()
    after = store.tokens(names)
    assert before is not None and after is not None
    assert [old != new for old, new in zip(before, after, strict=True)] == [True, True, False]


def test_deleting_a_row_invalidates_its_page(registry: SitemapRegistry) -> None:
    registry.register(Document)
    document = DocumentFactory()
    name = page_generation("document", 1)
    store = DocumentCache()
    before = store.tokens([name])
    document.delete()
    assert store.tokens([name]) != before


def test_a_change_is_invalidated_again_after_commit(
    registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    registry.register(Document)
    name = page_generation("document", 1)
    store = DocumentCache()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        document = DocumentFactory.build(id=1)
        document.save()
        during = store.tokens([name])
    assert len(callbacks) == 1
    callbacks[0]()
    assert store.tokens([name]) != during


def test_saving_an_unregistered_model_touches_nothing(registry: SitemapRegistry) -> None:
    registry.register(Document)
    assert _changed(lambda: CategoryFactory(slug="free")) == []


def test_an_override_change_invalidates_the_cached_documents(
    client: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django_sitemapx.models import Override
    from tests.conftest import content, locs, validate_sitemap

    article, _ = ArticleFactory.create_batch(2)
    listed = locs(validate_sitemap(content(client.get("/sitemap-article-1.xml"))))
    path = article.get_absolute_url()
    assert any(loc.endswith(path) for loc in listed)
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location=path, exclude=True)
    listed = locs(validate_sitemap(content(client.get("/sitemap-article-1.xml"))))
    assert len(listed) == 1
    assert not any(loc.endswith(path) for loc in listed)


def test_an_override_placed_on_a_page_invalidates_that_page_only() -> None:
    from django_sitemapx.signals import send_overrides_changed

    changed = _changed(
        lambda: send_overrides_changed(Article, [("/a", [("article", 2), ("gone", 1)])])
    )
    assert changed == [index_generation(), page_generation("article", 2)]
