"""Regeneration built in: a burst of changes schedules one export of what changed."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from django_sitemapx.export import FolderDestination, export_sitemap, origin_from_url
from django_sitemapx.registry import SitemapRegistry
from tests.export.test_incremental import _DatedPathSource
from tests.support.exports import BASE, exported
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

pytest.importorskip("django_tasks_db")


def _scheduled() -> list[Any]:
    from django_tasks_db.models import DBTaskResult

    return list(DBTaskResult.objects.filter(task_path__endswith="export_changed"))


def test_a_burst_of_saves_schedules_one_export(
    registry: SitemapRegistry,
    tmp_path: Path,
    settings: Any,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    options = {"output_dir": str(tmp_path / "out"), "base_url": BASE}
    settings.SITEMAPX_EXPORT_ON_CHANGE = options
    settings.SITEMAPX_EXPORT_DEBOUNCE = 30
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=4)
    from django_sitemapx.export.tasks import export_changed

    before = datetime.datetime.now(datetime.UTC)
    for key in range(1, 11):
        with django_capture_on_commit_callbacks(execute=True):
            Document.objects.create(id=key, path=f"/d/{key}/")
    scheduled = _scheduled()
    assert len(scheduled) == 1
    assert scheduled[0].run_after >= before + datetime.timedelta(seconds=29)
    assert scheduled[0].args_kwargs["kwargs"] == options

    # The worker runs it: an incremental export; a change after its start schedules another.
    counts = export_changed.call(**options)
    assert counts["written"] == 4  # three pages and the index
    full = tmp_path / "full"
    export_sitemap(FolderDestination(full), origin=origin_from_url(BASE), full=True)
    assert exported(tmp_path / "out") == exported(full)
    with django_capture_on_commit_callbacks(execute=True):
        Document.objects.filter(id=3).get().save()
    assert len(_scheduled()) == 2


def test_without_the_setting_nothing_is_scheduled(
    registry: SitemapRegistry,
    settings: Any,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=4)
    with django_capture_on_commit_callbacks(execute=True):
        Document.objects.create(id=1, path="/d/1/")
    assert _scheduled() == []
