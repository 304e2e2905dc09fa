"""Receivers that mark cached documents stale when a registered model's row changes.

Connected in ``AppConfig.ready()``. Bulk changes send no signal: call
``invalidate()`` after them (see docs/caching.md).
"""

from __future__ import annotations

from typing import Any

from django.db import models, transaction
from django.db.models.signals import post_delete, post_save

from .invalidation import invalidate, row_pages

DISPATCH_UID = "django_sitemapx.invalidate"


def row_changed(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    """Invalidate the pages holding ``instance``, now and again after commit.

    The first invalidation covers this process at once; the one after commit
    covers a request in another process that rebuilt the page from the rows
    as they were before the transaction committed.
    """
    pages = row_pages(instance)
    if not pages:
        return
    using = kwargs.get("using")

    def run() -> None:
        for section, page in pages:
            invalidate(section, page)

    run()
    if transaction.get_connection(using).in_atomic_block:
        transaction.on_commit(run, using=using)


def connect() -> None:
    """Connect the receivers (idempotent)."""
    post_save.connect(row_changed, dispatch_uid=f"{DISPATCH_UID}.save")
    post_delete.connect(row_changed, dispatch_uid=f"{DISPATCH_UID}.delete")
