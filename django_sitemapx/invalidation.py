"""Marking documents stale: :func:`invalidate`, and the pages a saved row touches.

It sits above the registry, the page table and the cache generations, which
it ties together: invalidating marks pages changed in the page table (the
index counts them again) and, with a cache, replaces generations (the
documents are built again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models

from .generations import (
    SitemapCache,
    global_generation,
    host_index_generation,
    index_generation,
    page_generation,
    section_generation,
)
from .registry import SitemapRegistry, default_registry
from .signals import sitemap_invalidated
from .sources import ModelSource
from .sources.pages import has_host_tables, host_section, mark_changed, page_numbers

if TYPE_CHECKING:
    from .locations import Origin


def invalidate(
    section: str | None = None,
    page: int | None = None,
    *,
    registry: SitemapRegistry | None = None,
    origin: Origin | None = None,
    changed_key: str | None = None,
) -> bool:
    """Mark documents stale; the next request for them rebuilds them.

    With no argument every document (every section, the index, every host) is
    stale; with ``section``, every page of that section and the index; with
    ``section`` and ``page``, that page and the index. The page table records
    the change too, so the next index counts those pages again: call it once
    the change is committed. Returns False when the
    configured cache could not be reached (the failure is logged), True
    otherwise, with no cache configured too. Raises ``NotRegistered`` for an
    unknown section.

    ``origin`` (with ``section``), for a section whose hosts have pages of
    their own (``Source.generations_name()``, a Wagtail site's): page ``page``
    of that host (every page of it without ``page``) and that host's index
    only; other hosts' documents stay cached.

    ``changed_key`` (with ``section`` and ``page``) is the key of the one row
    whose change this is, encoded as the page table encodes keys (the save and
    delete receivers give it): an incremental export then remakes only the
    block of the page holding it (see ``sources.changes``).
    """
    names = _generations_of(section, page, registry)
    table = section
    if origin is not None:
        if section is None:
            raise TypeError("invalidate(origin=...) needs a section.")
        table = host_section(section, origin.host)
        numbers = [page] if page is not None else page_numbers(table)
        names = [
            *(page_generation(table, number) for number in numbers),
            host_index_generation(origin.host),
        ]
    # The page table keeps what changed, cache or not: a cache flush then
    # counts nothing again (see ``sources.pages``).
    mark_changed(table, page, changed_key if page is not None else None)
    cache = SitemapCache()
    done = True if cache.alias is None else cache.replace(names)
    if done:
        sitemap_invalidated.send(sender=invalidate, section=section, page=page)
    return done


def replace_generations(
    section: str | None = None,
    page: int | None = None,
    *,
    registry: SitemapRegistry | None = None,
) -> bool:
    """Replace the cache generations ``invalidate()`` replaces, and nothing else.

    For a change not yet committed: this process stops serving what it cached,
    and nothing is written to the page table inside the caller's transaction.
    """
    return SitemapCache().replace(_generations_of(section, page, registry))


def _generations_of(
    section: str | None, page: int | None, registry: SitemapRegistry | None
) -> list[str]:
    if section is None:
        if page is not None:
            raise TypeError("invalidate(page=...) needs a section.")
        return [global_generation()]
    (registry or default_registry).get(section)
    if page is None:
        return [section_generation(section), index_generation()]
    return [page_generation(section, page), index_generation()]


def sections_touched_by(
    instance: models.Model, *, key_known: bool, registry: SitemapRegistry | None = None
) -> list[tuple[str, int | None]]:
    """``(section, page)`` of each page ``instance`` can change (page None: every page)."""
    return pages_holding(keys_touched_by(instance, key_known=key_known, registry=registry))


def keys_touched_by(
    instance: models.Model, *, key_known: bool, registry: SitemapRegistry | None = None
) -> list[tuple[ModelSource, Any]]:
    """Each section ``instance`` can change, with the row's key there (None: any of its rows).

    Read when the row is saved or deleted (a deleted row's key is then gone
    from the instance); :func:`pages_holding` says where they are, at commit.
    """
    found = []
    for source in registry or default_registry:
        if isinstance(source, ModelSource) and source.model is not None and source.model_signals:
            touched, key = _key_of(source, instance, key_known=key_known)
            if touched:
                found.append((source, key))
    return found


def pages_holding(keys: list[tuple[ModelSource, Any]]) -> list[tuple[str, int | None]]:
    """``(section, page)`` of the page holding each ``(source, key)`` now (None: every page)."""
    return [(source.section, _page_holding(source, key)) for source, key in keys]


def rows_holding(
    keys: list[tuple[ModelSource, Any]],
) -> list[tuple[str, int | None, str | None]]:
    """:func:`pages_holding`, each key encoded as the page table encodes it (None: unknown)."""
    found = []
    for source, key in keys:
        page = _page_holding(source, key)
        found.append((source.section, page, None if page is None else _encoded(source, key)))
    return found


def _encoded(source: ModelSource, key: Any) -> str | None:
    try:
        return source.page_table().codec.encode(key)
    except (TypeError, ValueError, AttributeError):
        return None


def pages_touched_by(
    source: ModelSource, instance: models.Model, *, key_known: bool = False
) -> list[int | None]:
    """The pages of ``source`` a saved or deleted ``instance`` can change: ``[None]`` means all.

    A row of the section's model is on the page its key falls in (one indexed
    query on the page table). A ``key_field`` other than the primary key may
    have changed on an update, its old value unknown: every page, unless
    ``key_known`` (a created or deleted row). A row of a model the section
    reads through a relation (``category__slug``) may change any page.
    """
    touched, key = _key_of(source, instance, key_known=key_known)
    return [_page_holding(source, key)] if touched else []


def _key_of(source: ModelSource, instance: models.Model, *, key_known: bool) -> tuple[bool, Any]:
    """Whether ``instance`` can change ``source``, and its key there (None: unknown)."""
    assert source.model is not None
    model = instance._meta.concrete_model
    if source.model._meta.concrete_model is model:
        if source.key_field != "pk" and not key_known:
            return True, None
        key = (
            instance.pk if source.key_field == "pk" else getattr(instance, source.key_field, None)
        )
        return True, key
    return model in related_models(source), None


def _page_holding(source: ModelSource, key: Any) -> int | None:
    """The page of ``source`` holding ``key`` now; None: unknown (every page)."""
    if key is None:
        return None
    try:
        table = source.page_table()
    except ValueError:  # a key that cannot page: the checks report it
        return None
    if has_host_tables(source.section, table.using):
        # Hosts with pages of their own number them their own way.
        return None
    return table.page_of(key)


def related_models(source: ModelSource) -> set[type[models.Model]]:
    """Models the rows of ``source`` read through relations (``url_kwargs`` and ``fields``)."""
    assert source.model is not None
    related: set[type[models.Model]] = set()
    for lookup in [*source.url_fields().values(), *source.fields]:
        model: Any = source.model
        for part in lookup.split("__")[:-1]:
            try:
                field = model._meta.get_field(part)
            except FieldDoesNotExist:  # reported by the system checks
                break
            model = field.related_model
            if model is None:
                break
            related.add(model._meta.concrete_model)
    return related
