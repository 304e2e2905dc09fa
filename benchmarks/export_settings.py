"""Settings of ``benchmarks/export_incremental.py`` and its ``db_worker`` processes.

The benchmark settings with the articles section alone, no cache (the page table
says what changed, the same in every process) and django-tasks-db as the task
backend.
"""

from benchmarks.settings import *  # noqa: F403
from benchmarks.settings import INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "django_tasks_db", "benchmarks.export_apps.OnlyArticlesConfig"]
SITEMAPX_CACHE_ALIAS = None
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# Spliced pages (opt-in), as export_incremental.py measures them (export_memory.py sets its own).
SITEMAPX_EXPORT_SPLICE = True
