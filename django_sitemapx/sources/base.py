"""The source contract: what every section of a sitemap gives the index and the views.

A source splits its entries into pages of at most ``limit`` URLs. It tells the
index every non-empty page (``page_summaries()``), and gives one page to serve
(``page(number)``): that page's summary, for the ETag and Last-Modified, and
its entries, streamed in chunks. Both come from the same summary code, so the
index, a page's headers and its body always agree.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..conf import PROTOCOL_MAX_URLS, app_settings
from ..entries import EntryStream
from ..exceptions import SourceConfigurationError
from ..locations.hosts import SiteSelection, parse_sites, scheme_for
from ..values import VALUE_NAMES, static_value

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from ..locations import LocationBuilder, Origin


@functools.lru_cache(maxsize=256)
def _parsed_sites(sites: tuple[object, ...]) -> SiteSelection:
    return parse_sites(sites)


@dataclass(frozen=True)
class PageSummary:
    """A non-empty page of a section: its number, row count and greatest lastmod.

    ``undated`` counts the rows that have no lastmod: a page's ``Last-Modified``
    is known only when it is 0 (see ``serving.conditional``). A source that
    cannot tell leaves it 0 only if ``lastmod`` covers every row.
    """

    number: int
    rows: int
    lastmod: str | None
    undated: int = 0


@dataclass(frozen=True)
class ListedPage:
    """One page of one section, as the index lists it."""

    section: str
    summary: PageSummary


@dataclass(frozen=True)
class Page:
    """One page to serve: its summary, and its entries for a ``LocationBuilder``.

    ``entries`` is called at most once, after the summary was used for the
    response headers; it streams chunks of entries and ``Skipped`` records.
    """

    summary: PageSummary
    entries: Callable[[LocationBuilder], EntryStream]


class Source:
    """Base class of every section of a sitemap.

    ``changefreq``, ``priority`` and ``lastmod`` are each either an attribute or
    a method taking one item, as in ``django.contrib.sitemaps``. Keyword options
    given to ``register()`` set attributes on the instance.

    A custom source implements :meth:`page_summaries` and :meth:`page`.

    Several sites: ``sites`` limits the section to some sites (``django.contrib.sites``
    IDs and host names); ``None`` serves it on every host. A source serving a
    host is a copy made by :meth:`for_origin`, whose ``origin`` says which host,
    so ``get_queryset()`` or ``items()`` can filter by it; ``origin`` is None
    where no host is served (system checks, cache invalidation).
    """

    limit: int | None = None
    sites: Sequence[int | str] | None = None
    origin: Origin | None = None
    protocol: str | None = None
    # Extension namespaces the entries use, declared on each page's root:
    # {"xhtml": writer.XHTML_NAMESPACE} for alternates.
    namespaces: Mapping[str, str] = {}
    changefreq: Any = None
    priority: Any = None
    lastmod: Any = None
    # Image, video and news extensions (see ``sources.extensions``): a value for
    # every item, a method taking one item, or a related-model declaration.
    images: Any = None
    videos: Any = None
    news: Any = None
    news_publication: Any = None
    # The most images and videos one URL lists: extra ones are skipped and
    # counted. Pages are sized for URLs this large, so that none is dropped.
    max_images: int = 1_000
    max_videos: int = 10
    # Most seconds a cached document of this section is served; None: SITEMAPX_CACHE_TIMEOUT.
    cache_timeout: float | None = None

    def __init__(self, section: str = "", **options: Any) -> None:
        self.section = section
        for name, value in options.items():
            if name.startswith("_") or not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} has no option {name!r}")
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} section={self.section!r}>"

    def site_selection(self) -> SiteSelection | None:
        """``sites`` parsed; None when the section is served on every host."""
        sites = self.sites
        if sites is None:
            return None
        if isinstance(sites, list | tuple | set | frozenset):
            try:
                # Asked on every request: parse each distinct value once.
                return _parsed_sites(tuple(sites))
            except TypeError:  # an unhashable item: parse_sites() says what is wrong
                pass
        return parse_sites(sites)

    def serves(self, origin: Origin) -> bool:
        """Whether this section is served on ``origin``'s host (its ``sites``)."""
        selection = self.site_selection()
        return selection is None or selection.matches(origin)

    def for_origin(self, origin: Origin) -> Source:
        """This source as served on ``origin``: a copy whose ``origin`` is set.

        The registered instance is shared by every request, so it is never
        changed; the copy is shallow and costs nothing per row.
        """
        bound = copy.copy(self)
        bound.origin = origin
        return bound

    def get_limit(self) -> int:
        """The most URLs a page holds: the source's ``limit``, else ``SITEMAPX_LIMIT``."""
        return self.limit if self.limit is not None else app_settings.LIMIT

    def rows_per_page(self) -> int:
        """How many items (rows) one page holds: what the source pages by.

        Today one item is one URL, so this is :meth:`get_limit`; a source whose
        items give several URLs, or URLs too large for ``limit`` of them to fit
        the protocol's byte limit, holds fewer: a source with images, videos or
        news holds as many of its largest URLs as fit 50 MB.
        """
        from .extensions import extension_rows_per_page

        return extension_rows_per_page(self, self.get_limit())

    def expires(self) -> float | None:
        """When documents built now stop being true by themselves (seconds since the epoch).

        None (the default) when only a change to the data, caught by
        invalidation, changes them; a news section's items age out.
        """
        if self.cache_timeout is None:
            return None
        return time.time() + self.cache_timeout

    def validate(self) -> None:
        """Raise ``SourceConfigurationError`` for a value of this source the protocol refuses.

        Only the source's own values are validated (at registration, and by the
        system checks); settings are the checks' business.
        """
        limit = self.limit
        if limit is not None and (
            not isinstance(limit, int)
            or isinstance(limit, bool)
            or not (1 <= limit <= PROTOCOL_MAX_URLS)
        ):
            raise SourceConfigurationError(
                f"{type(self).__name__}.limit must be an integer from 1 to "
                f"{PROTOCOL_MAX_URLS} (the protocol's maximum), not {limit!r}"
            )
        if self.sites is not None:
            try:
                parse_sites(self.sites)
            except ValueError as error:
                raise SourceConfigurationError(f"{type(self).__name__}.sites {error}") from None
        if self.protocol not in (None, "http", "https"):
            raise SourceConfigurationError(
                f"{type(self).__name__}.protocol must be 'http', 'https' or None, "
                f"not {self.protocol!r}"
            )
        for name in VALUE_NAMES:
            if not callable(getattr(self, name, None)):
                static_value(self, name)
        from .extensions import validate_extensions

        validate_extensions(self)

    def check(self) -> list[CheckMessage]:
        """A custom source's own system-check messages (``checks.py`` has the built-in ones)."""
        return []

    def page_summaries(self) -> list[PageSummary]:
        """Every non-empty page, in order."""
        raise NotImplementedError

    def scheme(self, default: str) -> str:
        """The scheme of this section's URLs and of the index's links to its pages.

        The source's ``protocol``, else ``SITEMAPX_PROTOCOL``, else ``default``
        (the request's scheme).
        """
        return scheme_for(self.protocol, default)

    def page_at(self, number: int, origin: Origin) -> Page | None:
        """Page ``number`` as served for ``origin``: :meth:`page` unless the source needs it.

        ``ContribSitemapSource`` does: its sitemap makes whole URLs, so one call for
        the served origin gives both the summary and the entries.
        """
        return self.page(number)

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        """Page ``number`` (1-based) to serve, or None if it has no entry.

        ``summary`` is the page's summary when the caller already has it from
        :meth:`page_summaries` (the export does); a source may use it rather
        than read it again.
        """
        raise NotImplementedError
