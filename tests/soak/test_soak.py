"""The soak test: a fleet of processes on one PostgreSQL and one Redis loses no URL.

gunicorn serves the site with 3 pre-forked workers on 127.0.0.1; writer
processes save articles through the ORM (``writer.py``), crawler processes read
the index and every page over HTTP (``reader.py``), and this process flushes the
cache and kills a server worker (SIGKILL) now and then. When the writes stop,
it waits 2 s, crawls once more and compares the article and news sections
exactly with the database: URLs missing, extra or listed twice, stale lastmods,
stale index lastmods, stale ``Last-Modified`` headers, empty pages in the index
and page-table counts that are not the pages' (see ``crawl.compare``). It fails on
any of them, and on any 5xx, truncated answer or lost connection during the run
that a worker's death does not explain, and prints the counts.

``SITEMAPX_SOAK_SECONDS`` (default 20) sets how long the writes last;
``SITEMAPX_SOAK_SEED`` sets the random choices (printed with the report; the
machine decides the scheduling);
``SITEMAPX_SOAK_CHAOS`` is ``flush,kill`` by default (``""``: neither);
``SITEMAPX_SOAK_REPORT`` names a file the counts are appended to as a JSON line.
Runs on PostgreSQL with Redis, and must run where ``SITEMAPX_REQUIRE_SERVICES``
is set (the services legs); elsewhere it is skipped, as processes cannot share
an in-memory database or a local-memory cache.
"""

from __future__ import annotations

import datetime
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from tests.conftest import ROOT
from tests.soak.crawl import (
    CONNECTION,
    NOT_200,
    TRUNCATED,
    Crawl,
    Findings,
    compare,
    crawl,
    fetch,
)

SECONDS = float(os.environ.get("SITEMAPX_SOAK_SECONDS", "20"))
WRITERS = 3
READERS = 4
WORKERS = 3
ARTICLES = 600
# How long the writes' effects may take to show once they stop.
SETTLE_SECONDS = 2.0
STARTUP_SECONDS = 60
# A failure whose request was running within this long of a worker's kill is the kill's.
KILL_SLACK = 0.5


def _services_or_skip() -> None:
    if connection.vendor == "postgresql" and isinstance(caches["default"], RedisCache):
        return
    vendor = os.environ.get("SITEMAPX_TEST_DATABASE_VENDOR", "postgresql")
    if os.environ.get("SITEMAPX_REQUIRE_SERVICES") and vendor == "postgresql":
        pytest.fail("the services leg must run the soak test on PostgreSQL and Redis")
    pytest.skip(
        "the soak test needs PostgreSQL and Redis (DATABASE_URL, CACHE_URL): its processes "
        "share one database and one cache"
    )


def _database_url() -> str:
    """The test database (``test_...``), which every child process must use."""
    settings = connection.settings_dict
    user = urllib.parse.quote(settings["USER"] or "", safe="")
    password = settings["PASSWORD"]
    auth = f"{user}:{urllib.parse.quote(password, safe='')}" if password else user
    host = settings["HOST"] or "127.0.0.1"
    port = settings["PORT"] or 5432
    return f"postgres://{auth}@{host}:{port}/{settings['NAME']}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _child_env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.soak.settings",
        "DATABASE_URL": _database_url(),
        "PYTHONPATH": path,
    }


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


@dataclass
class Server:
    """gunicorn on 127.0.0.1: its arbiter and the log its workers write."""

    base: str
    process: subprocess.Popen[bytes]
    log: Path

    def workers(self) -> list[int]:
        """The arbiter's children (Linux's ``/proc``): the workers that serve now."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            # "pid (name) state ppid ...": the name may hold spaces and parentheses.
            if int(stat.rsplit(")", 1)[1].split()[1]) == self.process.pid:
                found.append(int(entry.name))
        return found


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    _services_or_skip()
    pytest.importorskip("gunicorn", reason="the soak test serves the site with gunicorn")
    port = _free_port()
    log = tmp_path / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "--workers",
                str(WORKERS),
                "--bind",
                f"127.0.0.1:{port}",
                "--timeout",
                "30",
                "--graceful-timeout",
                "5",
                "--log-level",
                "warning",
                "tests.soak.wsgi:application",
            ],
            cwd=ROOT,
            env=_child_env(),
            stdout=sink,
            stderr=sink,
        )
    served = Server(f"http://127.0.0.1:{port}", process, log)
    try:
        _wait_until_up(served)
        yield served
    finally:
        _stop(process)


def _wait_until_up(server: Server) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"gunicorn exited: {server.log.read_text()[-2000:]}")
        if len(server.workers()) == WORKERS and fetch(f"{server.base}/sitemap.xml").status == 200:
            return
        time.sleep(0.2)
    raise AssertionError(f"gunicorn did not serve in {STARTUP_SECONDS} s")


def _seed(writers: int) -> None:
    """``ARTICLES`` articles, 60 % published, each owned by one writer (its title's prefix)."""
    from example_project.articles.management.commands.seed_demo import CATEGORY_SLUGS
    from example_project.articles.models import Article, Category

    categories = [Category.objects.create(name=slug, slug=slug) for slug in CATEGORY_SLUGS]
    now = timezone.now()
    Article.objects.bulk_create(
        Article(
            category=categories[n % len(categories)],
            slug=f"soak-{n}",
            title=f"W{n % writers} article {n}",
            updated_at=now - datetime.timedelta(minutes=ARTICLES - n),
            is_published=n % 5 < 3,
            published_at=now - datetime.timedelta(hours=1) if n % 5 < 3 else None,
        )
        for n in range(ARTICLES)
    )


@dataclass
class Chaos:
    """Cache flushes and worker kills, from a thread of this process, until stopped."""

    server: Server
    kinds: set[str]
    rng: random.Random
    stop: threading.Event = field(default_factory=threading.Event)
    flushes: int = 0
    kills: list[float] = field(default_factory=list)
    error: BaseException | None = None

    def run(self) -> None:
        try:
            turn = 0
            while not self.stop.wait(self.rng.uniform(1.5, 3.5)):
                turn += 1
                if "flush" in self.kinds and (turn % 2 or "kill" not in self.kinds):
                    caches["default"].clear()
                    self.flushes += 1
                elif "kill" in self.kinds and (workers := self.server.workers()):
                    self.kills.append(time.monotonic())
                    os.kill(self.rng.choice(workers), signal.SIGKILL)
        except BaseException as error:  # reported by the test
            self.error = error


def _expected(base: str) -> tuple[dict[str, Any], dict[str, Any], dict[int, int]]:
    """From the database: the article and news sections' URLs with lastmods, page counts."""
    from django_sitemapx.extensions.values import NEWS_MAX_AGE
    from django_sitemapx.models import PageState
    from example_project.articles.models import Article

    articles: dict[str, Any] = {}
    news: dict[str, Any] = {}
    cutoff = timezone.now() - NEWS_MAX_AGE
    rows = Article.objects.filter(is_published=True).values_list(
        "slug", "category__slug", "updated_at", "published_at"
    )
    for slug, category, updated_at, published_at in rows:
        loc = base + reverse("article-detail", kwargs={"category": category, "slug": slug})
        articles[loc] = updated_at
        if published_at is not None and published_at >= cutoff:
            news[loc] = None
    counts = dict(PageState.objects.filter(section="article").values_list("number", "rows"))
    return articles, news, counts


def _during(
    readers: list[dict[str, Any]], kills: list[float]
) -> tuple[Counter[str], Counter[str], list[str]]:
    """The crawlers' failures by kind: the application's, those a worker's death explains."""
    own: Counter[str] = Counter()
    killed: Counter[str] = Counter()
    examples: list[str] = []
    for report in readers:
        for failure in report["failures"]:
            explained = failure["kind"] in (CONNECTION, TRUNCATED) and any(
                failure["started"] - KILL_SLACK <= kill <= failure["ended"] + KILL_SLACK
                for kill in kills
            )
            if explained:
                killed[failure["kind"]] += 1
                continue
            own[failure["kind"]] += 1
            if len(examples) < 8:
                examples.append(f"{failure['kind']} {failure['url']}: {failure['detail']}")
    return own, killed, examples


def _final_failures(final: Crawl) -> Counter[str]:
    return Counter(answer.failure for answer in final.answers() if answer.failure)


_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Missing|Detected))(?::|$)")


def _server_errors(log: Path) -> Counter[str]:
    """The exceptions of the workers' log (a 500's, or one gunicorn caught), by type and text."""
    found: Counter[str] = Counter()
    for line in log.read_text(errors="replace").splitlines():
        if _EXCEPTION.match(line):
            found[line[:120]] += 1
    return found


@pytest.mark.django_db(transaction=True)
def test_a_fleet_of_workers_loses_no_url(server: Server, tmp_path: Path) -> None:
    seed = int(os.environ.get("SITEMAPX_SOAK_SEED") or random.randrange(10**6))
    chaos_kinds = set(filter(None, os.environ.get("SITEMAPX_SOAK_CHAOS", "flush,kill").split(",")))
    _seed(WRITERS)
    env = _child_env()
    children: list[subprocess.Popen[bytes]] = []
    writer_out = [tmp_path / f"writer-{n}.json" for n in range(WRITERS)]
    reader_out = [tmp_path / f"reader-{n}.json" for n in range(READERS)]
    chaos = Chaos(server, chaos_kinds, random.Random(seed))
    thread = threading.Thread(target=chaos.run, daemon=True)
    try:
        for n, out in enumerate(writer_out):
            command = ["tests.soak.writer", str(n), str(SECONDS), str(seed), str(out)]
            children.append(subprocess.Popen([sys.executable, "-m", *command], cwd=ROOT, env=env))
        for n, out in enumerate(reader_out):
            command = ["tests.soak.reader", server.base, str(SECONDS), str(seed + n), str(out)]
            children.append(subprocess.Popen([sys.executable, "-m", *command], cwd=ROOT, env=env))
        thread.start()
        for child in children:
            child.wait(timeout=SECONDS + 120)
    finally:
        chaos.stop.set()
        for child in children:
            _stop(child)
        if thread.is_alive():
            thread.join(timeout=30)
    assert chaos.error is None, f"the flushes and kills failed: {chaos.error!r}"
    assert all(child.returncode == 0 for child in children), "a writer or crawler failed"
    writers = [json.loads(out.read_text()) for out in writer_out]
    readers = [json.loads(out.read_text()) for out in reader_out]

    time.sleep(SETTLE_SECONDS)
    final = crawl(server.base)
    articles, news, counts = _expected(server.base)
    sections = [compare(final, "article", articles, counts), compare(final, "news", news)]

    own, killed, examples = _during(readers, chaos.kills)
    finals = _final_failures(final)
    committed: Counter[str] = sum((Counter(w["committed"]) for w in writers), Counter())
    errors: Counter[str] = sum((Counter(w["errors"]) for w in writers), Counter())
    statuses: Counter[str] = sum((Counter(r["statuses"]) for r in readers), Counter())
    report = _report(
        seed,
        chaos,
        committed,
        errors,
        writers,
        readers,
        statuses,
        own,
        killed,
        examples,
        finals,
        sections,
        _server_errors(server.log),
    )
    print(report)
    if os.environ.get("SITEMAPX_SOAK_REPORT"):
        line = {
            "seed": seed,
            "seconds": SECONDS,
            "saves": sum(committed.values()),
            "answers": sum(statuses.values()),
            "flushes": chaos.flushes,
            "kills": len(chaos.kills),
            "during": dict(own),
            "during_kills": dict(killed),
            "final": dict(finals),
            "writer_errors": sum(errors.values()),
            **{f.section: {k: v for k, v in f.counts.items()} for f in sections},
        }
        with open(os.environ["SITEMAPX_SOAK_REPORT"], "a") as sink:
            sink.write(json.dumps(line) + "\n")
    wrong = sum(f.wrong for f in sections) + sum(own.values()) + sum(finals.values())
    assert not wrong and not errors, report


def _report(
    seed: int,
    chaos: Chaos,
    committed: Counter[str],
    errors: Counter[str],
    writers: list[dict[str, Any]],
    readers: list[dict[str, Any]],
    statuses: Counter[str],
    own: Counter[str],
    killed: Counter[str],
    examples: list[str],
    finals: Counter[str],
    sections: list[Findings],
    server_errors: Counter[str],
) -> str:
    lines = [
        f"soak: {SECONDS:g} s, seed {seed} (SITEMAPX_SOAK_SEED={seed} makes the same choices)",
        f"  {WRITERS} writers: {sum(committed.values())} committed "
        f"({', '.join(f'{k} {v}' for k, v in sorted(committed.items()))}); "
        f"errors {sum(errors.values())}",
        f"  {READERS} crawlers: {sum(r['crawls'] for r in readers)} crawls, "
        f"{sum(statuses.values())} answers "
        f"({', '.join(f'HTTP {k}: {v}' for k, v in sorted(statuses.items()))})",
        f"  {WORKERS} gunicorn workers, {len(chaos.kills)} killed; {chaos.flushes} cache flushes",
        "during the run: "
        + ", ".join(f"{kind} {own[kind]}" for kind in (NOT_200, TRUNCATED, CONNECTION))
        + f" (and {sum(killed.values())} failures a worker's kill explains)",
        "after writes stopped: "
        + ", ".join(f"{kind} {finals[kind]}" for kind in (NOT_200, TRUNCATED, CONNECTION)),
        *(f"  {findings.line()}" for findings in sections),
    ]
    for findings in sections:
        for kind, shown in findings.examples.items():
            lines += [f"  {findings.section} {kind}:", *(f"    {e}" for e in shown)]
    if examples:
        lines += ["failures during the run (examples):", *(f"  {e}" for e in examples)]
    for key, times in errors.most_common(5):
        lines.append(f"writer error x{times}: {key}")
    for writer in writers:
        lines += writer["examples"][:1]
    for line, times in server_errors.most_common(8):
        lines.append(f"server log x{times}: {line}")
    return "\n".join(lines)
