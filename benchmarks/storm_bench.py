"""A crawler storm: concurrent requests for different cold pages, on a real server.

Starts gunicorn on 127.0.0.1 (3 workers of 17 threads: every request is taken
at once) over the example site with small pages (``STORM_LIMIT`` rows), asks
for the index once (so the page table exists, as after a crawler's first
visit), then sends ``--requests`` concurrent requests for as many different
cold pages, once. It prints how many documents were built at once (the build
slots held, read from the shared cache every 2 ms; on PostgreSQL also the
busiest moment of the database), how many were served, how many got 503, and
the latency. Bounded: one round of requests, each with a 120 s timeout.

    python benchmarks/storm_bench.py                        # SQLite file + file cache
    python benchmarks/storm_bench.py --builds 0             # no bound, to compare
    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/storm \\
    BENCH_CACHE_URL=rediscache://127.0.0.1:6379/12 python benchmarks/storm_bench.py

Without ``BENCH_DATABASE_URL`` a SQLite file and a file cache in a temporary
folder are used; a given database is filled with the data set (``--rows``) and
a given cache is cleared.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> tuple[int, float, str | None]:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            response.read()
            status = response.status
            retry = None
    except urllib.error.HTTPError as error:
        error.read()
        status = error.code
        retry = error.headers.get("Retry-After")
    return status, time.perf_counter() - start, retry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--rows", type=int, default=120_000, help="articles in the data set")
    parser.add_argument("--limit", type=int, default=2_000, help="SITEMAPX_LIMIT")
    parser.add_argument("--builds", type=int, default=4, help="SITEMAPX_CACHE_BUILDS")
    parser.add_argument("--build-wait", type=float, default=5.0, help="SITEMAPX_CACHE_BUILD_WAIT")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ)
        env.setdefault("BENCH_DATABASE_URL", f"sqlite:///{folder}/storm.sqlite3")
        env.setdefault("BENCH_CACHE_URL", f"filecache://{folder}/cache")
        env.update(
            DJANGO_SETTINGS_MODULE="benchmarks.storm_settings",
            STORM_LIMIT=str(args.limit),
            STORM_BUILDS=str(args.builds),
            STORM_BUILD_WAIT=str(args.build_wait),
            PYTHONPATH=str(ROOT),
        )
        os.environ.update(env)
        subprocess.run(
            [sys.executable, "-m", "benchmarks.worker", "prepare", str(args.rows)],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        import django

        django.setup()
        from django.core.cache import caches

        caches["default"].clear()
        port = _free_port()
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "benchmarks.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "3",
                "--worker-class",
                "gthread",
                "--threads",
                str(args.requests // 3 + 1),
                "--timeout",
                "120",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        try:
            return _storm(args, port)
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _storm(args: argparse.Namespace, port: int) -> int:
    from django.db import connection as db

    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            status, seconds, _ = _get(f"{base}/sitemap.xml")
            break
        except OSError:
            if time.monotonic() > deadline:
                print("gunicorn did not start")
                return 1
            time.sleep(0.2)
    print(f"index: {status} in {seconds * 1000:.0f} ms (the page table, counted once)")

    from django.core.cache import caches

    slots = [f"django_sitemapx:build:{number}" for number in range(max(args.builds, 0))]
    busiest = {"slots": 0, "database": 0}
    stop = threading.Event()

    def watch() -> None:
        watcher = caches.create_connection("default")
        while not stop.is_set():
            if slots:
                busiest["slots"] = max(busiest["slots"], len(watcher.get_many(slots)))
            if db.vendor == "postgresql":
                with db.cursor() as cursor:
                    cursor.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                        "current_database() AND state = 'active' AND pid <> pg_backend_pid()"
                    )
                    busiest["database"] = max(busiest["database"], cursor.fetchone()[0])
            time.sleep(0.002)

    results: list[tuple[int, float, str | None]] = []
    barrier = threading.Barrier(args.requests + 1)

    def fetch(number: int) -> None:
        barrier.wait()
        results.append(_get(f"{base}/sitemap-article-{number}.xml"))

    watcher = threading.Thread(target=watch)
    watcher.start()
    threads = [
        threading.Thread(target=fetch, args=(number,)) for number in range(1, args.requests + 1)
    ]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join(timeout=180)
    wall = time.perf_counter() - start
    stop.set()
    watcher.join()

    served = [seconds for status, seconds, _ in results if status == 200]
    busy = [(seconds, retry) for status, seconds, retry in results if status == 503]
    other = sorted({status for status, _, _ in results} - {200, 503})
    print(
        f"{args.requests} concurrent requests for different cold pages, "
        f"SITEMAPX_CACHE_BUILDS={args.builds}, SITEMAPX_CACHE_BUILD_WAIT={args.build_wait:g}, "
        f"{args.limit} rows a page, {db.vendor}"
    )
    if slots:
        print(f"  built at once (build slots held, at most): {busiest['slots']}")
    if db.vendor == "postgresql":
        print(f"  busiest moment of the database (active queries): {busiest['database']}")
    print(f"  served 200: {len(served)}; 503: {len(busy)}; other: {other or 'none'}")
    if served:
        ordered = sorted(served)
        print(
            f"  latency of the 200s: median {statistics.median(ordered) * 1000:.0f} ms, "
            f"p95 {ordered[int(len(ordered) * 0.95) - 1] * 1000:.0f} ms, "
            f"max {ordered[-1] * 1000:.0f} ms"
        )
    if busy:
        print(
            f"  503s answered after {min(s for s, _ in busy) * 1000:.0f}-"
            f"{max(s for s, _ in busy) * 1000:.0f} ms, Retry-After {busy[0][1]}"
        )
    print(f"  wall time: {wall:.2f} s")
    return 0 if len(results) == args.requests and not other else 1


if __name__ == "__main__":
    sys.exit(main())
