"""The export's tasks, for Django's Tasks framework (``django.tasks`` or ``django_tasks``).

Imported only when an export is split into tasks or scheduled, so a project
without the Tasks framework never imports it. Every task is enqueued on
``SITEMAPX_EXPORT_TASK_BACKEND``.
"""

from __future__ import annotations

import datetime
import logging
import secrets
from collections.abc import Callable
from typing import Any

from django.core.cache import caches
from django.utils import timezone

from ..compat import require_tasks_module
from ..conf import app_settings
from ..generations import PREFIX
from . import (
    Destination,
    FolderDestination,
    export_sitemap,
    origin_from_sites_framework,
    origin_from_url,
    parallel,
    storage_destination,
)

logger = logging.getLogger("django_sitemapx")

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


@_task(backend=app_settings.EXPORT_TASK_BACKEND)
def export_changed(
    output_dir: str | None = None,
    storage: str | None = None,
    base_url: str | None = None,
    gzip: bool = False,
) -> dict[str, Any]:
    """Export what changed since the destination's last export (see ``export_sitemap``).

    To ``output_dir``, else the ``STORAGES`` alias ``storage``, else
    ``SITEMAPX_EXPORT_STORAGE``; for ``base_url``, else the Sites framework's
    current site. Returns the counts: written, unchanged, removed, seconds.
    """
    # From now on a change schedules another run: this one may read before it.
    _release_schedule()
    destination: Destination
    if output_dir:
        destination = FolderDestination(output_dir)
    else:
        destination = storage_destination(storage or app_settings.EXPORT_STORAGE or "")
    origin = origin_from_url(base_url) if base_url else origin_from_sites_framework()
    result = export_sitemap(
        destination, origin=origin, files_base_url=app_settings.FILES_BASE_URL, gzip=gzip
    )
    return {
        "written": len(result.files),
        "unchanged": len(result.unchanged),
        "removed": len(result.removed),
        "seconds": round(result.seconds, 3),
    }


_SCHEDULE_KEY = f"{PREFIX}:export:scheduled"


def schedule_export(**options: Any) -> bool:
    """Enqueue ``export_changed(**options)`` in ``SITEMAPX_EXPORT_DEBOUNCE`` seconds, once.

    A burst of changes costs one export: while one is scheduled and not
    started, scheduling again does nothing (the scheduled run reads every
    change made until it starts). The mark lives in the sitemap's cache
    (``SITEMAPX_CACHE_ALIAS``), shared by every process; with no cache, or a
    backend that cannot defer, each call enqueues a run now. Returns whether
    a run was enqueued.
    """
    debounce = float(app_settings.EXPORT_DEBOUNCE)
    task = export_changed.using(backend=app_settings.EXPORT_TASK_BACKEND)
    alias = app_settings.CACHE_ALIAS
    if alias is not None and debounce > 0 and _backend_supports_defer():
        try:
            # Held a little past the run's start, in case the run never starts.
            if not caches[alias].add(_SCHEDULE_KEY, secrets.token_hex(8), debounce * 2 + 60):
                return False
        except Exception:  # a cache down: no debounce, never a lost export
            logger.warning("The export's debounce mark could not be set.", exc_info=True)
        else:
            run_after = timezone.now() + datetime.timedelta(seconds=debounce)
            task = task.using(run_after=run_after)
    task.enqueue(**options)
    return True


def _release_schedule() -> None:
    alias = app_settings.CACHE_ALIAS
    if alias is None:
        return
    try:
        caches[alias].delete(_SCHEDULE_KEY)
    except Exception:
        logger.warning("The export's debounce mark could not be removed.", exc_info=True)
