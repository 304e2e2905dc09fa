"""A cold and a warm crawl of the whole sitemap under each cache as Django ships it.

    python benchmarks/default_caches.py --database-url postgres://postgres@127.0.0.1:5432/bench
    python benchmarks/default_caches.py --database-url ... --rows 200000 --caches locmem,redis

Fills the example's data to ``--rows`` articles (``data.ensure`` and
``data.ensure_media``: one ``INSERT ... SELECT`` per table; every tenth article
unpublished, images, videos, authors and news as ``seed_demo`` makes them),
lays the pages out once, then, for each cache, in a fresh process: clears the
cache, crawls the index and every page it lists through the application
(Django's test client, as ``cache_bench.py``: the application's cost, no
network), and crawls again ``--warm-runs`` times. Every other setting is the
benchmark site's (``SITEMAPX_CACHE_LOCAL_BYTES`` included: each process also
keeps 64 MB of recent documents in memory, less than the sitemap of 1,000,000
articles).
The caches, with the options Django ships (``MAX_ENTRIES`` 300, ``CULL_FREQUENCY``
3 where they apply):

- ``locmem``: ``LocMemCache``;
- ``file``: ``FileBasedCache`` in a temporary folder;
- ``database``: ``DatabaseCache`` in a table of the benchmark's database;
- ``memcached``: ``PyMemcacheCache`` on a ``memcached -m 64`` this script starts
  on ``--memcached-port`` (default 11299) and stops;
- ``redis``: ``RedisCache`` on a ``redis-server --maxmemory 64mb --maxmemory-policy
  allkeys-lru --save ''`` this script starts on ``--redis-port`` (default 6391) and stops.

Prints, per cache, the cold crawl, each warm crawl, and cold ÷ slowest warm
(issue 22's target: at least 5). A crawl also counts its answers that are not a
whole 200 (a status other than 200, or a body cut by an exception): a warm
crawl must list what the cold one listed. One run at a time: the figures are
noisy on a shared machine, compare ratios. ``--output FILE`` keeps the figures;
``python benchmarks/default_caches.py --docs FILE... [--note TEXT]`` writes them into
docs/performance.md (its ``default_caches`` section).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CACHES = ("locmem", "file", "database", "memcached", "redis")
TARGET = 5.0
CACHE_TABLE = "bench_default_cache"
_LOC = re.compile(rb"<loc>([^<]+)</loc>")


def cache_settings(name: str, args: argparse.Namespace, folder: str) -> dict[str, Any]:
    """The ``CACHES["default"]`` of ``name``, with Django's default options."""
    backends = {
        "locmem": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "file": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": folder,
        },
        "database": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": CACHE_TABLE,
        },
        "memcached": {
            "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
            "LOCATION": f"127.0.0.1:{args.memcached_port}",
        },
        "redis": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{args.redis_port}/0",
        },
    }
    return backends[name]


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server for port {port} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after 10 s")


def start_servers(caches: list[str], args: argparse.Namespace) -> list[subprocess.Popen[bytes]]:
    """The memory-limited Memcached and Redis the benchmark needs, started by it."""
    started: list[subprocess.Popen[bytes]] = []
    wanted = [
        (
            "memcached",
            args.memcached_port,
            ["memcached", "-l", "127.0.0.1", "-p", str(args.memcached_port), "-m", "64"],
        ),
        (
            "redis",
            args.redis_port,
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(args.redis_port),
                "--maxmemory",
                "64mb",
                "--maxmemory-policy",
                "allkeys-lru",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
        ),
    ]
    for name, port, command in wanted:
        if name not in caches:
            continue
        if os.geteuid() == 0 and name == "memcached":
            command += ["-u", "nobody"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        _wait_for_port(port, process)
    return started


def stop_servers(started: list[subprocess.Popen[bytes]]) -> None:
    for process in started:  # only what this script started, by its PID
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def child(argv: list[str]) -> int:
    """One cache in this process: ``--child NAME ROWS WARM_RUNS CACHES_JSON``."""
    name, rows, warm_runs, cache = argv[0], int(argv[1]), int(argv[2]), json.loads(argv[3])
    os.environ["BENCH_CACHES_JSON"] = json.dumps(cache)
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.default_caches_settings"
    import django

    django.setup()
    from django.core.cache import cache as default_cache
    from django.core.management import call_command

    from benchmarks import data

    if data.ensure(rows) or name == "prime":
        data.ensure_media(rows)
    if name == "prime":
        # The first layout of the page table (paid once per database, not a cold crawl's).
        crawl()
        print(json.dumps({"cache": name}), flush=True)
        return 0
    if name == "database":
        call_command("createcachetable", verbosity=0)
    default_cache.clear()
    result: dict[str, Any] = {"cache": name, "cold": crawl(), "warm": []}
    for _ in range(warm_runs):
        result["warm"].append(crawl())
    default_cache.clear()
    print(json.dumps(result), flush=True)
    return 0


def crawl() -> dict[str, Any]:
    """The index and every page it lists, read whole; seconds, pages, URLs, bad answers."""
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    started = time.perf_counter()
    bad: list[str] = []

    def read(path: str) -> bytes:
        try:
            response = client.get(path)
            if response.status_code != 200:
                bad.append(f"{path}: HTTP {response.status_code}")
                return b""
            if response.streaming:
                return b"".join(response.streaming_content)  # type: ignore[attr-defined]
            return bytes(response.content)
        except Exception as error:  # a body cut in the middle: counted, not fatal
            bad.append(f"{path}: {type(error).__name__}: {error}"[:300])
            return b""

    index = read("/sitemap.xml")
    pages = [loc.decode().split("127.0.0.1", 1)[-1] for loc in _LOC.findall(index)]
    urls = 0
    for path in pages:
        urls += read(path).count(b"<url>")
    return {
        "seconds": time.perf_counter() - started,
        "pages": len(pages),
        "urls": urls,
        "bad": len(bad),
        "bad_examples": bad[:3],
    }


def run_child(
    name: str, args: argparse.Namespace, folder: str, timeout: float
) -> dict[str, Any] | str:
    cache = cache_settings(name if name != "prime" else "locmem", args, folder)
    env = {
        **os.environ,
        "BENCH_DATABASE_URL": args.database_url,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, str(Path(__file__)), "--child", name, str(args.rows)]
    command += [str(args.warm_runs), json.dumps(cache)]
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:.0f} s"
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return f"failed: {tail[:300]}"
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def report(results: list[dict[str, Any]], rows: int, failures: dict[str, str]) -> str:
    lines = [
        f"whole sitemap, {rows:,} articles: cold crawl, warm crawls, cold ÷ slowest warm "
        f"(target >= {TARGET:g})",
        f"{'cache':10} {'pages':>5} {'URLs':>9} {'cold s':>8} {'warm s':>16} {'ratio':>7} "
        f"{'bad':>5}  met",
    ]
    for result in results:
        cold = result["cold"]
        warm = result["warm"]
        slowest = max(w["seconds"] for w in warm)
        ratio = cold["seconds"] / slowest
        bad = cold["bad"] + sum(w["bad"] for w in warm)
        same = all(w["urls"] == cold["urls"] for w in warm)
        met = "yes" if ratio >= TARGET and not bad and same else "**no**"
        warm_text = " / ".join(f"{w['seconds']:.2f}" for w in warm)
        lines.append(
            f"{result['cache']:10} {cold['pages']:5} {cold['urls']:9,} {cold['seconds']:8.2f} "
            f"{warm_text:>16} {ratio:6.2f}x {bad:5}  {met}"
            + ("" if same else "  (a warm crawl listed other URLs than the cold one)")
        )
        for example in cold["bad_examples"] + [e for w in warm for e in w["bad_examples"]]:
            lines.append(f"    {example}")
    for name, why in failures.items():
        lines.append(f"{name:10} {why}")
    return "\n".join(lines)


def markdown(payloads: list[dict[str, Any]], note: str) -> str:
    """The ``default_caches`` section of docs/performance.md, from results files."""
    lines = [
        "## Django's default caches (`benchmarks/default_caches.py`)\n",
        "A cold crawl (cache cleared) and one or two warm crawls of the whole sitemap of the "
        "example "
        "(the index and every page it lists, through Django's test client) under each cache "
        "with the options Django ships (`MAX_ENTRIES` 300 where it applies), and under a "
        "Memcached (`-m 64`) and a Redis (`maxmemory 64mb`, `allkeys-lru`) with a memory "
        "limit. Issue 22's target: a warm crawl at least 5 times faster than a cold one, "
        "under each. One run per size on a 2-core machine shared with other jobs: compare "
        "the ratios, not the seconds." + (f" {note}" if note else "") + "\n",
        "| articles | cache | pages | URLs | cold s | warm s | cold ÷ slowest warm | "
        "answers not a whole 200 | met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for payload in payloads:
        for result in payload["results"]:
            cold, warm = result["cold"], result["warm"]
            ratio = cold["seconds"] / max(w["seconds"] for w in warm)
            bad = cold["bad"] + sum(w["bad"] for w in warm)
            met = ratio >= TARGET and not bad
            lines.append(
                f"| {payload['rows']:,} | {result['cache']} | {cold['pages']} | "
                f"{cold['urls']:,} | {cold['seconds']:.2f} | "
                + " / ".join(f"{w['seconds']:.2f}" for w in warm)
                + f" | {ratio:.2f} | {bad} | {'yes' if met else '**no**'} |"
            )
        for name, why in payload["failures"].items():
            lines.append(f"| {payload['rows']:,} | {name} | | | | | {why} | | **no** |")
    lines.append("")
    for payload in payloads:
        lines.append(
            f"- {payload['rows']:,} articles: commit {payload.get('commit', '?')}, load average "
            f"at the end {payload['load_average'][0]:.1f}."
        )
    return "\n".join(lines) + "\n"


def _commit() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
    except OSError:
        return "?"
    return done.stdout.strip() or "?"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    if argv[:1] == ["--docs"]:
        from benchmarks.docs import replace_section

        note = ""
        if "--note" in argv:
            at = argv.index("--note")
            note = argv[at + 1]
            argv = argv[:at] + argv[at + 2 :]
        payloads = [json.loads(Path(path).read_text()) for path in argv[1:]]
        page = ROOT / "docs" / "performance.md"
        replace_section(page, "default_caches", markdown(payloads, note))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True, help="A PostgreSQL or SQLite database.")
    parser.add_argument("--rows", type=int, default=1_000_000, help="Articles (default 1e6).")
    parser.add_argument("--caches", default=",".join(CACHES), help="Comma-separated subset.")
    parser.add_argument("--warm-runs", type=int, default=2)
    parser.add_argument("--memcached-port", type=int, default=11299)
    parser.add_argument("--redis-port", type=int, default=6391)
    parser.add_argument("--timeout", type=float, default=1800, help="Seconds per cache.")
    parser.add_argument("--output", type=Path, help="Write the results as JSON here.")
    args = parser.parse_args(argv)
    caches = [name.strip() for name in args.caches.split(",") if name.strip()]
    unknown = set(caches) - set(CACHES)
    if unknown:
        parser.error(f"unknown caches: {', '.join(sorted(unknown))}")
    if args.database_url.startswith("postgres"):
        from benchmarks.run import ensure_postgres_database

        ensure_postgres_database(args.database_url)

    folder = tempfile.mkdtemp(prefix="sitemapx-file-cache-")
    started = start_servers(caches, args)
    results: list[dict[str, Any]] = []
    failures: dict[str, str] = {}
    try:
        primed = run_child("prime", args, folder, args.timeout)
        if isinstance(primed, str):
            raise SystemExit(f"seeding and the first layout {primed}")
        for name in caches:
            result = run_child(name, args, folder, args.timeout)
            if isinstance(result, str):
                failures[name] = result
            else:
                results.append(result)
            # As it comes: a run stopped halfway keeps what it measured.
            line = {name: result} if isinstance(result, str) else result
            print(json.dumps(line), flush=True)
    finally:
        stop_servers(started)
        shutil.rmtree(folder, ignore_errors=True)
    text = report(results, args.rows, failures)
    print(text)
    if args.output:
        payload = {
            "rows": args.rows,
            "results": results,
            "failures": failures,
            "commit": _commit(),
            "load_average": os.getloadavg(),
        }
        args.output.write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
