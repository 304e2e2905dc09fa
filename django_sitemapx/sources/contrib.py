"""``ContribSitemapSource``: an existing ``django.contrib.sitemaps.Sitemap``, served by this app.

The wrapped sitemap makes its own URLs: each page is one call of its
``get_urls(page, site, protocol)``, as contrib's view makes it, so whatever the
sitemap overrides (``items``, ``location``, ``lastmod``, ``get_urls``,
``get_protocol``, ``get_domain``, ``get_languages_for_item``, ``i18n``,
``alternates``, ``x_default``, ``languages``) comes out as contrib writes it.
The index lists the pages of the sitemap's own ``paginator`` with its
``get_latest_lastmod()``, as contrib's index view does. What this app does on
top: values validated and formatted (``values``), URIs checked and encoded
(``LocationBuilder``) and kept only on hosts the project serves, ``hreflang``
written in BCP 47 case, empty pages answered 404. ``get_urls()`` is given what
contrib's views give it: the ``Site`` (or ``RequestSite``) of the host being
built, and a sitemap that takes a ``request`` gets one for that host
(``OriginRequest``).

A sitemap this app cannot serve as it is is refused by ``manage.py check``
(``django_sitemapx.E110``), never at registration, so autodiscovery cannot
stop the start-up; until it is fixed its section is left out of the index and
answers 404.
"""

from __future__ import annotations

import copy
import inspect
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.conf import settings
from django.core.paginator import InvalidPage
from django.http import HttpRequest
from django.http.request import split_domain_port

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
from ..locations.hosts import canonical_host, checked_host, host_name
from ..locations.origins import scheme_for, served_hosts, uses_sites_framework
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

# The origin of what is built for no host (a summary pass in the admin).
NO_ORIGIN = Origin("https", "example.invalid")

# Attributes a register() option may set on the wrapped sitemap (contrib's names).
SITEMAP_OPTIONS = ("limit", "protocol", "changefreq", "priority", "lastmod")


class OriginRequest(HttpRequest):
    """A GET of the sitemap on ``origin``: the request a sitemap that needs one is given.

    Built for the origin a document is written for, in the view as in the export,
    so a sitemap that finds its site from the request (Wagtail's) lists that
    site's URLs: ``get_host()`` is the origin's host, ``scheme`` its scheme,
    ``get_port()`` its port (the scheme's default when it names none). Its host
    is already validated: it is not checked against ``ALLOWED_HOSTS`` again, so
    an export to a base URL works too.
    """

    def __init__(self, origin: Origin) -> None:
        super().__init__()
        self.origin = origin
        name, port = split_domain_port(origin.host)
        self.method = "GET"
        self.path = self.path_info = "/sitemap.xml"
        self.META.update(
            {
                "REQUEST_METHOD": "GET",
                "PATH_INFO": self.path,
                "HTTP_HOST": origin.host,
                "SERVER_NAME": name or origin.host,
                "SERVER_PORT": port or ("443" if origin.scheme == "https" else "80"),
            }
        )

    def _get_scheme(self) -> str:
        return self.origin.scheme

    def get_host(self) -> str:
        return self.origin.host


def contrib_site(request: OriginRequest) -> Any:
    """The ``site`` contrib's views would give for ``request``: a ``Site`` or a ``RequestSite``.

    The Sites framework's row of the origin (the one being built, by its ID,
    else the one whose domain is the host, else ``SITE_ID``'s when the app
    follows the Sites framework); a ``RequestSite`` named after the host where
    no row fits, as contrib's ``get_current_site()`` gives without the framework.
    """
    from django.contrib.sites.requests import RequestSite

    origin = request.origin
    if apps.is_installed("django.contrib.sites"):
        from django.contrib.sites.models import Site
        from django.contrib.sites.shortcuts import get_current_site

        if origin.site_id is not None:
            site = Site.objects.filter(pk=origin.site_id).first()
            if site is not None:
                return site
        site = Site.objects.filter(domain__iexact=origin.host).first()
        if site is not None:
            return site
        if uses_sites_framework():
            try:
                return get_current_site(request)
            except Site.DoesNotExist:
                pass
    return RequestSite(request)


class ContribSitemapSource(Source):
    """Serves an existing ``django.contrib.sitemaps.Sitemap`` (class or instance) unchanged.

    ``default_registry.register("blog", BlogSitemap)`` wraps it automatically,
    so a site can move section by section. Options given to ``register()``
    (``limit``, ``protocol``, ``changefreq``, ``priority``, ``lastmod``) win over
    the sitemap's own values. A class is instantiated for each document built, as
    contrib's views make one per request (never at registration; a class that
    cannot be is reported by ``manage.py check``); an instance is shared.
    """

    sitemap: ContribSitemap[Any] | type[ContribSitemap[Any]] | None = None

    def __init__(self, section: str = "", **options: Any) -> None:
        super().__init__(section, **options)
        self._options = {name: options[name] for name in SITEMAP_OPTIONS if name in options}
        # A registered instance is copied once (the options must not change the
        # caller's object) and the copy shared by every request, host and copy of
        # this source made by for_origin(), as contrib's views share it.
        self._instance: ContribSitemap[Any] | None = None
        self._built: ContribSitemap[Any] | None = None  # see _servable()
        if self.sitemap is not None and not isinstance(self.sitemap, type):
            self._instance = self._configured(copy.copy(self.sitemap))
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

    def wrapped(self, request: HttpRequest | None = None) -> ContribSitemap[Any]:
        """The sitemap to build one document with, the register() options applied.

        A registered class gives a new instance on each call, as contrib's views
        make one per request: state its ``__init__`` computes ("a week ago") or
        its ``get_urls()`` stores (the site) belongs to one document. A
        constructor that takes ``request`` (Wagtail's ``Sitemap(request)``) is
        given ``request``, the request for the origin being built. A registered
        instance is shared (see ``__init__``).
        """
        if self._instance is not None:
            return self._instance
        sitemap = self.sitemap
        if sitemap is None:
            raise SourceConfigurationError(
                f"Section {self.section!r}: ContribSitemapSource needs a 'sitemap' option"
            )
        if not isinstance(sitemap, type):  # set on the source after its creation
            self._instance = self._configured(copy.copy(sitemap))
            return self._instance
        try:
            takes_request = _takes_request(sitemap)
            instance = sitemap(request=request) if takes_request else sitemap()  # type: ignore[call-arg]
        except Exception as error:
            raise SourceConfigurationError(
                f"{sitemap.__name__}() cannot be created without arguments ({error}); "
                f"register an instance instead: register({self.section!r}, "
                f"{sitemap.__name__}(...))"
            ) from error
        return self._configured(instance)

    def _configured(self, instance: ContribSitemap[Any]) -> ContribSitemap[Any]:
        for name, value in self._options.items():
            setattr(instance, name, value)
        return instance

    def problems(self) -> list[str]:
        """What keeps the wrapped sitemap from being served as contrib serves it."""
        try:
            sitemap = self.wrapped()
        except SourceConfigurationError as error:
            return [str(error)]
        return _problems(sitemap)

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

    def _servable(self, request: OriginRequest | None = None) -> ContribSitemap[Any] | None:
        """A sitemap instance to build one document with, or None (logged) if it has problems.

        A copy bound to a host by ``for_origin()`` (one request, or one host's
        export) makes one instance for that host and keeps it; the registered
        source, shared by every request, keeps none.
        """
        bound = self.origin is not None and request is not None and request.origin == self.origin
        if bound and self._built is not None:
            return self._built
        try:
            sitemap = self.wrapped(request)
            problems = _problems(sitemap)
        except SourceConfigurationError as error:
            problems = [str(error)]
        if problems:
            logger.error(
                "Sitemap section %r is not served: %s (see manage.py check).",
                self.section,
                "; ".join(problems),
            )
            return None
        if bound:
            self._built = sitemap
        return sitemap

    def _request(self, origin: Origin | None = None) -> OriginRequest:
        """The request for ``origin``, else for the origin this copy serves, else a stand-in."""
        return OriginRequest(origin or self.origin or NO_ORIGIN)

    # -- the Source contract ----------------------------------------------------------

    def for_origin(self, origin: Origin) -> Source:
        bound = super().for_origin(origin)
        if isinstance(bound, ContribSitemapSource):
            bound._built = None  # an instance made for another host is not this one's
        return bound

    def get_limit(self) -> int:
        sitemap = self._servable(self._request())
        return int(sitemap.limit) if sitemap is not None else PROTOCOL_MAX_URLS

    @property
    def namespaces(self) -> Mapping[str, str]:  # type: ignore[override]
        sitemap = self._servable(self._request())
        if sitemap is not None and sitemap.i18n and sitemap.alternates:
            return {"xhtml": XHTML_NAMESPACE}
        return {}

    def scheme(self, default: str) -> str:
        """The scheme of this section's URLs and of the index's links to it.

        As contrib: ``get_protocol()`` given the request's scheme (or
        ``SITEMAPX_PROTOCOL``), which returns the sitemap's ``protocol`` if set.
        """
        sitemap = self._servable(self._request())
        fallback = scheme_for(None, default)
        if sitemap is None:
            return fallback
        scheme = sitemap.get_protocol(fallback)
        return scheme if scheme in ("http", "https") else fallback

    def page_summaries(self) -> list[PageSummary]:
        sitemap = self._servable(self._request())
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
        if summary is None:
            summary = _summary(number, self._urls(number, None))
            if summary is None:
                return None
        return Page(
            summary,
            lambda builder: self._entries(self._urls(number, builder.origin), builder),
        )

    def page_at(self, number: int, origin: Origin) -> Page | None:
        """Page ``number`` for ``origin``: one ``get_urls()`` gives its summary and entries."""
        urls = self._urls(number, origin)
        summary = _summary(number, urls)
        if summary is None:
            return None
        return Page(summary, lambda builder: self._entries(urls, builder))

    # -- pages from get_urls() ---------------------------------------------------------

    def _urls(self, number: int, origin: Origin | None) -> list[dict[str, Any]]:
        """``get_urls()`` of page ``number`` as contrib's view calls it for ``origin``.

        A sitemap instance of its own (for a class), given the request for the
        origin if it takes one, and contrib's ``site`` for it (a ``Site`` or a
        ``RequestSite``). Without an origin (a summary pass) only the lastmods are read.
        """
        request = self._request(origin)
        sitemap = self._servable(request)
        if sitemap is None:
            return []
        try:
            return list(
                sitemap.get_urls(
                    page=number, site=contrib_site(request), protocol=request.origin.scheme
                )
            )
        except InvalidPage:
            return []

    def _entries(self, urls: Iterable[dict[str, Any]], builder: LocationBuilder) -> EntryStream:
        chunk: list[EntryTuple] = []
        skips = SkipCounter()
        count = skips.count
        builders: dict[str, LocationBuilder] = {}
        served: set[str] | None = None

        def absolute(location: str) -> str:
            # get_domain() may name another host than the document's, as contrib's
            # sections do for the project's other hosts: such a URL is kept when its
            # host is one the project serves, and checked against that host.
            nonlocal served
            netloc = location.split("://", 1)[-1].split("/", 1)[0]
            host = checked_host(netloc, builder.origin.scheme) if "://" in location else None
            if host is None or host == canonical_host(builder.origin.host, builder.origin.scheme):
                return builder.absolute(location)
            if host not in builders:
                if served is None:
                    served = {canonical_host(name) for name in served_hosts()}
                if host not in served and host_name(host) not in served:
                    raise Skip(SkipReason.OTHER_HOST)
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


def _takes_request(sitemap: type[ContribSitemap[Any]]) -> bool:
    """Whether the sitemap class's constructor takes a ``request`` (Wagtail's does)."""
    try:
        parameters = inspect.signature(sitemap).parameters
    except (TypeError, ValueError):
        return False
    parameter = parameters.get("request")
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def _problems(sitemap: ContribSitemap[Any]) -> list[str]:
    """What keeps ``sitemap`` from being served as contrib serves it."""
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


def _summary(number: int, urls: list[dict[str, Any]]) -> PageSummary | None:
    if not urls:
        return None
    lastmods = [lastmod_text_or_none(url.get("lastmod")) for url in urls]
    dated = [text for text in lastmods if text is not None]
    return PageSummary(number, len(urls), latest_lastmod(dated), undated=len(urls) - len(dated))
