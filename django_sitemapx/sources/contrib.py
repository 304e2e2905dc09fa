"""``ContribSitemapSource``: an existing ``django.contrib.sitemaps.Sitemap``, served by this app.

The wrapped sitemap makes its own URLs: each page is one call of its
``get_urls(page, site, protocol)``, as contrib's view makes it, so whatever the
sitemap overrides (``items``, ``location``, ``lastmod``, ``get_urls``,
``get_protocol``, ``get_domain``, ``get_languages_for_item``, ``i18n``,
``alternates``, ``x_default``, ``languages``) comes out as contrib writes it.
The index lists the pages of the sitemap's own ``paginator`` with its
``get_latest_lastmod()``, as contrib's index view does. What this app does on
top: values validated and formatted (``values``), URIs checked and encoded
(``LocationBuilder``), ``hreflang`` written in BCP 47 case, empty pages
answered 404.

A sitemap this app cannot serve as it is is refused by ``manage.py check``
(``django_sitemapx.E110``), never at registration, so autodiscovery cannot
stop the start-up; until it is fixed its section is left out of the index and
answers 404.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.paginator import InvalidPage

from .. import conf
from ..conf import PROTOCOL_MAX_URLS
from ..entries import (
    XHTML_NAMESPACE,
    Alternate,
    EntryStream,
    EntryTuple,
    Extras,
    SkipCounter,
)
from ..exceptions import Skip, SkipReason, SourceConfigurationError
from ..locations import LocationBuilder, Origin
from ..locations.origins import scheme_for
from ..values import (
    format_hreflang,
    formatted,
    lastmod_text_or_none,
    latest_lastmod,
    static_value,
)
from .base import Page, PageSummary, Source

if TYPE_CHECKING:
    from django.contrib.sitemaps import Sitemap as ContribSitemap
    from django.core.checks import CheckMessage

logger = logging.getLogger("django_sitemapx")

# Attributes a register() option may set on the wrapped sitemap (contrib's names).
SITEMAP_OPTIONS = ("limit", "protocol", "changefreq", "priority", "lastmod")


class OriginSite:
    """What contrib's ``get_domain(site)`` reads: a site whose domain is the origin's host."""

    def __init__(self, domain: str) -> None:
        self.domain = domain
        self.name = domain

    def __str__(self) -> str:
        return self.domain


class ContribSitemapSource(Source):
    """Serves an existing ``django.contrib.sitemaps.Sitemap`` (class or instance) unchanged.

    ``default_registry.register("blog", BlogSitemap)`` wraps it automatically,
    so a site can move section by section. Options given to ``register()``
    (``limit``, ``protocol``, ``changefreq``, ``priority``, ``lastmod``) win over
    the sitemap's own values. A class is instantiated on first use, not at
    registration; a class that cannot be is reported by ``manage.py check``.
    """

    sitemap: ContribSitemap[Any] | type[ContribSitemap[Any]] | None = None

    def __init__(self, section: str = "", **options: Any) -> None:
        super().__init__(section, **options)
        self._options = {name: options[name] for name in SITEMAP_OPTIONS if name in options}
        self._instance: ContribSitemap[Any] | None = None
        # The sitemap's static values, readable on the source as on any other (the
        # admin shows them); the wrapped sitemap stays what serves them.
        for name in SITEMAP_OPTIONS:
            value = getattr(self.sitemap, name, None)
            if name not in options and value is not None and not callable(value):
                setattr(self, name, value)

    # -- the wrapped sitemap ----------------------------------------------------------

    @property
    def sitemap_name(self) -> str:
        """The user's class name, for messages."""
        sitemap = self.sitemap
        if sitemap is None:
            return "ContribSitemapSource"
        return sitemap.__name__ if isinstance(sitemap, type) else type(sitemap).__name__

    def wrapped(self) -> ContribSitemap[Any]:
        """The sitemap instance, with the register() options applied (a copy of an instance)."""
        if self._instance is None:
            sitemap = self.sitemap
            if sitemap is None:
                raise SourceConfigurationError(
                    f"Section {self.section!r}: ContribSitemapSource needs a 'sitemap' option"
                )
            if isinstance(sitemap, type):
                try:
                    instance = sitemap()
                except Exception as error:
                    raise SourceConfigurationError(
                        f"{sitemap.__name__}() cannot be created without arguments ({error}); "
                        f"register an instance instead: register({self.section!r}, "
                        f"{sitemap.__name__}(...))"
                    ) from error
            else:
                instance = copy.copy(sitemap)  # the options must not change the caller's object
            for name, value in self._options.items():
                setattr(instance, name, value)
            self._instance = instance
        return self._instance

    def problems(self) -> list[str]:
        """What keeps the wrapped sitemap from being served as contrib serves it."""
        try:
            sitemap = self.wrapped()
        except SourceConfigurationError as error:
            return [str(error)]
        name = type(sitemap).__name__
        found = []
        limit = getattr(sitemap, "limit", None)
        if not isinstance(limit, int) or isinstance(limit, bool) or not limit >= 1:
            found.append(f"{name}.limit must be a positive integer, not {limit!r}")
        elif limit > PROTOCOL_MAX_URLS:
            found.append(
                f"{name}.limit is {limit}, over the {PROTOCOL_MAX_URLS} URLs the protocol allows "
                "in one sitemap; set limit to 50000 or less"
            )
        protocol = getattr(sitemap, "protocol", None)
        if protocol not in (None, "http", "https"):
            found.append(f"{name}.protocol must be 'http', 'https' or None, not {protocol!r}")
        for value_name in ("changefreq", "priority", "lastmod"):
            if not callable(getattr(sitemap, value_name, None)):
                try:
                    static_value(sitemap, value_name)
                except SourceConfigurationError as error:
                    found.append(str(error))
        if getattr(sitemap, "i18n", False):
            try:
                languages = sitemap.languages
                if languages is None:
                    languages = [code for code, _ in settings.LANGUAGES]
                codes = list(languages)
                for code in codes:
                    format_hreflang(code)
            except (TypeError, ValueError) as error:
                found.append(f"{name}.languages: {error}")
        return found

    def validate(self) -> None:
        """Nothing at registration: ``manage.py check`` reports problems (E110)."""

    def check(self) -> list[CheckMessage]:
        from django.core import checks

        return [
            checks.Error(
                f"Section {self.section!r}: {problem}.",
                hint=f"Fix {self.sitemap_name}, or pass the value to register(); until then "
                "the section is left out of the sitemap and answers 404.",
                obj=self,
                id="django_sitemapx.E110",
            )
            for problem in self.problems()
        ]

    def _servable(self) -> ContribSitemap[Any] | None:
        problems = self.problems()
        if problems:
            logger.error(
                "Sitemap section %r is not served: %s (see manage.py check).",
                self.section,
                "; ".join(problems),
            )
            return None
        return self.wrapped()

    # -- the Source contract ----------------------------------------------------------

    def get_limit(self) -> int:
        sitemap = self._servable()
        return int(sitemap.limit) if sitemap is not None else PROTOCOL_MAX_URLS

    @property
    def namespaces(self) -> Mapping[str, str]:  # type: ignore[override]
        sitemap = self._servable()
        if sitemap is not None and sitemap.i18n and sitemap.alternates:
            return {"xhtml": XHTML_NAMESPACE}
        return {}

    def scheme(self, default: str) -> str:
        """The scheme of this section's URLs and of the index's links to it.

        As contrib: ``get_protocol()`` given the request's scheme (or
        ``SITEMAPX_PROTOCOL``), which returns the sitemap's ``protocol`` if set.
        """
        sitemap = self._servable()
        fallback = scheme_for(None, default)
        if sitemap is None:
            return fallback
        scheme = sitemap.get_protocol(fallback)
        return scheme if scheme in ("http", "https") else fallback

    def page_summaries(self) -> list[PageSummary]:
        sitemap = self._servable()
        if sitemap is None:
            return []
        paginator = sitemap.paginator
        if paginator.count == 0:
            return []
        latest = lastmod_text_or_none(sitemap.get_latest_lastmod())
        # Row counts by arithmetic: paginator.page(n) would query a queryset once per page.
        per_page, count = paginator.per_page, paginator.count
        return [
            PageSummary(number, min(per_page, count - (number - 1) * per_page), latest)
            for number in paginator.page_range
        ]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        """Page ``number``; its URLs are made again for the origin its entries are written for."""
        sitemap = self._servable()
        if sitemap is None:
            return None
        if summary is None:
            summary = _summary(number, self._urls(sitemap, number, None))
            if summary is None:
                return None
        return Page(
            summary,
            lambda builder: self._entries(self._urls(sitemap, number, builder.origin), builder),
        )

    def page_at(self, number: int, origin: Origin) -> Page | None:
        """Page ``number`` for ``origin``: one ``get_urls()`` gives its summary and entries."""
        sitemap = self._servable()
        if sitemap is None:
            return None
        urls = self._urls(sitemap, number, origin)
        summary = _summary(number, urls)
        if summary is None:
            return None
        return Page(summary, lambda builder: self._entries(urls, builder))

    # -- pages from get_urls() ---------------------------------------------------------

    def _urls(
        self, sitemap: ContribSitemap[Any], number: int, origin: Origin | None
    ) -> list[dict[str, Any]]:
        # Without an origin (the export's summary pass) only the lastmods are read.
        site: Any = OriginSite(origin.host if origin is not None else "example.invalid")
        protocol = origin.scheme if origin is not None else "https"
        try:
            return list(sitemap.get_urls(page=number, site=site, protocol=protocol))
        except InvalidPage:
            return []

    def _entries(self, urls: Iterable[dict[str, Any]], builder: LocationBuilder) -> EntryStream:
        chunk: list[EntryTuple] = []
        skips = SkipCounter()
        count = skips.count
        builders: dict[str, LocationBuilder] = {}

        def absolute(location: str) -> str:
            # get_domain() may name another host than the request's: contrib writes
            # whatever it returns, so the URIs are checked against that host.
            host = location.split("://", 1)[-1].split("/", 1)[0]
            if host not in builders:
                builders[host] = LocationBuilder(Origin(builder.origin.scheme, host))
            return builders[host].absolute(location)

        for url in urls:
            try:
                loc = absolute(str(url["location"]))
            except Skip as skip:
                count(skip.reason)
                continue
            lastmod = formatted("lastmod", url.get("lastmod"), count)
            changefreq = formatted("changefreq", url.get("changefreq") or None, count)
            priority = formatted("priority", url.get("priority") or None, count)
            extras = None
            alternates = []
            for alternate in url.get("alternates") or ():
                try:
                    href = absolute(str(alternate["location"]))
                    hreflang = format_hreflang(str(alternate["lang_code"]))
                except Skip as skip:
                    count(skip.reason)
                    continue
                except ValueError:
                    count(SkipReason.MISSING_VALUE)
                    continue
                alternates.append(Alternate(hreflang, href))
            if alternates:
                extras = Extras(tuple(alternates))
            chunk.append((loc, lastmod, changefreq, priority, extras))
            if len(chunk) >= conf.CHUNK_SIZE:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
        yield from skips.flush()


def _summary(number: int, urls: list[dict[str, Any]]) -> PageSummary | None:
    if not urls:
        return None
    lastmods = [lastmod_text_or_none(url.get("lastmod")) for url in urls]
    dated = [text for text in lastmods if text is not None]
    return PageSummary(number, len(urls), latest_lastmod(dated), undated=len(urls) - len(dated))
