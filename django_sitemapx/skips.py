"""What the last build of each page left out, by reason, for the admin's overview.

Each page's skips are logged as the page is written (see ``documents``); they
are also kept in the sitemap cache (``SITEMAPX_CACHE_ALIAS``), one small
record per section, so the overview can show editors why URLs are missing.
Without a cache nothing is kept and the overview says so. A failing cache is
ignored here: this is a report, never a reason for a sitemap to fail.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Iterable, Iterator, Mapping

from django.core.cache import caches

from .conf import app_settings

logger = logging.getLogger("django_sitemapx")

PREFIX = "django_sitemapx:skips"


# Skips held back for the caller of ``held()`` to record with its document.
_held: contextvars.ContextVar[list[Skips] | None] = contextvars.ContextVar(
    "sitemapx_held_skips", default=None
)

Skips = tuple[str, int, dict[str, int]]


def _key(section: str) -> str:
    return f"{PREFIX}:{section}"


@contextlib.contextmanager
def held() -> Iterator[list[Skips]]:
    """Within it, ``record_skips`` keeps its arguments in the list yielded, written nothing.

    A cached build records them when it stores its document, off the request
    on a network cache (``serving.background``): the report's round trip is
    not the request's.
    """
    kept: list[Skips] = []
    token = _held.set(kept)
    try:
        yield kept
    finally:
        _held.reset(token)


def record_skips(section: str, page: int, skipped: Mapping[str, int]) -> None:
    """Keep what the latest build of ``page`` of ``section`` left out (empty: nothing)."""
    kept = _held.get()
    if kept is not None:
        kept.append((section, page, dict(skipped)))
        return
    alias = app_settings.CACHE_ALIAS
    if alias is None:
        return
    try:
        cache = caches[alias]
        pages: dict[int, dict[str, int]] = cache.get(_key(section)) or {}
        if skipped:
            pages[page] = {str(reason): int(count) for reason, count in skipped.items()}
        elif page in pages:
            del pages[page]
        else:
            return
        cache.set(_key(section), pages, None)
    except Exception:  # a report only: a failing cache must not fail the document
        logger.debug("Could not keep the skips of %r page %s.", section, page, exc_info=True)


def recorded_skips(sections: Iterable[str]) -> dict[str, dict[str, int]] | None:
    """Per section, the entries its pages' latest builds left out, by reason; None: unknown."""
    alias = app_settings.CACHE_ALIAS
    if alias is None:
        return None
    names = list(sections)
    try:
        found = caches[alias].get_many([_key(section) for section in names])
    except Exception:
        return None
    totals: dict[str, dict[str, int]] = {}
    for section in names:
        counts: dict[str, int] = {}
        for page_counts in (found.get(_key(section)) or {}).values():
            for reason, count in page_counts.items():
                counts[reason] = counts.get(reason, 0) + count
        totals[section] = counts
    return totals
