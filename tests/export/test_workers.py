"""An export split into tasks, run by two real worker processes, one killed mid-task.

Two backends of the Tasks framework: the database (``django-tasks-db``,
``db_worker``) and RQ on Redis (``django-tasks-rq``, ``rqworker``; its Redis is
``SITEMAPX_TEST_RQ_URL``, which the services leg of scripts/test sets). The
processes share a SQLite file (``tests/export_workers``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.support.exports import exported, validate_all

RQ_URL = os.environ.get("SITEMAPX_TEST_RQ_URL", "")


def _env(tmp_path: Path, backend: str, **extra: str) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": path,
        "DJANGO_SETTINGS_MODULE": "tests.export_workers.settings",
        "SITEMAPX_WORKERS_DB": str(tmp_path / "db.sqlite3"),
        "SITEMAPX_WORKERS_BACKEND": backend,
        "SITEMAPX_WORKERS_REDIS": RQ_URL,
        **extra,
    }


def _run(tmp_path: Path, backend: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=_env(tmp_path, backend),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _worker(tmp_path: Path, backend: str, markers: Path) -> subprocess.Popen[bytes]:
    env = _env(
        tmp_path,
        backend,
        SITEMAPX_WORKERS_MARKERS=str(markers),
        SITEMAPX_WORKERS_SLOW="0.01",
    )
    if backend == "rq":
        command = [
            "rqworker",
            "default",
            "--with-scheduler",
            "--job-class",
            "django_tasks_rq.backend.Job",
        ]
    else:
        command = ["db_worker", "--interval", "0.1", "--no-startup-delay"]
    return subprocess.Popen(
        [sys.executable, "-m", "django", *command, "-v", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # Its own process group: what it forks (RQ's work horse and scheduler) is
        # stopped with it, and nothing outlives the test.
        start_new_session=True,
    )


def _stop_group(worker: subprocess.Popen[bytes]) -> None:
    """Kill whatever is left of ``worker``'s process group (an orphaned scheduler)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(worker.pid, signal.SIGKILL)


def _parts(db: Path) -> int:
    with sqlite3.connect(db, timeout=60) as connection:
        return int(
            connection.execute("SELECT COUNT(*) FROM django_sitemapx_exportpart").fetchone()[0]
        )


def _parent(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[1])


@pytest.mark.parametrize("backend", ["db", "rq"])
def test_two_workers_one_killed_mid_task_publish_a_full_export(
    tmp_path: Path, backend: str
) -> None:
    if backend == "db":
        pytest.importorskip("django_tasks_db")
    else:
        pytest.importorskip("django_tasks_rq")
        if not RQ_URL:
            pytest.skip("no Redis for RQ (SITEMAPX_TEST_RQ_URL; scripts/test's services leg)")
        _run(tmp_path, backend, "-m", "tests.export_workers.cli", "empty-queue", "-")
    db = tmp_path / "db.sqlite3"
    markers = tmp_path / "markers"
    markers.mkdir()
    _run(tmp_path, backend, "-m", "django", "migrate", "-v", "0")
    _run(tmp_path, backend, "-m", "tests.export_workers.cli", "seed", "300")  # 30 pages of 10
    out = tmp_path / "out"
    _run(tmp_path, backend, "-m", "tests.export_workers.cli", "start", str(out))
    assert _parts(db) == 16  # the plan and 15 parts of 2 pages

    workers = [_worker(tmp_path, backend, markers), _worker(tmp_path, backend, markers)]
    try:
        # Kill the first process seen making a page: its part is left running. Under RQ
        # that is the worker's work horse; its worker goes too, as with a machine lost.
        deadline = time.monotonic() + 60
        while not list(markers.iterdir()):
            assert time.monotonic() < deadline, "no worker started a part"
            time.sleep(0.02)
        victim = int(next(markers.iterdir()).name.removeprefix("started-"))
        pids = [worker.pid for worker in workers]
        owner = victim if victim in pids else _parent(victim)
        assert owner in pids
        killed = workers[pids.index(owner)]
        _stop_group(killed)  # the worker, its work horse and its scheduler at once
        killed.wait(timeout=30)
        assert not (out / "sitemap.xml").exists()  # nothing published meanwhile

        # The other worker makes the rest, runs the dead worker's part again, publishes.
        survivor = workers[1 - workers.index(killed)]
        deadline = time.monotonic() + 120
        while _parts(db):
            assert time.monotonic() < deadline, "the export was never published"
            assert survivor.poll() is None
            time.sleep(0.2)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGTERM)
                try:
                    worker.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait(timeout=30)
            _stop_group(worker)

    _run(tmp_path, backend, "-m", "tests.export_workers.cli", "full", str(tmp_path / "full"))
    files = exported(out)
    assert files == exported(tmp_path / "full")
    assert len(files) == 2 * 31  # 30 pages and the index, each with its .gz
    validate_all(files)
    assert not [p.name for p in out.rglob(".*") if p.name.endswith(".sitemapx-tmp")]
