"""Keys, generations, parts and locks of ``cache.py``, on the configured cache."""

from __future__ import annotations

import logging

import pytest
from django.core.cache import caches
from django.test import override_settings

from django_sitemapx import cache as cache_module
from django_sitemapx.cache import (
    PART_BYTES,
    DocumentCache,
    Stored,
    document_key,
    host_part,
    new_token,
    page_generation,
    token_time,
)
from django_sitemapx.local_copies import local_copies

BROKEN = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "broken": {"BACKEND": "tests.support.caches.BrokenCache"},
    "forgetful": {"BACKEND": "tests.support.caches.ForgetfulCache"},
    "capped": {"BACKEND": "tests.support.caches.SizeCappedCache"},
}


def test_tokens_are_created_once_and_kept() -> None:
    store = DocumentCache()
    names = ["django_sitemapx:gen", page_generation("article", 3)]
    first = store.tokens(names)
    assert first is not None and len(set(first)) == 2
    assert DocumentCache().tokens(names) == first


def test_replace_gives_new_tokens_only_to_the_names_given() -> None:
    store = DocumentCache()
    names = [page_generation("article", 1), page_generation("article", 2)]
    before = store.tokens(names)
    assert store.replace(names[:1]) is True
    after = store.tokens(names)
    assert before is not None and after is not None
    assert after[0] != before[0]
    assert after[1] == before[1]


def test_token_time_is_when_it_was_made() -> None:
    token = new_token()
    assert abs(token_time(token) - float(token.split("-")[0])) < 1e-6
    assert token_time("garbage") == 0.0


def test_host_part_keeps_short_hosts_readable_and_hashes_others() -> None:
    assert host_part("https", "example.com") == "https:example.com"
    assert host_part("http", "example.com") != host_part("https", "example.com")
    odd = host_part("https", "exa mple.com")
    assert " " not in odd and odd.startswith("https:")
    assert len(host_part("https", "a" * 300)) < 80


def test_document_keys_differ_by_identity_and_tokens() -> None:
    key = document_key(("https:example.com", "article", "1"), ["a", "b"])
    assert key.startswith("django_sitemapx:doc:")
    assert key != document_key(("https:other.example", "article", "1"), ["a", "b"])
    assert key != document_key(("https:example.com", "article", "1"), ["a", "c"])
    assert len(key) < 250  # Memcached's key limit


def test_store_splits_large_documents_into_parts() -> None:
    store = DocumentCache()
    data = bytes(range(256)) * (PART_BYTES * 3 // 256 + 7)
    store.store("django_sitemapx:doc:test", Stored("tag", 12.0, {}), {"xml": data, "gz": b"z"})
    stored = store.record("django_sitemapx:doc:test")
    assert stored == Stored("tag", 12.0, {"xml": 4, "gz": 1})
    assert store.body("django_sitemapx:doc:test", stored, "xml") == data
    assert store.body("django_sitemapx:doc:test", stored, "gz") == b"z"
    assert store.body("django_sitemapx:doc:test", stored, "br") is None


def test_a_lost_part_is_a_miss_not_a_truncated_document() -> None:
    store = DocumentCache()
    data = b"x" * (PART_BYTES + 10)
    store.store("django_sitemapx:doc:lost", Stored("tag", None, {}), {"xml": data})
    caches["default"].delete("django_sitemapx:doc:lost:xml:1")
    local_copies.clear()  # as in another process
    stored = store.record("django_sitemapx:doc:lost")
    assert stored is not None
    assert store.body("django_sitemapx:doc:lost", stored, "xml") is None


@override_settings(CACHES=BROKEN, SITEMAPX_CACHE_ALIAS="capped")
def test_parts_fit_a_backend_with_a_one_megabyte_cap() -> None:
    store = DocumentCache()
    data = b"<url/>" * 1_000_000  # 6 MB
    store.store("django_sitemapx:doc:big", Stored("tag", None, {}), {"xml": data})
    assert store.available
    stored = store.record("django_sitemapx:doc:big")
    assert stored is not None
    assert store.body("django_sitemapx:doc:big", stored, "xml") == data


def test_lock_is_exclusive_until_unlocked() -> None:
    store = DocumentCache()
    token = store.lock("django_sitemapx:doc:l")
    assert token is not None
    assert DocumentCache().lock("django_sitemapx:doc:l") is None
    store.unlock("django_sitemapx:doc:l", "someone-else")
    assert DocumentCache().lock("django_sitemapx:doc:l") is None
    store.unlock("django_sitemapx:doc:l", token)
    assert DocumentCache().lock("django_sitemapx:doc:l") is not None


@override_settings(SITEMAPX_CACHE_WAIT=0.05)
def test_wait_gives_up_after_the_configured_time() -> None:
    holder = DocumentCache()
    assert holder.lock("django_sitemapx:doc:w") is not None
    assert DocumentCache().wait("django_sitemapx:doc:w", 0.05) == (None, None)


def test_wait_returns_the_stored_record() -> None:
    store = DocumentCache()
    store.store("django_sitemapx:doc:r", Stored("tag", None, {}), {"xml": b"<x/>"})
    stored, token = DocumentCache().wait("django_sitemapx:doc:r", 1)
    assert token is None and stored is not None and stored.etag == "tag"


@override_settings(CACHES=BROKEN, SITEMAPX_CACHE_ALIAS="broken")
def test_a_failing_backend_is_logged_once_and_switched_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = DocumentCache()
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        assert store.tokens(["django_sitemapx:gen"]) is None
        assert store.record("k") is None
        assert store.lock("k") is None
        assert store.replace(["django_sitemapx:gen"]) is False
    assert not store.available
    assert len(caplog.records) == 1
    assert "serving uncached" in caplog.records[0].getMessage()


@override_settings(CACHES=BROKEN, SITEMAPX_CACHE_ALIAS="forgetful")
def test_a_cache_that_keeps_nothing_counts_as_unavailable() -> None:
    store = DocumentCache()
    assert store.tokens(["django_sitemapx:gen"]) is None
    assert not store.available


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_no_alias_means_no_cache() -> None:
    store = DocumentCache()
    assert not store.available
    assert store.tokens(["django_sitemapx:gen"]) is None


@override_settings(SITEMAPX_CACHE_ALIAS="missing")
def test_an_unknown_alias_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        store = DocumentCache()
    assert not store.available
    assert caplog.records


def test_layout_version_is_in_every_key() -> None:
    assert f":{cache_module.LAYOUT}:" in document_key(("a",), ["t"])


def test_claim_returns_a_document_stored_just_before_the_lock() -> None:
    # A builder may store and unlock between a request's miss and its lock:
    # the request must take the stored copy, not build the document again.
    store = DocumentCache()
    key = "django_sitemapx:test:claim"
    store.store(key, Stored('"etag"', None, {}), {"xml": b"<x/>", "gz": b"gz"})
    stored, token = store.claim(key)
    assert stored is not None and token is None
    assert store.lock(key) is not None  # claim() released the lock it took
    empty, token = store.claim("django_sitemapx:test:unbuilt")
    assert empty is None and token is not None
