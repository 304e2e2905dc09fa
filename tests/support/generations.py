"""Which cache generations an action replaces."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django_sitemapx.generations import (
    global_generation,
    host_index_generation,
    index_generation,
    page_generation,
    section_generation,
)
from django_sitemapx.serving.cache import DocumentCache

NAMES = [
    global_generation(),
    index_generation(),
    section_generation("article"),
    page_generation("article", 1),
    page_generation("article", 2),
    # A host with pages of its own (Source.generations_name()).
    host_index_generation("a.example"),
    page_generation("article@a.example", 2),
]


def tokens(names: list[str]) -> list[str] | None:
    """The current token of each generation, created first where missing; None if down.

    Serving never creates a generation it only reads; a test does, so that a
    token an action leaves alone is seen as unchanged rather than as absent.
    """
    store = DocumentCache()
    current = store.current(names)
    if current is None:
        return None
    made = store.create(names, current)
    return None if made is None else made[0]


def changed_generations(action: Callable[[], Any]) -> list[str]:
    """The names among ``NAMES`` whose token ``action`` replaced."""
    before = tokens(NAMES)
    action()
    after = tokens(NAMES)
    assert before is not None and after is not None
    return [name for name, old, new in zip(NAMES, before, after, strict=True) if old != new]
