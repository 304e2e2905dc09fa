"""Served documents: hits, misses, 304s, gzip variants, failures and stampedes."""

from __future__ import annotations

import gzip
import logging
import os
import threading
import time
from typing import Any
from unittest import mock

import pytest
from asgiref.sync import async_to_sync
from django.core.cache import caches
from django.core.signals import request_finished
from django.test import AsyncClient, Client, override_settings
from django.utils import timezone
from django.utils.http import http_date

from django_sitemapx import conf
from django_sitemapx.compression import gzip_bytes
from django_sitemapx.entries import EntryStream
from django_sitemapx.invalidation import invalidate as sitemapx_invalidate
from django_sitemapx.locations import LocationBuilder
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.serving.background import store_thread
from django_sitemapx.serving.cache import DocumentCache, local_copies
from django_sitemapx.sources import ItemSource, Page, PageSummary
from example_project.articles.factories import ArticleFactory
from example_project.articles.models import Article
from tests.conftest import close_thread_connections, content, locs, validate_sitemap
from tests.support.collector import garbage_collector_off
from tests.support.memcached import MEMCACHED, MEMCACHED_HOST, MEMCACHED_PORT
from tests.support.sources import ClosingWatchedSource

pytestmark = pytest.mark.django_db

# For the tests that look inside the local-memory cache, on every leg.
LOCMEM = {
    "default": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "test-serving",
    }
}
CACHES_WITH_BROKEN = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "broken": {"BACKEND": "tests.support.caches.BrokenCache"},
}


def _document_keys() -> list[str]:
    """Keys of stored documents (this module's tests run on the local-memory cache)."""
    internal = caches["default"]._cache  # type: ignore[attr-defined]
    return [key.split(":", 2)[2] for key in internal if ":doc:" in key]


@pytest.fixture
def articles() -> list[Article]:
    return ArticleFactory.create_batch(3)


def test_a_miss_streams_and_the_next_request_is_a_hit_without_queries(
    client: Client, articles: list[Article], django_assert_num_queries: Any
) -> None:
    miss = client.get("/sitemap-article-1.xml")
    assert miss.streaming
    body = content(miss)
    assert len(locs(validate_sitemap(body))) == 3
    with django_assert_num_queries(0):
        hit = client.get("/sitemap-article-1.xml")
    assert not hit.streaming
    assert hit.content == body
    assert hit["Content-Length"] == str(len(body))
    assert hit["ETag"] == miss["ETag"]
    assert hit["Last-Modified"] == miss["Last-Modified"]
    assert hit["Content-Type"] == "application/xml; charset=utf-8"


def test_the_index_is_cached_too(
    client: Client, articles: list[Article], django_assert_num_queries: Any
) -> None:
    body = content(client.get("/sitemap.xml"))
    validate_sitemap(body)
    with django_assert_num_queries(0):
        assert client.get("/sitemap.xml").content == body


def test_if_none_match_gets_a_304_without_queries(
    client: Client, articles: list[Article], django_assert_num_queries: Any
) -> None:
    first = client.get("/sitemap-article-1.xml")
    content(first)
    etag = first["ETag"]
    with django_assert_num_queries(0):
        response = client.get("/sitemap-article-1.xml", headers={"if-none-match": etag})
    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag
    assert response["Cache-Control"] == "public, max-age=300"


def test_if_modified_since_gets_a_304_without_queries(
    client: Client, articles: list[Article], django_assert_num_queries: Any
) -> None:
    first = client.get("/sitemap-article-1.xml")
    content(first)
    last_modified = first["Last-Modified"]
    with django_assert_num_queries(0):
        response = client.get(
            "/sitemap-article-1.xml", headers={"if-modified-since": last_modified}
        )
    assert response.status_code == 304
    older = http_date(time.time() - 86_400 * 400)
    assert (
        client.get("/sitemap-article-1.xml", headers={"if-modified-since": older}).status_code
        == 200
    )


@override_settings(CACHES=LOCMEM)
def test_a_conditional_miss_answers_304_without_reading_the_rows(
    client: Client, articles: list[Article], django_assert_num_queries: Any
) -> None:
    caches["default"].clear()  # LOCMEM is not the cache conftest clears
    first = client.get("/sitemap-article-1.xml")
    content(first)
    etag = first["ETag"]
    caches["default"].clear()  # the document expired, the generations too
    response = client.get("/sitemap-article-1.xml", headers={"if-none-match": etag})
    # New generation tokens make a new ETag: a full answer, never a wrong 304.
    assert response.status_code == 200
    content(response)
    second = response["ETag"]
    caches["default"].delete_many(_document_keys())
    local_copies.clear()  # as in another process
    with django_assert_num_queries(1):  # the page's count and greatest lastmod only
        response = client.get("/sitemap-article-1.xml", headers={"if-none-match": second})
    assert response.status_code == 304


def test_etag_and_last_modified_follow_a_change(client: Client, articles: list[Article]) -> None:
    first = client.get("/sitemap-article-1.xml")
    content(first)
    articles[0].slug = "renamed"
    articles[0].save()
    second = client.get("/sitemap-article-1.xml")
    body = content(second)
    assert b"/renamed/" in body
    assert second["ETag"] != first["ETag"]
    assert (
        client.get("/sitemap-article-1.xml", headers={"if-none-match": first["ETag"]}).status_code
        == 200
    )


def test_gzip_variants_are_files_not_encodings(client: Client, articles: list[Article]) -> None:
    plain = content(client.get("/sitemap-article-1.xml"))
    for attempt in ("miss-or-hit", "hit"):
        response = client.get("/sitemap-article-1.xml.gz", headers={"accept-encoding": "gzip"})
        assert response.status_code == 200, attempt
        assert response["Content-Type"] == "application/gzip"
        assert "Content-Encoding" not in response
        assert gzip.decompress(content(response)) == plain
        assert response["ETag"].endswith('-gz"')
    index = client.get("/sitemap.xml.gz")
    validate_sitemap(gzip.decompress(content(index)))


def test_a_gzip_miss_is_streamed_and_stored_for_both_variants(
    client: Client, articles: list[Article], django_assert_num_queries: Any
) -> None:
    packed = client.get("/sitemap-article-1.xml.gz")
    assert packed.streaming
    packed_bytes = content(packed)
    data = gzip.decompress(packed_bytes)
    with django_assert_num_queries(0):
        assert client.get("/sitemap-article-1.xml").content == data
        assert client.get("/sitemap-article-1.xml.gz").content == packed_bytes


@pytest.mark.parametrize("part_bytes", [None, 256], ids=["one-entry", "in-parts"])
def test_a_plain_miss_compresses_nothing_and_the_first_gzip_request_adds_it(
    client: Client, articles: list[Article], django_assert_num_queries: Any, part_bytes: int | None
) -> None:
    with (
        override_settings(SITEMAPX_CACHE_PART_BYTES=part_bytes),
        mock.patch("django_sitemapx.serving.gzip_compressor") as compressor,
        mock.patch("django_sitemapx.serving.gzip_bytes", wraps=gzip_bytes) as compress,
    ):
        plain = content(client.get("/sitemap-article-1.xml"))
        # Nobody asked for gzip: the build compressed nothing.
        compressor.assert_not_called()
        compress.assert_not_called()
        local_copies.clear()  # read from the shared cache, as another process would
        with django_assert_num_queries(0):
            packed = client.get("/sitemap-article-1.xml.gz")
        assert not packed.streaming
        assert gzip.decompress(packed.content) == plain
        assert packed["ETag"].endswith('-gz"')
        assert compress.call_count == 1
        # Stored beside the plain variant: compressed once.
        local_copies.clear()
        with django_assert_num_queries(0):
            assert client.get("/sitemap-article-1.xml.gz").content == packed.content
            assert client.get("/sitemap-article-1.xml").content == plain
        assert compress.call_count == 1


def test_a_hit_read_from_the_shared_cache_is_kept_in_the_process(
    client: Client, articles: list[Article]
) -> None:
    body = content(client.get("/sitemap-article-1.xml"))
    local_copies.clear()  # built by another process: this one has no copy
    hit = client.get("/sitemap-article-1.xml")
    assert not hit.streaming and hit.content == body
    # The next hit fetches and unpickles nothing from the shared cache.
    assert local_copies.size == len(body)
    shared = caches["default"]
    with mock.patch.object(shared, "get", wraps=shared.get) as get:
        assert client.get("/sitemap-article-1.xml").content == body
    assert not [call for call in get.call_args_list if ":doc:" in str(call.args[0])]


def test_gzip_bytes_hold_no_time_or_name_and_are_the_same_on_every_build(
    client: Client, articles: list[Article]
) -> None:
    first = content(client.get("/sitemap-article-1.xml.gz"))
    # The gzip header (RFC 1952, 2.3): deflate, no flag (so no file name or comment)
    # and MTIME zero, so a rebuild at any later time gives the same bytes.
    assert first[:4] == b"\x1f\x8b\x08\x00"
    assert first[4:8] == b"\x00\x00\x00\x00"
    caches["default"].clear()
    local_copies.clear()
    assert content(client.get("/sitemap-article-1.xml.gz")) == first


@override_settings(SITEMAPX_INDEX_LINKS_GZIP=True)
def test_the_index_lists_gzip_pages_when_the_site_chooses_gzip(
    client: Client, articles: list[Article]
) -> None:
    for path in ("/sitemap.xml", "/sitemap.xml.gz"):
        data = content(client.get(path))
        if path.endswith(".gz"):
            data = gzip.decompress(data)
        listed = locs(validate_sitemap(data))
        assert "http://testserver/sitemap-article-1.xml.gz" in listed
        assert all(loc.endswith(".xml.gz") for loc in listed)


def test_the_index_lists_plain_pages_by_default(client: Client, articles: list[Article]) -> None:
    listed = locs(validate_sitemap(content(client.get("/sitemap.xml"))))
    assert "http://testserver/sitemap-article-1.xml" in listed


def test_gzip_middleware_compresses_plain_documents(
    client: Client, articles: list[Article], settings: Any
) -> None:
    settings.MIDDLEWARE = ["django.middleware.gzip.GZipMiddleware", *settings.MIDDLEWARE]
    for attempt in ("miss", "hit"):
        response = client.get("/sitemap-article-1.xml", headers={"accept-encoding": "gzip"})
        assert response["Content-Encoding"] == "gzip", attempt
        validate_sitemap(gzip.decompress(content(response)))
        assert response["ETag"].startswith('W/"'), attempt  # Django weakens it


def test_two_hosts_never_share_a_document(client: Client, articles: list[Article]) -> None:
    one = content(client.get("/sitemap-article-1.xml", headers={"host": "example.com"}))
    two = content(client.get("/sitemap-article-1.xml", headers={"host": "other.example"}))
    assert all(loc.startswith("http://example.com/") for loc in locs(validate_sitemap(one)))
    assert all(loc.startswith("http://other.example/") for loc in locs(validate_sitemap(two)))
    https = content(client.get("/sitemap-article-1.xml", secure=True))
    assert all(loc.startswith("https://testserver/") for loc in locs(validate_sitemap(https)))


@override_settings(CACHES=LOCMEM, SITEMAPX_CACHE_PART_BYTES=1024)
def test_a_document_missing_a_part_is_rebuilt_and_stored_again(
    client: Client, articles: list[Article], django_assert_num_queries: Any
) -> None:
    caches["default"].clear()  # LOCMEM is not the cache conftest clears
    body = content(client.get("/sitemap-article-1.xml"))
    caches["default"].delete_many([key for key in _document_keys() if ":xml:" in key])
    local_copies.clear()  # as in another process
    rebuilt = client.get("/sitemap-article-1.xml")
    assert rebuilt.streaming
    assert content(rebuilt) == body
    with django_assert_num_queries(0):
        assert client.get("/sitemap-article-1.xml").content == body


@override_settings(CACHES=LOCMEM)
@mock.patch.object(conf, "CHUNK_SIZE", 10)
def test_a_disconnect_mid_stream_still_leaves_the_whole_document_cached(
    client: Client, registry: SitemapRegistry
) -> None:
    caches["default"].clear()  # LOCMEM is not the cache conftest clears
    registry.register("items", items=lambda: [f"/item/{n}/" for n in range(100)])
    response = client.get("/sitemap-items-1.xml")
    stream = iter(response.streaming_content)
    next(stream)
    # What the server does when the client goes away. (request_finished would
    # close the test's database connection, which is not what this is about.)
    with mock.patch.object(request_finished, "send"):
        response.close()
    # The document was built and stored before its first byte was sent: its
    # record and parts are there, and the build lock (``<key>:lock``) is gone.
    keys = _document_keys()
    assert keys and not [key for key in keys if key.endswith(":lock")]
    hit = client.get("/sitemap-items-1.xml")
    assert not hit.streaming
    assert len(locs(validate_sitemap(hit.content))) == 100


def test_an_empty_page_is_404_and_not_cached(client: Client, registry: SitemapRegistry) -> None:
    registry.register("items", items=lambda: ["/a/"])
    assert client.get("/sitemap-items-2.xml").status_code == 404
    assert client.get("/sitemap-items-2.xml.gz").status_code == 404
    registry.register("nothing", items=lambda: [])
    assert client.get("/sitemap-nothing-1.xml").status_code == 404


def test_a_page_whose_urls_are_all_skipped_is_404(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register("bad", items=lambda: ["/ok\x01/"])
    assert client.get("/sitemap-bad-1.xml").status_code == 404
    assert client.get("/sitemap-bad-1.xml").status_code == 404


@override_settings(CACHES=CACHES_WITH_BROKEN, SITEMAPX_CACHE_ALIAS="broken")
def test_a_broken_cache_serves_uncached_and_logs(
    client: Client, articles: list[Article], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        for path in ("/sitemap.xml", "/sitemap-article-1.xml"):
            response = client.get(path)
            assert response.status_code == 200
            validate_sitemap(content(response))
            assert response["ETag"]
        packed = client.get("/sitemap-article-1.xml.gz")
        validate_sitemap(gzip.decompress(content(packed)))
    assert any("serving uncached" in record.getMessage() for record in caplog.records)


@override_settings(
    CACHES={
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "down": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            # Nothing listens on port 1 of the loopback: connection refused.
            "LOCATION": "redis://127.0.0.1:1/0",
        },
    },
    SITEMAPX_CACHE_ALIAS="down",
)
def test_an_unreachable_redis_serves_uncached(
    client: Client, articles: list[Article], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        response = client.get("/sitemap-article-1.xml")
    assert response.status_code == 200
    assert len(locs(validate_sitemap(content(response)))) == 3
    assert caplog.records


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_without_a_cache_documents_stream_with_validators_but_no_304(
    client: Client, articles: list[Article]
) -> None:
    first = client.get("/sitemap-article-1.xml")
    validate_sitemap(content(first))
    again = client.get("/sitemap-article-1.xml", headers={"if-none-match": first["ETag"]})
    assert again.status_code == 200
    assert again.streaming
    assert again["ETag"] == first["ETag"]


@override_settings(SITEMAPX_HTTP_CACHE_CONTROL="private, no-cache")
def test_cache_control_is_configurable(client: Client, articles: list[Article]) -> None:
    assert client.get("/sitemap.xml")["Cache-Control"] == "private, no-cache"
    with override_settings(SITEMAPX_HTTP_CACHE_CONTROL=None):
        assert "Cache-Control" not in client.get("/sitemap-article-1.xml")


def test_asgi_misses_stream_asynchronously_and_hits_are_served(
    articles: list[Article],
) -> None:
    async def fetch_twice() -> tuple[Any, bytes, Any]:
        client = AsyncClient()
        miss = await client.get("/sitemap-article-1.xml")
        body = b"".join([chunk async for chunk in miss.streaming_content])
        return miss, body, await client.get("/sitemap-article-1.xml")

    miss, body, hit = async_to_sync(fetch_twice)()
    assert miss.is_async
    validate_sitemap(body)
    assert hit.content == body


class SlowCountingSource(ItemSource):
    """Counts its builds; each one takes a while, so concurrent requests overlap."""

    builds = 0
    lock = threading.Lock()

    def items(self) -> list[str]:
        return [f"/slow/{n}/" for n in range(200)]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        page = super().page(number, summary)
        if page is None:
            return None
        entries = page.entries

        def slow_entries(builder: LocationBuilder) -> EntryStream:
            with SlowCountingSource.lock:
                SlowCountingSource.builds += 1
            time.sleep(0.3)
            yield from entries(builder)

        return Page(page.summary, slow_entries)


@pytest.mark.django_db(transaction=True)
def test_concurrent_misses_build_the_document_once(registry: SitemapRegistry) -> None:
    registry.register("slow", SlowCountingSource)
    SlowCountingSource.builds = 0
    barrier = threading.Barrier(8)
    bodies: list[bytes] = []
    errors: list[BaseException] = []

    def fetch() -> None:
        try:
            barrier.wait()
            response = Client().get("/sitemap-slow-1.xml")
            assert response.status_code == 200
            bodies.append(content(response))
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            close_thread_connections()

    threads = [threading.Thread(target=fetch) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    assert len(bodies) == 8
    assert len(set(bodies)) == 1
    assert len(locs(validate_sitemap(bodies[0]))) == 200
    assert SlowCountingSource.builds == 1


@pytest.mark.django_db(transaction=True)
@override_settings(SITEMAPX_CACHE_WAIT=0.05)
def test_waiters_build_themselves_when_the_builder_is_too_slow(
    registry: SitemapRegistry,
) -> None:
    registry.register("slow", SlowCountingSource)
    SlowCountingSource.builds = 0
    holder = DocumentCache()
    # Another process holds the build lock and never stores (it crashed, or is slow).
    with mock.patch.object(DocumentCache, "claim", return_value=None):
        first = Client().get("/sitemap-slow-1.xml")
        second = Client().get("/sitemap-slow-1.xml")
    assert second.status_code == 200
    validate_sitemap(content(second))
    validate_sitemap(content(first))
    assert SlowCountingSource.builds == 2
    assert holder.available


@pytest.mark.django_db(transaction=True)
def test_an_unread_first_response_holds_no_one_up(registry: SitemapRegistry) -> None:
    registry.register("slow", SlowCountingSource)
    SlowCountingSource.builds = 0
    first = Client().get("/sitemap-slow-1.xml")  # never read until the end
    second = Client().get("/sitemap-slow-1.xml")
    assert not second.streaming  # the stored copy, built before the first byte was sent
    assert SlowCountingSource.builds == 1
    assert content(first) == second.content
    validate_sitemap(second.content)


def _backends(tmp_path: Any) -> dict[str, dict[str, Any]]:
    return {
        "locmem": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "every-backend",
        },
        "file": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "cache"),
        },
        "db": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "sitemapx_test_cache",
        },
        "capped": {"BACKEND": "tests.support.caches.SizeCappedCache", "LOCATION": "capped"},
        "memcached": {
            "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
            "LOCATION": MEMCACHED,
        },
    }


def _memcached_answers() -> bool:
    import socket

    try:
        with socket.create_connection((MEMCACHED_HOST, MEMCACHED_PORT), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("backend", ["locmem", "file", "db", "capped", "memcached"])
def test_every_builtin_backend_caches_and_invalidates(
    backend: str, client: Client, tmp_path: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.management import call_command

    if backend == "memcached" and not _memcached_answers():
        # scripts/test starts one; under CI its absence is a failure, not a skip.
        if os.environ.get("SITEMAPX_REQUIRE_SERVICES") or os.environ.get("CI"):
            pytest.fail(f"no Memcached on {MEMCACHED}")
        pytest.skip(f"no Memcached on {MEMCACHED}")

    settings.CACHES = {"default": _backends(tmp_path)[backend]}
    if backend == "capped":  # a limit Django does not know of: the site says so
        settings.SITEMAPX_CACHE_PART_BYTES = 512 * 1024
    monkeypatch.setattr(conf, "CHUNK_SIZE", 500)
    if backend == "db":
        call_command("createcachetable", verbosity=0)
    caches["default"].clear()
    local_copies.clear()
    # Enough rows for a document over 1 MB, stored in several parts.
    category = ArticleFactory().category
    now = timezone.now()
    Article.objects.bulk_create(  # made directly: factory-boy's build costs 0.3 to 0.6 ms a row
        Article(
            category=category,
            slug=f"bulk-{n}-{'x' * 60}",
            title="Bulk",
            updated_at=now,
            is_published=True,
        )
        for n in range(9_000)
    )
    sitemapx_invalidate()
    first = client.get("/sitemap-article-1.xml")
    body = content(first)
    assert len(body) > 1024 * 1024
    local_copies.clear()  # read back from the backend, as another process would
    hit = client.get("/sitemap-article-1.xml")
    assert not hit.streaming and hit.content == body
    article = Article.objects.order_by("id").first()
    assert article is not None
    article.slug = "edited"
    article.save()
    assert b"/edited/" in content(client.get("/sitemap-article-1.xml"))


@pytest.mark.parametrize("cache_alias", ["default", None])
@pytest.mark.parametrize("path", ["/sitemap-watched-1.xml", "/sitemap-watched-1.xml.gz"])
@pytest.mark.parametrize("chunks_read", [0, 1])
def test_a_client_gone_early_closes_the_source_and_frees_the_lock_at_once(
    client: Client,
    registry: SitemapRegistry,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
    path: str,
    cache_alias: str | None,
    chunks_read: int,
) -> None:
    # A suspended source may hold a server-side cursor: it must be closed when the
    # response is, not whenever the garbage collector gets to it. The first chunk is
    # rendered before the response starts, so this holds even if none was read.
    settings.SITEMAPX_CACHE_ALIAS = cache_alias
    monkeypatch.setattr(conf, "CHUNK_SIZE", 10)
    registry.register("watched", ClosingWatchedSource)
    ClosingWatchedSource.log = []
    unlock = DocumentCache.unlock
    with (
        garbage_collector_off(),
        mock.patch.object(DocumentCache, "unlock", autospec=True, side_effect=unlock) as unlocked,
    ):
        response = client.get(path)
        assert response.streaming
        if cache_alias:
            # Built to the end before the response starts: the source is closed,
            # and the lock released once the document is stored (by the store
            # thread on a network cache), whatever the client does.
            assert ClosingWatchedSource.log == ["closed"]
            assert store_thread.drain(10)
            assert unlocked.call_count == 1
        stream = iter(response.streaming_content)
        for _ in range(chunks_read):
            assert next(stream)
        if not cache_alias:
            assert ClosingWatchedSource.log == []
            assert unlocked.call_count == 0
        # What the WSGI server does when the client goes away (request_finished would
        # close the test's database connection, which is not what this is about).
        with mock.patch.object(request_finished, "send"):
            response.close()
        assert ClosingWatchedSource.log == ["closed"]
        assert unlocked.call_count == (1 if cache_alias else 0)
