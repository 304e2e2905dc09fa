"""Built documents stored off the request, on the store thread (``serving.background``).

The serving tests run on the local-memory cache, which stores in the request;
here it stands in for a network cache (``cache.DEFERRING``), so the store
thread's rules are checked on every leg: the request answers before the store,
the lock is held until the document is stored, a full queue stores in the
request, a failed build queues nothing.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator

import pytest
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.test import Client, override_settings

from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.serving import background, cache
from django_sitemapx.serving.background import QUEUED, StoreThread, store_thread
from django_sitemapx.skips import recorded_skips
from django_sitemapx.sources import ItemSource
from example_project.articles.factories import ArticleFactory
from tests.conftest import content, locs, validate_sitemap

LOCMEM = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "test-background",
    }
}


def _keys() -> list[str]:
    return list(caches["default"]._cache)  # type: ignore[attr-defined]


def _documents() -> list[str]:
    return [key for key in _keys() if ":doc:" in key and not key.endswith(":lock")]


def _locks() -> list[str]:
    return [key for key in _keys() if key.endswith(":lock") or ":build:" in key]


@pytest.fixture
def deferred(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """The local-memory cache stored on the store thread, which waits for the event."""
    monkeypatch.setattr(cache, "DEFERRING", (LocMemCache,))
    go = threading.Event()
    with override_settings(CACHES=LOCMEM):
        caches["default"].clear()
        cache.local_copies.clear()
        yield go
        go.set()
        assert store_thread.drain(10)
        cache.local_copies.clear()


def _hold(thread: StoreThread, go: threading.Event) -> None:
    """Keep ``thread`` busy until ``go`` is set."""
    started = threading.Event()

    def job() -> None:
        started.set()
        go.wait(10)

    assert thread.submit(job)
    assert started.wait(10)


def test_jobs_run_in_order_on_another_thread_and_drain_waits_for_them() -> None:
    thread = StoreThread(size=3)
    ran: list[tuple[int, str]] = []
    for number in range(3):
        assert thread.submit(lambda n=number: ran.append((n, threading.current_thread().name)))
    assert thread.drain(10)
    assert ran == [(0, "sitemapx-store"), (1, "sitemapx-store"), (2, "sitemapx-store")]


def test_a_full_queue_refuses_a_job_and_drain_can_give_up() -> None:
    thread = StoreThread(size=1)
    go = threading.Event()
    _hold(thread, go)
    assert thread.submit(lambda: None)  # queued
    assert not thread.submit(lambda: None)  # full: the caller stores
    assert not thread.drain(0.05)
    go.set()
    assert thread.drain(10)


def test_a_failing_job_is_logged_and_the_thread_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    thread = StoreThread()
    ran: list[int] = []

    def fail() -> None:
        raise ConnectionError("cache gone (test)")

    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        assert thread.submit(fail)
        assert thread.submit(lambda: ran.append(1))
        assert thread.drain(10)
    assert ran == [1]
    assert "Storing a sitemap document failed" in caplog.text


def test_a_forked_process_starts_its_own_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    thread = StoreThread()
    assert thread.submit(lambda: None)
    assert thread.drain(10)
    first = thread._queue
    monkeypatch.setattr(os, "getpid", lambda: -1)  # what a fork's child sees: another pid
    ran = threading.Event()
    assert thread.submit(ran.set)
    assert ran.wait(10)
    assert thread._queue is not first


def test_a_forked_child_forgets_a_lock_held_at_the_fork() -> None:
    thread = StoreThread()
    thread._guard.acquire()  # another thread was in submit() when the process forked
    thread._forget()  # what os.register_at_fork runs in the child
    ran = threading.Event()
    assert thread.submit(ran.set)
    assert ran.wait(10)


@pytest.mark.django_db
def test_the_request_answers_before_the_store_and_holds_the_lock_until_it(
    deferred: threading.Event,
) -> None:
    ArticleFactory.create_batch(3)
    client = Client()
    content(client.get("/sitemap.xml"))
    go = deferred
    _hold(store_thread, go)
    response = client.get("/sitemap-article-1.xml")
    body = b"".join(response.streaming_content)
    # Every byte sent, its length said, while the document waits to be stored.
    assert response["Content-Length"] == str(len(body))
    assert len(locs(validate_sitemap(body))) == 3
    assert [key for key in _documents() if ":article:" in key] == []
    # Its build lock and slot stay held: another request waits for the stored copy.
    assert len(_locks()) == 2
    go.set()
    assert store_thread.drain(10)
    assert _locks() == []
    assert [key for key in _documents() if ":article:" in key]
    hit = client.get("/sitemap-article-1.xml")
    assert not hit.streaming and hit.content == body


@pytest.mark.django_db
def test_a_full_queue_stores_in_the_request(deferred: threading.Event) -> None:
    ArticleFactory.create_batch(3)
    client = Client()
    content(client.get("/sitemap.xml"))
    _hold(store_thread, deferred)
    for _ in range(QUEUED):
        assert store_thread.submit(lambda: None)
    response = client.get("/sitemap-article-1.xml")
    body = b"".join(response.streaming_content)
    # Stored (and unlocked) before the response, as with no thread.
    assert [key for key in _documents() if ":article:" in key]
    assert _locks() == []
    assert len(locs(validate_sitemap(body))) == 3


@pytest.mark.django_db
def test_a_build_that_fails_queues_nothing_and_frees_its_lock(
    deferred: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    ArticleFactory.create_batch(3)
    client = Client(raise_request_exception=True)
    content(client.get("/sitemap.xml"))
    submitted: list[object] = []
    monkeypatch.setattr(background.StoreThread, "submit", lambda self, job: submitted.append(job))

    def broken(chunks: object, gz: bool) -> object:
        raise RuntimeError("the database went away mid-page (test)")

    monkeypatch.setattr("django_sitemapx.serving._build", broken)
    with pytest.raises(RuntimeError):
        client.get("/sitemap-article-1.xml")
    assert submitted == []
    assert [key for key in _documents() if ":article:" in key] == []
    assert _locks() == []


class _Skipping(ItemSource):
    def location(self, item):  # type: ignore[no-untyped-def]
        return item


@pytest.mark.django_db
def test_the_skips_report_is_recorded_with_the_stored_document(
    deferred: threading.Event, registry: SitemapRegistry
) -> None:
    # The report's round trip is not the request's: it is written by the store.
    registry.register("custom", _Skipping, items=lambda: ["/ok/", "https://other.example/"])
    _hold(store_thread, deferred)
    client = Client()
    assert b"/ok/" in b"".join(client.get("/sitemap-custom-1.xml").streaming_content)
    assert recorded_skips(["custom"]) == {"custom": {}}
    deferred.set()
    assert store_thread.drain(10)
    assert recorded_skips(["custom"]) == {"custom": {"other_host": 1}}


@pytest.mark.django_db
def test_a_page_whose_every_entry_was_left_out_still_reports_why(
    deferred: threading.Event, registry: SitemapRegistry
) -> None:
    registry.register("custom", _Skipping, items=lambda: ["https://other.example/"])
    assert Client().get("/sitemap-custom-1.xml").status_code == 404
    assert recorded_skips(["custom"]) == {"custom": {"other_host": 1}}


@pytest.mark.django_db
@override_settings(SITEMAPX_CACHE_STORE_THREAD=False)
def test_without_the_store_thread_a_network_cache_stores_in_the_request(
    deferred: threading.Event,
) -> None:
    # For servers that run no application thread (uWSGI without --enable-threads).
    ArticleFactory.create_batch(3)
    client = Client()
    content(client.get("/sitemap.xml"))
    _hold(store_thread, deferred)
    response = client.get("/sitemap-article-1.xml")
    assert [key for key in _documents() if ":article:" in key]
    assert _locks() == []
    assert len(locs(validate_sitemap(b"".join(response.streaming_content)))) == 3
