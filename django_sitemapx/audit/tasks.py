"""The audit as a task, for Django's Tasks framework (``django.tasks`` or ``django_tasks``).

Imported only when an audit is enqueued or a worker runs one, so a project
without the Tasks framework never imports it. The task keeps its report where
the admin's overview reads it (see ``audit.report.store_report``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compat import require_tasks_module
from ..conf import app_settings
from . import audit_sitemap, store_report

_task: Callable[..., Callable[[Callable[..., dict[str, Any]]], Any]] = require_tasks_module().task


# A worker finds the task by the function's dotted path: it must stay a
# module-level name of this module (see indexnow/tasks.py for the backend).
@_task(backend=app_settings.AUDIT_TASK_BACKEND or "default")
def audit_sitemap_task(
    sections: list[str] | None = None, sample: int | None = None, rate: float | None = None
) -> dict[str, Any]:
    """Audit the sitemap (see ``audit_sitemap``), keep the report; returns counts by section."""
    report = audit_sitemap(sections=sections or (), sample=sample, rate=rate)
    store_report(report)
    return {
        "checked": report.checked,
        "problems": len(report.findings),
        "by_section": report.by_section(),
    }
