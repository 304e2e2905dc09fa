"""Cache round trips: what a cold build and a hit ask of the cache, counted.

``CountingCache`` counts one operation per call the app makes (a network
backend's round trip; ``get_many()`` is one). Issue 29: only the work a
request needs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from django.test import Client, override_settings

from django_sitemapx.invalidation import invalidate
from django_sitemapx.serving import cache
from django_sitemapx.serving.cache import RELEASE_MARGIN, DocumentCache, Lock, local_copies
from example_project.articles.factories import ArticleFactory
from tests.conftest import content
from tests.support.caches import CountingCache

pytestmark = pytest.mark.django_db

COUNTING = {
    "default": {
        "BACKEND": "tests.support.caches.CountingCache",
        "LOCATION": "round-trips",
    }
}


@pytest.fixture
def counting_cache() -> Iterator[list[str]]:
    with override_settings(CACHES=COUNTING):
        from django.core.cache import caches

        caches["default"].clear()
        local_copies.clear()
        CountingCache.calls = []
        ArticleFactory.create_batch(3)
        yield CountingCache.calls
        local_copies.clear()


def _count(client: Client, path: str, **headers: str) -> tuple[int, list[str]]:
    CountingCache.calls.clear()
    response = client.get(path, headers=headers)
    content(response)
    return response.status_code, list(CountingCache.calls)


class _ByThread(list[str]):
    """Calls as ``CountingCache`` appends them, and the thread of each."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def append(self, name: str) -> None:
        self.threads.append(threading.current_thread().name)
        super().append(name)

    def on(self, thread: str) -> list[str]:
        return [name for name, where in zip(self, self.threads, strict=True) if where == thread]


def test_a_cold_page_build_takes_at_most_eight_round_trips(counting_cache: list[str]) -> None:
    client = Client()
    content(client.get("/sitemap.xml"))
    # A page changed on a running site: its generation exists (invalidate() replaced it).
    invalidate("article", 1)
    status, calls = _count(client, "/sitemap-article-1.xml")
    assert status == 200
    # The generations, the record (a miss), the build lock and the record again,
    # a build slot; then the document, one delete of the lock and the slot
    # together (no read of either before it), and the skips report.
    assert len(calls) <= 8, calls
    assert calls.count("add") == 2
    assert calls[-3:] == ["set", "delete_many", "get"]
    assert calls.count("set") == 1


def test_on_a_network_cache_the_request_makes_five_round_trips(
    counting_cache: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Stored by the store thread (serving.background): the document, the lock
    # and slot, and the skips report are not the request's round trips.
    monkeypatch.setattr(cache, "DEFERRING", (CountingCache,))
    client = Client()
    content(client.get("/sitemap.xml"))
    invalidate("article", 1)
    CountingCache.calls = calls = _ByThread()
    response = client.get("/sitemap-article-1.xml")
    assert response.status_code == 200
    on_request = calls.on(threading.current_thread().name)
    content(response)
    assert on_request == ["get_many", "get", "add", "get", "add"]
    assert calls.on("sitemapx-store") == ["set", "delete_many", "get"]


def test_a_page_first_built_after_a_flush_creates_its_generation(
    counting_cache: list[str],
) -> None:
    # The index reads no page generation (the page table keeps what changed), so
    # a page's is created by its own first build: one add() and one read more,
    # once per page after a flush.
    client = Client()
    content(client.get("/sitemap.xml"))
    status, calls = _count(client, "/sitemap-article-1.xml")
    assert status == 200
    assert len(calls) <= 11, calls
    assert calls.count("add") == 3
    # The build keeps no copy in its process (its memory is its request's):
    # the first hit here reads the document once, the next ones have it.
    status, calls = _count(client, "/sitemap-article-1.xml")
    assert (status, calls) == (200, ["get_many", "get"])
    status, calls = _count(client, "/sitemap-article-1.xml")
    assert (status, calls) == (200, ["get_many"])


def test_a_hit_takes_one_round_trip(counting_cache: list[str]) -> None:
    client = Client()
    first = client.get("/sitemap-article-1.xml")
    content(first)
    content(client.get("/sitemap-article-1.xml"))  # read once: kept in this process
    status, calls = _count(client, "/sitemap-article-1.xml")
    assert (status, calls) == (200, ["get_many"])  # the generations; the bytes are local
    status, calls = _count(client, "/sitemap-article-1.xml", if_none_match=first["ETag"])
    assert (status, calls) == (304, ["get_many"])
    local_copies.clear()  # another process: the record comes with its bytes
    status, calls = _count(client, "/sitemap-article-1.xml")
    assert (status, calls) == (200, ["get_many", "get"])


def test_a_lock_held_past_its_margin_is_read_before_it_is_deleted(
    counting_cache: list[str],
) -> None:
    store = DocumentCache()
    lock = store.lock("django_sitemapx:doc:held")
    assert lock is not None and lock.surely_held()
    # Its build ran past the margin: the key may have expired and been taken by
    # another builder, whose lock must stay.
    late = Lock(lock.key, lock.token, time.monotonic() - 60 + RELEASE_MARGIN, 60)
    assert not late.surely_held()
    store.backend.set(f"{lock.key}:lock", "another-builder")
    store.unlock(late)
    assert store.backend.get(f"{lock.key}:lock") == "another-builder"
    store.unlock(Lock(lock.key, "another-builder"))  # no age known: read, then deleted
    assert store.backend.get(f"{lock.key}:lock") is None


def test_a_build_slot_is_one_add_when_it_is_free(counting_cache: list[str]) -> None:
    store = DocumentCache()
    CountingCache.calls.clear()
    slot = store.build_slot(0)
    assert slot is not None and CountingCache.calls == ["add"]
    CountingCache.calls.clear()
    store.release(slot)
    assert CountingCache.calls == ["delete"]
