"""Receivers: override changes into ``overrides_changed``; rows and overrides into invalidation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from django_sitemapx.generations import global_generation, index_generation, page_generation
from django_sitemapx.invalidation import related_models, sections_touched_by
from django_sitemapx.models import Override
from django_sitemapx.overrides import send_overrides_changed
from django_sitemapx.registry import SitemapRegistry, default_registry
from django_sitemapx.signals import overrides_changed
from django_sitemapx.sources import ModelSource
from example_project.articles.models import Article, Category
from tests.conftest import content, locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory, DocumentFactory
from tests.support.generations import changed_generations, tokens
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db


# -- overrides: overrides_changed after commit -----------------------------------------


@pytest.fixture
def received() -> Iterator[list[dict[str, object]]]:
    calls: list[dict[str, object]] = []

    def receiver(sender: object, **kwargs: object) -> None:
        calls.append({"sender": sender, **kwargs})

    overrides_changed.connect(receiver)
    yield calls
    overrides_changed.disconnect(receiver)


def test_create_change_and_delete_notify_after_commit(
    received: list[dict[str, object]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        override = Override.objects.create(location="/a/", exclude=True, section="s", page=2)
        assert received == []  # nothing before the commit
    assert received[-1]["sender"] is Override
    assert received[-1]["pages"] == frozenset({("s", 2)})
    assert received[-1]["locations"] == frozenset({"/a"})
    assert received[-1]["everything"] is False

    override = Override.objects.get(pk=override.pk)
    override.location, override.section, override.page = "/b", "t", 1
    with django_capture_on_commit_callbacks(execute=True):
        override.save()
    # The old page and location are affected as well as the new ones.
    assert received[-1]["pages"] == frozenset({("s", 2), ("t", 1)})
    assert received[-1]["locations"] == frozenset({"/a", "/b"})

    with django_capture_on_commit_callbacks(execute=True):
        override.delete()
    assert received[-1]["pages"] == frozenset({("t", 1)})


def test_an_unplaced_override_affects_everything(
    received: list[dict[str, object]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location="/nowhere", exclude=True)
    assert received[-1]["everything"] is True


# -- overrides: the cached documents they affect ----------------------------------------


def test_an_override_change_invalidates_the_cached_documents(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
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
    changed = changed_generations(
        lambda: send_overrides_changed(Article, [("/a", [("article", 2), ("gone", 1)])])
    )
    assert changed == [index_generation(), page_generation("article", 2)]


def test_an_unplaced_override_invalidates_everything() -> None:
    changed = changed_generations(
        lambda: send_overrides_changed(Article, [("/a", [("article", None)])])
    )
    assert changed == [global_generation()]


# -- rows: the pages a saved or deleted row touches --------------------------------------


def test_a_row_is_on_the_page_of_its_key(registry: SitemapRegistry) -> None:
    source = registry.register(Document, limit=2)
    # Before the section's first layout no page is known: every page.
    assert sections_touched_by(Document(id=1), key_known=True) == [("document", None)]
    for key in (-5, 3, 10, 11, 40):
        DocumentFactory(id=key)
    assert [s.number for s in source.page_summaries()] == [1, 2, 3]  # -5 3 | 10 11 | 40

    def touched(key: int) -> list[tuple[str, int | None]]:
        return sections_touched_by(Document(id=key), key_known=True)

    assert touched(-9) == touched(-5) == touched(9) == [("document", 1)]
    assert touched(10) == touched(39) == [("document", 2)]
    assert touched(2**63 - 1) == [("document", 3)]
    assert sections_touched_by(Category(id=3), key_known=True) == []  # not registered


def test_a_model_read_through_a_relation_names_the_whole_section() -> None:
    source = default_registry.get("article")
    assert isinstance(source, ModelSource)
    assert related_models(source) == {Category}
    default_registry.get("category").page_summaries()
    pages = sections_touched_by(Category(id=1, slug="c"), key_known=True)
    assert ("article", None) in pages
    assert ("category", 1) in pages


def test_saving_a_row_invalidates_its_page_and_the_index_only(
    registry: SitemapRegistry,
) -> None:
    source = registry.register(Article, section="article", limit=2)
    ArticleFactory.create_batch(3)
    assert [s.number for s in source.page_summaries()] == [1, 2]
    article = Article.objects.order_by("-id").first()
    assert article is not None
    page = 2
    other = page_generation("article", 1)
    names = [index_generation(), page_generation("article", page), other]
    before = tokens(names)
    article.title = "changed"
    article.save()
    after = tokens(names)
    assert before is not None and after is not None
    assert [old != new for old, new in zip(before, after, strict=True)] == [True, True, False]


def test_deleting_a_row_invalidates_its_page(registry: SitemapRegistry) -> None:
    source = registry.register(Document)
    document = DocumentFactory()
    source.page_summaries()
    name = page_generation("document", 1)
    before = tokens([name])
    document.delete()
    assert tokens([name]) != before


def test_a_section_without_model_signals_is_left_to_its_own_events(
    registry: SitemapRegistry,
) -> None:
    # Wagtail's source sets it: a draft saved is no change, its app's events say what is.
    source = registry.register(Document, model_signals=False)
    document = DocumentFactory()
    source.page_summaries()
    names = [page_generation("document", 1), index_generation()]
    before = tokens(names)
    document.save()
    document.delete()
    assert tokens(names) == before
    assert sections_touched_by(DocumentFactory(), key_known=True) == []


def test_a_change_is_invalidated_again_after_commit(
    registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    registry.register(Document).page_summaries()
    name = page_generation("document", 1)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        document = DocumentFactory.build(id=1)
        document.save()
        during = tokens([name])
    assert len(callbacks) == 1
    callbacks[0]()
    assert tokens([name]) != during


def test_saving_an_unregistered_model_touches_nothing(registry: SitemapRegistry) -> None:
    registry.register(Document)
    assert changed_generations(lambda: CategoryFactory(slug="free")) == []


def test_a_save_in_a_transaction_replaces_generations_at_once_and_announces_after_commit(
    django_capture_on_commit_callbacks: Any,
) -> None:
    from django_sitemapx.signals import sitemap_invalidated

    article = ArticleFactory()
    announced: list[object] = []

    def receiver(**kwargs: object) -> None:
        announced.append((kwargs["section"], kwargs["page"]))

    sitemap_invalidated.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            replaced = changed_generations(article.save)
            assert replaced  # this process stops serving the cached page at once
            assert announced == []  # nothing is announced before the commit
    finally:
        sitemap_invalidated.disconnect(receiver)
    assert "article" in {section for section, _ in announced}  # once the change is committed
