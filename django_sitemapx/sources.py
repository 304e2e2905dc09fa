"""Sitemap sources: the sections of a sitemap and where their entries come from.

A source splits its entries into pages of at most ``limit`` URLs, reports each
non-empty page with its greatest lastmod, and yields the entries of one page in
chunks. :class:`ModelSource` does this in SQL with stable keyset ranges;
:class:`ItemSource` and its relatives work on an in-memory list, like
``django.contrib.sitemaps.Sitemap``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core import checks
from django.urls import reverse
from django.utils import timezone

from .conf import PROTOCOL_MAX_URLS, app_settings
from .exceptions import SourceConfigurationError
from .locations import LocationBuilder, Skip
from .values import formatted, getter, lastmod_text, static_value
from .writer import Entry, WriteStats

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap as ContribSitemap

_VALUE_NAMES = ("lastmod", "changefreq", "priority")


@dataclass(frozen=True)
class PageSummary:
    """A non-empty page of a section: its number, row count and greatest lastmod."""

    number: int
    rows: int
    lastmod: str | None


class Source:
    """Base class of every section of a sitemap.

    ``changefreq``, ``priority`` and ``lastmod`` are each either an attribute or
    a method taking one item, as in ``django.contrib.sitemaps``. Keyword options
    given to ``register()`` set attributes on the instance.
    """

    limit: int | None = None
    protocol: str | None = None
    changefreq: Any = None
    priority: Any = None
    lastmod: Any = None

    def __init__(self, section: str = "", **options: Any) -> None:
        self.section = section
        for name, value in options.items():
            if name.startswith("_") or not hasattr(type(self), name):
                raise TypeError(f"{type(self).__name__} has no option {name!r}")
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} section={self.section!r}>"

    def get_limit(self) -> int:
        """URLs per page: the source's ``limit`` or ``SITEMAPX_LIMIT``."""
        limit = self.limit if self.limit is not None else app_settings.LIMIT
        return int(limit)

    def validate(self) -> None:
        """Raise ``SourceConfigurationError`` for a value the protocol cannot carry."""
        limit = self.limit if self.limit is not None else app_settings.LIMIT
        if (
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
        for name in ("changefreq", "priority", "lastmod"):
            if not callable(getattr(self, name, None)):
                static_value(self, name)

    def check(self) -> list[checks.CheckMessage]:
        """System-check messages about this source (see ``checks.py``)."""
        try:
            self.validate()
        except SourceConfigurationError as error:
            return [checks.Error(str(error), obj=self, id="django_sitemapx.E003")]
        return []

    def page_summaries(self) -> list[PageSummary]:
        """Every non-empty page, in order."""
        raise NotImplementedError

    def iter_entries(
        self, page: int, builder: LocationBuilder, stats: WriteStats
    ) -> Iterator[list[Entry]]:
        """The entries of ``page`` in chunks; nothing at all for an empty page."""
        raise NotImplementedError

    def _value_reader(self, name: str, stats: WriteStats) -> Callable[[Any], str | None]:
        per_item = getter(self, name, stats.skip)
        if per_item is not None:
            return per_item
        constant = static_value(self, name)
        return lambda item: constant


class ItemSource(Source):
    """A section built from ``items()``, an in-memory sequence, as in contrib.

    An item may be a location string, a mapping with a ``"location"`` key (and
    optionally ``"lastmod"``, ``"changefreq"``, ``"priority"``, which win over
    the source's values), or any object with ``get_absolute_url()``. Pass a
    callable as the ``items`` option to register a function as a source.
    """

    def items(self) -> Iterable[Any]:
        """The items of this section."""
        return []

    def location(self, item: Any) -> str:
        """A path or same-host absolute URL for ``item``."""
        if isinstance(item, str):
            return item
        if isinstance(item, Mapping):
            return str(item["location"])
        return str(item.get_absolute_url())

    def _pages(self) -> list[list[Any]]:
        items = list(self.items())
        limit = self.get_limit()
        return [items[start : start + limit] for start in range(0, len(items), limit)]

    def _raw_value(self, item: Any, name: str) -> Any:
        if isinstance(item, Mapping) and name in item:
            return item[name]
        attribute = getattr(self, name)
        return attribute(item) if callable(attribute) else attribute

    def page_summaries(self) -> list[PageSummary]:
        summaries = []
        for number, items in enumerate(self._pages(), start=1):
            latest = _latest(self._raw_value(item, "lastmod") for item in items)
            summaries.append(PageSummary(number, len(items), lastmod_text(latest)))
        return summaries

    def iter_entries(
        self, page: int, builder: LocationBuilder, stats: WriteStats
    ) -> Iterator[list[Entry]]:
        pages = self._pages()
        if not 1 <= page <= len(pages):
            return
        chunk: list[Entry] = []
        for item in pages[page - 1]:
            try:
                loc = builder.absolute(self.location(item))
            except Skip as skip:
                stats.skip(skip.reason)
                continue
            lastmod, changefreq, priority = (
                formatted(name, self._raw_value(item, name), stats.skip) for name in _VALUE_NAMES
            )
            chunk.append((loc, lastmod, changefreq, priority))
            if len(chunk) >= app_settings.CHUNK_SIZE:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


class StaticSource(ItemSource):
    """Named URL patterns (home, about, ...): ``url_names=["home", "about"]``.

    An entry of ``url_names`` is a URL name, or a ``(name, kwargs)`` pair.
    """

    url_names: Sequence[str | tuple[str, Mapping[str, Any]]] = ()

    def items(self) -> Iterable[Any]:
        return list(self.url_names)

    def location(self, item: Any) -> str:
        if isinstance(item, tuple):
            name, kwargs = item
            return reverse(name, kwargs=dict(kwargs))
        return reverse(item)

    def check(self) -> list[checks.CheckMessage]:
        from django.urls import NoReverseMatch

        errors = super().check()
        for item in self.url_names:
            try:
                self.location(item)
            except NoReverseMatch:
                errors.append(
                    checks.Error(
                        f"URL name {item!r} of section {self.section!r} cannot be reversed.",
                        hint="Check the name (and namespace) in your URLconf.",
                        obj=self,
                        id="django_sitemapx.E006",
                    )
                )
        return errors


class ContribSitemapSource(ItemSource):
    """Serves an existing ``django.contrib.sitemaps.Sitemap`` through this app.

    ``register("blog", BlogSitemap)`` wraps it automatically, so a site can move
    section by section. Pages follow the contrib sitemap's own ``items()`` order.
    """

    sitemap: ContribSitemap[Any] | type[ContribSitemap[Any]] | None = None

    def __init__(self, section: str = "", **options: Any) -> None:
        super().__init__(section, **options)
        if isinstance(self.sitemap, type):
            self.sitemap = self.sitemap()
        if self.sitemap is None:
            raise SourceConfigurationError("ContribSitemapSource needs a 'sitemap' option")
        # Options given to register() win over the wrapped sitemap's values.
        if "limit" not in options:
            self.limit = min(int(self.sitemap.limit), PROTOCOL_MAX_URLS)
        if "protocol" not in options:
            self.protocol = self.sitemap.protocol
        for name in ("lastmod", "changefreq", "priority"):
            value = getattr(self.sitemap, name, None)
            if value is not None and name not in options:
                setattr(self, name, value)

    def validate(self) -> None:
        assert self.sitemap is not None and not isinstance(self.sitemap, type)
        if getattr(self.sitemap, "i18n", False) or getattr(self.sitemap, "alternates", False):
            raise SourceConfigurationError(
                f"{type(self.sitemap).__name__} uses i18n/alternates, which "
                "ContribSitemapSource does not serve yet; keep it on django.contrib.sitemaps."
            )
        super().validate()

    def items(self) -> Iterable[Any]:
        assert self.sitemap is not None and not isinstance(self.sitemap, type)
        return self.sitemap.items()

    def location(self, item: Any) -> str:
        assert self.sitemap is not None and not isinstance(self.sitemap, type)
        location = self.sitemap.location
        return str(location(item) if callable(location) else location)


def _latest(values: Iterable[Any]) -> Any:
    latest: Any = None
    latest_key: datetime.datetime | None = None
    tz = timezone.get_default_timezone()
    for value in values:
        if isinstance(value, str):
            try:
                lastmod_text(value)
                value = (
                    datetime.datetime.fromisoformat(value)
                    if "T" in value
                    else (datetime.date.fromisoformat(value))
                )
            except ValueError:
                continue
        if value is None:
            continue
        if isinstance(value, datetime.datetime):
            key = value if timezone.is_aware(value) else value.replace(tzinfo=tz)
        elif isinstance(value, datetime.date):
            key = datetime.datetime.combine(value, datetime.time.min, tzinfo=tz)
        else:
            continue
        if latest_key is None or key > latest_key:
            latest, latest_key = value, key
    return latest
