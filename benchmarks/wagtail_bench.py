"""Wagtail page trees: ``WagtailPageSource`` against ``wagtail.contrib.sitemaps``, same tree.

    python benchmarks/wagtail_bench.py --postgres-url postgres://postgres@127.0.0.1:5432/bench
    python benchmarks/wagtail_bench.py --pages 10000 --postgres-url ...   # a quick run

The tree: ``--pages`` live pages (100,000 by default) under two Wagtail sites
(a.example, the default site, and b.example), each with an English and a French
home page, the pages split evenly between the sites and the locales, every
French page a translation of an English one (``translation_key``), and one in
``--event-every`` (10) an ``EventPage``, whose own ``get_sitemap_urls()``
django-sitemapx must honour (loaded in bulk per type, then called page by
page as Wagtail calls it), the others ``ArticlePage`` (read from rows).
The pages are bulk-inserted (treebeard paths written directly), which
``Page.add_child`` would take an hour to do.

Each variant runs cold in a fresh process (Django's test client, no cache for
documents): django-sitemapx serves the index and every page it lists on
a.example (both locales, hreflang alternates), first with its page table
empty (the first count) then again with the table kept; Wagtail's view serves
its one document for a.example (the default locale only, no alternates). The
figure compared is URLs per second, by the wall clock and by the serving
process's own CPU time (which a busy shared machine disturbs less; the
database's work is not in it). Then one page is published and the index
served again: its queries and time are what one publish costs.
Memory is each process's peak RSS. ``--rounds N`` runs the two variants (table
kept) N times, alternated, and reports the median ratio with its range.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HOST = "a.example"


def _env(database_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "benchmarks.wagtail_settings",
        "BENCH_DATABASE_URL": database_url,
    }


def run_worker(args: list[str], database_url: str, timeout: float) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.wagtail_bench", "worker", *args],
        cwd=ROOT,
        env=_env(database_url),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"worker {args} failed:\n{done.stderr[-3000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds() -> float:
    """This process's CPU time (user and system): what a busy shared machine disturbs least."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- the tree -------------------------------------------------------------------------------


def _path_step(number: int) -> str:
    """Treebeard's 4-character step (base 36) for the ``number``-th child (1-based)."""
    alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    text = ""
    while number:
        number, digit = divmod(number, 36)
        text = alphabet[digit] + text
    return text.rjust(4, "0")


def prepare(total: int, every: int) -> dict[str, Any]:
    import uuid

    from django.contrib.contenttypes.models import ContentType
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.utils import timezone
    from wagtail.models import Locale, Page, Site

    from tests.wagtailsite.models import ArticlePage, EventPage

    start = time.perf_counter()
    call_command("migrate", verbosity=0)
    events = EventPage.objects.count()
    if Page.objects.filter(depth=3).count() == total and events == total // every:
        return {"prepared": total, "seconds": 0.0, "kept": True}
    with transaction.atomic():
        # Raw deletes: Page.delete() walks the tree and sends signals, page by page.
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM wagtailcore_site")
            for model in (ArticlePage, EventPage):
                cursor.execute(f"DELETE FROM {model._meta.db_table}")
            cursor.execute("DELETE FROM wagtailcore_revision")
            cursor.execute("DELETE FROM wagtailcore_page WHERE depth > 1")
        root = Page.objects.get(depth=1)
        english = Locale.objects.get_or_create(language_code="en")[0]
        french = Locale.objects.get_or_create(language_code="fr")[0]
        types = {
            "article": ContentType.objects.get_for_model(ArticlePage),
            "event": ContentType.objects.get_for_model(EventPage),
            "page": ContentType.objects.get_for_model(Page),
        }
        now = timezone.now()
        per_tree = total // 4
        homes: dict[tuple[str, str], Page] = {}
        number = 0
        for host in ("a", "b"):
            key = uuid.uuid4()
            for locale in (english, french):
                number += 1
                slug = f"{host}-{locale.language_code}"
                homes[(host, locale.language_code)] = Page(
                    title=slug,
                    draft_title=slug,
                    slug=slug,
                    content_type=types["page"],
                    path=root.path + _path_step(number),
                    depth=2,
                    numchild=per_tree,
                    url_path=f"/{slug}/",
                    live=True,
                    has_unpublished_changes=False,
                    first_published_at=now,
                    last_published_at=now,
                    locale=locale,
                    translation_key=key,
                )
        Page.objects.bulk_create(homes.values())
        Page.objects.filter(pk=root.pk).update(numchild=len(homes))
        keys = [uuid.uuid4() for _ in range(per_tree * 2)]
        batch: list[Page] = []
        for (host, language), home in homes.items():
            offset = 0 if host == "a" else per_tree
            for index in range(per_tree):
                kind = "article" if index % every else "event"
                slug = f"{kind}-{index}"
                batch.append(
                    Page(
                        title=slug,
                        draft_title=slug,
                        slug=slug,
                        content_type=types[kind],
                        path=home.path + _path_step(index + 1),
                        depth=3,
                        numchild=0,
                        url_path=f"{home.url_path}{slug}/",
                        live=True,
                        has_unpublished_changes=False,
                        first_published_at=now,
                        last_published_at=now - timezone.timedelta(minutes=index),
                        locale=english if language == "en" else french,
                        translation_key=keys[offset + index],
                    )
                )
                if len(batch) == 5_000:
                    Page.objects.bulk_create(batch)
                    batch = []
        Page.objects.bulk_create(batch)
        with connection.cursor() as cursor:
            for model, kind in ((ArticlePage, "article"), (EventPage, "event")):
                columns = (
                    "page_ptr_id, summary"
                    if kind == "article"
                    else ("page_ptr_id, hidden, has_schedule")
                )
                values = "id, ''" if kind == "article" else "id, false, false"
                cursor.execute(
                    f"INSERT INTO {model._meta.db_table} ({columns}) "
                    f"SELECT {values} FROM wagtailcore_page WHERE content_type_id = %s",
                    [types[kind].pk],
                )
        for host, default in (("a", True), ("b", False)):
            Site.objects.create(
                hostname=f"{host}.example",
                port=80,
                root_page=homes[(host, "en")],
                is_default_site=default,
            )
        from django_sitemapx.models import PageState

        PageState.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return {"prepared": total, "seconds": time.perf_counter() - start, "kept": False}


# -- the variants ---------------------------------------------------------------------------


def _booted_client() -> Any:
    """A test client as a server's worker is before its first request.

    A WSGI server loads the middleware when it starts (``get_wsgi_application()``)
    and a worker imports the URLconf and the views it names once; neither is serving
    a sitemap, and where ``PYTHONDONTWRITEBYTECODE`` is set each of those modules is
    compiled from source in the first request (about 50 ms of it, measured). Both
    variants start from here; the documents' cache is empty either way.
    """
    from django.test import Client
    from django.urls import resolve

    client = Client()
    client.handler.load_middleware()
    for path in ("/sitemap.xml", "/wagtail-sitemap.xml"):
        resolve(path)
    return client


def _get(client: Any, path: str) -> bytes:
    response = client.get(path, HTTP_HOST=HOST)
    assert response.status_code == 200, (path, response.status_code)
    if response.streaming:
        return b"".join(response.streaming_content)
    return bytes(response.content)


def sitemapx(fresh_table: bool) -> dict[str, Any]:
    import re

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from django_sitemapx.models import PageState

    if fresh_table:
        PageState.objects.all().delete()
    client = _booted_client()
    cpu = _cpu_seconds()
    start = time.perf_counter()
    # Counting a document's URLs is the benchmark's work, not serving: its time is
    # taken out, as Wagtail's variant counts after its clocks stop.
    counting = counting_cpu = 0.0
    with CaptureQueriesContext(connection) as queries:
        index = _get(client, "/sitemap.xml")
        urls = 0
        alternates = 0
        pages = re.findall(rb"<loc>https?://[^/]+(/[^<]+)</loc>", index)
        for page in pages:
            body = _get(client, page.decode())
            counted, counted_cpu = time.perf_counter(), _cpu_seconds()
            urls += body.count(b"<url>")
            alternates += body.count(b"<xhtml:link")
            counting += time.perf_counter() - counted
            counting_cpu += _cpu_seconds() - counted_cpu
            del body
    seconds = time.perf_counter() - start - counting
    cpu = _cpu_seconds() - cpu - counting_cpu
    return {
        "variant": "sitemapx, first count" if fresh_table else "sitemapx, table kept",
        "cpu_seconds": cpu,
        "urls_per_cpu_second": urls / cpu,
        "urls": urls,
        "alternates": alternates,
        "documents": len(pages) + 1,
        "seconds": seconds,
        "urls_per_second": urls / seconds,
        "queries": len(queries),
        "peak_rss_mb": _peak_rss_mb(),
    }


def wagtail() -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = _booted_client()
    cpu = _cpu_seconds()
    start = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        body = _get(client, "/wagtail-sitemap.xml")
    seconds = time.perf_counter() - start
    cpu = _cpu_seconds() - cpu
    urls = body.count(b"<url>")
    return {
        "variant": "wagtail.contrib.sitemaps",
        "cpu_seconds": cpu,
        "urls_per_cpu_second": urls / cpu,
        "urls": urls,
        "documents": 1,
        "seconds": seconds,
        "urls_per_second": urls / seconds,
        "queries": len(queries),
        "peak_rss_mb": _peak_rss_mb(),
    }


def after_publish() -> dict[str, Any]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from wagtail.models import Page

    client = _booted_client()
    _get(client, "/sitemap.xml")  # the table as it stands
    per_tree = Page.objects.filter(depth=3).count() // 4
    page = Page.objects.filter(depth=3, locale__language_code="en").order_by("path")[per_tree // 2]
    page = page.specific
    start = time.perf_counter()
    page.save_revision().publish()
    publish_seconds = time.perf_counter() - start
    start = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        _get(client, "/sitemap.xml")
    return {
        "variant": "index after one publish",
        "publish_seconds": publish_seconds,
        "index_seconds": time.perf_counter() - start,
        "index_queries": len(queries),
        "peak_rss_mb": _peak_rss_mb(),
    }


def worker(argv: list[str]) -> int:
    import django

    django.setup()
    if argv[0] == "prepare":
        result = prepare(int(argv[1]), int(argv[2]))
    elif argv[0] == "sitemapx":
        result = sitemapx(fresh_table=argv[1] == "fresh")
    elif argv[0] == "wagtail":
        result = wagtail()
    else:
        result = after_publish()
    print(json.dumps(result))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("SITEMAPX_BENCH_DATABASE_URL", ""),
        help="the benchmark's own PostgreSQL database (its tables are replaced)",
    )
    parser.add_argument(
        "--event-every",
        type=int,
        default=10,
        help="one page in N is an EventPage, whose own get_sitemap_urls() is called (2: half)",
    )
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="rounds of the two variants (table kept), alternated; the ratios' median is "
        "reported with their range (a shared machine's noise is wider than one run shows)",
    )
    options = parser.parse_args()
    if not options.postgres_url:
        parser.error("--postgres-url (or SITEMAPX_BENCH_DATABASE_URL) is required")
    if options.rounds < 1:
        parser.error("--rounds must be at least 1")
    url, timeout = options.postgres_url, options.timeout
    prepare_args = ["prepare", str(options.pages), str(options.event_every)]
    results = [run_worker(prepare_args, url, timeout)]
    results.append(run_worker(["sitemapx", "fresh"], url, timeout))
    rounds = []
    for number in range(1, options.rounds + 1):
        ours = run_worker(["sitemapx", "kept"], url, timeout)
        theirs = run_worker(["wagtail"], url, timeout)
        rounds.append((ours, theirs))
        results += [{**ours, "round": number}, {**theirs, "round": number}]
    results.append(run_worker(["publish"], url, timeout))
    for result in results:
        print(json.dumps(result))
    for measure, what in (
        ("urls_per_second", "URLs per second"),
        ("urls_per_cpu_second", "URLs per CPU second of the serving process (not the database's)"),
    ):
        ratios = sorted(ours[measure] / theirs[measure] for ours, theirs in rounds)
        ours_median = statistics.median(ours[measure] for ours, _theirs in rounds)
        theirs_median = statistics.median(theirs[measure] for _ours, theirs in rounds)
        spread = f" (range {ratios[0]:.1f}x to {ratios[-1]:.1f}x)" if len(rounds) > 1 else ""
        print(
            f"{what}: django-sitemapx {ours_median:,.0f}, wagtail {theirs_median:,.0f}; "
            f"ratio {statistics.median(ratios):.1f}x{spread}, {len(rounds)} round(s)"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        sys.exit(worker(sys.argv[2:]))
    sys.exit(main())
