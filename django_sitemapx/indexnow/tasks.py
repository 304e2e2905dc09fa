"""The submission task, for Django's Tasks framework (``django.tasks`` or ``django_tasks``).

Imported only when a submission is enqueued or a worker runs one, so a project
without the Tasks framework never imports it. The task takes no argument: it
submits whatever is pending (see ``django_sitemapx.indexnow``), so tasks queued
by several changes simply find less to do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compat import require_tasks_module
from ..conf import app_settings
from . import submit_pending

_task: Callable[..., Callable[[Callable[[], dict[str, int]]], Any]] = require_tasks_module().task


# A worker finds the task by the function's dotted path: it must stay a
# module-level name of this module. Decorating validates the task against a
# backend, which must exist now: the configured one (TASKS may have no
# "default"). Every enqueue and every worker picks its backend with using().
@_task(backend=app_settings.INDEXNOW_TASK_BACKEND or "default")
def submit_pending_urls() -> dict[str, int]:
    """Submit every pending IndexNow URL; returns the run's counts (``Report.as_dict()``)."""
    return submit_pending().as_dict()
