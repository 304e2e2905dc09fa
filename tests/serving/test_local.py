"""The per-process copies of recently served documents."""

from __future__ import annotations

import time

import pytest
from django.test import Client, override_settings

from django_sitemapx.serving.cache import DocumentCache, Record, local_copies
from django_sitemapx.serving.local import LocalCopies
from tests.conftest import content
from tests.factories import ArticleFactory


def test_copies_are_bounded_in_bytes_least_recently_used_first() -> None:
    copies: LocalCopies[str] = LocalCopies()
    with override_settings(SITEMAPX_CACHE_LOCAL_BYTES=10):
        copies.put("a", "A", {"xml": b"1234"})
        copies.put("b", "B", {"xml": b"1234"})
        assert copies.get("a") == ("A", {"xml": b"1234"})  # now the most recent
        copies.put("c", "C", {"xml": b"1234"})
        assert copies.get("b") is None
        assert copies.get("a") is not None and copies.get("c") is not None
        assert copies.size == 8
        copies.put("big", "X", {"xml": b"x" * 11})
        assert copies.get("big") is None
        assert copies.size <= 10


def test_variants_add_up_and_a_new_record_replaces_them() -> None:
    copies: LocalCopies[str] = LocalCopies()
    copies.put("k", "R1", {"xml": b"plain"})
    copies.put("k", "R1", {"gz": b"packed"})
    assert copies.get("k") == ("R1", {"xml": b"plain", "gz": b"packed"})
    copies.put("k", "R2", {"xml": b"new"})
    assert copies.get("k") == ("R2", {"xml": b"new"})
    assert copies.size == 3


@override_settings(SITEMAPX_CACHE_LOCAL_BYTES=0)
def test_zero_keeps_nothing() -> None:
    copies: LocalCopies[str] = LocalCopies()
    copies.put("k", "R", {"xml": b"x"})
    assert copies.get("k") is None


@override_settings(SITEMAPX_CACHE_TIMEOUT=0.01)
def test_copies_expire_with_the_cache_timeout() -> None:
    copies: LocalCopies[str] = LocalCopies()
    copies.put("k", "R", {"xml": b"x"})
    time.sleep(0.02)
    assert copies.get("k") is None
    assert copies.size == 0


def test_a_document_read_is_kept_locally_a_document_stored_is_not() -> None:
    # A build's bytes are its request's memory (issue 29: a cold crawl's peak
    # RSS); the first read in a process keeps them for the next hits.
    store = DocumentCache()
    key = "django_sitemapx:doc:local"
    record = store.store(key, Record("t", None, {}), {"xml": b"<x/>"})
    assert record is not None
    assert local_copies.get(f"default|{key}") is None
    reader = DocumentCache()
    read = reader.record(key)
    assert read is not None and reader.body(key, read, "xml") == b"<x/>"
    assert local_copies.get(f"default|{key}") is not None


@pytest.mark.django_db
def test_an_invalidated_document_is_not_served_from_the_local_copy(client: Client) -> None:
    article = ArticleFactory(slug="first")
    assert b"/first/" in content(client.get("/sitemap-article-1.xml"))
    assert b"/first/" in content(client.get("/sitemap-article-1.xml"))  # a hit: kept locally
    assert local_copies.size > 0
    article.slug = "second"
    article.save()
    body = content(client.get("/sitemap-article-1.xml"))
    assert b"/second/" in body and b"/first/" not in body
