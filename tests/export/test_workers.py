"""An export split into tasks, run by two real ``db_worker`` processes, one killed mid-task."""

from __future__ import annotations

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

pytest.importorskip("django_tasks_db")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "PYTHONPATH": path,
        "DJANGO_SETTINGS_MODULE": "tests.export_workers.settings",
        "SITEMAPX_WORKERS_DB": str(tmp_path / "db.sqlite3"),
        **extra,
    }


def _run(tmp_path: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _worker(tmp_path: Path, markers: Path) -> subprocess.Popen[bytes]:
    env = _env(tmp_path, SITEMAPX_WORKERS_MARKERS=str(markers), SITEMAPX_WORKERS_SLOW="0.01")
    command = ["-m", "django", "db_worker", "--interval", "0.1", "--no-startup-delay"]
    return subprocess.Popen(
        [sys.executable, *command, "-v", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _count(db: Path, sql: str) -> int:
    with sqlite3.connect(db, timeout=60) as connection:
        return int(connection.execute(sql).fetchone()[0])


def test_two_workers_one_killed_mid_task_publish_a_full_export(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    markers = tmp_path / "markers"
    markers.mkdir()
    _run(tmp_path, "-m", "django", "migrate", "-v", "0")
    _run(tmp_path, "-m", "tests.export_workers.cli", "seed", "300")  # 30 pages of 10
    out = tmp_path / "out"
    run = _run(tmp_path, "-m", "tests.export_workers.cli", "start", str(out)).strip()
    assert _count(db, "SELECT COUNT(*) FROM django_sitemapx_exportpart") == 16  # plan + 15

    workers = [_worker(tmp_path, markers), _worker(tmp_path, markers)]
    try:
        # Kill the first worker seen making a page: its part is left running.
        deadline = time.monotonic() + 60
        while not list(markers.iterdir()):
            assert time.monotonic() < deadline, "no worker started a part"
            time.sleep(0.02)
        victim = int(next(markers.iterdir()).name.removeprefix("started-"))
        killed = next(worker for worker in workers if worker.pid == victim)
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        assert not (out / "sitemap.xml").exists()  # nothing published meanwhile

        # The other worker makes the rest, runs the dead worker's part again, publishes.
        deadline = time.monotonic() + 120
        while _count(db, "SELECT COUNT(*) FROM django_sitemapx_exportpart"):
            assert time.monotonic() < deadline, "the export was never published"
            assert workers[1 - workers.index(killed)].poll() is None
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

    enqueued = _count(
        db,
        "SELECT COUNT(*) FROM django_tasks_database_dbtaskresult"
        " WHERE task_path LIKE '%export_part'",
    )
    assert enqueued > 15  # the killed worker's part was enqueued again
    _run(tmp_path, "-m", "tests.export_workers.cli", "full", str(tmp_path / "full"))
    files = exported(out)
    assert files == exported(tmp_path / "full")
    assert len(files) == 2 * 31  # 30 pages and the index, each with its .gz
    validate_all(files)
    assert not [p.name for p in out.rglob(".*") if p.name.endswith(".sitemapx-tmp")]
    assert run
