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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from ..conf import (
    PROTOCOL_MAX_BYTES,
    PROTOCOL_MAX_LOC_LENGTH,
    PROTOCOL_MAX_URLS,
    app_settings,
    default_language,
    language_codes,
)
from ..entries import XHTML_NAMESPACE, ChunkStream, EntryStream
from ..exceptions import SourceConfigurationError
from ..extensions.declarations import (
    Related,
    extension_namespaces,
    extension_url_bytes,
    max_urls_per_page,
    validate_extensions,
)
from ..locations.hosts import canonical_host
from ..locations.origins import SiteSelection, parse_sites, scheme_for
from ..values import VALUE_NAMES, format_hreflang, static_value

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from ..locations import LocationBuilder, Origin


def is_overridden(source: object, base: type, name: str) -> bool:
    """Whether ``source`` replaces ``base``'s method ``name``.

    In a subclass, or on the instance (a ``register()`` option of that name).
    """
    return name in vars(source) or getattr(type(source), name) is not getattr(base, name)


@functools.lru_cache(maxsize=256)
def _parsed_sites(sites: tuple[object, ...]) -> SiteSelection:
    return parse_sites(sites)


# -- the worst-case size of one <url>, in bytes (see Source.max_url_bytes) --------

# A <loc> or an href: at most 2,047 characters, each at most six bytes once
# escaped for XML (a "'" is written "&apos;"; anything else non-ASCII is
# percent-encoded, so the text is ASCII).
MAX_ESCAPED_LOCATION_BYTES = PROTOCOL_MAX_LOC_LENGTH * len("&apos;")
# "https://", a DNS name (253 characters at most) and ":65535": the origin part
# of a location, for bounds computed from a path.
MAX_ORIGIN_LENGTH = len("https://") + 253 + len(":65535")
# <url>, its <loc> tags and the three values, each at its longest: lastmod
# text as a source may give it (W3C Datetime with a fraction of a second),
# "monthly", and a priority with three decimals.
URL_VALUES_BYTES = len(
    "<url><loc></loc><lastmod></lastmod><changefreq></changefreq><priority></priority></url>\n"
) + (64 + len("monthly") + len("0.125"))
# One <xhtml:link> less its hreflang and href values, declaring its namespace
# (the longer form the writer has).
ALTERNATE_FRAME_BYTES = len(
    f'<xhtml:link xmlns:xhtml="{XHTML_NAMESPACE}" rel="alternate" hreflang="" href=""/>'
)
# What a page's bytes budget keeps for the XML declaration, the <urlset> tag
# with its namespace declarations, and the closing tag.
DOCUMENT_FRAME_BYTES = 4_096


def escaped_length(text: str) -> int:
    """The length of ASCII ``text`` once escaped for XML as the writer escapes it."""
    return (
        len(text)
        + 4 * text.count("&")
        + 3 * (text.count("<") + text.count(">"))
        + 5 * (text.count("'") + text.count('"'))
    )


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
    response headers; it streams chunks of entries and ``Skipped`` counts.
    """

    summary: PageSummary
    entries: Callable[[LocationBuilder], EntryStream]


@dataclass(frozen=True)
class PlainChunkEntries:
    """A page's ``entries`` whose stream can also give chunks as ``PlainChunk``.

    Called, it streams lists of entries, as any ``entries`` does; :meth:`chunks`
    streams the same entries, where a chunk may come as a ``PlainChunk`` (the
    writer asks for that). ``stream(builder, plain)`` makes either. A page whose
    ``entries`` is replaced (a wrapper) is read through the replacement.
    """

    stream: Callable[[LocationBuilder, bool], ChunkStream]

    def __call__(self, builder: LocationBuilder) -> EntryStream:
        # Not asked for PlainChunks, the stream holds none.
        return cast(EntryStream, self.stream(builder, False))

    def chunks(self, builder: LocationBuilder) -> ChunkStream:
        """The entries, a chunk of plain rows as a ``PlainChunk``."""
        return self.stream(builder, True)


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
    # Extension namespaces the entries use, declared on each page's root (see
    # get_namespaces(), which adds xhtml for alternates itself).
    namespaces: Mapping[str, str] = {}
    changefreq: Any = None
    priority: Any = None
    lastmod: Any = None
    # Multilingual sitemaps, with django.contrib.sitemaps' names and meaning:
    # one <url> per (item, language), located with the language active.
    i18n: bool = False
    languages: Sequence[str] | None = None
    alternates: bool = False
    x_default: bool | str = False
    # A domain per country: language code -> the host its versions are listed on
    # (None: SITEMAPX_LANGUAGE_HOSTS; {}: every language on every host).
    language_hosts: Mapping[str, str] | None = None
    # Image, video and news extensions (see ``extensions.declarations``): a value for
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
    # Whether editors' overrides and rules apply to its entries (not to the removed pages).
    overridable: bool = True

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

    def site_hosts(self) -> list[str]:
        """The hosts this section names as served on: those its ``sites`` option names,
        then its languages' (:meth:`get_language_hosts`). The admin's site choice, the
        inspector and ``sitemap_export --all-sites`` know a site by these
        (``SitemapRegistry.site_hosts``); a source serving hosts of its own (a Wagtail
        ``Site``'s) adds them."""
        selection = self.site_selection()
        hosts = sorted(selection.hosts) if selection is not None else []
        return list(dict.fromkeys([*hosts, *self.get_language_hosts().values()]))

    def generations_name(self) -> str:
        """The name this source's page generations go by (``generations.page_generation``).

        The section's: a page invalidated is rebuilt on every host. A source bound
        to a host whose pages are its own (``WagtailPageSource``) names them per host,
        so invalidating one host's page leaves the other hosts' documents cached.
        """
        return self.section

    def fallback_host(self) -> str | None:
        """The host whose overrides and rules apply where the bound host has none.

        None: a document applies its own host's (and every host's). A source
        whose host is served under another name as well (a Wagtail site reached
        under a host its site is served on) gives that name, so what editors set
        for the site applies wherever it is served.
        """
        return None

    def serves(self, origin: Origin) -> bool:
        """Whether this section is served on ``origin``'s host (its ``sites``).

        With :meth:`get_language_hosts`, a host lists the versions of its own
        languages only: a host no language is listed on serves none.
        """
        selection = self.site_selection()
        if selection is not None and not selection.matches(origin):
            return False
        hosts = self.get_language_hosts()
        if not hosts or len(hosts) < len(self.get_languages()):
            return True  # a language without a host is listed on every host
        return canonical_host(origin.host, origin.scheme) in hosts.values()

    def for_origin(self, origin: Origin) -> Source:
        """This source as served on ``origin``: a copy whose ``origin`` is set.

        The bound origin has this section's scheme (:meth:`scheme`, defaulting
        to ``origin``'s): its URLs, the index's links to it and ``get_queryset()``
        all see the one scheme. The registered instance is shared by every
        request, so it is never changed; the copy is shallow and costs nothing
        per row.
        """
        bound = copy.copy(self)
        scheme = self.scheme(origin.scheme)
        bound.origin = origin if scheme == origin.scheme else replace(origin, scheme=scheme)
        return bound

    def get_limit(self) -> int:
        """The most URLs a page holds: the source's ``limit``, else ``SITEMAPX_LIMIT``.

        A source with news holds at most 1,000 (Google's news sitemap limit).
        """
        limit = self.limit if self.limit is not None else app_settings.LIMIT
        return max_urls_per_page(self, limit)

    def rows_per_page(self) -> int:
        """How many items (rows) one page holds: what the source pages by.

        The one place for a page's capacity: at most :meth:`get_limit` URLs
        (1,000 with news), and at most what the protocol's 50 MB holds when
        every URL takes :meth:`max_url_bytes`. An item gives
        :meth:`urls_per_row` URLs (one per language for ``i18n``). The writer
        skips (and counts) any entry larger than :meth:`max_url_bytes`, so no
        page can overflow and no URL is cut for lack of room.
        """
        # validate() runs at registration, often while the URLconf is still
        # being imported, so nothing here is computed (or reversed) before a
        # document or the index asks. At least one item per page: only an item
        # in some sixty languages of URLs near 2,047 characters overflows 50 MB
        # by itself, and the writer's size backstop then counts what it cuts.
        per_row = self.urls_per_row()
        budget = PROTOCOL_MAX_BYTES - DOCUMENT_FRAME_BYTES
        rows = min(self.get_limit() // per_row, budget // (per_row * self.max_url_bytes()))
        return max(1, rows)

    def max_page_urls(self) -> int:
        """The most ``<url>`` elements one page of this source holds (its rows' URLs)."""
        return min(self.get_limit(), self.rows_per_page() * self.urls_per_row())

    def page_overflowed(
        self,
        number: int,
        urls: int,
        size: int,
        *,
        fitting: Callable[[int], int | None] | None = None,
    ) -> bool:
        """Page ``number`` went over the protocol's 50 MB after ``urls`` URLs (``size`` bytes).

        Called while the page is rendered, before any byte of it was sent.
        ``fitting(n)``, when given, says how many of those URLs fit in ``n``
        bytes, as measured (None if it was not measured that low).
        A source that splits the page there returns True: the page is rendered
        again. The default, for pages sized by :meth:`max_url_bytes` (which
        cannot overflow), returns False: the writer leaves the rest out, counted.
        """
        return False

    def page_built(self, number: int, urls: int, size: int) -> None:
        """Page ``number`` was rendered whole: ``urls`` URLs in ``size`` bytes.

        ``ModelSource`` records large pages' sizes for its page rule.
        """

    def urls_per_row(self) -> int:
        """The most ``<url>`` elements one item gives: its languages with ``i18n``, else 1."""
        return len(self.get_languages()) if self.i18n else 1

    def url_count(self, summary: PageSummary) -> int:
        """The ``<url>`` elements a page of ``summary`` holds: its rows times :meth:`urls_per_row`.

        At most that many: overrides, skipped entries and items listed in some
        languages only (``get_languages_for_item``) give fewer.
        """
        return summary.rows * self.urls_per_row()

    def max_url_bytes(self) -> int:
        """The most bytes one ``<url>`` element of this source takes, XML escaping included.

        The sum of the element's parts, each at its worst case: the frame and
        the three values, the ``<loc>`` (:meth:`max_location_bytes`), the
        alternates (:meth:`max_alternates_bytes`), and the image, video and
        news elements (:meth:`max_extension_bytes`). A source that writes more
        adds its part here. Pages are sized on it (:meth:`rows_per_page`) and
        the writer enforces it per entry: an entry over it is left out and
        counted as ``over_size_limit``.
        """
        parts = [
            URL_VALUES_BYTES,
            self.max_location_bytes(),
            self.max_alternates_bytes(),
            self.max_extension_bytes(),
        ]
        return sum(parts)

    def max_extension_bytes(self) -> int:
        """The most bytes the image, video and news elements of one ``<url>`` take.

        ``max_images`` images and ``max_videos`` videos at their largest, and
        a news element, for what the source declares (0 when it declares none).
        """
        return extension_url_bytes(self)

    def max_location_bytes(self) -> int:
        """The most bytes one escaped location (a ``<loc>`` or an href) takes.

        The protocol's worst case (2,047 characters, each escaped to six
        bytes) unless the source knows better: ``ModelSource`` and
        ``StaticSource`` compute a bound from their URL patterns. Override it
        to declare a smaller bound (larger pages); a location over it is left
        out, counted.
        """
        return MAX_ESCAPED_LOCATION_BYTES

    def max_alternates_bytes(self) -> int:
        """The most bytes the ``<xhtml:link>`` elements of one ``<url>`` take."""
        if not (self.i18n and self.alternates):
            return 0
        codes = self.get_languages()
        x_default = self.x_default_language() is not None or self.has_x_default_per_item
        links = len(codes) + (1 if x_default else 0)
        hreflang = max([len("x-default"), *map(len, codes)])
        return links * (ALTERNATE_FRAME_BYTES + hreflang + self.max_location_bytes())

    # -- languages ------------------------------------------------------------

    def get_languages(self) -> list[str]:
        """The language codes of a multilingual source: ``languages``, else ``LANGUAGES``'."""
        if self.languages is not None:
            return list(self.languages)
        return language_codes()

    def get_language_hosts(self) -> dict[str, str]:
        """Language code to the host its versions are listed on, for the languages that have one.

        ``language_hosts``, else ``SITEMAPX_LANGUAGE_HOSTS``; hosts in their
        canonical form. Empty without ``i18n`` or a mapping: every version is
        listed on the host serving the document, as ``reverse()`` locates it.
        With one, each host lists its own languages' versions, and their
        alternates name the versions on the other hosts the section is served
        on (``sources.languages``); a language with no host stays on every host.
        """
        if not self.i18n:
            return {}
        mapping = self.language_hosts
        if mapping is None:
            mapping = app_settings.LANGUAGE_HOSTS
        if not mapping or not isinstance(mapping, Mapping):
            return {}  # an invalid setting is reported by the checks (E501)
        return {
            code: canonical_host(mapping[code], self.origin.scheme if self.origin else None)
            for code in self.get_languages()
            if isinstance(mapping.get(code), str) and mapping[code]
        }

    def get_languages_for_item(self, item: Any) -> Sequence[str]:
        """The languages ``item`` is listed in: all of :meth:`get_languages` by default.

        Override it to list an item in some languages only; it receives what
        ``lastmod()`` receives (an item, or a ``ModelSource`` row). Codes
        outside :meth:`get_languages` are left out, counted as
        ``unknown_language``.
        """
        return self.get_languages()

    def x_default_language(self) -> str | None:
        """The language whose URL ``x-default`` points to, or None for no ``x-default``.

        ``x_default = True`` means ``LANGUAGE_CODE``; a language code names
        another one. Written only when the item is listed in that language.
        """
        if self.x_default is False:
            return None
        return default_language() if self.x_default is True else self.x_default

    def get_x_default_for_item(self, item: Any) -> str | None:
        """The language whose URL ``x-default`` points to for ``item``, or None for none.

        By default :meth:`x_default_language` for every item. Override it where the
        default language differs per item (an item's own original language); it
        receives what ``get_languages_for_item()`` receives. Written only when the
        item is listed in that language, and only with ``alternates``.
        """
        return self.x_default_language()

    @property
    def has_x_default_per_item(self) -> bool:
        """True when ``get_x_default_for_item`` is overridden (a method or an option)."""
        return is_overridden(self, Source, "get_x_default_for_item")

    @property
    def has_languages_per_item(self) -> bool:
        """True when ``get_languages_for_item`` is overridden (a method or an option)."""
        return is_overridden(self, Source, "get_languages_for_item")

    def get_namespaces(self) -> dict[str, str]:
        """The extension namespaces a page's root declares: ``namespaces``, plus xhtml for
        alternates and image, video and news for what the source declares (and only then)."""
        namespaces = dict(self.namespaces)
        if self.i18n and self.alternates:
            namespaces["xhtml"] = XHTML_NAMESPACE
        namespaces.update(extension_namespaces(self))
        return namespaces

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
        self._validate_languages()
        validate_extensions(self, self._validate_related)

    def _validate_related(self, declaration: Related) -> None:
        raise SourceConfigurationError(
            f"{type(self).__name__}: {declaration!r} reads a related model, which only a "
            "ModelSource has"
        )

    def _validate_languages(self) -> None:
        name = type(self).__name__
        if not self.i18n:
            if self.alternates or self.x_default is not False or self.has_x_default_per_item:
                raise SourceConfigurationError(
                    f"{name} sets alternates or x_default without i18n = True: "
                    "set i18n = True to list the section in every language."
                )
            return
        if (self.x_default is not False or self.has_x_default_per_item) and not self.alternates:
            raise SourceConfigurationError(
                f"{name}.x_default is written with the alternates: set alternates = True."
            )
        codes = self.get_languages()
        if not codes:
            raise SourceConfigurationError(
                f"{name} sets i18n = True but has no language: set languages or LANGUAGES."
            )
        if len(set(codes)) != len(codes):
            raise SourceConfigurationError(f"{name}.languages lists a language twice: {codes}")
        for code in codes:
            try:
                format_hreflang(code)
            except ValueError:
                raise SourceConfigurationError(
                    f"{name}: language {code!r} is not a language tag hreflang accepts"
                ) from None
        x_default = self.x_default_language()
        if x_default is not None and x_default not in codes:
            raise SourceConfigurationError(
                f"{name}.x_default points to {x_default!r}, which is not one of its "
                f"languages {codes}; set x_default to one of them (True means LANGUAGE_CODE)."
            )
        limit = self.limit  # SITEMAPX_LIMIT is the checks' business (E001)
        if isinstance(limit, int) and limit < len(codes):
            raise SourceConfigurationError(
                f"{name}.limit ({limit}) is below its {len(codes)} languages: "
                "a page must hold every language version of an item."
            )

    def check(self) -> list[CheckMessage]:
        """A custom source's own system-check messages (``checks`` has the built-in ones)."""
        return []

    def page_summaries(self) -> list[PageSummary]:
        """Every non-empty page, in order."""
        raise NotImplementedError

    def page_proofs(self) -> dict[int, str]:
        """Page number to a token that changes whenever the page's bytes may change.

        The export rewrites only the pages whose token is not the one it
        recorded (``export.export_sitemap``). A page this leaves out has no
        proof: it is made again and its bytes compared. None has here; a model
        section's come from its page table.
        """
        return {}

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
