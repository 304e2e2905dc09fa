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
from . import submit_pending

_task: Callable[[Callable[[], dict[str, int]]], Any] = require_tasks_module().task


# A worker finds the task by the function's dotted path: it must stay a
# module-level name of this module.
@_task
def submit_pending_urls() -> dict[str, int]:
    """Submit every pending IndexNow URL; returns the run's counts (``Report.as_dict()``)."""
    return submit_pending().as_dict()
