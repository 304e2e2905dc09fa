"""Receivers: overrides into ``overrides_changed``; changed rows into cache invalidation.

Bulk changes of registered models send no signal: call ``invalidate()`` after
them (see docs/guide/caching.md).
"""

from __future__ import annotations

from typing import Any

from django.db import models, transaction
from django.db.models.signals import post_delete, post_init, post_save
from django.dispatch import receiver

from .conf import app_settings
from .exceptions import NotRegistered
from .invalidation import (
    invalidate,
    keys_touched_by,
    pages_holding,
    replace_generations,
    rows_holding,
)
from .models import Override, Rule
from .overrides import NOT_OVERRIDDEN, Place, Shown, Target, send_overrides_changed, shown
from .signals import overrides_changed, sitemap_invalidated


def _remember(instance: Override) -> None:
    fields = instance.__dict__  # never triggers a query for a deferred field
    instance._loaded_location = fields.get("location")
    instance._loaded_host = fields.get("host", "")
    instance._loaded_place = (fields.get("section", ""), fields.get("page"))
    instance._loaded_shown = shown(instance)


def _send_on_commit(instance: Override, places: list[Place | None], created: bool) -> None:
    target: Target = (instance.host, instance.location)
    changes: list[tuple[str | Target, list[Place | None]]] = [(target, places)]
    loaded = NOT_OVERRIDDEN if created else instance._loaded_shown
    before: dict[str | Target, Shown | None] = {target: loaded}
    if instance._loaded_location and (instance._loaded_host or "", instance._loaded_location) != (
        target
    ):
        old: Target = (instance._loaded_host or "", instance._loaded_location)
        changes.append((old, places))
        # The new (host, location) had no override (they are unique); the old one had this.
        before = {target: NOT_OVERRIDDEN, old: loaded}
    # After commit, so a cache refilled by a concurrent request sees the new rows.
    transaction.on_commit(lambda: send_overrides_changed(Override, changes, before))


@receiver(post_init, sender=Override, dispatch_uid="django_sitemapx.override_loaded")
def override_loaded(sender: type[Override], instance: Override, **kwargs: Any) -> None:
    """Remember where a row was, so a change can invalidate its old page too."""
    _remember(instance)


@receiver(post_save, sender=Override, dispatch_uid="django_sitemapx.override_saved")
def override_saved(
    sender: type[Override], instance: Override, created: bool, **kwargs: Any
) -> None:
    """An override was created or changed."""
    places: list[Place | None] = [(instance.section, instance.page)]
    if not created:
        places.append(instance._loaded_place)
    else:
        instance._loaded_location = None
    _send_on_commit(instance, places, created)
    _remember(instance)


@receiver(post_delete, sender=Override, dispatch_uid="django_sitemapx.override_deleted")
def override_deleted(sender: type[Override], instance: Override, **kwargs: Any) -> None:
    """An override was deleted."""
    _send_on_commit(instance, [instance._loaded_place], created=False)


@receiver(post_init, sender=Rule, dispatch_uid="django_sitemapx.rule_loaded")
def rule_loaded(sender: type[Rule], instance: Rule, **kwargs: Any) -> None:
    """Remember the section a rule applied to, so a change invalidates it too."""
    instance._loaded_section = instance.__dict__.get("section")


@receiver(post_save, sender=Rule, dispatch_uid="django_sitemapx.rule_saved")
@receiver(post_delete, sender=Rule, dispatch_uid="django_sitemapx.rule_deleted")
def rule_changed(sender: type[Rule], instance: Rule, **kwargs: Any) -> None:
    """Invalidate the documents a rule applies to, or applied to, once the change commits.

    A rule of one section invalidates that section's pages (and the index);
    a rule of every section, every document. The host does not narrow it:
    invalidation is never per host.
    """
    sections = {instance.section, instance._loaded_section or instance.section}
    instance._loaded_section = instance.section

    def run() -> None:
        if "" in sections:
            invalidate()
            return
        for section in sorted(sections):
            try:
                invalidate(section)
            except NotRegistered:  # a rule of a section that is gone
                continue

    transaction.on_commit(run, using=kwargs.get("using"))


@receiver(post_save, dispatch_uid="django_sitemapx.invalidate.save")
@receiver(post_delete, dispatch_uid="django_sitemapx.invalidate.delete")
def row_changed(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    """Invalidate the pages holding ``instance`` once the change is committed.

    A saved or deleted ``django.contrib.sites`` site invalidates every document.

    The row's key is read now; the page holding it is looked up once the
    change is committed: another process may split or merge that page before
    the commit, and the page holding the row is then another one.
    Inside a transaction the cache generations of the page holding it now are
    replaced at once as well, which covers this process (it sees its own
    uncommitted rows); the invalidation after commit covers a request in
    another process that rebuilt the page from the rows as they were before.
    With no cache configured, the pages are marked changed in the page table
    after the commit only: the caller's transaction takes no lock on that table.
    """
    if sender._meta.label == "sites.Site":
        # A site's domain decides which sections a host serves (``sites``) and
        # the host of every URL: every document may change.
        keys = None
    else:
        # A created or deleted row's key is the one it has (an update may have moved it).
        key_known = bool(kwargs.get("created", True))
        keys = keys_touched_by(instance, key_known=key_known)
        if not keys:
            return
    using = kwargs.get("using")

    def pages() -> list[tuple[str | None, int | None]]:
        return [(None, None)] if keys is None else list(pages_holding(keys))

    def run() -> None:
        if keys is not None and app_settings.EXPORT_SPLICE:
            # Each row's key too, for the export's log of changed rows (``sources.changes``).
            for name, number, key in rows_holding(keys):
                invalidate(name, number, changed_key=key)
            return
        for section, page in pages():
            invalidate(section, page)

    if transaction.get_connection(using).in_atomic_block:
        for section, page in pages():
            replace_generations(section, page)
        transaction.on_commit(run, using=using)
    else:
        run()


@receiver(overrides_changed, dispatch_uid="django_sitemapx.invalidate.overrides")
def overrides_changed_invalidate(
    sender: Any, pages: frozenset[tuple[str, int]], everything: bool, **kwargs: Any
) -> None:
    """Invalidate the cached documents an override change affects (sent after commit)."""
    if everything:
        invalidate()
        return
    for section, page in sorted(pages):
        try:
            invalidate(section, page)
        except NotRegistered:  # an override left on a section that is gone
            continue


@receiver(sitemap_invalidated)
def export_after_change(**kwargs: Any) -> None:
    """With ``SITEMAPX_EXPORT_ON_CHANGE``: schedule an export of what changed, debounced."""
    options = app_settings.EXPORT_ON_CHANGE
    if options is None:
        return
    from .export.tasks import schedule_export

    schedule_export(**options)
