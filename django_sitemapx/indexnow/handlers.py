"""Receivers: the URLs a saved or deleted row, or a changed override, changes.

Each does nothing unless IndexNow is on. A row's URLs are read from the
database as its section lists them: before the change (its old URL, if the
change moves or removes it) and after the commit (its new URL). Every failure
is logged and swallowed: a submission must never fail the save that caused it.

A change to a related row (a category's slug in its articles' URLs) is not
followed: call ``indexnow.queue_urls()`` for such URLs.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import unquote

from django.db import models, transaction
from django.db.models.signals import post_save, pre_delete, pre_save
from django.dispatch import receiver
from django.urls import Resolver404, resolve

from ..locations import LocationBuilder
from ..locations.origins import served_origins
from ..registry import default_registry
from ..signals import overrides_changed
from ..sources import ModelSource
from . import is_enabled, queue_urls

logger = logging.getLogger("django_sitemapx.indexnow")

# The URLs a row had before it was saved, kept on the instance until post_save.
_BEFORE = "_sitemapx_indexnow_before"


def _sources_of(instance: models.Model) -> list[ModelSource]:
    model = instance._meta.concrete_model
    return [
        source
        for source in default_registry
        if isinstance(source, ModelSource)
        and source.model is not None
        and source.model._meta.concrete_model is model
    ]


def _uris(instance: models.Model, sources: list[ModelSource]) -> list[str]:
    uris: list[str] = []
    for source in sources:
        for origin in served_origins(source.protocol):
            # Only the hosts that serve the section, with the rows it lists there.
            if source.serves(origin):
                bound = source.for_origin(origin)
                assert isinstance(bound, ModelSource)
                uris += bound.uris_of(instance, [LocationBuilder(origin)])
    return uris


def _uris_before_change(
    instance: models.Model, sources: list[ModelSource], using: str | None
) -> list[str]:
    """The row's URLs inside the transaction changing it, without ever breaking it."""
    try:
        if transaction.get_connection(using).in_atomic_block:
            # A failing query must not abort the caller's transaction: a savepoint
            # confines it.
            with transaction.atomic(using=using):
                return _uris(instance, sources)
        return _uris(instance, sources)
    except Exception:
        logger.exception("IndexNow: the URLs of %r could not be read; not submitted.", instance)
        return []


def _queue_after_commit(
    instance: models.Model, sources: list[ModelSource], before: list[str], using: str | None
) -> None:
    def run() -> None:
        queue_urls(before + _uris(instance, sources))

    transaction.on_commit(run, using=using, robust=True)


@receiver(pre_save, dispatch_uid="django_sitemapx.indexnow.row_saving")
def row_saving(
    sender: type[models.Model], instance: models.Model, raw: bool = False, **kwargs: Any
) -> None:
    """Remember the URLs of a row about to change, which the change may move."""
    if not is_enabled() or raw or instance._state.adding or instance.pk is None:
        return
    sources = _sources_of(instance)
    if sources:
        instance.__dict__[_BEFORE] = _uris_before_change(instance, sources, kwargs.get("using"))


@receiver(post_save, dispatch_uid="django_sitemapx.indexnow.row_saved")
def row_saved(
    sender: type[models.Model], instance: models.Model, raw: bool = False, **kwargs: Any
) -> None:
    """Queue the row's URLs, old and new, once the save commits."""
    before = instance.__dict__.pop(_BEFORE, [])
    if not is_enabled() or raw:
        return
    sources = _sources_of(instance)
    if sources:
        _queue_after_commit(instance, sources, before, kwargs.get("using"))


@receiver(pre_delete, dispatch_uid="django_sitemapx.indexnow.row_deleting")
def row_deleting(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    """Queue the URLs of a row being deleted, once the delete commits."""
    if not is_enabled():
        return
    sources = _sources_of(instance)
    if not sources:
        return
    using = kwargs.get("using")
    uris = _uris_before_change(instance, sources, using)
    if uris:
        transaction.on_commit(lambda: queue_urls(uris), using=using, robust=True)


@receiver(overrides_changed, dispatch_uid="django_sitemapx.indexnow.overrides")
def overrides_changed_queue(sender: Any, locations: frozenset[str], **kwargs: Any) -> None:
    """Queue the URLs of changed overrides (sent after commit), on every served host."""
    if not is_enabled():
        return
    try:
        paths = [path_for_key(key) for key in sorted(locations)]
        queue_urls(origin.prefix + path for origin in served_origins() for path in paths)
    except Exception:
        logger.exception("IndexNow: the URLs of changed overrides were not queued.")


def path_for_key(key: str) -> str:
    """The path an override's location key stands for.

    Keys drop the trailing slash (``locations.keys``): when only the slashed
    path resolves, as with ``APPEND_SLASH``, that is the page's URL.
    """
    path, mark, query = key.partition("?")
    if path != "/" and not _resolves(path) and _resolves(path + "/"):
        path += "/"
    return path + mark + query


def _resolves(path: str) -> bool:
    try:
        resolve(unquote(path))
    except Resolver404:
        return False
    return True
