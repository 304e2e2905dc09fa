"""Regenerates ``docs/performance.md`` and its plot from a benchmark run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from benchmarks import report

PLOT = Path("images") / "performance.png"

METHOD = """\
## Method

`python benchmarks/run.py` (options: `--help`) does everything below in one command, within a
time budget; `--quick` runs N = 10,000 only, as a smoke test. Install the tools with
`pip install -e ".[bench]"` and, for the HTTP test, `apt-get install wrk` (without it a
Python client of four keep-alive connections loads both targets, slower than wrk: only the
ratio between them means something). Each database is one run:
`python benchmarks/run.py --sizes 1000000 --databases postgresql --postgres-url URL
--cache-url rediscache://127.0.0.1:6379/DB` and `--databases sqlite --cache-url
locmemcache://`; `--from-json` writes this page from their merged `results.json`.

- **Data**: the example project's `Article` model with N = 10,000, 100,000 and 1,000,000 rows,
  every tenth unpublished (the rows `seed_demo` makes, written with one `INSERT ... SELECT` so a
  million rows take seconds), on SQLite (a file) and on PostgreSQL (127.0.0.1:5432).
- **Each variant runs in a fresh Python process** that requests every document through Django's
  real WSGI handler (URL resolving, the example's middleware, the view, the streamed body), so
  its peak memory and timings are its own. `DEBUG` is off and database connections persist, as
  in a deployment.
  - *django-sitemapx, cold, cache on* (the headline: the default configuration): the cache on
    (Redis for PostgreSQL, the local-memory cache for SQLite), the page table counted and the
    cache generations present (a crawl ran before), the stored documents deleted (evicted, or
    never asked for): every document is built, sent from the chunks built and stored (on
    Redis by the store thread, after its response; the previous pass's stores are done
    before the documents are deleted).
  - *django-sitemapx, after a flush*: the same after `cache.clear()`: every generation new, so
    the index counts every page again, then every document is built. `results.json` also
    holds the index alone after a flush (`index_after_flush`) and after one saved row
    (`index_after_a_save`).
  - *django-sitemapx, cold (streamed)*: `/bench/sitemap.xml`, a registry holding the
    example's article section alone (as contrib's index holds its articles alone), then
    every page it lists, streamed from the database with the document cache off
    (`SITEMAPX_CACHE_ALIAS = None`),
    so its memory is that of streaming. The crawl finds the page table as a running site
    keeps it: the variant first deletes it and requests the index once, which cuts the section
    into pages (one `ROW_NUMBER()` pass) and counts each, what a site pays once per data set or
    configuration; that request is timed apart (`first_layout` in `results.json`), and the
    crawl after it is the figure in the tables.
  - *django-sitemapx, warm*: the cache filled by one pass, then the same again from the cache,
    then a conditional request. The cache is Redis (db 9 on 127.0.0.1:6379, cleared) when it
    answers, else the local-memory cache; the process also keeps up to
    `SITEMAPX_CACHE_LOCAL_BYTES` (64 MiB) of recent documents, which its peak memory shows.
  - *contrib.sitemaps*: a `GenericSitemap` over the same published articles
    (`select_related("category")`, so no query per URL: contrib at its best), paged at 50,000:
    its index and every `?p=` page; uncached, then under `cache_page` cold and warm (those two in
    one process, the peak-memory mark reset in between).
  - *references*: the same pages with no library at all: `values_list(...).iterator()` into an
    f-string loop inside a `StreamingHttpResponse`; and a raw DB-API cursor with `lastmod`
    formatted as text by the database, into the same loop. They show the physical limit.
  - *sitemap_export*: the whole sitemap written to a temporary folder (needs
    `django_sitemapx.export`).
- **Figures**: total seconds; URLs per second (URLs in `<urlset>` documents over total seconds,
  index included); time to the first byte of the first page; peak RSS of the process (Linux
  `VmHWM`); SQL statements executed (through Django's execute wrappers), in total and per page;
  last page ÷ first page: the cost per URL of the last full page over that of the first (pages
  with fewer than half the URLs of the largest are left out: a key range's final page is often
  nearly empty), each fetched three more times, alternately, keeping the fastest (one pass on a
  shared machine is too noisy for a ratio).
- **HTTP**: gunicorn (two sync workers) on 127.0.0.1 at the largest N, loaded by `wrk` (one
  thread, four connections) against a sitemap page of django-sitemapx (from its cache when
  there is one) and against a trivial view returning the same bytes from memory, taking
  turns (five rounds each, of a fifth of `--http-seconds`, so that both see the same moments
  of a shared machine): requests per second over the rounds and the median round's latency
  percentiles.
- **Ratios** are computed within one run, so the machine's speed cancels out; absolute numbers
  vary with the load of the machine.
"""


def _machine(info: dict[str, Any]) -> str:
    databases = ", ".join(
        f"{name} {version}" for name, version in info.get("databases", {}).items()
    )
    load = info.get("load_average")
    load_text = f"; load average at the end {load[0]:.1f}" if load else ""
    return (
        "## Machine\n\n"
        f"{info['cpu']}, {info['cores']} cores, {info.get('memory_mb') or '?'} MB RAM; "
        f"{info['os']}; Python {info['python']}, Django {info['django']}; {databases}. "
        f"Run on {info['date']}, {info['seconds']:.0f} s in total{load_text}.\n"
    )


def _first_layouts(results: list[dict[str, Any]]) -> str:
    """The index that cut and counted the section before each cold crawl, not in its figures."""
    lines = [
        f"{r['database']} at N = {r['n']:,}: {layout['seconds']:.2f} s, "
        f"{layout['queries']} queries"
        for r in results
        if r["variant"] == "sitemapx" and (layout := r.get("extra", {}).get("first_layout"))
    ]
    if not lines:
        return ""
    return (
        "The index request that cut each section into pages and counted them, before the cold "
        "crawl (a site pays it once per data set or configuration; not in the crawl's "
        "figures): " + "; ".join(lines) + ".\n"
    )


def _index_costs(results: list[dict[str, Any]]) -> str:
    """The index alone after a flush and after one save, and how full the pages are."""
    lines = []
    for r in results:
        extra = r.get("extra", {})
        if r["variant"] == "sitemapx-flushed" and "index_after_flush" in extra:
            flush, save = extra["index_after_flush"], extra.get("index_after_a_save")
            text = (
                f"{r['database']} at N = {r['n']:,}: the index after a flush (no page "
                f"counted again) {flush['seconds'] * 1000:.0f} ms, {flush['queries']} queries"
            )
            if save:
                text += (
                    f"; after one saved row (its page counted again) "
                    f"{save['seconds'] * 1000:.0f} ms, {save['queries']} queries"
                )
            lines.append(text)
    fills = [
        f"{r['database']} at N = {r['n']:,}: {r['urls']:,} URLs in {r['documents'] - 1} pages, "
        f"{r['urls'] / (r['documents'] - 1):,.0f} URLs a page"
        for r in results
        if r["variant"] == "sitemapx-cached" and r["status"] == "ok" and r.get("documents", 0) > 1
    ]
    parts = []
    if lines:
        parts.append("The index alone (in the after-a-flush run): " + "; ".join(lines) + ".")
    if fills:
        parts.append(
            "Pages (49,000 URLs each at most, the URL limit less 2%): " + "; ".join(fills) + "."
        )
    return "\n\n".join(parts) + "\n" if parts else ""


def write(docs: Path, payload: dict[str, Any]) -> Path:
    """Write the page and its plot under ``docs``; return the page's path."""
    results, http, targets = payload["results"], payload["http"], payload["ratios"]
    has_plot = report.plot(results, docs / PLOT)
    parts = [
        "# Performance\n",
        "How django-sitemapx compares with `django.contrib.sitemaps` and with hand-written "
        "loops on the same data, in the same run. This page is generated by "
        "`python benchmarks/run.py`; do not edit it by hand.\n",
        "## Headline ratios\n",
        report.ratios_markdown(targets) + "\n",
        LIMITS,
        _machine(payload["machine"]),
        "## Results\n",
        report.markdown_table(results) + "\n",
        _first_layouts(results),
        _index_costs(results),
    ]
    if has_plot:
        parts.append(f"![URLs per second and peak memory against N]({PLOT.as_posix()})\n")
    parts += ["## HTTP\n", report.http_markdown(http) + "\n", SERVING_FILES, METHOD]
    page = docs / "performance.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    # Sections other scripts write (benchmarks/i18n_bench.py, scale.py) and the image
    # benchmark's write-up (benchmarks/images_bench.py) are kept as they are.
    kept = kept_sections(page.read_text()) if page.exists() else ""
    page.write_text("\n".join(parts) + (f"\n{kept}" if kept else ""))
    return page


def kept_sections(text: str) -> str:
    """The blocks between ``<!-- section:NAME -->`` and ``<!-- /section:NAME -->`` in ``text``."""
    block = r"<!-- section:([\w-]+) -->.*?<!-- /section:\1 -->\n?"
    return "\n".join(match.group(0) for match in re.finditer(block, text, re.S))


def replace_section(page: Path, name: str, body: str) -> None:
    """Write ``body`` as the block ``name`` of ``page``, replacing the previous one."""
    text = page.read_text() if page.exists() else ""
    block = f"<!-- section:{name} -->\n{body.rstrip()}\n<!-- /section:{name} -->\n"
    pattern = re.compile(rf"<!-- section:{name} -->.*?<!-- /section:{name} -->\n?", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _match: block, text)
    else:
        text = text.rstrip() + "\n\n" + block
    page.write_text(text)


# The block benchmarks/scale.py writes (kept by write() like every marked section).
SCALE_BEGIN = "<!-- section:scale -->"
SCALE_END = "<!-- /section:scale -->"


SERVING_FILES = """\
### When to serve exported files instead

A cached page costs one read of the cache's generation keys (one round trip, which is what
makes a change visible to every process on the next request) and the Python of a Django
view; the bytes come from the process's local copy, sent whole as the trivial view sends
them. The difference is that round trip and the view's own code: about 0.27 ms of CPU a
request, against 0.14 ms for the trivial view through the same middleware (in process,
SQLite, an 8.6 MB page, whose sending dominates both over HTTP). Measured one request at a
time over gunicorn on this machine (load average 16 to 18, 40 requests to each target in
turn, medians): with the local-memory cache the cached page and the trivial view are the
same, 8.7 and 8.5 ms to the headers, 43.8 and 43.6 ms in all; with Redis the page took 32 ms
to its headers against 13 ms. That is the round trip: a Redis `MGET` there took 0.07 ms at
the median but 2.4 ms at the 90th percentile and up to 30 ms, the worker and Redis each
waiting for a core. With four connections at once (`run.py`), though, the cached page ran at
1/1.36 to 1/1.43 of the trivial view's requests/s on SQLite with the local-memory cache in
runs at load averages 8 to 15, and at 1/1.03 to 1/1.9 in shorter runs of the same: that gap
is not explained yet, and the ratio needs a quiet machine. A web server sending exported
files (`sitemap_export`, see [export](guide/export.md)) runs no Python at
all: the issue that asked for these figures measured nginx serving the exported file at 494
requests/s, against 183 for a trivial Django view returning the same bytes, on this machine.
Serve exported files from nginx or a CDN when the sitemap is large and crawled hard, or when
its documents must survive a cache flush and a deploy without any build; serve from the
cache when changes must show within seconds with no export job to run.
"""


LIMITS = """\
## What limits each figure

- **Throughput.** A django-sitemapx page runs the same keyset query as the references, and takes
  each `fetchmany()` batch of 2,000 row tuples as the driver returns it (Django's query and
  cursor, without its per-row iterator). What remains per URL in Python is one f-string: the
  `<url>` element written straight from the row's columns, once a chunk is proven plain with
  one scan in C per column (no `to_url()` change, nothing to percent-encode or to escape for
  XML, no control character, the longest values together within 2,048 characters) and no
  override is stored; any other chunk goes through entries (one f-string for the URI, one tuple,
  one f-string for the element) and escaping. The writer still checks every chunk (illegal
  characters, the size of each element, 50,000 URLs and 50 MB); a plain chunk's lastmods are
  proven W3C text in C with its other columns, so for XML-illegal characters it scans only the
  values every row shares. The raw-cursor reference skips
  every check and the index, which is the remaining gap, with the per-page cost: a page reads
  the page table, the section's query is compiled, and the overrides are looked up, about 4 ms
  a page here. The index reads the page table and counts again only the pages marked changed
  since their last count (the marks are in the table, with a cache or not: none in this crawl).
  Pages hold 49,000 URLs (the URL limit less 2%; 50 MB is kept as they are built, see
  [pages](guide/pages.md)), about as many as contrib's and the references' 50,000. On
  PostgreSQL a page's rows are read at once (a client-side cursor: a server-side one is declared
  `WITH HOLD` outside a transaction, so the server builds the whole result first anyway, then
  hands it over one round trip per 2,000 rows); they are still written 2,000 at a time.
  `contrib.sitemaps` builds a model instance per URL, renders a template, and pages with `COUNT`
  + `OFFSET`.
- **Cold, with the cache on.** A missing document is built exactly as it is streamed, its
  chunks kept as they come, then sent as they are (no join, no slicing) with its length, once
  built to its end: a slow client must not hold the build lock that other requests wait on
  (see [caching](guide/caching.md#what-a-request-does)), so the first byte waits for the
  build, and for the store only on the local-memory, file and database caches. On Redis (and
  Memcached) the store runs on the process's store thread while the response is sent:
  joining the chunks once, the backend pickling that copy (about 3.5 ms for an 8.5 MB page
  here, holding the interpreter's lock, the one part of it that still slows the request),
  sending it, then deleting the lock and slot and writing the skips report.
  So the request makes five cache round trips (the generations, the record, the
  build lock and the record again, a build slot; `tests/serving/test_round_trips.py`), and
  its thread's CPU time per crawl is that of streaming (0.60 s against 0.62 s streamed and
  0.75 s before, in-process at 1,000,000 rows on PostgreSQL + Redis, fastest of 7). What
  remains between the two is Redis taking in each page (about 18 ms of the store thread's
  time a page, 5 ms of it CPU here) beside the next build, on two cores. On the local-memory
  cache the request stores the document itself; counted in instructions
  (`benchmarks/instructions.py`, 20,000 rows, one full page) the cold build costs 1.29 times
  the raw cursor per URL (16,718 against 12,923 instructions; streamed, 16,432; 17,107 when
  the response was sent from a joined copy); the SQLite file's reads are most of either.
  A build keeps no copy of its bytes in the process (a hit read from the cache does), so
  the cold crawl's peak memory is one page at a time.
- **Memory.** A page is written in chunks of 2,000 rows (`conf.CHUNK_SIZE`) and read at
  most a page at a time (on PostgreSQL, at once; at most `SITEMAPX_LIMIT` rows), so the peak
  does not grow with N; only the index (one line per 50,000 rows) does. contrib renders each
  50,000-URL page whole, in memory.
- **Last page ÷ first page.** Pages are fixed key ranges with a single lower and upper bound:
  an index range scan costs the same at any depth, where `OFFSET` reads and drops every
  earlier row.
- **Queries.** A page costs one query on the page table (its key range, and the row count
  and latest lastmod stored for it, for the `ETag` and `Last-Modified` headers sent before the
  body; counted again first only when its cache generation moved or, with no cache, when it
  was marked changed), one keyset query, and the overrides lookup with its first chunk (none for
  the later chunks while the table holds at most 5,000 overrides), whatever N. On PostgreSQL,
  lastmods outside the range Python can read are counted as the rows stream (one more query
  when the column is nullable). The index costs one query on the page table per model
  section, one aggregate per page marked changed since its last count (none after a cache
  flush; a grouped pass for many, stored in one `UPDATE`) and one for overrides. A cached
  page or a 304 costs none.
"""
