"""The export's tasks, for Django's Tasks framework (``django.tasks`` or ``django_tasks``).

Imported only when an export is split into tasks or scheduled, so a project
without the Tasks framework never imports it. Every task is enqueued on
``SITEMAPX_EXPORT_TASK_BACKEND``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from ..compat import require_tasks_module
from ..conf import app_settings
from . import parallel

_tasks = require_tasks_module()
_task: Callable[..., Callable[[Callable[..., Any]], Any]] = _tasks.task


# A worker finds a task by the function's dotted path: each stays a module-level
# name of this module. Decorating validates the task against the configured backend.
@_task(backend=app_settings.EXPORT_TASK_BACKEND)
def export_part(run: str, number: int) -> dict[str, int]:
    """Make the pages of one part of an export split into tasks."""
    return parallel.run_part(run, number)


@_task(backend=app_settings.EXPORT_TASK_BACKEND)
def finish_export(run: str) -> dict[str, Any]:
    """Publish an export split into tasks once its parts are done (see ``parallel.finish``)."""
    return parallel.finish(run)


def _backend_supports_defer() -> bool:
    return bool(_tasks.task_backends[app_settings.EXPORT_TASK_BACKEND].supports_defer)


def enqueue_part(run: str, number: int) -> None:
    export_part.using(backend=app_settings.EXPORT_TASK_BACKEND).enqueue(run, number)


def enqueue_finish(run: str, *, defer: bool) -> None:
    """Enqueue the final step: now, or (``defer``) after a part of the lease, to look again."""
    task = finish_export.using(backend=app_settings.EXPORT_TASK_BACKEND)
    if defer:
        if not _backend_supports_defer():
            return  # the last part enqueues it; a dead worker's part waits for the next export
        wait = max(min(app_settings.EXPORT_LEASE / 2, 60.0), 0.5)
        task = task.using(run_after=timezone.now() + datetime.timedelta(seconds=wait))
    task.enqueue(run)
