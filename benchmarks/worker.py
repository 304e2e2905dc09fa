"""One benchmark variant in a fresh process: ``python -m benchmarks.worker VARIANT``.

Documents are requested through Django's real WSGI handler (URL resolving,
middleware, the view, the streamed body), in this process, with nothing but
the measurement around them. Prints one JSON object per measured variant, one
per line, on stdout. ``prepare N`` builds the data set instead.
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_LOC = re.compile(rb"<loc>([^<]*)</loc>")


@dataclass
class Document:
    path: str
    status: int
    seconds: float
    first_byte: float | None
    size: int
    urls: int
    queries: int
    headers: dict[str, str]
    body: bytes | None = None


@dataclass
class Result:
    """One row of the results table."""

    variant: str
    database: str = ""
    n: int = 0
    status: str = "ok"
    seconds: float | None = None
    urls: int | None = None
    urls_per_second: float | None = None
    first_byte_seconds: float | None = None
    peak_rss_mb: float | None = None
    queries: int | None = None
    queries_per_page: list[int] = field(default_factory=list)
    documents: int | None = None
    bytes: int | None = None
    last_first_ratio: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class QueryCounter:
    """Counts SQL statements through ``connection.execute_wrapper`` (works without DEBUG)."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(
        self, execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any
    ) -> Any:
        self.count += 1
        return execute(sql, params, many, context)


def peak_rss_mb() -> float:
    """The process's resident-set high-water mark (VmHWM), in MiB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    scale = 1024 if sys.platform != "darwin" else 1024 * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0); False where unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


class Client:
    """Calls the WSGI application directly and measures each response as it streams."""

    def __init__(self, counter: QueryCounter) -> None:
        from django.core.handlers.wsgi import WSGIHandler

        self.handler = WSGIHandler()
        self.counter = counter

    def get(
        self, url: str, *, keep: bool = False, headers: dict[str, str] | None = None
    ) -> Document:
        parts = urlsplit(url)
        environ: dict[str, Any] = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "SCRIPT_NAME": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "HTTP_HOST": "127.0.0.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(b""),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        for name, value in (headers or {}).items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        response_head: list[Any] = []

        def start_response(status: str, head: list[tuple[str, str]], exc_info: Any = None) -> Any:
            response_head[:] = [status, head]
            return None

        queries = self.counter.count
        first_byte = None
        size = urls = 0
        kept: list[bytes] = []
        tail = b""
        start = time.perf_counter()
        body = self.handler(environ, start_response)
        try:
            for chunk in body:
                if not chunk:
                    continue
                if first_byte is None:
                    first_byte = time.perf_counter() - start
                size += len(chunk)
                # A stored document is sent in slices that may cut a tag: the last
                # four bytes of the previous chunk are searched again with this one.
                urls += (tail + chunk).count(b"<url>")
                tail = chunk[-4:]
                if keep:
                    kept.append(chunk)
        finally:
            if hasattr(body, "close"):
                body.close()
        seconds = time.perf_counter() - start
        status, head = response_head
        return Document(
            path=url,
            status=int(status.split()[0]),
            seconds=seconds,
            first_byte=first_byte,
            size=size,
            urls=urls,
            queries=self.counter.count - queries,
            headers={name.lower(): value for name, value in head},
            body=b"".join(kept) if keep else None,
        )

    def sitemap(self, index_url: str) -> list[Document]:
        """The index, then every document it lists, in order."""
        index = self.get(index_url, keep=True)
        if index.status != 200 or index.body is None:
            raise RuntimeError(f"{index_url} answered {index.status}")
        documents = [index]
        for loc in _LOC.findall(index.body):
            documents.append(self.get(loc.decode()))
        return documents


def summarise(result: Result, documents: list[Document], seconds: float, index: bool) -> Result:
    """Fill a result's figures from the documents of one timed pass."""
    bad = [d for d in documents if d.status != 200]
    if bad:
        result.status = f"failed: {bad[0].path} answered {bad[0].status}"
    pages = documents[1:] if index else documents
    result.seconds = seconds
    result.urls = sum(d.urls for d in pages)
    result.urls_per_second = result.urls / seconds if seconds else None
    result.documents = len(documents)
    result.bytes = sum(d.size for d in documents)
    result.queries = sum(d.queries for d in documents)
    result.queries_per_page = sorted({d.queries for d in pages})
    if pages:
        result.first_byte_seconds = pages[0].first_byte
        # Cost per URL of the last full-sized page over that of the first: the
        # final page of a key range is often nearly empty, so pages with fewer
        # than half the URLs of the largest are left out.
        largest = max(d.urls for d in pages)
        full = [d for d in pages if d.urls and d.urls * 2 >= largest]
        if len(full) >= 2:
            first, last = full[0], full[-1]
            result.last_first_ratio = (last.seconds / last.urls) / (first.seconds / first.urls)
            result.extra["pages"] = {"first": first.path, "last": last.path}
            result.extra["single_pass_last_first"] = result.last_first_ratio
    return result


# First and last page are fetched this many times more, alternately, and the
# fastest of each compared: one pass on a shared machine is too noisy for a ratio.
PAGE_REPEATS = 3


def page_cost_ratio(client: Client, result: Result) -> None:
    pages = result.extra.get("pages")
    if not pages:
        return
    best: dict[str, float] = {}
    for _ in range(PAGE_REPEATS):
        for which in ("first", "last"):
            document = client.get(pages[which])
            cost = document.seconds / max(document.urls, 1)
            best[which] = min(best.get(which, cost), cost)
    result.last_first_ratio = best["last"] / best["first"]
    result.extra["page_seconds_per_url"] = best


def timed(
    client: Client,
    run: Callable[[], list[Document]],
    result: Result,
    index: bool,
    repeat_pages: bool = True,
) -> Result:
    start = time.perf_counter()
    documents = run()
    seconds = time.perf_counter() - start
    summarise(result, documents, seconds, index)
    result.peak_rss_mb = peak_rss_mb()
    if repeat_pages and result.status == "ok":
        page_cost_ratio(client, result)
    return result


def reference_urls(kind: str) -> list[str]:
    from django.db.models import Max

    from example_project.articles.models import Article

    highest = Article.objects.aggregate(top=Max("pk"))["top"] or 0
    pages = max(highest - 1, 0) // 50_000 + 1
    return [f"http://127.0.0.1/reference/{kind}/{page}.xml" for page in range(1, pages + 1)]


def available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


# -- variants ------------------------------------------------------------------


# The article section alone, as contrib's index holds (see benchmarks/urls.py).
SITEMAPX_INDEX = "http://127.0.0.1/bench/sitemap.xml"


def sitemapx_cold(client: Client) -> Iterator[Result]:
    # Cold means streamed from the database: the document cache is off, so the
    # figures (and peak RSS) are those of streaming, not of storing documents.
    # The crawl finds the page table as a running site keeps it (cut once, then
    # kept by saves); cutting and counting the section anew, which a site pays
    # once per data set or configuration, is timed on its own first.
    from django.test import override_settings

    from django_sitemapx.models import PageState

    with override_settings(SITEMAPX_CACHE_ALIAS=None):
        PageState.objects.all().delete()
        first = client.get(SITEMAPX_INDEX)
        result = timed(
            client,
            lambda: client.sitemap(SITEMAPX_INDEX),
            Result("sitemapx"),
            index=True,
        )
        result.extra["first_layout"] = {
            "status": first.status,
            "seconds": first.seconds,
            "queries": first.queries,
        }
        yield result


def stores_done() -> None:
    """Wait for the documents the store thread still holds (Redis, Memcached) to be stored.

    A pass's last documents are stored after its last response: a cache state set
    up after a pass (documents dropped, a flush, a warm pass) must come after them.
    """
    if available("django_sitemapx.serving.background"):
        from django_sitemapx.serving.background import store_thread

        store_thread.drain(60)


def drop_documents() -> int:
    """Delete the stored documents alone: generations (and so the page counts) stay.

    What a site's cache holds after its documents were evicted or first asked
    for: the index and pages are built again, the page table is not counted.
    """
    from django.core.cache import cache

    from django_sitemapx.serving.cache import local_copies

    stores_done()

    local_copies.clear()
    backend = cache._cache  # type: ignore[attr-defined]
    if isinstance(backend, dict):  # the local-memory cache
        keys = [key for key in list(backend) if ":doc:" in key]
        # Its expiry too: LocMemCache.get() of a key with an expiry but no value
        # raises KeyError, which the app takes for a failing cache (it would
        # then stream every document uncached, not build and store it).
        expiries = cache._expire_info  # type: ignore[attr-defined]
        for key in keys:
            backend.pop(key, None)
            expiries.pop(key, None)
        return len(keys)
    client = backend.get_client(write=True)  # Django's Redis cache
    keys = list(client.scan_iter(match="*:doc:*", count=10_000))
    if keys:
        client.delete(*keys)
    return len(keys)


def sitemapx_cached(client: Client) -> Iterator[Result]:
    """The cache on, as sites run it: a crawl whose documents are not stored yet.

    The page table is counted and the generations are in the cache (a crawl
    ran before); every document is built, stored and sent. The headline.
    """
    from django.core.cache import cache

    cache.clear()
    client.sitemap(SITEMAPX_INDEX)  # counts the table under the cache's generations
    drop_documents()
    reset_peak_rss()
    yield timed(
        client,
        lambda: client.sitemap(SITEMAPX_INDEX),
        Result("sitemapx-cached"),
        index=True,
        repeat_pages=False,
    )


def sitemapx_flushed(client: Client) -> Iterator[Result]:
    """The cache on, after a flush: every page counted again, every document built."""
    from django.core.cache import cache

    from django_sitemapx.serving.cache import local_copies

    client.sitemap(SITEMAPX_INDEX)  # the table exists and was counted once
    stores_done()
    cache.clear()
    local_copies.clear()
    reset_peak_rss()
    result = timed(
        client,
        lambda: client.sitemap(SITEMAPX_INDEX),
        Result("sitemapx-flushed"),
        index=True,
        repeat_pages=False,
    )
    # The index alone after a flush: the recount of every page.
    stores_done()
    cache.clear()
    local_copies.clear()
    index = client.get(SITEMAPX_INDEX)
    result.extra["index_after_flush"] = {"seconds": index.seconds, "queries": index.queries}
    # The index after one saved row: one page counted again.
    from example_project.articles.models import Article

    row = Article.objects.order_by("pk").values_list("pk", flat=True).first()
    if row is not None:
        client.get(SITEMAPX_INDEX)
        Article.objects.get(pk=row).save()
        index = client.get(SITEMAPX_INDEX)
        result.extra["index_after_a_save"] = {"seconds": index.seconds, "queries": index.queries}
    yield result


def sitemapx_warm(client: Client) -> Iterator[Result]:
    if not available("django_sitemapx.serving.cache"):
        yield Result("sitemapx-warm", status="not available (no django_sitemapx.serving.cache)")
        return
    from django.core.cache import cache

    cache.clear()
    client.sitemap(SITEMAPX_INDEX)
    stores_done()
    reset_peak_rss()
    result = timed(
        client,
        lambda: client.sitemap(SITEMAPX_INDEX),
        Result("sitemapx-warm"),
        index=True,
        repeat_pages=False,
    )
    page = client.get(SITEMAPX_INDEX, keep=True)
    locs = _LOC.findall(page.body or b"")
    if locs:
        first = client.get(locs[0].decode())
        conditions = {}
        if "etag" in first.headers:
            conditions["If-None-Match"] = first.headers["etag"]
        if "last-modified" in first.headers:
            conditions["If-Modified-Since"] = first.headers["last-modified"]
        conditional = client.get(locs[0].decode(), headers=conditions)
        result.extra["conditional"] = {
            "validators": sorted(conditions),
            "status": conditional.status,
            "queries": conditional.queries,
            "seconds": conditional.seconds,
        }
    yield result


def contrib(client: Client) -> Iterator[Result]:
    yield timed(
        client,
        lambda: client.sitemap("http://127.0.0.1/contrib/sitemap.xml"),
        Result("contrib"),
        index=True,
    )


def contrib_cached(client: Client) -> Iterator[Result]:
    """cache_page cold then warm, in one process (peak RSS reset in between)."""
    from django.core.cache import cache

    cache.clear()
    url = "http://127.0.0.1/contrib-cached/sitemap.xml"
    yield timed(
        client,
        lambda: client.sitemap(url),
        Result("contrib-cache-cold"),
        index=True,
        repeat_pages=False,
    )
    warm = Result("contrib-cache-warm")
    if not reset_peak_rss():
        warm.extra["note"] = "peak RSS includes the cold pass"
    yield timed(client, lambda: client.sitemap(url), warm, index=True, repeat_pages=False)


def reference(kind: str) -> Callable[[Client], Iterator[Result]]:
    def run(client: Client) -> Iterator[Result]:
        urls = reference_urls(kind)
        result = timed(
            client,
            lambda: [client.get(url) for url in urls],
            Result(f"reference-{kind}"),
            index=False,
        )
        if kind == "cursor":
            # The raw DB-API cursor bypasses Django's execute wrappers; it runs
            # exactly one statement per page.
            result.queries, result.queries_per_page = result.documents, [1]
        yield result

    return run


# How the export command is called; one place to change if its interface moves.
EXPORT_COMMAND = "sitemap_export"
EXPORT_OPTIONS = {"base_url": "http://127.0.0.1"}


def export(client: Client) -> Iterator[Result]:
    result = Result("export")
    if not available("django_sitemapx.export"):
        result.status = "not available (no django_sitemapx.export)"
        yield result
        return
    from django.core.management import call_command

    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        before = client.counter.count
        call_command(EXPORT_COMMAND, output_dir=folder, verbosity=0, **EXPORT_OPTIONS)
        result.seconds = time.perf_counter() - start
        result.peak_rss_mb = peak_rss_mb()
        result.queries = client.counter.count - before
        urls = size = files = 0
        for path in Path(folder).rglob("*"):
            if not path.is_file():
                continue
            data = path.read_bytes()
            size += len(data)
            files += 1
            if path.suffix == ".gz":
                data = gzip.decompress(data)
            urls += data.count(b"<url>")
    result.urls, result.bytes, result.documents = urls, size, files
    result.urls_per_second = urls / result.seconds if result.seconds else None
    if not urls:
        result.status = "failed: the export wrote no URL"
    yield result


VARIANTS: dict[str, Callable[[Client], Iterator[Result]]] = {
    "sitemapx": sitemapx_cold,
    "sitemapx-cached": sitemapx_cached,
    "sitemapx-flushed": sitemapx_flushed,
    "sitemapx-warm": sitemapx_warm,
    "contrib": contrib,
    "contrib-cache": contrib_cached,
    "reference-values": reference("values"),
    "reference-cursor": reference("cursor"),
    "export": export,
}


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()
    from django.db import connection

    if argv[0] == "info":
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SHOW server_version")
            else:
                cursor.execute("SELECT sqlite_version()")
            (version,) = cursor.fetchone()
        print(json.dumps({"vendor": connection.vendor, "version": version}))
        return 0
    if argv[0] == "prepare":
        from benchmarks.data import ensure

        start = time.perf_counter()
        rebuilt = ensure(int(argv[1]))
        print(json.dumps({"rebuilt": rebuilt, "seconds": time.perf_counter() - start}))
        return 0
    counter = QueryCounter()
    with connection.execute_wrapper(counter):
        client = Client(counter)
        # Load the URLconf, middleware and connection outside the timings: every
        # variant pays the same start-up, and none of it is what is measured.
        connection.ensure_connection()
        client.get("http://127.0.0.1/benchmark-warm-up/")
        counter.count = 0
        for result in VARIANTS[argv[0]](client):
            result.database = connection.vendor
            result.n = int(os.environ.get("BENCH_N", "0"))
            print(json.dumps(asdict(result)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
