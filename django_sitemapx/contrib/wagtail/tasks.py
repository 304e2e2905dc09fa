"""The Wagtail source's background work, for Django's Tasks framework.

Imported only when a task is enqueued or a worker runs one, so a project
without the Tasks framework never imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...compat import require_tasks_module
from ...conf import app_settings
from .announce import announce_moved_site

_task: Callable[..., Callable[[Callable[[str, str], int]], Any]] = require_tasks_module().task


# A worker finds the task by the function's dotted path: it must stay a module-level
# name of this module. Its backend is IndexNow's (SITEMAPX_INDEXNOW_TASK_BACKEND), picked
# with using() by every enqueue; the decorator only needs one that exists now.
@_task(backend=app_settings.INDEXNOW_TASK_BACKEND or "default")
def announce_moved_site_task(old: str, new: str) -> int:
    """Queue for IndexNow what a Wagtail site lists on host ``new``, once ``old`` (a count)."""
    return announce_moved_site(old, new)
