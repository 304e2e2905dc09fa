"""The source contract: what every section of a sitemap gives the index and the views.

A source splits its entries into pages of at most ``limit`` URLs. It tells the
index every non-empty page (``page_summaries()``), and gives one page to serve
(``page(number)``): that page's summary, for the ETag and Last-Modified, and
its entries, streamed in chunks. Both come from the same summary code, so the
index, a page's headers and its body always agree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..conf import PROTOCOL_MAX_URLS, app_settings
from ..entries import EntryStream
from ..exceptions import SourceConfigurationError
from ..values import VALUE_NAMES, static_value

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from ..locations import LocationBuilder


@dataclass(frozen=True)
class PageSummary:
    """A non-empty page of a section: its number, row count and greatest lastmod."""

    number: int
    rows: int
    lastmod: str | None


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
    """

    limit: int | None = None
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

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        """Page ``number`` (1-based) to serve, or None if it has no entry.

        ``summary`` is the page's summary when the caller already has it from
        :meth:`page_summaries` (the export does); a source may use it rather
        than read it again.
        """
        raise NotImplementedError
