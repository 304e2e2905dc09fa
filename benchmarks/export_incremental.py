"""A full export with 1 and 2 workers, then 1,000 rows changed and the incremental run.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/DB \\
        python benchmarks/export_incremental.py --rows 10000000 \\
        --output benchmarks/results/export_incremental-10m.json

``--folder DIR`` exports into a new folder inside DIR (default: the system's
temporary folder): the file system there decides what copying the unchanged
bytes of a spliced page costs (XFS with reflink, or btrfs, shares them). The
benchmark mounts nothing: make DIR on the file system to measure.
``--no-workers`` leaves out the runs through django-tasks-db workers.

The example's articles (``data.ensure``: one ``INSERT ... SELECT``, every tenth
unpublished), the articles section alone, no cache: the page table says what
changed (``benchmarks/export_settings.py``). Each step runs in fresh processes:

1. ``layout``: the section's first count (the page table cut and counted);
2. ``full, 1 process``: ``sitemap_export --full``, in one process;
3. ``full, N workers``: ``sitemap_export --tasks --full``, published by N
   ``db_worker`` processes (django-tasks-db) started and ready before it, for N = 1
   and 2; steps 2 and 3 run ``--repeat`` times, interleaved, and the best of each
   kind gives the ratios (the command's ``published in`` against the in-process
   export's seconds, both after Django's setup);
4. ``--changes`` rows (1,000) saved through the ORM, spread evenly over the table
   (published ones: row ``n`` is unpublished when ``n`` is a multiple of 10), which
   touches every page; then as many rows in a row (the newest), which touch one or two;
5. after each: ``incremental, 1 process``, ``sitemap_export`` into the folder of step 2
   (with its seconds as a share of the best full run in one process, ``of_full``);
   the spread saves and their incremental runs go ``--spread-repeat`` times (5), each
   after the run before and each saving rows at new places (as a site's saves come:
   the rows of the run before, saved again, would find their blocks in the page
   cache), and their median and range are reported too: one run moves by a fifth
   from run to run on a 2-core machine;
   and ``incremental, 2 workers``, ``sitemap_export --tasks`` into the folder of step 3.

Prints and writes wall time, URLs per second and peak RSS per process. The
machine is shared: compare ratios, not seconds.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.export_steps import EXPORT, SAVE, run_step  # noqa: E402

BASE_URL = "http://localhost"


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": path,
        "DJANGO_SETTINGS_MODULE": "benchmarks.export_settings",
        "DEBUG": "False",
    }


def _manage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "django", *args],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        check=True,
    )


def _step(name: str, run: Any) -> dict[str, Any]:
    started = time.perf_counter()
    detail = run()
    seconds = time.perf_counter() - started
    row = {
        "step": name,
        "seconds": round(seconds, 2),
        **(detail or {}),
        "load_average": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(row), flush=True)
    return row


def _in_process(code: str) -> dict[str, Any]:
    """Run ``code`` in a fresh Django process; it prints one JSON line, with its peak RSS."""
    script = (
        "import django, json, resource; django.setup()\n"
        + code
        + "\nout['rss_mb'] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)"
        + "\nprint(json.dumps(out))"
    )
    return run_step(script, ROOT, _env())


def _with_workers(folder: Path, workers: int, *extra: str) -> dict[str, Any]:
    """``sitemap_export --tasks --wait``, published by ``workers`` db_worker processes.

    The workers are started first and waited for (in production they run all the
    time): ``published_seconds`` is the command's own figure, from its start (after
    Django's setup) to the published export, and what the ratios compare.
    ``wall_seconds`` adds the command's process start. Each worker's CPU seconds
    (user + system) are read from ``/proc`` before it stops.
    """
    _manage(
        "shell",
        "-c",
        "from django_tasks_db.models import DBTaskResult as T; T.objects.all().delete()",
    )
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "django",
                "db_worker",
                "--interval",
                "0.2",
                "--no-startup-delay",
                "-v",
                "3",
            ],
            cwd=ROOT,
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(workers)
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            for line in process.stdout:  # db_worker says so once it polls
                if "Starting worker" in line:
                    break
        started = time.perf_counter()
        done = _manage(
            "sitemap_export",
            "--tasks",
            "--wait",
            "--output-dir",
            str(folder),
            "--base-url",
            BASE_URL,
            "--pages-per-task",
            "10",
            *extra,
        )
        seconds = time.perf_counter() - started
        cpu = [_cpu_seconds(process.pid) for process in processes]
        peaks = [_peak_rss_mb(process.pid) for process in processes]
        database_cpu = _database_cpu_seconds()
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.communicate(timeout=60)
    published = float(done.stdout.rsplit(" published in ", 1)[1].split(" s.")[0])
    return {
        "workers": workers,
        "published_seconds": published,
        "wall_seconds": round(seconds, 2),
        "workers_cpu_seconds": cpu,
        # The PostgreSQL backends still connected: the workers' (one each, kept open).
        "database_cpu_seconds": database_cpu,
        # Each worker's own peak, read from /proc before it stops (the largest child's
        # peak, which this once was, is the seeding process's).
        "workers_peak_rss_mb": peaks,
    }


def _share(seconds: float, full: float) -> str:
    """``seconds`` as a share of a full run's ``full`` seconds, in percent."""
    return f"{100 * seconds / full:.1f}%"


def _database_cpu_seconds() -> float | None:
    """CPU seconds of the benchmark database's other backends (a local server), else None."""
    import psycopg

    url = os.environ["BENCH_DATABASE_URL"].replace("postgres://", "postgresql://", 1)
    try:
        with psycopg.connect(url) as connection:
            pids = [
                row[0]
                for row in connection.execute(
                    "SELECT pid FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            ]
    except psycopg.Error:
        return None
    found = [_cpu_seconds(pid) for pid in pids]
    return round(sum(seconds for seconds in found if seconds is not None), 2)


def _peak_rss_mb(pid: int) -> float | None:
    """Peak resident set size of process ``pid`` so far, in MB (Linux's VmHWM), else None."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds of process ``pid`` so far (Linux), else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def _file_system(folder: Path) -> str:
    """The type of the file system ``folder`` is on (Linux's /proc/mounts), else ""."""
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return ""
    found, depth = "", -1
    resolved = str(folder.resolve())
    for line in mounts:
        fields = line.split()
        point = fields[1]
        inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
        if inside and len(point) > depth:
            found, depth = fields[2], len(point)
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--changes", type=int, default=1_000)
    parser.add_argument("--output", type=Path)
    parser.add_argument("--repeat", type=int, default=1, help="full runs of each kind")
    parser.add_argument(
        "--spread-repeat",
        type=int,
        default=5,
        help="spread saves and incremental runs in turn (their median and range are reported)",
    )
    parser.add_argument("--folder", type=Path, help="where to export (a new folder inside)")
    parser.add_argument("--no-workers", action="store_true", help="one process only")
    args = parser.parse_args(argv)
    if "BENCH_DATABASE_URL" not in os.environ:
        parser.error("set BENCH_DATABASE_URL (PostgreSQL)")
    if args.spread_repeat < 1:
        parser.error("--spread-repeat must be at least 1")
    if args.folder is not None and not args.folder.is_dir():
        parser.error(f"{args.folder} is not a folder")
    kinds = ["1 process"] if args.no_workers else ["1 process", "1 workers", "2 workers"]
    rows: list[dict[str, Any]] = []
    work = Path(tempfile.mkdtemp(prefix="sitemapx-export-inc-", dir=args.folder))
    try:
        rows.append(
            _step(
                "seed",
                lambda: _in_process(
                    "from benchmarks import data\n"
                    f"out = {{'rebuilt': data.ensure({args.rows})}}\n"
                    "from django_sitemapx.models import PageState\n"
                    "PageState.objects.all().delete()"
                ),
            )
        )
        rows.append(
            _step(
                "layout",
                lambda: _in_process(
                    "from django_sitemapx.documents import listed_pages\n"
                    "from django_sitemapx.export import origin_from_url\n"
                    "from django_sitemapx import default_registry\n"
                    f"pages = listed_pages(default_registry, origin_from_url({BASE_URL!r}))\n"
                    "out = {'pages': len(pages), 'rows': sum(p.summary.rows for p in pages)}"
                ),
            )
        )
        single, split = work / "single", work / "split"
        # Interleaved, --repeat times: the machine's load drifts; the best of each counts.
        full: dict[str, list[float]] = {}
        for _ in range(args.repeat):
            row = _step(
                "full, 1 process",
                lambda: _in_process(EXPORT.format(folder=str(single), base=BASE_URL, full=True)),
            )
            rows.append(row)
            full.setdefault("1 process", []).append(row["export_seconds"])
            for workers in (1, 2)[: len(kinds) - 1]:
                folder = split if workers == 2 else work / "split-1"
                row = _step(
                    f"full, {workers} workers",
                    functools.partial(_with_workers, folder, workers, "--full"),
                )
                rows.append(row)
                full.setdefault(f"{workers} workers", []).append(row["published_seconds"])
                shutil.rmtree(work / "split-1", ignore_errors=True)
        best = {name: min(seconds) for name, seconds in full.items()}
        summary: dict[str, Any] = {"step": "full runs, best of each", **best}
        if not args.no_workers:
            summary["2 workers / 1 worker"] = round(best["1 workers"] / best["2 workers"], 2)
            summary["2 workers / 1 process"] = round(best["1 process"] / best["2 workers"], 2)
        print(json.dumps(summary), flush=True)
        rows.append(summary)
        for spread in ("spread", "clustered"):
            seconds = []
            for turn in range(args.spread_repeat if spread == "spread" else 1):
                rows.append(
                    _step(
                        f"{args.changes} rows saved, {spread}",
                        functools.partial(
                            _in_process,
                            SAVE.format(
                                rows=args.rows,
                                changes=args.changes,
                                spread=spread == "spread",
                                turn=turn,
                            ),
                        ),
                    )
                )
                row = _step(
                    f"incremental after {spread}, 1 process",
                    lambda: _in_process(
                        EXPORT.format(folder=str(single), base=BASE_URL, full=False)
                    ),
                )
                row["of_full"] = _share(row["export_seconds"], best["1 process"])
                print(json.dumps({"step": row["step"], "of_full": row["of_full"]}), flush=True)
                rows.append(row)
                seconds.append(row["export_seconds"])
            if len(seconds) > 1:
                summary = {
                    "step": f"incremental after {spread}, 1 process, {len(seconds)} runs",
                    "median_seconds": statistics.median(seconds),
                    "range_seconds": [min(seconds), max(seconds)],
                    "median_of_full": _share(statistics.median(seconds), best["1 process"]),
                    "range_of_full": [
                        _share(min(seconds), best["1 process"]),
                        _share(max(seconds), best["1 process"]),
                    ],
                    "runs_at_most_2_percent": sum(
                        value <= 0.02 * best["1 process"] for value in seconds
                    ),
                }
                print(json.dumps(summary), flush=True)
                rows.append(summary)
            if not args.no_workers:
                rows.append(
                    _step(
                        f"incremental after {spread}, 2 workers", lambda: _with_workers(split, 2)
                    )
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = {
        "rows": args.rows,
        "changes": args.changes,
        "cores": os.cpu_count(),
        "file_system": _file_system(work.parent),
        "steps": rows,
    }
    if args.output:
        args.output.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
