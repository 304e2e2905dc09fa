"""Marking cached documents stale: the public ``invalidate()`` and per-row pages."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models

from .cache import (
    DocumentCache,
    global_generation,
    index_generation,
    page_generation,
    section_generation,
)
from .model_source import ModelSource
from .pages import page_for_key
from .registry import SitemapRegistry
from .registry import site as default_registry
from .signals import sitemap_invalidated


def invalidate(
    section: str | None = None,
    page: int | None = None,
    *,
    registry: SitemapRegistry | None = None,
) -> bool:
    """Mark cached documents stale; the next request for them rebuilds them.

    With no argument every document (every section, the index, every host) is
    stale; with ``section``, every page of that section and the index; with
    ``section`` and ``page``, that page and the index. Returns False when the
    cache could not be reached (the failure is logged). Raises ``NotRegistered``
    for an unknown section.
    """
    if section is None:
        if page is not None:
            raise TypeError("invalidate(page=...) needs a section.")
        names = [global_generation()]
    else:
        (registry or default_registry).get(section)
        if page is None:
            names = [section_generation(section), index_generation()]
        else:
            names = [page_generation(section, page), index_generation()]
    done = DocumentCache().replace(names)
    if done:
        sitemap_invalidated.send(sender=invalidate, section=section, page=page)
    return done


def row_pages(
    instance: models.Model, registry: SitemapRegistry | None = None
) -> list[tuple[str, int | None]]:
    """``(section, page)`` pairs a saved or deleted row can change.

    A row of a section's model is on the page ``pages.page_for_key`` gives. A row of a model
    that a section reads through a relation (``category__slug``) may change any
    page of it, so the whole section is named (page None).
    """
    model = instance._meta.concrete_model
    found: list[tuple[str, int | None]] = []
    for source in registry or default_registry:
        if not isinstance(source, ModelSource) or source.model is None:
            continue
        if source.model._meta.concrete_model is model:
            key = _key_value(instance, source)
            page = page_for_key(key, source.get_limit()) if key is not None else None
            if key is None or page is not None:  # rows keyed below 1 are never listed
                found.append((source.section, page))
        elif model in related_models(source):
            found.append((source.section, None))
    return found


def related_models(source: ModelSource) -> set[type[models.Model]]:
    """Models a section's rows read through relations (``url_kwargs`` and ``fields``)."""
    assert source.model is not None
    lookups = [*(source.url_kwargs or {}).values(), *source.fields]
    related: set[type[models.Model]] = set()
    for lookup in lookups:
        model: Any = source.model
        for part in lookup.split("__")[:-1]:
            try:
                field = model._meta.get_field(part)
            except FieldDoesNotExist:  # reported by check E011
                break
            model = field.related_model
            if model is None:
                break
            related.add(model._meta.concrete_model)
    return related


def _key_value(instance: models.Model, source: ModelSource) -> int | None:
    value = instance.pk if source.key_field == "pk" else getattr(instance, source.key_field, None)
    return value if isinstance(value, int) else None
