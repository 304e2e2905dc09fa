"""The cache under eviction, culling, storms and hostile clients (issue 22, the cache).

A document is served whole or rebuilt, never cut short; Django's default cache
settings hold a crawl; what a client asks for never makes the cache hold
keys of its own; and at most ``SITEMAPX_CACHE_BUILDS`` documents are built
at once.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf.urls.i18n import i18n_patterns
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.test import Client, override_settings
from django.urls import path as route
from django.utils.translation import get_language

from django_sitemapx import views as sitemapx_views
from django_sitemapx.generations import PREFIX
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.serving.cache import DocumentCache, local_copies
from django_sitemapx.sources import ItemSource, Page, PageSummary
from example_project.articles.factories import ArticleFactory
from tests.conftest import close_thread_connections, content, locs, validate_sitemap
from tests.support.memcached import MEMCACHED, MEMCACHED_HOST, MEMCACHED_PORT

pytestmark = pytest.mark.django_db

ITEMS = [f"/item/{n}/" for n in range(300)]


def _locmem(name: str, **options: Any) -> dict[str, Any]:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": name,
            "OPTIONS": options,
        }
    }


def _keys() -> list[str]:
    """Every key of the local-memory cache the test runs on."""
    internal = caches["default"]._cache  # type: ignore[attr-defined]
    return [key.split(":", 2)[2] for key in internal]


def _records() -> list[str]:
    return [key for key in _keys() if ":doc:" in key and not key.endswith(":lock")]


class Counting(ItemSource):
    """Counts its builds (the calls of ``items``), and how many run at once."""

    calls = 0
    running = 0
    most = 0
    pause = 0.0
    lock = threading.Lock()

    def items(self) -> list[str]:
        return ITEMS

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        page = super().page(number, summary)
        if page is None:
            return None
        entries = page.entries

        def counted(builder: Any) -> Any:
            with Counting.lock:
                Counting.calls += 1
                Counting.running += 1
                Counting.most = max(Counting.most, Counting.running)
            try:
                time.sleep(Counting.pause)
                yield from entries(builder)
            finally:
                with Counting.lock:
                    Counting.running -= 1

        return Page(page.summary, counted)

    @classmethod
    def reset(cls, pause: float = 0.0) -> None:
        cls.calls = cls.running = cls.most = 0
        cls.pause = pause


@pytest.fixture
def counting(registry: SitemapRegistry) -> SitemapRegistry:
    registry.register("items", Counting, limit=25)  # 12 pages
    Counting.reset()
    return registry


# -- no response is ever cut short --------------------------------------------------


class FlushedAfterStoring(LocMemCache):
    """Flushed the moment a document's record is stored, as by a FLUSHDB from elsewhere."""

    def set(self, key: str, value: Any, *args: Any, **kwargs: Any) -> None:
        super().set(key, value, *args, **kwargs)
        if isinstance(value, dict) and "etag" in value:
            self.clear()


class EvictingOnRead(LocMemCache):
    """Evicts a document's next part whenever one is read, as a full Memcached can."""

    def get(self, key: str, default: Any = None, version: Any = None) -> Any:
        value = super().get(key, default, version)
        head, _, number = key.rpartition(":")
        if number.isdigit() and head.endswith((":xml", ":gz")):
            self.delete(f"{head}:{int(number) + 1}", version)
        return value


@pytest.mark.parametrize("backend", ["FlushedAfterStoring", "EvictingOnRead"])
@pytest.mark.parametrize("part_bytes", [None, 1024])
@pytest.mark.parametrize("path", ["/sitemap-items-1.xml", "/sitemap-items-1.xml.gz"])
def test_a_document_evicted_between_its_build_and_its_send_is_served_whole(
    backend: str, part_bytes: int | None, path: str, registry: SitemapRegistry, settings: Any
) -> None:
    settings.CACHES = {"default": {"BACKEND": f"{__name__}.{backend}", "LOCATION": backend}}
    settings.SITEMAPX_CACHE_PART_BYTES = part_bytes
    registry.register("items", items=lambda: ITEMS)
    for _ in range(2):
        local_copies.clear()  # as in another process: the shared cache is all there is
        response = Client().get(path)
        assert response.status_code == 200
        body = content(response)
        assert int(response.headers["Content-Length"]) == len(body)
        if path.endswith(".gz"):
            import gzip

            body = gzip.decompress(body)
        assert len(locs(validate_sitemap(body))) == len(ITEMS)


@override_settings(CACHES=_locmem("parts-gone"), SITEMAPX_CACHE_PART_BYTES=1024)
def test_a_hit_whose_parts_left_is_rebuilt_not_cut_short(registry: SitemapRegistry) -> None:
    registry.register("items", items=lambda: ITEMS)
    caches["default"].clear()
    whole = content(Client().get("/sitemap-items-1.xml"))
    for key in _keys():
        if ":xml:" in key and not key.endswith(":xml:0"):
            caches["default"].delete(key)
    local_copies.clear()
    again = Client().get("/sitemap-items-1.xml")
    assert again.status_code == 200
    assert content(again) == whole


# -- Django's default cache settings -------------------------------------------------


@override_settings(CACHES=_locmem("small", MAX_ENTRIES=40))
def test_a_warm_crawl_hits_a_cache_keeping_few_entries(counting: SitemapRegistry) -> None:
    """12 pages and the index: 3 entries a document and more culled them at random."""
    caches["default"].clear()
    client = Client()
    paths = ["/sitemap.xml"] + [f"/sitemap-items-{n}.xml" for n in range(1, 13)]
    cold = [content(client.get(path)) for path in paths]
    assert Counting.calls == 12
    local_copies.clear()  # another process: only the shared cache
    warm = [content(client.get(path)) for path in paths]
    assert warm == cold
    assert Counting.calls == 12  # every page a hit
    assert len(_records()) == 13  # one entry a document


# -- bounded keys ---------------------------------------------------------------------


@override_settings(CACHES=_locmem("bounded"))
def test_a_page_that_does_not_exist_creates_nothing(counting: SitemapRegistry) -> None:
    caches["default"].clear()
    client = Client()
    for number in range(1000, 1050):
        assert client.get(f"/sitemap-items-{number}.xml").status_code == 404
    assert client.get("/sitemap-index-7.xml").status_code == 404
    assert _keys() == []
    assert client.get("/sitemap-items-1.xml").status_code == 200
    assert not [key for key in _keys() if ":1000" in key]


@override_settings(CACHES=_locmem("bounded-model"))
def test_a_model_page_that_does_not_exist_creates_no_key() -> None:
    ArticleFactory.create_batch(3)
    caches["default"].clear()
    client = Client()
    assert client.get("/sitemap-article-1.xml").status_code == 200
    before = set(_keys())
    for number in range(1000, 1100):
        assert client.get(f"/sitemap-article-{number}.xml").status_code == 404
    assert set(_keys()) == before


LANGUAGES = ["de", "fr", "en", "de-DE", "fr-CH,fr;q=0.9", "es", "ja", "*", "en-GB", "de,fr"]


@override_settings(
    CACHES=_locmem("languages"),
    MIDDLEWARE=[
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.locale.LocaleMiddleware",
        "django.middleware.common.CommonMiddleware",
    ],
)
def test_every_accept_language_gets_the_same_bytes_from_one_record(
    registry: SitemapRegistry,
) -> None:
    registry.register("items", items=lambda: [f"/{get_language()}/page/"])
    caches["default"].clear()
    bodies = {
        content(Client().get("/sitemap-items-1.xml", headers={"accept-language": language}))
        for language in LANGUAGES
    }
    cookie = Client()
    cookie.cookies["django_language"] = "de"
    bodies.add(content(cookie.get("/sitemap-items-1.xml")))
    assert len(bodies) == 1
    assert b"/en/page/" in bodies.pop()  # LANGUAGE_CODE: the URL has no language prefix
    assert len(_records()) == 1


urlpatterns = i18n_patterns(route("sitemap-<section>-<page>.xml", sitemapx_views.section))


@override_settings(
    CACHES=_locmem("i18n"),
    ROOT_URLCONF=__name__,
    MIDDLEWARE=[
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.locale.LocaleMiddleware",
    ],
)
def test_under_i18n_patterns_the_prefix_is_the_language(registry: SitemapRegistry) -> None:
    registry.register("items", items=lambda: [f"/{get_language()}/page/"])
    caches["default"].clear()
    client = Client()
    for language in ("de", "fr"):
        for asked in ("en", "de", "fr"):
            response = client.get(
                f"/{language}/sitemap-items-1.xml", headers={"accept-language": asked}
            )
            assert locs(validate_sitemap(content(response))) == [
                f"http://testserver/{language}/page/"
            ]
    assert len(_records()) == 2


@override_settings(CACHES=_locmem("wildcard"), ALLOWED_HOSTS=["*"], SITEMAPX_WILDCARD_HOSTS=3)
def test_a_wildcard_serves_a_bounded_number_of_hosts(registry: SitemapRegistry) -> None:
    registry.register("items", items=lambda: ITEMS)
    caches["default"].clear()
    client = Client()
    statuses = [
        client.get("/sitemap-items-1.xml", headers={"host": f"h{n}.example"}).status_code
        for n in range(8)
    ]
    assert statuses == [200] * 3 + [404] * 5
    assert client.get("/sitemap-items-1.xml", headers={"host": "h0.example"}).status_code == 200
    hosts = {key.split(":")[4] for key in _records()}
    assert hosts == {"h0.example", "h1.example", "h2.example"}


@override_settings(SITEMAPX_HOSTS=["example.com"])
def test_sitemapx_hosts_is_the_bound(registry: SitemapRegistry) -> None:
    registry.register("items", items=lambda: ITEMS)
    client = Client()
    assert client.get("/sitemap-items-1.xml", headers={"host": "example.com"}).status_code == 200
    assert client.get("/sitemap.xml", headers={"host": "other.example"}).status_code == 404


# -- crawler storms -------------------------------------------------------------------


@override_settings(SITEMAPX_CACHE_BUILDS=1, SITEMAPX_CACHE_BUILD_WAIT=0.05)
def test_a_build_beyond_the_bound_is_answered_503_with_retry_after(
    counting: SitemapRegistry,
) -> None:
    slot = DocumentCache().build_slot(0)  # another worker is building
    assert slot is not None
    busy = Client().get("/sitemap-items-2.xml")
    assert busy.status_code == 503
    assert int(busy.headers["Retry-After"]) >= 1
    assert Counting.calls == 0
    DocumentCache().release(slot)
    assert Client().get("/sitemap-items-2.xml").status_code == 200


@override_settings(SITEMAPX_CACHE_BUILDS=1, SITEMAPX_CACHE_BUILD_WAIT=0.05)
def test_a_request_finding_its_tokens_evicted_gives_its_build_slot_back(
    counting: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What create() does where the cache evicts the generations' new tokens at once
    # (a tiny, full cache): the request turns the cache off and is served uncached.
    def forgotten(self: DocumentCache, names: Any, current: Any) -> None:
        self.available = False

    with monkeypatch.context() as patched:
        patched.setattr(DocumentCache, "create", forgotten)
        assert Client().get("/sitemap-items-2.xml").status_code == 200
    # Its slot was given back: the next build finds it free at once, not a 503.
    assert DocumentCache().backend.get(f"{PREFIX}:build:0") is None
    assert Client().get("/sitemap-items-2.xml").status_code == 200


@override_settings(SITEMAPX_CACHE_BUILDS=1, SITEMAPX_CACHE_WAIT=0.5)
def test_a_dead_builders_slot_frees_itself(counting: SitemapRegistry) -> None:
    assert DocumentCache().build_slot(0) is not None  # never released: its worker died
    assert DocumentCache().build_slot(0) is None
    time.sleep(3.2)  # six waits, rounded up to whole seconds
    assert Client().get("/sitemap-items-2.xml").status_code == 200


@pytest.mark.django_db(transaction=True)
@override_settings(SITEMAPX_CACHE_BUILDS=2, SITEMAPX_CACHE_BUILD_WAIT=30)
def test_concurrent_cold_pages_are_built_at_most_builds_at_once(
    counting: SitemapRegistry,
) -> None:
    Counting.reset(pause=0.2)
    barrier = threading.Barrier(8)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def fetch(number: int) -> None:
        try:
            barrier.wait()
            response = Client().get(f"/sitemap-items-{number}.xml")
            statuses.append(response.status_code)
            validate_sitemap(content(response))
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            close_thread_connections()

    threads = [threading.Thread(target=fetch, args=(n,)) for n in range(1, 9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert statuses == [200] * 8
    assert Counting.calls == 8
    assert Counting.most == 2


# -- under evicting caches ------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    try:
        with socket.create_connection((MEMCACHED_HOST, port), timeout=0.5):
            return True
    except OSError:
        return False


def _required() -> bool:
    return bool(os.environ.get("SITEMAPX_REQUIRE_SERVICES") or os.environ.get("CI"))


@pytest.fixture(params=["locmem-tiny", "memcached", "redis-maxmemory"])
def evicting_cache(request: pytest.FixtureRequest, settings: Any) -> Iterator[str]:
    """A cache that forgets: 8 entries, Memcached, or a Redis of 1 MB, its own process."""
    kind = request.param
    if kind == "locmem-tiny":
        settings.CACHES = _locmem("tiny", MAX_ENTRIES=8)
        yield kind
        return
    if kind == "memcached":
        if not _answers(MEMCACHED_PORT):
            if _required():
                pytest.fail(f"no Memcached on {MEMCACHED}")
            pytest.skip(f"no Memcached on {MEMCACHED}")
        # A prefix of this test's own: the shared Memcached is never flushed.
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
                "LOCATION": MEMCACHED,
                "KEY_PREFIX": secrets.token_hex(6),
            }
        }
        yield kind
        return
    server = shutil.which("redis-server")
    if server is None:
        if _required():
            pytest.fail("no redis-server to start")
        pytest.skip("no redis-server to start")
    port = _free_port()
    process = subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--maxmemory",
            "1mb",
            "--maxmemory-policy",
            "allkeys-lru",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not _answers(port):
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        settings.CACHES = {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": f"redis://127.0.0.1:{port}/0",
            }
        }
        yield kind
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_every_document_is_whole_under_an_evicting_cache(
    evicting_cache: str, counting: SitemapRegistry
) -> None:
    client = Client()
    paths = ["/sitemap.xml"] + [
        f"/sitemap-items-{n}.xml{suffix}" for n in range(1, 13) for suffix in ("", ".gz")
    ]
    expected: dict[str, bytes] = {}
    for _round in range(3):
        for path in paths:
            local_copies.clear()
            response = client.get(path)
            assert response.status_code == 200, path
            body = content(response)
            assert expected.setdefault(path, body) == body, path
    import gzip

    for path, body in expected.items():
        root = validate_sitemap(gzip.decompress(body) if path.endswith(".gz") else body)
        if "items" in path:
            assert len(locs(root)) == 25


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_are_whole_under_an_evicting_cache(
    evicting_cache: str, counting: SitemapRegistry
) -> None:
    expected = {
        number: content(Client().get(f"/sitemap-items-{number}.xml")) for number in (1, 2, 3)
    }
    barrier = threading.Barrier(9)
    errors: list[BaseException] = []

    def fetch(number: int) -> None:
        try:
            barrier.wait()
            for _ in range(3):
                response = Client().get(f"/sitemap-items-{number}.xml")
                assert response.status_code == 200
                assert content(response) == expected[number]
        except BaseException as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            close_thread_connections()

    threads = [threading.Thread(target=fetch, args=(1 + n % 3,)) for n in range(9)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
