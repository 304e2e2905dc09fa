"""Keys, generations, parts and locks of ``serving/cache.py``, and ``invalidate()``."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client, override_settings

import django_sitemapx as sitemapx
from django_sitemapx.exceptions import NotRegistered
from django_sitemapx.generations import (
    global_generation,
    host_index_generation,
    index_generation,
    new_token,
    page_generation,
    section_generation,
)
from django_sitemapx.invalidation import invalidate
from django_sitemapx.locations import Origin
from django_sitemapx.models import PageState
from django_sitemapx.serving import cache as cache_module
from django_sitemapx.serving.cache import (
    PART_BYTES,
    DocumentCache,
    Lock,
    Record,
    document_key,
    host_part,
    local_copies,
)
from django_sitemapx.signals import sitemap_invalidated
from tests.conftest import content
from tests.factories import ArticleFactory
from tests.support.generations import changed_generations, tokens

BROKEN = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "broken": {"BACKEND": "tests.support.caches.BrokenCache"},
    "forgetful": {"BACKEND": "tests.support.caches.ForgetfulCache"},
    "capped": {"BACKEND": "tests.support.caches.SizeCappedCache"},
}


def test_tokens_are_created_once_and_kept() -> None:
    store = DocumentCache()
    names = ["django_sitemapx:gen", page_generation("article", 3)]
    assert store.current(names) == [None, None]
    made = store.create(names, [None, None])
    assert made is not None
    first, unmoved = made
    assert unmoved and len(set(first)) == 2
    assert DocumentCache().current(names) == first
    # A second process that also read them missing keeps the first one's tokens.
    assert DocumentCache().create(names, [None, None]) == (first, False)


def test_replace_gives_new_tokens_only_to_the_names_given() -> None:
    store = DocumentCache()
    names = [page_generation("article", 1), page_generation("article", 2)]
    before = tokens(names)
    assert store.replace(names[:1]) is True
    after = tokens(names)
    assert before is not None and after is not None
    assert after[0] != before[0]
    assert after[1] == before[1]


def test_new_tokens_differ() -> None:
    assert new_token() != new_token()


def test_host_part_keeps_short_hosts_readable_and_hashes_others() -> None:
    assert host_part(Origin("https", "example.com")) == "https:example.com"
    assert host_part(Origin("http", "example.com")) != host_part(Origin("https", "example.com"))
    odd = host_part(Origin("https", "exa mple.com"))
    assert " " not in odd and odd.startswith("https:")
    assert len(host_part(Origin("https", "a" * 300))) < 80


def test_document_keys_differ_by_identity_and_tokens() -> None:
    key = document_key(("https:example.com", "article", "1"), ["a", "b"])
    assert key.startswith("django_sitemapx:doc:")
    assert key != document_key(("https:other.example", "article", "1"), ["a", "b"])
    assert key != document_key(("https:example.com", "article", "1"), ["a", "c"])
    assert len(key) < 250  # Memcached's key limit


@override_settings(SITEMAPX_CACHE_PART_BYTES=PART_BYTES)
def test_store_splits_large_documents_into_parts() -> None:
    store = DocumentCache()
    data = bytes(range(256)) * (PART_BYTES * 3 // 256 + 7)
    store.store("django_sitemapx:doc:test", Record("tag", 12.0, {}), {"xml": data, "gz": b"z"})
    stored = store.record("django_sitemapx:doc:test")
    assert stored == Record("tag", 12.0, {"xml": 4, "gz": 1})
    assert store.body("django_sitemapx:doc:test", stored, "xml") == data
    assert store.body("django_sitemapx:doc:test", stored, "gz") == b"z"
    assert store.body("django_sitemapx:doc:test", stored, "br") is None


@override_settings(SITEMAPX_CACHE_PART_BYTES=PART_BYTES)
def test_a_lost_part_is_a_miss_not_a_truncated_document() -> None:
    store = DocumentCache()
    data = b"x" * (PART_BYTES + 10)
    store.store("django_sitemapx:doc:lost", Record("tag", None, {}), {"xml": data})
    caches["default"].delete("django_sitemapx:doc:lost:xml:1")
    local_copies.clear()  # as in another process
    stored = store.record("django_sitemapx:doc:lost")
    assert stored is not None
    assert store.body("django_sitemapx:doc:lost", stored, "xml") is None


@override_settings(
    CACHES=BROKEN, SITEMAPX_CACHE_ALIAS="capped", SITEMAPX_CACHE_PART_BYTES=PART_BYTES
)
def test_parts_fit_a_backend_with_a_one_megabyte_cap() -> None:
    store = DocumentCache()
    data = b"<url/>" * 1_000_000  # 6 MB
    store.store("django_sitemapx:doc:big", Record("tag", None, {}), {"xml": data})
    assert store.available
    stored = store.record("django_sitemapx:doc:big")
    assert stored is not None
    assert store.body("django_sitemapx:doc:big", stored, "xml") == data


def test_lock_is_exclusive_until_unlocked() -> None:
    store = DocumentCache()
    lock = store.lock("django_sitemapx:doc:l")
    assert lock is not None and lock.key == "django_sitemapx:doc:l"
    assert DocumentCache().lock("django_sitemapx:doc:l") is None
    store.unlock(Lock("django_sitemapx:doc:l", "someone-else"))
    assert DocumentCache().lock("django_sitemapx:doc:l") is None
    store.unlock(lock)
    assert DocumentCache().lock("django_sitemapx:doc:l") is not None


@pytest.mark.parametrize(("wait", "expiry"), [(10.0, 60), (0.5, 3), (0.05, 1), (0.25, 2)])
def test_a_lock_expires_after_six_waits(
    wait: float, expiry: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past any build the wait is set above; a crashed builder's lock goes soon after.
    store = DocumentCache()
    timeouts: list[float] = []
    add = store.backend.add

    def recording_add(key: str, value: Any, timeout: float) -> bool:
        timeouts.append(timeout)
        return add(key, value, timeout)

    monkeypatch.setattr(store.backend, "add", recording_add)
    with override_settings(SITEMAPX_CACHE_WAIT=wait):
        assert store.lock("django_sitemapx:doc:x") is not None
    assert timeouts == [expiry]


@override_settings(SITEMAPX_CACHE_WAIT=0.05)
def test_wait_gives_up_after_the_configured_time() -> None:
    holder = DocumentCache()
    assert holder.lock("django_sitemapx:doc:w") is not None
    assert DocumentCache().wait("django_sitemapx:doc:w", 0.05) is None


def test_wait_returns_the_stored_record() -> None:
    store = DocumentCache()
    store.store("django_sitemapx:doc:r", Record("tag", None, {}), {"xml": b"<x/>"})
    held = DocumentCache().wait("django_sitemapx:doc:r", 1)
    assert isinstance(held, Record) and held.etag == "tag"


@override_settings(CACHES=BROKEN, SITEMAPX_CACHE_ALIAS="broken")
def test_a_failing_backend_is_logged_once_and_switched_off(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = DocumentCache()
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        assert store.current(["django_sitemapx:gen"]) is None
        assert store.record("k") is None
        assert store.lock("k") is None
        assert store.replace(["django_sitemapx:gen"]) is False
    assert not store.available
    assert len(caplog.records) == 1
    assert "serving uncached" in caplog.records[0].getMessage()


@override_settings(CACHES=BROKEN, SITEMAPX_CACHE_ALIAS="forgetful")
def test_a_cache_that_keeps_nothing_counts_as_unavailable() -> None:
    store = DocumentCache()
    assert store.create(["django_sitemapx:gen"], [None]) is None
    assert not store.available


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_no_alias_means_no_cache() -> None:
    store = DocumentCache()
    assert not store.available
    assert store.current(["django_sitemapx:gen"]) is None


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_no_alias_gives_back_nothing_and_warns_of_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = DocumentCache()
    lock = Lock("django_sitemapx:k", "token", 0.0)
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        store.unlock(lock, lock)  # what a request's finally does, holding nothing
    assert not caplog.records and not store.failed


@override_settings(SITEMAPX_CACHE_ALIAS="missing")
def test_an_unknown_alias_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        store = DocumentCache()
    assert not store.available
    assert caplog.records


@pytest.mark.django_db
def test_documents_stored_under_another_key_version_are_not_read(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    ArticleFactory()
    body = content(client.get("/sitemap-article-1.xml"))
    assert not client.get("/sitemap-article-1.xml").streaming  # stored: a hit
    monkeypatch.setattr(cache_module, "KEY_VERSION", "v-next")
    rebuilt = client.get("/sitemap-article-1.xml")
    assert rebuilt.streaming  # what the old layout stored is never read back
    assert content(rebuilt) == body
    assert not client.get("/sitemap-article-1.xml").streaming  # stored again, new layout


def test_claim_returns_a_document_stored_just_before_the_lock() -> None:
    # A builder may store and unlock between a request's miss and its lock:
    # the request must take the stored copy, not build the document again.
    store = DocumentCache()
    key = "django_sitemapx:test:claim"
    store.store(key, Record('"etag"', None, {}), {"xml": b"<x/>", "gz": b"gz"})
    held = store.claim(key)
    assert isinstance(held, Record) and held.etag == '"etag"'
    assert store.lock(key) is not None  # claim() released the lock it took
    unbuilt = store.claim("django_sitemapx:test:unbuilt")
    assert isinstance(unbuilt, Lock) and unbuilt.key == "django_sitemapx:test:unbuilt"
    assert store.claim("django_sitemapx:test:unbuilt") is None  # another builder holds it


# -- invalidate() ---------------------------------------------------------------------


@pytest.mark.django_db  # invalidate() marks the pages changed in the page table
def test_invalidate_everything() -> None:
    assert changed_generations(lambda: invalidate()) == [global_generation()]


@pytest.mark.django_db  # invalidate() marks the pages changed in the page table
def test_invalidate_a_section() -> None:
    assert changed_generations(lambda: invalidate("article")) == [
        index_generation(),
        section_generation("article"),
    ]


@pytest.mark.django_db  # invalidate() marks the pages changed in the page table
def test_invalidate_a_page() -> None:
    assert changed_generations(lambda: invalidate("article", 2)) == [
        index_generation(),
        page_generation("article", 2),
    ]


@pytest.mark.django_db  # invalidate() marks the host's own page row changed
def test_invalidate_one_hosts_page_replaces_only_that_hosts_generations() -> None:
    # A section whose hosts have pages of their own (a Wagtail site's): the host's page
    # and the host's index, not the section's shared page nor every host's index.
    origin = Origin("https", "a.example")
    assert changed_generations(lambda: invalidate("article", 2, origin=origin)) == [
        host_index_generation("a.example"),
        page_generation("article@a.example", 2),
    ]
    with pytest.raises(TypeError):
        invalidate(origin=origin)


@pytest.mark.django_db
def test_invalidate_every_page_of_one_host_replaces_only_that_hosts_generations() -> None:
    # A host's whole section (a Wagtail site's hostname changed): every page the page
    # table holds for it, and its index; other hosts' pages are left cached, unmarked.
    PageState.objects.create(section="article@a.example", number=2)
    PageState.objects.create(section="article@b.example", number=2)
    origin = Origin("https", "a.example")
    assert changed_generations(lambda: invalidate("article", origin=origin)) == [
        host_index_generation("a.example"),
        page_generation("article@a.example", 2),
    ]
    assert dict(PageState.objects.values_list("section", "changes")) == {
        "article@a.example": 1,
        "article@b.example": 0,
    }


def test_invalidate_is_exported_and_checks_its_arguments() -> None:
    assert sitemapx.invalidate is invalidate
    with pytest.raises(NotRegistered):
        invalidate("nope")
    with pytest.raises(TypeError):
        invalidate(page=3)


@pytest.mark.django_db  # invalidate() marks the pages changed in the page table
def test_invalidate_a_section_of_another_registry() -> None:
    custom = sitemapx.SitemapRegistry()
    custom.register("extra", sitemapx.StaticSource, url_names=["about"])
    with pytest.raises(NotRegistered):
        invalidate("extra")
    assert changed_generations(lambda: invalidate("extra", registry=custom)) == [
        index_generation()
    ]


@pytest.mark.django_db  # invalidate() marks the pages changed in the page table
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


@override_settings(CACHES=BROKEN, SITEMAPX_CACHE_ALIAS="broken")
@pytest.mark.django_db  # invalidate() marks the pages changed in the page table
def test_invalidate_reports_an_unreachable_cache() -> None:
    received: list[object] = []

    def receiver(**kwargs: Any) -> None:
        received.append(kwargs)

    sitemap_invalidated.connect(receiver)
    try:
        assert invalidate() is False
    finally:
        sitemap_invalidated.disconnect(receiver)
    assert received == []  # cached documents may still be served, so nothing is announced


@pytest.mark.django_db
@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_invalidate_without_a_cache_marks_the_pages_and_succeeds() -> None:
    received: list[object] = []

    def receiver(**kwargs: Any) -> None:
        received.append({"section": kwargs["section"], "page": kwargs["page"]})

    sitemap_invalidated.connect(receiver)
    try:
        assert invalidate() is True
    finally:
        sitemap_invalidated.disconnect(receiver)
    assert received == [{"section": None, "page": None}]
