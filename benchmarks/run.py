"""Benchmark django-sitemapx against django.contrib.sitemaps and plain-Python references.

    python benchmarks/run.py          # N = 10,000 / 100,000 / 1,000,000, SQLite and PostgreSQL
    python benchmarks/run.py --quick  # N = 10,000 only: a smoke test (CI never checks timings)

Builds the data it needs, runs every variant in a fresh process (see
``worker.py``), then an HTTP load test over gunicorn with wrk, all within a
time budget. Prints a table; writes ``results.json`` and ``results.md`` to
``--output`` and, for a full run, regenerates ``docs/performance.md`` and its
plot. ``--help`` lists the options.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import report  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
VARIANTS = (
    "sitemapx-cached",
    "sitemapx-flushed",
    "sitemapx",
    "sitemapx-warm",
    "contrib",
    "contrib-cache",
    "reference-values",
    "reference-cursor",
    "export",
)
DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/sitemapx_bench"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 10,000 only, short HTTP runs.")
    parser.add_argument(
        "--sizes",
        type=lambda v: [int(x) for x in v.split(",")],
        help="Comma-separated row counts (default 10000,100000,1000000).",
    )
    parser.add_argument(
        "--databases",
        default="sqlite,postgresql",
        help="Comma-separated: sqlite, postgresql (default both).",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("BENCH_POSTGRES_URL", DEFAULT_POSTGRES),
        help="PostgreSQL database the benchmark may fill (default %(default)s).",
    )
    parser.add_argument(
        "--cache-url",
        default=os.environ.get("BENCH_CACHE_URL") or _default_cache_url(),
        help="Django cache for the cached variants (default: Redis db 9 on 127.0.0.1:6379 when "
        "it answers, which the benchmark clears, else the local-memory cache): "
        "%(default)s.",
    )
    parser.add_argument("--variants", default=",".join(VARIANTS), help="Comma-separated subset.")
    parser.add_argument(
        "--budget", type=float, help="Total seconds allowed (default 2400, quick 90)."
    )
    parser.add_argument(
        "--http-seconds",
        type=float,
        help="Seconds of load per HTTP target (default 10, quick 2); 0 skips the HTTP test.",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=ROOT / "benchmarks" / "results",
        help="Folder for results.json and results.md (default %(default)s).",
    )
    parser.add_argument(
        "--docs",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="Regenerate docs/performance.md and its plot (default: full runs only).",
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        metavar="PATH",
        help="Measure nothing: rewrite the outputs from an earlier results.json.",
    )
    args = parser.parse_args(argv)
    args.sizes = args.sizes or ([10_000] if args.quick else list(SIZES))
    args.budget = args.budget or (90.0 if args.quick else 2400.0)
    if args.http_seconds is None:
        args.http_seconds = 2.0 if args.quick else 10.0
    if args.docs is None:
        args.docs = not args.quick
    return args


class Budget:
    """Seconds left of the run's total time budget."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    @property
    def left(self) -> float:
        return self.deadline - time.monotonic()


def database_url(database: str, n: int, args: argparse.Namespace) -> str:
    if database == "postgresql":
        return str(args.postgres_url)
    folder = ROOT / "benchmarks" / ".data"
    folder.mkdir(exist_ok=True)
    return f"sqlite:///{folder / f'articles-{n}.sqlite3'}"


def ensure_postgres_database(url: str) -> None:
    """Create the benchmark's PostgreSQL database if it does not exist yet."""
    from urllib.parse import urlsplit

    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    server = url.replace(parts.path, "/postgres", 1) if parts.path else url + "/postgres"
    server = server.replace("postgres://", "postgresql://", 1)
    with psycopg.connect(server, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')


def worker_env(url: str, n: int, args: argparse.Namespace, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="benchmarks.settings",
        BENCH_DATABASE_URL=url,
        BENCH_CACHE_URL=args.cache_url,
        BENCH_N=str(n),
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
        **extra,
    )
    return env


def run_worker(
    command: list[str], env: dict[str, str], timeout: float
) -> tuple[list[dict[str, Any]], str]:
    """Run one worker process; its JSON lines, or an empty list and what went wrong."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.worker", *command],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=max(timeout, 1),
        )
    except subprocess.TimeoutExpired:
        return [], f"timed out after {timeout:.0f} s"
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode:
        tail = (done.stderr.strip().splitlines() or ["?"])[-1]
        return lines, f"failed: {tail[:200]}"
    return lines, ""


def measure(
    args: argparse.Namespace, budget: Budget
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    results: list[dict[str, Any]] = []
    http: list[dict[str, Any]] = []
    versions: dict[str, Any] = {}
    databases = [d.strip() for d in args.databases.split(",") if d.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for n in args.sizes:
        for database in databases:
            url = database_url(database, n, args)
            env = worker_env(url, n, args)
            if database == "postgresql":
                try:
                    ensure_postgres_database(url)
                except Exception as error:
                    print(f"   cannot create the database: {error}", flush=True)
            print(f"== N={n:,} on {database}: preparing data", flush=True)
            prepared, problem = run_worker(["prepare", str(n)], env, min(budget.left, 900))
            if problem:
                print(f"   data: {problem}", flush=True)
                results += [_failed(v, database, n, f"no data ({problem})") for v in variants]
                continue
            if prepared and prepared[0]["rebuilt"]:
                print(f"   built in {prepared[0]['seconds']:.1f} s", flush=True)
            info, _ = run_worker(["info"], env, 60)
            if info:
                versions[database] = info[0]["version"]
            for variant in variants:
                if budget.left < 5:
                    results.append(_failed(variant, database, n, "skipped (time budget)"))
                    continue
                lines, problem = run_worker([variant], env, min(budget.left, 1800))
                for line in lines:
                    results.append(line)
                    _progress(line)
                if problem:
                    results.append(_failed(variant, database, n, problem))
                    print(f"   {variant}: {problem}", flush=True)
            if n == args.sizes[-1] and args.http_seconds > 0:
                http.append(http_test(database, n, env, args, budget))
    return results, http, versions


def _failed(variant: str, database: str, n: int, status: str) -> dict[str, Any]:
    return {
        "variant": variant,
        "database": database,
        "n": n,
        "status": status,
        "extra": {},
        "queries_per_page": [],
    }


def _progress(r: dict[str, Any]) -> None:
    if r["status"] != "ok":
        print(f"   {r['variant']:<20} {r['status']}", flush=True)
        return
    print(
        f"   {r['variant']:<20} {r['urls']:>9,} URLs {r['seconds']:>8.3f} s "
        f"{r['urls_per_second']:>11,.0f} URLs/s  RSS {r['peak_rss_mb']:.1f} MB  "
        f"{r['queries']} queries",
        flush=True,
    )


# -- HTTP ----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def gunicorn(env: dict[str, str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """Two sync gunicorn workers on 127.0.0.1, stopped (by its own pid) afterwards."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "benchmarks.wsgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--timeout",
            "120",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        yield server
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _get(url: str, timeout: float = 120) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return bytes(response.read())


def _wrk(url: str, seconds: float) -> dict[str, Any]:
    done = subprocess.run(
        ["wrk", "-t1", "-c4", f"-d{max(int(seconds), 1)}s", "--latency", "--timeout", "30s", url],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    )
    out = done.stdout
    result: dict[str, Any] = {"raw": out.strip().splitlines()[-12:]}
    if match := re.search(r"Requests/sec:\s+([\d.]+)", out):
        result["rps"] = float(match.group(1))
    if match := re.search(r"(\d+) requests in", out):
        result["requests"] = int(match.group(1))
    for percentile, key in (("50", "p50_ms"), ("99", "p99_ms")):
        if match := re.search(rf"\s{percentile}%\s+([\d.]+)(us|ms|s)\b", out):
            value, unit = float(match.group(1)), match.group(2)
            result[key] = value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
    if "rps" not in result:
        result["status"] = f"failed: {(done.stderr or out).strip()[:200]}"
    return result


def _python_load(url: str, seconds: float, connections: int = 4) -> dict[str, Any]:
    """Where wrk is missing: ``connections`` keep-alive clients in threads for ``seconds``.

    Slower than wrk (the client shares the cores with the server), so only the
    ratio between two targets measured this way in one run means something.
    """
    import http.client
    import threading
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    deadline = time.monotonic() + seconds
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()

    def client() -> None:
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        mine: list[float] = []
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                connection.request("GET", parts.path)
                response = connection.getresponse()
                response.read()
                if response.status != 200:
                    errors[0] += 1
            except OSError:
                errors[0] += 1
                connection.close()
                connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
                continue
            mine.append(time.perf_counter() - start)
        connection.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(connections)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    latencies.sort()
    result: dict[str, Any] = {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed if elapsed else 0.0,
        "errors": errors[0],
        "client": f"python ({connections} keep-alive connections)",
    }
    if latencies:
        result["p50_ms"] = latencies[len(latencies) // 2] * 1000
        result["p99_ms"] = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
    return result


def http_test(
    database: str, n: int, env: dict[str, str], args: argparse.Namespace, budget: Budget
) -> dict[str, Any]:
    """wrk against a sitemap page and a trivial view serving the same bytes."""
    summary: dict[str, Any] = {"database": database, "n": n, "runs": [], "status": "ok"}
    load = _wrk if shutil.which("wrk") else _python_load
    summary["client"] = "wrk -t1 -c4" if load is _wrk else "python, 4 keep-alive connections"
    if budget.left < 4 * args.http_seconds + 30:
        summary["status"] = "skipped (time budget)"
        return summary
    print(
        f"== HTTP on {database}, N={n:,}: gunicorn + wrk, {args.http_seconds:.0f} s per target",
        flush=True,
    )
    cached = importlib_available("django_sitemapx.serving.cache")
    summary["cached"] = cached
    with tempfile.TemporaryDirectory() as folder:
        body_file = Path(folder) / "page.xml"
        port = _free_port()
        with gunicorn(dict(env, BENCH_TRIVIAL_FILE=str(body_file)), port) as server:
            base = f"http://127.0.0.1:{port}"
            index = b""
            for _ in range(100):
                try:
                    index = _get(base + "/sitemap.xml")
                    break
                except OSError:
                    if server.poll() is not None:
                        summary["status"] = "failed: gunicorn exited"
                        return summary
                    time.sleep(0.2)
            page_path = re.search(rb"<loc>https?://[^/]+(/[^<]*)</loc>", index)
            if page_path is None:
                summary["status"] = "failed: no sitemap page"
                return summary
            page = base + page_path.group(1).decode()
            body = _get(page)  # also fills the cache when there is one
            body_file.write_bytes(body)
            summary["page_urls"] = body.count(b"<url>")
            summary["page_bytes"] = len(body)
            label = (
                "sitemapx page (cached)" if cached else "sitemapx page (streamed; no cache module)"
            )
            targets = ((label, page), ("trivial view, same bytes", base + "/trivial/"))
            # The two targets take turns, HTTP_ROUNDS times each: on a shared machine
            # the load moves within seconds, and one long run after the other would
            # give the first's conditions to one target and the second's to the other.
            rounds: dict[str, list[dict[str, Any]]] = {name: [] for name, _url in targets}
            for _ in range(HTTP_ROUNDS):
                for name, url in targets:
                    rounds[name].append(load(url, args.http_seconds / HTTP_ROUNDS))
            for name, _url in targets:
                run = _merged(rounds[name])
                run["label"] = name
                summary["runs"].append(run)
                print(
                    f"   {name:<45} {run.get('rps', 0):>8.1f} req/s  "
                    f"p99 {run.get('p99_ms', 0):.1f} ms",
                    flush=True,
                )
    if len(summary["runs"]) == 2:
        summary["page_rps"] = summary["runs"][0].get("rps")
        summary["trivial_rps"] = summary["runs"][1].get("rps")
    return summary


# Turns each HTTP target takes (see http_test).
HTTP_ROUNDS = 5


def _merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One target's rounds as one run: requests/s over them all, the median round's latencies."""
    done = [run for run in runs if run.get("rps")]
    if not done:
        return runs[-1]
    requests = sum(run["requests"] for run in done)
    seconds = sum(run["requests"] / run["rps"] for run in done)
    merged: dict[str, Any] = {
        **done[-1],
        "requests": requests,
        "rps": requests / seconds,
        "rounds": [run["rps"] for run in runs],
    }
    for key in ("p50_ms", "p99_ms"):
        values = sorted(run[key] for run in done if key in run)
        if values:
            merged[key] = values[len(values) // 2]
    return merged


def importlib_available(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


# -- output --------------------------------------------------------------------


def machine(versions: dict[str, Any]) -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        memory = int(Path("/proc/meminfo").read_text().split()[1]) // 1024
    import django

    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_mb": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
        "django": django.get_version(),
        "databases": versions,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def _default_cache_url() -> str:
    import socket

    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.2):
            return "rediscache://127.0.0.1:6379/9"
    except OSError:
        return "locmemcache://"


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.from_json:
        earlier = json.loads(args.from_json.read_text())
        results, http, info = earlier["results"], earlier["http"], earlier["machine"]
        args.quick = earlier["quick"]
    else:
        budget = Budget(args.budget)
        started = time.monotonic()
        results, http, versions = measure(args, budget)
        info = machine(versions)
        info["seconds"] = round(time.monotonic() - started, 1)
    targets = report.ratios(results, http)
    print()
    print(report.text_table(results))
    print()
    print(report.ratios_markdown(targets, measured=not args.quick))
    args.output.mkdir(parents=True, exist_ok=True)
    payload = {
        "machine": info,
        "quick": args.quick,
        "results": results,
        "http": http,
        "ratios": targets,
    }
    (args.output / "results.json").write_text(json.dumps(payload, indent=2) + "\n")
    markdown = "\n\n".join(
        [
            report.markdown_table(results),
            report.ratios_markdown(targets, measured=not args.quick),
            report.http_markdown(http),
        ]
    )
    (args.output / "results.md").write_text(markdown + "\n")
    print(f"\nwrote {args.output / 'results.json'} and {args.output / 'results.md'}")
    if args.docs:
        from benchmarks import docs

        page = docs.write(ROOT / "docs", payload)
        print(f"wrote {page}")
    failed = [r for r in results if r["status"].startswith(("failed", "timed out"))]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
