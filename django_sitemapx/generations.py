"""Cache generations: the tokens every cached document depends on.

A document's cache key holds a digest of the generation tokens it depends on
(see ``serving.cache``). Replacing a token, under a fixed name in the same
cache, makes every document built under the old one stop being found, for
every host, in every process sharing the cache, without listing or deleting
keys. The page table (``sources.pages``) reads the tokens too: a page's summary
is kept with the generation it was counted under.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Sequence
from typing import Any

from django.core.cache import BaseCache, caches

from .conf import app_settings

logger = logging.getLogger("django_sitemapx")

PREFIX = "django_sitemapx"


def global_generation() -> str:
    """The generation every document depends on."""
    return f"{PREFIX}:gen"


def index_generation() -> str:
    """The generation of the index, replaced whenever any page is invalidated."""
    return f"{PREFIX}:gen:index"


def host_index_generation(host: str) -> str:
    """The generation of one host's index, replaced when a page of that host only changes."""
    return f"{PREFIX}:gen:index:{host_part(host)}"


def host_part(host: str) -> str:
    """``host`` in a generation's name: as it is when short, else a digest (key length)."""
    return host if len(host) <= 100 else hashlib.sha256(host.encode()).hexdigest()[:32]


def section_generation(section: str) -> str:
    """The generation of every page of ``section``."""
    return f"{PREFIX}:gen:section:{section}"


_PAGE_PREFIX = f"{PREFIX}:gen:page:"


def page_generation(section: str, page: int) -> str:
    """The generation of one page of ``section``.

    ``section`` is ``Source.generations_name()``: the section's name, or
    ``section@host`` for a host whose pages are its own (a Wagtail site's).
    """
    return f"{_PAGE_PREFIX}{section}:{page}"


def page_generations(section: str, name: str, page: int) -> list[str]:
    """The page generations a page of ``section`` depends on, its pages named ``name``.

    The section's page (every host's page of that number), and the host's own
    when its pages are named per host (``Source.generations_name()``).
    """
    shared = page_generation(section, page)
    return [shared] if name == section else [shared, page_generation(name, page)]


def new_token() -> str:
    """A fresh generation token: its creation time, then random hex."""
    return f"{time.time():.6f}-{secrets.token_hex(4)}"


class SitemapCache:
    """One request's access to the cache alias of ``SITEMAPX_CACHE_ALIAS``.

    The first error from the backend is logged and turns the instance off, so a
    request costs at most one failed call and is then served uncached.
    ``serving.cache.DocumentCache`` adds the documents themselves.
    """

    def __init__(self, alias: str | None = None) -> None:
        self.alias = alias if alias is not None else app_settings.CACHE_ALIAS
        self._cache: BaseCache | None = None
        self.available = self.alias is not None
        # Whether the backend raised (``available`` also turns off for a cache that
        # answers but does not keep keys: see ``DocumentCache.create``).
        self.failed = False
        if self.alias is not None:
            name = self.alias
            self._cache = self._call(lambda: caches[name], None)

    def _call(self, operation: Any, default: Any, *, turned_off: bool = False) -> Any:
        """``operation()``'s result, or ``default`` once the cache is off; ``turned_off``:
        called still where the cache was turned off without failing (not where there is
        none)."""
        if not self.available and (self.failed or not turned_off or self._cache is None):
            return default
        try:
            return operation()
        # A cache backend raises whatever its client raises (socket, protocol,
        # database, file errors): none of them may turn a sitemap into a 500.
        except Exception:
            self.available = False
            self.failed = True
            logger.warning(
                "The sitemap cache %r failed; serving uncached.", self.alias, exc_info=True
            )
            return default

    @property
    def backend(self) -> BaseCache:
        assert self._cache is not None
        return self._cache

    def replace(self, names: Sequence[str]) -> bool:
        """Give each generation a new token; False if the cache is unavailable."""
        tokens = {name: new_token() for name in names}
        failed = self._call(lambda: self.backend.set_many(tokens, None), None)
        return failed is not None and not failed
