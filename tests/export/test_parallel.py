"""An export split into tasks: the same bytes as a full export, one export at a time."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.management.base import CommandError
from django.test import override_settings

from django_sitemapx.compat import tasks_module
from django_sitemapx.exceptions import ExportError
from django_sitemapx.export import FolderDestination, export_sitemap, parallel
from django_sitemapx.locations import Origin
from django_sitemapx.models import ExportPart
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from tests.export.test_incremental import _DatedPathSource
from tests.support.exports import exported, pages, run, validate_all
from tests.testapp.models import Document

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(tasks_module() is None, reason="needs Django's Tasks framework"),
]

ORIGIN = Origin("http", "example.com")


@pytest.fixture
def immediate(settings: Any) -> None:
    module = tasks_module()
    assert module is not None
    settings.TASKS = {
        "default": {"BACKEND": f"{module.__name__}.backends.immediate.ImmediateBackend"}
    }


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
    with pytest.raises(CommandError, match="--tasks exports every section to --output-dir"):
        run("--tasks", "--storage", "x", "--base-url", "http://example.com")
    with pytest.raises(CommandError, match="--tasks needs --output-dir"):
        run("--tasks", "--base-url", "http://example.com")
