"""Settings of the worker test's processes: ``tests.settings`` on a shared SQLite file."""

import os

from tests.settings import *  # noqa: F403
from tests.settings import INSTALLED_APPS

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["SITEMAPX_WORKERS_DB"],
        # Writers wait for each other, and take the write lock at BEGIN (no upgrade deadlock).
        "OPTIONS": {"timeout": 60, "transaction_mode": "IMMEDIATE"},
    }
}
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# No cache shared by the processes: the page table says what changed.
SITEMAPX_CACHE_ALIAS = None
INSTALLED_APPS = [*INSTALLED_APPS, "tests.export_workers"]
if "django_tasks_db" not in INSTALLED_APPS:
    INSTALLED_APPS.append("django_tasks_db")
if os.environ.get("SITEMAPX_WORKERS_BACKEND") == "rq":
    # RQ on the Redis database SITEMAPX_WORKERS_REDIS names, queue "default".
    INSTALLED_APPS.append("django_rq")
    TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend"}}
    RQ_QUEUES = {"default": {"URL": os.environ["SITEMAPX_WORKERS_REDIS"]}}
else:
    TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
SITEMAPX_EXPORT_LEASE = 2
