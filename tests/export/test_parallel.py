"""An export split into tasks: the same bytes as a full export, one export at a time."""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import InMemoryStorage, storages
from django.core.management.base import CommandError
from django.test import override_settings

from django_sitemapx.compat import tasks_module
from django_sitemapx.exceptions import ExportError
from django_sitemapx.export import (
    FolderDestination,
    StorageDestination,
    export_sitemap,
    parallel,
    storage_destination,
)
from django_sitemapx.locations import Origin
from django_sitemapx.models import ExportPart
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from tests.export.test_incremental import _DatedPathSource
from tests.support.exports import BASE, exported, pages, run, validate_all
from tests.testapp.models import Document

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(tasks_module() is None, reason="needs Django's Tasks framework"),
]

ORIGIN = Origin("http", "example.com")


def _full(folder: Path, gzip: bool) -> dict[str, bytes]:
    export_sitemap(FolderDestination(folder), origin=ORIGIN, gzip=gzip, full=True)
    return exported(folder)


@pytest.mark.parametrize("gzip", [False, True])
def test_tasks_publish_the_bytes_of_a_full_export(
    registry: SitemapRegistry,
    tmp_path: Path,
    immediate: None,
    gzip: bool,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=3)
    registry.register("static", ItemSource, items=lambda: pages("static", 5), limit=2)
    with django_capture_on_commit_callbacks(execute=True):
        for key in range(1, 40):
            Document.objects.create(
                id=key, path=f"/d/{key}/", published_on=datetime.date(2024, 1, 1)
            )
    folder = tmp_path / "out"
    parallel.start_export(str(folder), origin=ORIGIN, gzip=gzip, pages_per_task=4)
    assert not ExportPart.objects.exists()
    assert exported(folder) == _full(tmp_path / "full-1", gzip)
    validate_all(exported(folder))

    # Changes: a save, a delete, a section gone; only what changed is made.
    with django_capture_on_commit_callbacks(execute=True):
        Document.objects.filter(id=5).delete()
        saved = Document.objects.get(id=20)
        saved.path = "/d/20-renamed/"
        saved.save()
    registry.unregister("static")
    parallel.start_export(str(folder), origin=ORIGIN, gzip=gzip, pages_per_task=4)
    assert exported(folder) == _full(tmp_path / "full-2", gzip)
    assert not any(name.startswith("sitemap-static") for name in exported(folder))
    assert not ExportPart.objects.exists()


def test_a_running_export_refuses_another(
    registry: SitemapRegistry, tmp_path: Path, settings: Any
) -> None:
    # A backend that runs nothing: the run stays open, as while workers make its pages.
    module = tasks_module()
    assert module is not None
    settings.TASKS = {"default": {"BACKEND": f"{module.__name__}.backends.dummy.DummyBackend"}}
    registry.register("static", ItemSource, items=lambda: pages("static", 5), limit=2)
    folder = tmp_path / "out"
    run = parallel.start_export(str(folder), origin=ORIGIN)
    with pytest.raises(ExportError, match="running"):
        parallel.start_export(str(folder), origin=ORIGIN)
    with pytest.raises(ExportError, match=f"split into tasks is running \\(run {run}\\)"):
        export_sitemap(FolderDestination(folder), origin=ORIGIN)
    # Another destination is free.
    parallel.start_export(str(tmp_path / "other"), origin=ORIGIN)
    # A run whose workers all stopped beating is abandoned by the next export.
    with override_settings(SITEMAPX_EXPORT_LEASE=0):
        ExportPart.objects.filter(run=run).update(
            heartbeat=datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
        )
        parallel.start_export(str(folder), origin=ORIGIN)
    assert not ExportPart.objects.filter(run=run).exists()


def test_a_dead_workers_part_runs_again_and_the_run_publishes(
    registry: SitemapRegistry, tmp_path: Path, settings: Any
) -> None:
    module = tasks_module()
    assert module is not None
    settings.TASKS = {"default": {"BACKEND": f"{module.__name__}.backends.dummy.DummyBackend"}}
    registry.register("static", ItemSource, items=lambda: pages("static", 9), limit=2)
    folder = tmp_path / "out"
    run = parallel.start_export(str(folder), origin=ORIGIN, pages_per_task=2)
    # Part 1 claimed by a worker that then died: running, its heartbeat old.
    old = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
    ExportPart.objects.filter(run=run, number=1).update(state="running", heartbeat=old, attempts=1)
    for number in (2, 3):
        parallel.run_part(run, number)
    assert parallel.finish(run) == {"state": "waiting"}
    assert ExportPart.objects.get(run=run, number=1).state == "queued"
    assert not folder.joinpath("sitemap.xml").exists()  # nothing published meanwhile
    parallel.run_part(run, 1)
    published = parallel.finish(run)
    assert published["state"] == "published" and published["written"] == 6
    assert exported(folder) == _full(tmp_path / "full", False)


def test_the_command_splits_into_tasks_and_waits(
    registry: SitemapRegistry, tmp_path: Path, immediate: None
) -> None:
    registry.register("static", ItemSource, items=lambda: pages("static", 5), limit=2)
    folder = tmp_path / "out"
    out, _ = run(
        "--tasks", "--wait", "--output-dir", str(folder), "--base-url", "http://example.com"
    )
    assert "enqueued." in out and "published in" in out
    assert exported(folder) == _full(tmp_path / "full", False)
    with pytest.raises(CommandError, match="--tasks exports every section; it takes no"):
        run("--tasks", "--section", "static", "--output-dir", str(folder), "--base-url", BASE)
    with pytest.raises(CommandError, match="Give --output-dir or --storage"):
        run("--tasks", "--base-url", "http://example.com")
    with pytest.raises(CommandError, match="No storage 'nowhere' in STORAGES"):
        run("--tasks", "--storage", "nowhere", "--base-url", "http://example.com")


REMOTE = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "remote": {"BACKEND": "tests.storages.OverwritingMemoryStorage"},
}


@pytest.fixture
def remote(settings: Any) -> None:
    """The storage alias ``remote``, set through ``settings`` as the tests' TASKS are.

    (An ``override_settings`` decorator undone before ``settings`` would leave it set.)
    """
    settings.STORAGES = REMOTE


def _storage_files(alias: str) -> dict[str, bytes]:
    """Every file of storage ``alias``, hidden ones too, by name."""
    storage = storages[alias]
    found: dict[str, bytes] = {}

    def walk(folder: str) -> None:
        folders, files = storage.listdir(folder)
        for name in files:
            path = f"{folder}/{name}" if folder else name
            with storage.open(path, "rb") as handle:
                found[path] = handle.read()
        for name in folders:
            walk(f"{folder}/{name}" if folder else name)

    walk("")
    return found


def test_tasks_write_to_a_storage_pages_first_index_last(
    registry: SitemapRegistry, tmp_path: Path, settings: Any, remote: None
) -> None:
    module = tasks_module()
    assert module is not None
    settings.TASKS = {"default": {"BACKEND": f"{module.__name__}.backends.dummy.DummyBackend"}}
    items = pages("static", 9)
    registry.register("static", ItemSource, items=lambda: items, limit=2)
    destination = storage_destination("remote")
    run_id = parallel.start_export(destination, origin=ORIGIN, gzip=True, pages_per_task=2)
    for number in (1, 2, 3):
        parallel.run_part(run_id, number)
    # The parts are uploaded under the run's staging folder; nothing is published yet.
    staged = _storage_files("remote")
    assert staged and all(name.startswith(f".sitemapx-staging/{run_id}/") for name in staged)
    parallel.run_part(run_id, 4)
    assert parallel.finish(run_id)["state"] == "published"
    first = _storage_files("remote")
    manifest = first.pop(".sitemapx-manifest.json")
    assert b'"sitemap-static-5.xml.gz"' in manifest
    assert first == _full(tmp_path / "full-1", True)
    validate_all(first)

    # A change: the previous export stays whole until the final step.
    items[0] = "/static/renamed/"
    items.pop()
    run_id = parallel.start_export(destination, origin=ORIGIN, gzip=True, pages_per_task=2)
    for part in ExportPart.objects.filter(run=run_id, number__gt=0):
        parallel.run_part(run_id, part.number)
    visible = {k: v for k, v in _storage_files("remote").items() if not k.startswith(".")}
    assert visible == first
    assert parallel.finish(run_id)["state"] == "published"
    second = {k: v for k, v in _storage_files("remote").items() if not k.startswith(".")}
    assert second == _full(tmp_path / "full-2", True)
    assert "sitemap-static-5.xml" not in second  # 8 URLs now: 4 pages
    assert not any(name.startswith(".sitemapx-staging") for name in _storage_files("remote"))


def test_tasks_refuse_a_storage_no_worker_can_open(
    registry: SitemapRegistry, immediate: None
) -> None:
    registry.register("static", ItemSource, items=lambda: pages("static", 5), limit=2)
    with pytest.raises(ExportError, match="a folder or a storage named in STORAGES"):
        parallel.start_export(StorageDestination(InMemoryStorage()), origin=ORIGIN)


def test_a_dropped_run_on_a_storage_leaves_the_previous_export(
    registry: SitemapRegistry, tmp_path: Path, settings: Any, remote: None
) -> None:
    module = tasks_module()
    assert module is not None
    settings.TASKS = {"default": {"BACKEND": f"{module.__name__}.backends.dummy.DummyBackend"}}
    registry.register("static", ItemSource, items=lambda: pages("static", 5), limit=2)
    destination = storage_destination("remote")
    export_sitemap(destination, origin=ORIGIN)
    before = _storage_files("remote")
    run_id = parallel.start_export(destination, origin=ORIGIN, full=True, pages_per_task=1)
    parallel.run_part(run_id, 1)
    ExportPart.objects.filter(run=run_id, number=2).update(state="failed", attempts=3)
    assert parallel.finish(run_id) == {"state": "dropped"}
    assert _storage_files("remote") == before


def test_the_workers_sync_their_pages_and_the_final_step_only_renames(
    registry: SitemapRegistry, tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = tasks_module()
    assert module is not None
    settings.TASKS = {"default": {"BACKEND": f"{module.__name__}.backends.dummy.DummyBackend"}}
    registry.register("static", ItemSource, items=lambda: pages("static", 9), limit=2)
    folder = tmp_path / "out"
    run_id = parallel.start_export(str(folder), origin=ORIGIN, gzip=True, pages_per_task=2)
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    for number in (1, 2, 3):
        parallel.run_part(run_id, number)
    assert len(synced) == 10  # 5 pages, each with its gzip copy, synced by the workers
    synced.clear()
    assert parallel.finish(run_id)["state"] == "published"
    # The final step syncs what it writes itself: the index, its gzip copy, the manifest twice.
    assert len(synced) == 4
    assert exported(folder) == _full(tmp_path / "full", True)


def test_a_run_planned_by_the_previous_version_still_publishes(
    registry: SitemapRegistry, tmp_path: Path, settings: Any
) -> None:
    module = tasks_module()
    assert module is not None
    settings.TASKS = {"default": {"BACKEND": f"{module.__name__}.backends.dummy.DummyBackend"}}
    registry.register("static", ItemSource, items=lambda: pages("static", 5), limit=2)
    folder = tmp_path / "out"
    run_id = parallel.start_export(str(folder), origin=ORIGIN, pages_per_task=2)
    # Its plan named the folder alone.
    plan_row = ExportPart.objects.get(run=run_id, number=0)
    plan_row.plan = {**plan_row.plan, "folder": str(folder)}
    del plan_row.plan["destination"]
    plan_row.save()
    for number in (1, 2):
        parallel.run_part(run_id, number)
    assert parallel.finish(run_id)["state"] == "published"
    assert exported(folder) == _full(tmp_path / "full", False)
