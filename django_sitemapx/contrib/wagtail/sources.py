"""``WagtailPageSource``: a Wagtail site's live, public pages, streamed from rows.

Registered once, the section is served on every Wagtail ``Site``'s host, each
host listing its own site's pages (its page table is the host's own, see
``sources.pages.table_section``). A page's URL is computed from its
``url_path`` as Wagtail computes it (the site's root path stripped, the
prefix where ``wagtail.urls`` is included, a trailing slash per
``WAGTAIL_APPEND_SLASH``), in bulk: no ``.specific`` and no query per page.
Page types that change how their URLs are made (``get_sitemap_urls()``,
``get_url_parts()`` or ``get_full_url()`` overridden) are loaded in bulk, one
query per type and document, and asked for their URLs.

Wagtail is imported only when a source is used, so this module imports
without it.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import inspect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.db import connections, models, router
from django.db.models import Func, Q, signals
from django.db.models.base import ModelState
from django.db.models.expressions import RawSQL
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils import timezone, translation

from ... import conf
from ...conf import PROTOCOL_MAX_LOC_LENGTH
from ...entries import (
    XHTML_NAMESPACE,
    ChunkStream,
    EntryTuple,
    Extras,
    RenderedChunk,
    SkipCounter,
)
from ...exceptions import Skip, SkipReason, SourceConfigurationError
from ...locations.hosts import canonical_host, host_name
from ...sources import ModelSource, Page, PageSummary
from ...sources.base import ALTERNATE_FRAME_BYTES, PlainChunkEntries
from ...sources.lastmods import is_postgresql, lastmod_in_sql
from ...sources.pages import host_section
from ...sources.rows import native_timestamps, row_batches
from ...sources.summaries import in_range
from ...values import checked_reader, format_hreflang, formatted, static_value
from ...writer import (
    declared_prefixes,
    has_illegal_xml_chars,
    needs_escape,
    url_elements,
    url_template,
)
from .sites import site_host

if TYPE_CHECKING:
    from django.core.checks import CheckMessage

    from ...locations import LocationBuilder, Origin

# What an ASCII slug's path is made of: written into a URI as it is.
_PLAIN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_/"
# A row's versions, all of plain characters (their separator too): one match for the
# set, where str.strip(_PLAIN) scans the 65 characters for each of a string's.
_plain = re.compile(r"[a-zA-Z0-9_/\x1f-]*").fullmatch
MAX_URI = PROTOCOL_MAX_LOC_LENGTH

# The methods whose override makes a page type's URLs its own business.
URL_METHODS = ("get_sitemap_urls", "get_url_parts", "get_full_url")
# The row a page is read as: its key, then what its URLs are made of.
ROW_FIELDS = ("id", "url_path", "content_type_id", "translation_key")
# What joins a row's listed versions (its translations and itself), read in SQL: a
# control character, which no URI holds.
SEPARATOR = "\x1f"
# The most entries a chunk holds (the rows are still read 2,000 at a time). Entries with
# alternates are objects the garbage collector tracks; a 2,000-entry chunk outlived two
# young collections before the writer had it, and what they promoted set off one or two
# full collections per document, each over the whole process (140,000 objects with
# Django and Wagtail loaded, 60 to 130 ms). A chunk this size is written before it ages.
ENTRIES_PER_CHUNK = 256
# The most locales whose versions are read as a column each (``_Locator.versioned_rows``).
MAX_LOCALE_COLUMNS = 16
# A page holding at least this share of its site's listed rows joins its rows to the
# site's pages of each locale, which PostgreSQL may hash whole (``_Locator.versioned_rows``);
# a smaller page looks its keys up: hashing the tree would cost what the site holds. A
# full page of a 200,000-page site (24.5%) took 0.26 to 0.37 s joined, 0.33 to 0.66 by keys.
WHOLE_TREE_SHARE = 0.2


def i18n_enabled() -> bool:
    """Wagtail's ``WAGTAIL_I18N_ENABLED`` (Wagtail's setting, read as Wagtail reads it)."""
    return bool(getattr(settings, "WAGTAIL_I18N_ENABLED", False))


def append_slash() -> bool:
    """Wagtail's ``WAGTAIL_APPEND_SLASH`` (default True)."""
    return bool(getattr(settings, "WAGTAIL_APPEND_SLASH", True))


def page_model() -> type[models.Model]:
    """Wagtail's ``Page`` model."""
    from wagtail.models import Page as WagtailPage

    model: type[models.Model] = WagtailPage
    return model


@dataclass(frozen=True)
class Root:
    """One root a site's URLs are made from: a locale's version of its home page."""

    path: str  # the tree path (treebeard): its descendants' paths start with it
    url_path: str  # Wagtail's url_path, stripped from its pages' url_paths
    language: str  # the locale's language code
    prefix: str  # where wagtail_serve is routed, in that language ("/", "/fr/")


@dataclass(frozen=True)
class SiteTree:
    """The pages a Wagtail ``Site`` serves: its roots, less the subtrees of nested sites."""

    site_id: int
    hostname: str
    port: int
    roots: tuple[Root, ...]
    nested: tuple[str, ...]  # tree paths of other sites' roots inside this one
    slash: bool = True  # WAGTAIL_APPEND_SLASH when the tree was read
    site: Any = dataclasses.field(default=None, compare=False, repr=False)  # Site read from

    def root_of(self, url_path: str) -> Root | None:
        """The most specific root ``url_path`` lies under (as Wagtail picks it)."""
        for root in self.roots:  # longest url_path first
            if url_path.startswith(root.url_path):
                return root
        return None

    def holds(self, path: str) -> bool:
        """Whether the page at tree path ``path`` is in this site's trees."""
        roots = tuple(root.path for root in self.roots)
        return path.startswith(roots) and not (self.nested and path.startswith(self.nested))

    def location(self, url_path: str) -> str | None:
        """The path Wagtail serves the page of ``url_path`` at, or None off this site."""
        root = self.root_of(url_path)
        if root is None:
            return None
        path = root.prefix + url_path[len(root.url_path) :]
        if not self.slash and path != "/":
            path = path.rstrip("/")
        return path


def _serve_prefix(language: str | None) -> str:
    """Where ``wagtail_serve`` is routed (``reverse`` of the empty page path)."""
    if language is None:
        return reverse("wagtail_serve", args=("",))
    with translation.override(language):
        return reverse("wagtail_serve", args=("",))


def site_for_host(host: str, scheme: str) -> Any:
    """The Wagtail ``Site`` serving ``host`` (``name[:port]``) as Wagtail matches it, or None.

    Hostname and port first, then the hostname, then the default site, as
    ``Site.find_for_request`` decides (``wagtail.models.sites.get_site_for_hostname``).
    """
    from wagtail.models import Site
    from wagtail.models.sites import get_site_for_hostname

    name = host_name(host)
    _, _, port_text = host.rpartition(":") if host.count(":") == 1 else ("", "", "")
    port = int(port_text) if port_text.isdigit() else (443 if scheme == "https" else 80)
    try:
        return get_site_for_hostname(name, port)
    except Site.DoesNotExist:
        return None


def site_tree(site: Any) -> SiteTree:
    """``site``'s roots (every locale's home page with Wagtail's i18n on) and nested sites."""
    from wagtail.models import Site

    Page = page_model()
    home = site.root_page
    rows: list[tuple[str, str, str]]
    if i18n_enabled():
        rows = list(
            Page._default_manager.filter(translation_key=home.translation_key, depth=home.depth)
            .order_by("path")
            .values_list("path", "url_path", "locale__language_code")
        )
    else:
        rows = [(home.path, home.url_path, home.locale.language_code)]
    roots = []
    for path, url_path, language in rows:
        try:
            prefix = _serve_prefix(language if i18n_enabled() else None)
        except NoReverseMatch:  # Wagtail headless: no page has a URL
            continue
        roots.append(Root(path, url_path, language, prefix))
    roots.sort(key=lambda root: len(root.url_path), reverse=True)
    others = (
        Site.objects.exclude(pk=site.pk)
        .values_list("root_page__path", flat=True)
        .order_by("root_page__path")
    )
    nested = tuple(
        path
        for path in others
        if any(path.startswith(root.path) and path != root.path for root in roots)
    )
    return SiteTree(
        site.pk, site.hostname, site.port, tuple(roots), nested, slash=append_slash(), site=site
    )


def restricted_paths() -> tuple[str, ...]:
    """The tree paths of pages under a view restriction: their subtrees are not public.

    None before Wagtail's tables are migrated: ``migrate``'s own system checks build
    the section's query on an empty database.
    """
    from wagtail.models import PageViewRestriction

    from ...models import table_exists

    if not table_exists(PageViewRestriction, router.db_for_read(PageViewRestriction)):
        return ()
    return tuple(sorted(set(PageViewRestriction.objects.values_list("page__path", flat=True))))


@functools.lru_cache(maxsize=64)
def _overrides_urls(model: type[models.Model]) -> bool:
    base = page_model()
    return any(getattr(model, name) is not getattr(base, name) for name in URL_METHODS)


def url_types() -> dict[int, type[models.Model]]:
    """Content type ID of each page type that makes its own URLs, and its model."""
    from django.contrib.contenttypes.models import ContentType
    from wagtail.models import get_page_models

    found = [model for model in get_page_models() if _overrides_urls(model)]
    types = ContentType.objects.get_for_models(*found) if found else {}
    return {content_type.pk: model for model, content_type in types.items()}


class WagtailPageSource(ModelSource):
    """A Wagtail site's live, public pages: register it once, each site's host lists its own.

    Listed: live pages, not expired (nor past ``expire_at``), under no view
    restriction, in the tree of the ``Site`` serving the request's host (every
    locale's tree with ``WAGTAIL_I18N_ENABLED``), less the trees of sites
    nested in it. ``lastmod`` is ``last_published_at``. With Wagtail's
    internationalisation on, each translation is a ``<url>`` with its
    translations as hreflang alternates (``alternates``), and ``x-default``
    pointing at the default locale's version (``x_default_locale``).

    A page type overriding ``get_sitemap_urls()`` (or ``get_url_parts()``,
    ``get_full_url()``) is asked for its URLs, read in bulk per type; it may
    give none, or up to ``max_urls_per_page`` (more are skipped, counted).
    """

    lastmod_field = "last_published_at"
    # Wagtail's own events invalidate (``handlers``): a draft saved is no change.
    model_signals = False
    fields = ROW_FIELDS[1:]
    # Alternates and x-default of translations (Wagtail's i18n only).
    hreflang: bool = True
    x_default_locale: bool = True
    # The most URLs one page's get_sitemap_urls() gives: pages are sized for it.
    max_urls_per_page: int = 1
    # The longest location, escaped (bytes): Wagtail's url_path has no bound, and pages
    # are sized for the longest. A longer URL is left out and counted (logged).
    max_location_length: int = 2_000

    def __init__(
        self, section: str = "", model: type[models.Model] | None = None, **options: Any
    ) -> None:
        super().__init__(section, model or page_model(), **options)

    # -- which site ---------------------------------------------------------------------

    def for_origin(self, origin: Origin) -> WagtailPageSource:
        bound = super().for_origin(origin)
        assert isinstance(bound, WagtailPageSource)
        assert bound.origin is not None
        site = site_for_host(bound.origin.host, bound.origin.scheme)
        bound.__dict__["_tree"] = site_tree(site) if site is not None else None
        return bound

    @property
    def tree(self) -> SiteTree | None:
        """The bound host's site tree; None unbound, or where no Wagtail site serves the host."""
        return self.__dict__.get("_tree")

    def generations_name(self) -> str:
        """Per host once bound: each host's pages are its own (``sources.pages.table_section``)."""
        if self.origin is None:
            return self.section
        return host_section(self.section, self.origin.host)

    def fallback_host(self) -> str | None:
        """The site's own host, where the bound host is another name Wagtail serves it on
        (the default site's, for a host no site has; a hostname's at another port): the
        overrides set for the site's pages apply wherever it is served."""
        tree = self.tree
        if tree is None or self.origin is None:
            return None
        own = site_host(tree.hostname, tree.port)
        return own if own != canonical_host(self.origin.host, self.origin.scheme) else None

    def site_hosts(self) -> list[str]:
        """The hosts its options name, then each Wagtail ``Site``'s, as Wagtail spells it
        (:func:`.sites.site_host`): the sites the admin offers to browse, and the inspector
        and ``sitemap_export --all-sites`` know. Only the options' before Wagtail's tables
        are migrated."""
        from wagtail.models import Site

        from ...models import table_exists

        if not table_exists(Site, router.db_for_read(Site)):
            return super().site_hosts()
        sites = Site.objects.order_by("pk").values_list("hostname", "port")
        return list(
            dict.fromkeys(
                [*super().site_hosts(), *(site_host(name, port) for name, port in sites)]
            )
        )

    @property
    def restricted(self) -> tuple[str, ...]:
        """:func:`restricted_paths`, read once for a bound source (as its ``tree`` is)."""
        found: tuple[str, ...] | None = self.__dict__.get("_restricted")
        if found is None:
            found = restricted_paths()
            if self.origin is not None:  # the registered source is shared: never kept there
                self.__dict__["_restricted"] = found
        return found

    def serves(self, origin: Origin) -> bool:
        """Served where a Wagtail ``Site`` matches the host (the default site matches any)."""
        return super().serves(origin) and site_for_host(origin.host, origin.scheme) is not None

    # -- rows ---------------------------------------------------------------------------

    def get_queryset(self) -> models.QuerySet[Any]:
        """Live, unexpired, unrestricted pages; of the bound host's site when bound."""
        now = timezone.now()
        queryset = (
            page_model()
            ._default_manager.filter(live=True, expired=False, depth__gt=1)
            .filter(Q(expire_at__isnull=True) | Q(expire_at__gt=now))
        )
        for path in self.restricted:
            queryset = queryset.exclude(path__startswith=path)
        if self.origin is None:
            return queryset
        tree = self.tree
        if tree is None or not tree.roots:
            # No page (depth 0 is no page's), in SQL the page table can read: none() has none.
            return queryset.filter(depth=0)
        under = Q()
        for root in tree.roots:
            under |= Q(path__startswith=root.path)
        queryset = queryset.filter(under)
        for path in tree.nested:
            queryset = queryset.exclude(path__startswith=path)
        return queryset

    def location(self, row: Any) -> str:
        """The path of a page row on the bound host (``Skip`` off it, or unbound)."""
        tree = self.tree
        found = tree.location(row.url_path) if tree is not None else None
        if found is None:
            raise Skip(SkipReason.NO_REVERSE_MATCH)
        return found

    # -- page sizing --------------------------------------------------------------------

    def max_location_bytes(self) -> int:
        return min(self.max_location_length, super().max_location_bytes())

    def urls_per_row(self) -> int:
        return max(1, self.max_urls_per_page)

    def translated(self) -> bool:
        """Whether URLs carry their translations as alternates."""
        return self.hreflang and i18n_enabled()

    def get_namespaces(self) -> dict[str, str]:
        namespaces = super().get_namespaces()
        if self.translated():
            namespaces["xhtml"] = XHTML_NAMESPACE
        return namespaces

    def max_alternates_bytes(self) -> int:
        if not self.translated():
            return 0
        codes = [code for code, _name in getattr(settings, "WAGTAIL_CONTENT_LANGUAGES", [])]
        codes = codes or [code for code, _name in settings.LANGUAGES]
        links = len(codes) + 1
        hreflang = max([len("x-default"), *map(len, codes)])
        return links * (ALTERNATE_FRAME_BYTES + hreflang + self.max_location_bytes())

    def validate(self) -> None:
        super().validate()
        if not isinstance(self.max_location_length, int) or self.max_location_length < 1:
            raise SourceConfigurationError(
                f"{type(self).__name__}.max_location_length must be a positive integer, "
                f"not {self.max_location_length!r}"
            )
        if not isinstance(self.max_urls_per_page, int) or self.max_urls_per_page < 1:
            raise SourceConfigurationError(
                f"{type(self).__name__}.max_urls_per_page must be a positive integer, "
                f"not {self.max_urls_per_page!r}"
            )

    def check(self) -> list[CheckMessage]:
        """W402: registered without the app that connects Wagtail's page events."""
        if apps.is_installed("django_sitemapx.contrib.wagtail"):
            return []
        return [
            checks.Warning(
                f"Section {self.section!r} lists Wagtail pages but "
                "django_sitemapx.contrib.wagtail is not in INSTALLED_APPS: publishing, "
                "moving or deleting a page invalidates nothing.",
                hint="Add 'django_sitemapx.contrib.wagtail' to INSTALLED_APPS.",
                obj=self,
                id="django_sitemapx.W402",
            )
        ]

    # -- pages --------------------------------------------------------------------------

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        table = self.page_table()
        states = table.states(set() if summary is not None else {number})
        found = table.bounds(states, number)
        if found is None:
            return None
        state, bounds = found
        if summary is None:
            if not state.rows:
                return None
            summary = PageSummary(number, state.rows, state.lastmod, state.undated)
        rows = in_range(self, self.listed_rows(), bounds)
        whole_tree = summary.rows >= WHOLE_TREE_SHARE * sum(other.rows for other in states)
        return Page(summary, PlainChunkEntries(functools.partial(self.entries, rows, whole_tree)))

    def entries(
        self,
        page_rows: models.QuerySet[Any],
        whole_tree: bool,
        builder: LocationBuilder,
        plain: bool = False,
    ) -> ChunkStream:
        """The entries of ``page_rows``, chunk by chunk, each followed by what it skipped.

        ``whole_tree``: whether the page holds enough of its site's rows that its
        translations' versions are read by joining the site's pages of each locale
        (see ``_Locator.versioned_rows``).
        """
        tree = self.tree
        if tree is None:
            return
        skipped = SkipCounter()
        writer = _Locator(self, tree, builder)
        # On PostgreSQL each row comes with its translations' versions (``_Locator.versions``);
        # elsewhere they are read per batch (``_Locator.alternates``).
        in_sql = self.translated() and writer.versions_in_sql(page_rows.db)
        queryset = self.rows_queryset(page_rows, named=False, fields=ROW_FIELDS).order_by("pk")
        index = len(ROW_FIELDS)
        lastmod_sql = lastmod_in_sql(self, queryset.db)
        if lastmod_sql:
            lastmod_of: Any = lambda row: row[index]  # noqa: E731 - already W3C text
        else:
            lastmod_of = checked_reader(lambda row: row[index], "lastmod", skipped.count)
        changefreq = static_value(self, "changefreq")
        priority = static_value(self, "priority")
        specific = url_types()
        own_urls = (
            _OwnUrls(writer, skipped, self.max_urls_per_page, specific, page_rows)
            if specific
            else None
        )
        uri = writer.locate if in_sql else writer.uri
        # Asked for chunks the writer takes as they are (``PlainChunkEntries.chunks``),
        # rows with their versions and W3C lastmods are written here from templates.
        templates = (
            _Templates(writer, changefreq, priority, declared_prefixes(self.get_namespaces()))
            if plain and in_sql and lastmod_sql
            else None
        )
        extras_of: Callable[[Any], Extras | None]
        batches = (
            writer.versioned_rows(queryset, page_rows, conf.CHUNK_SIZE, whole_tree=whole_tree)
            if in_sql
            else row_batches(queryset, conf.CHUNK_SIZE)
        )
        try:
            for batch in batches:
                writer.memo = {}
                if in_sql:
                    extras_of = writer.shared_extras
                elif self.translated():
                    extras_of = writer.extras_of(writer.alternates(batch))
                else:
                    extras_of = _no_extras
                own = {}
                if own_urls is not None and any(row[2] in specific for row in batch):
                    own = own_urls.of(batch, lastmod_of)
                if templates is not None:
                    yield templates.chunk(batch, own, specific, skipped)
                    yield from skipped.flush()
                    continue
                if in_sql and lastmod_sql:
                    yield from writer.versioned_entries(
                        batch, own, specific, changefreq, priority, skipped
                    )
                    yield from skipped.flush()
                    continue
                chunk: list[EntryTuple] = []
                for row in batch:
                    if len(chunk) >= ENTRIES_PER_CHUNK:
                        yield chunk
                        chunk = []
                    key, url_path, content_type, translations = row[:4]
                    if content_type in specific:
                        for own_loc, lastmod, freq, prio in own.get(key, ()):
                            chunk.append(
                                (own_loc, lastmod, freq or changefreq, prio or priority, None)
                            )
                        continue
                    loc = uri(url_path, skipped)
                    if loc is not None:
                        extra = extras_of(translations)
                        chunk.append((loc, lastmod_of(row), changefreq, priority, extra))
                if chunk:
                    yield chunk
                yield from skipped.flush()
        finally:
            if own_urls is not None:
                own_urls.close()


class _Templates:
    """The ``<url>`` elements of a document's rows (``_Locator.versioned_rows``), written
    from the writer's templates (``writer.url_template``), one per shape of row.

    A shape is the roots a row's versions are under, in the order the row lists
    them: rows of one shape have their alternates' hreflangs in one order, so
    their elements differ only by the row's URI, its lastmod and its versions'
    URIs. A row of plain versions (an ASCII slug's) whose shape is known is one
    f-string; any other row is written as ``versioned_entries()`` and
    ``url_elements()`` write it, so a chunk is the bytes its entries would give.
    """

    def __init__(
        self,
        locator: _Locator,
        changefreq: str | None,
        priority: str | None,
        declared: frozenset[str],
    ) -> None:
        self.locator = locator
        self.changefreq = changefreq
        self.priority = priority
        self.declared = declared
        # A row with no alternate: its URI, then its lastmod.
        self.alone = url_template(changefreq, priority, declared=declared)
        self.shapes: dict[tuple[str, ...], _Shape | None] = {}
        # Rows of plain versions whose own version gives their URI (``located_links``).
        self.fast = locator.own_in_links and locator.plain_room > 0

    def shape(self, heads: tuple[str, ...]) -> _Shape | None:
        """The shape of a row whose versions are under the roots of ``heads`` (each a
        version's first ``cut`` characters); None when it has none (an unknown root,
        two versions of one hreflang, two of the default locale: sorted by URI)."""
        if heads in self.shapes:
            return self.shapes[heads]
        roots = self.locator.links_by_root
        parts = [roots.get(head) for head in heads]
        shape = None
        hreflangs = [part[2] for part in parts if part is not None]
        defaults = [index for index, part in enumerate(parts) if part is not None and part[4]]
        if (
            len(hreflangs) == len(parts) > 1
            and len(set(hreflangs)) == len(parts)
            and (len(defaults) <= 1)
        ):
            order = sorted(range(len(parts)), key=hreflangs.__getitem__)
            written = [hreflangs[index] for index in order]
            if defaults:
                order.append(defaults[0])
                written.append("x-default")
            shape = _Shape(
                tuple(part[0] for part in parts if part is not None),
                tuple(part[1] for part in parts if part is not None),
                tuple(part[3] for part in parts if part is not None),
                tuple(order),
                url_template(self.changefreq, self.priority, written, declared=self.declared),
            )
        self.shapes[heads] = shape
        return shape

    def chunk(
        self,
        batch: Sequence[tuple[Any, ...]],
        own: dict[Any, list[tuple[str, str | None, str | None, str | None]]],
        specific: dict[int, type[models.Model]],
        skipped: SkipCounter,
    ) -> RenderedChunk:
        """The elements of a batch of rows, as one chunk (see :class:`_Templates`)."""
        locator = self.locator
        changefreq, priority = self.changefreq, self.priority
        cut = locator.cut
        room = locator.plain_room if self.fast else -1
        locate = locator.locate
        shape_of = self.shape
        # The two-version shape of the row before (``_Shape.two``): most rows share it.
        last: tuple[Any, ...] | None = None
        alone_head, alone_middle, alone_tail = self.alone
        # The URLs the pages of specific types make, written by the writer in one call.
        owned: list[EntryTuple] = []
        for row in batch:
            if row[2] in specific:
                for own_loc, own_lastmod, freq, prio in own.get(row[0], ()):
                    owned.append(
                        (own_loc, own_lastmod, freq or changefreq, prio or priority, None)
                    )
        owned_elements = iter(url_elements(owned, declared=self.declared))
        elements: list[str] = []
        append = elements.append
        # Elements not made of plain values, checked for characters XML forbids.
        unproven: list[str] = []
        for row in batch:
            key, url_path, content_type, versions, lastmod = row
            if content_type in specific:
                for _url in own.get(key, ()):
                    unproven.append(next(owned_elements))
                    append(unproven[-1])
                continue
            if lastmod is not None:
                if SEPARATOR not in versions:
                    loc = locate(url_path, skipped)
                    if loc is None:
                        continue
                    if not needs_escape(loc):
                        unproven.append(f"{alone_head}{loc}{alone_middle}{lastmod}{alone_tail}")
                        append(unproven[-1])
                        continue
                elif len(versions) <= room and _plain(versions) is not None:
                    parts = versions.split(SEPARATOR)
                    if len(parts) == 2:  # a site in two languages: no call, no list
                        a, b = parts
                        two = last
                        if two is None or not a.startswith(two[0]) or not b.startswith(two[1]):
                            shape = shape_of((a[:cut], b[:cut]))
                            two = shape.two if shape is not None else None
                            if two is not None and a.startswith(two[0]) and b.startswith(two[1]):
                                last = two
                            else:
                                two = None
                        if two is not None:
                            _a, _b, start_a, start_b, base_a, base_b, a_first, a_default = two[:8]
                            uri_a = base_a + a[start_a:]
                            uri_b = base_b + b[start_b:]
                            own_length = cut + len(url_path)
                            if len(a) == own_length and a.endswith(url_path):
                                loc = uri_a
                            elif len(b) == own_length and b.endswith(url_path):
                                loc = uri_b
                            else:
                                loc = None
                            if loc is not None:
                                first, second = (uri_a, uri_b) if a_first else (uri_b, uri_a)
                                l0, l1, l2, l3, l4, l5 = two[8:]
                                if a_default is None:
                                    append(f"{l0}{loc}{l1}{lastmod}{l2}{first}{l3}{second}{l4}")
                                else:
                                    default = uri_a if a_default else uri_b
                                    append(
                                        f"{l0}{loc}{l1}{lastmod}{l2}{first}{l3}{second}"
                                        f"{l4}{default}{l5}"
                                    )
                                continue
                    else:
                        shape = shape_of(tuple([part[:cut] for part in parts]))
                        if shape is not None:
                            element = shape.element(parts, url_path, cut, lastmod)
                            if element is not None:
                                append(element)
                                continue
            for entries in locator.versioned_entries(
                [row], own, specific, changefreq, priority, skipped
            ):
                for element in url_elements(entries, declared=self.declared):
                    unproven.append(element)
                    append(element)
        legal = not unproven or not has_illegal_xml_chars("".join(unproven))

        def make_entries() -> list[EntryTuple]:
            chunks = locator.versioned_entries(
                batch, own, specific, changefreq, priority, SkipCounter()
            )
            return [entry for entries in chunks for entry in entries]

        return RenderedChunk(elements, make_entries, self.declared, legal)


@dataclass(frozen=True)
class _Shape:
    """The roots of a row's versions, in the row's order (``_Templates.shape``): what
    each version must start with, where its path below its root starts, the start of
    its URI; the versions in the order their links are written (x-default's last);
    and the element's literals."""

    heads: tuple[str, ...]
    starts: tuple[int, ...]
    bases: tuple[str, ...]
    order: tuple[int, ...]
    literals: tuple[str, ...]

    @functools.cached_property
    def two(self) -> tuple[Any, ...] | None:
        """A shape of two versions as one tuple, read by ``_Templates.chunk`` for each row:
        their heads, starts and bases; whether the first is written first; whether
        x-default is the first (None: no x-default); the six literals (the last
        empty without x-default)."""
        if len(self.heads) != 2:
            return None
        default = None if len(self.order) == 2 else self.order[2] == 0
        literals = (*self.literals, "") if default is None else self.literals
        return (*self.heads, *self.starts, *self.bases, self.order[0] == 0, default, *literals)

    def element(self, parts: list[str], url_path: str, cut: int, lastmod: str) -> str | None:
        """The ``<url>`` of the row at ``url_path`` whose versions are ``parts`` (plain,
        of this shape); None when one is not under its root's ``url_path`` or none is
        the row's own. Two versions are written by ``_Templates.chunk`` itself (``two``)."""
        uris = []
        loc = None
        for part, head, start, base in zip(
            parts, self.heads, self.starts, self.bases, strict=True
        ):
            if not part.startswith(head):
                return None
            uri = base + part[start:]
            if part[cut:] == url_path:
                loc = uri
            uris.append(uri)
        if loc is None:
            return None
        literals = self.literals
        values = [loc, lastmod, *[uris[index] for index in self.order]]
        return literals[0] + "".join(
            value + literal for value, literal in zip(values, literals[1:], strict=True)
        )


def _no_extras(key: Any) -> None:
    return None


class _AmongKeys(Func):
    """``column = ANY(ARRAY(subquery))`` (PostgreSQL): the versions of a page's keys.

    ``column IN (subquery)`` is a semi-join, which PostgreSQL hashed against a
    sequential scan of the site's pages on every document, misjudging how many rows
    a page keeps (its key range and its site's tree paths taken as independent):
    a page's cost grew with the site's, the versions of a last page's 1,002 rows
    read from 50,000 pages. An array is looked up in Wagtail's ``(translation_key,
    locale)`` index: a page's versions cost what the page holds. PostgreSQL takes
    such an array for ten keys whatever its length; the join of the versions to
    the rows is written so that this cannot choose its plan (``versioned_rows``).
    """

    output_field = models.BooleanField()
    arity = 2

    def as_sql(  # type: ignore[override]
        self, compiler: Any, connection: Any, **extra: Any
    ) -> tuple[str, list[Any]]:
        column, keys = self.get_source_expressions()
        column_sql, column_params = compiler.compile(column)
        keys_sql, keys_params = compiler.compile(keys)  # parenthesized: "(SELECT ...)"
        return f"{column_sql} = ANY(ARRAY{keys_sql})", [*column_params, *keys_params]


class _Locator:
    """Absolute URIs of page rows on one host, and their translations' alternates."""

    def __init__(self, source: WagtailPageSource, tree: SiteTree, builder: LocationBuilder):
        self.source = source
        self.tree = tree
        self.builder = builder
        self.hreflangs = {root.url_path: format_hreflang(root.language) for root in tree.roots}
        default = _default_language() if source.x_default_locale else None
        self.default = format_hreflang(default) if default is not None else None
        self.restricted = source.restricted
        # URIs of the batch being written, by url_path (its rows and their translations).
        self.memo: dict[str, str] = {}
        # A site's roots are the versions of one home page, at one depth: the first
        # ``cut`` characters of a page's tree path name its root.
        lengths = {len(root.path) for root in tree.roots}
        self.cut = lengths.pop() if len(lengths) == 1 else 0
        # Each root by its tree path: the root, its hreflang, the start of the URIs of
        # its pages (None without WAGTAIL_APPEND_SLASH: href() strips the slash), and
        # where a version's path below the root starts.
        self.bases = {
            root.path: (
                root,
                self.hreflangs[root.url_path],
                builder.prefix + root.prefix if tree.slash else None,
                self.cut + len(root.url_path),
            )
            for root in tree.roots
        }
        self.starts = [(root, self.bases[root.path][2]) for root in tree.roots]
        # What links() needs of each root, resolved once for the document: the head
        # of its versions (its tree path, then its url_path), where a version's path
        # below it starts, its hreflang, the start of its pages' URIs and whether it
        # is the default locale's (x-default).
        self.links_by_root = {
            path: (
                root.path + root.url_path,
                start,
                hreflang,
                uri_base or "",  # only read for plain versions, with WAGTAIL_APPEND_SLASH
                hreflang == self.default,
            )
            for path, (root, hreflang, uri_base, start) in self.bases.items()
        }
        # Whether a page's root by its tree path is always the one root_of() finds by
        # its url_path: no root's url_path starts another's.
        self.own_in_links = not any(
            other is not root and other.url_path.startswith(root.url_path)
            for root in tree.roots
            for other in tree.roots
        )
        # Versions of plain characters no longer than this make URIs of at most
        # MAX_URI characters (none without WAGTAIL_APPEND_SLASH: href() strips it).
        self.plain_room = (
            MAX_URI - max(len(base[3]) for base in self.links_by_root.values())
            if tree.slash and self.bases
            else -1
        )

    def uri(self, url_path: str, skipped: SkipCounter | None = None) -> str | None:
        """The absolute URI of ``url_path`` on this host; None (counted) off it."""
        found = self.memo.get(url_path)
        if found is not None:
            return found
        root = self.tree.root_of(url_path)
        found = self.href(root, url_path, skipped) if root is not None else None
        if found is None:
            if root is None and skipped is not None:
                skipped.count(SkipReason.NO_REVERSE_MATCH)
            return None
        self.memo[url_path] = found
        return found

    def locate(self, url_path: str, skipped: SkipCounter) -> str | None:
        """:meth:`uri` without its memo (which only the per-chunk alternates fill)."""
        for root, uri_base in self.starts:  # the longest url_path first, as root_of()
            if url_path.startswith(root.url_path):
                rest = url_path[len(root.url_path) :]
                if (
                    uri_base is not None
                    and not rest.strip(_PLAIN)
                    and len(uri_base) + len(rest) <= MAX_URI
                ):
                    return uri_base + rest  # what href() gives, without a call
                return self.href(root, url_path, skipped)
        skipped.count(SkipReason.NO_REVERSE_MATCH)
        return None

    def href(self, root: Root, url_path: str, skipped: SkipCounter | None = None) -> str | None:
        """The absolute URI of ``url_path`` under ``root``; None (counted) if it has none."""
        path = root.prefix + url_path[len(root.url_path) :]
        if not self.tree.slash and path != "/":
            path = path.rstrip("/")
        if not path.strip(_PLAIN) and len(self.builder.prefix) + len(path) <= MAX_URI:
            # Letters, digits, "-", "_" and "/" (an ASCII slug's): nothing to encode,
            # escape or check, what LocationBuilder.absolute() would give.
            return self.builder.prefix + path
        try:
            return self.builder.absolute(path)
        except Skip as skip:
            if skipped is not None:
                skipped.count(skip.reason)
            return None

    # -- alternates, in SQL -------------------------------------------------------------

    def versions_in_sql(self, using: str) -> bool:
        """Whether each row's versions are read with it (PostgreSQL's arrays, one root depth)."""
        return is_postgresql(using) and self.cut > 0

    def versioned_rows(
        self,
        rows: models.QuerySet[Any],
        page_rows: models.QuerySet[Any],
        size: int,
        *,
        whole_tree: bool = False,
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of ``rows`` (``ROW_FIELDS``, then lastmod) in lists of at most ``size``,
        each row's translation key replaced by its listed versions (:meth:`versions`).

        One query, set-based, in one of three forms, each giving a key's versions
        joined by ``SEPARATOR``; the first two read them one column per locale (Wagtail
        keeps one page per key and locale), in the order of the locales' IDs:

        - ``whole_tree`` (a page holding much of its site's rows), at most
          ``MAX_LOCALE_COLUMNS`` locales: the rows left-joined to the site's listed
          pages of each locale, on the key. PostgreSQL hashes each locale's pages
          (their whole tree, read once) or looks each row's key up in Wagtail's
          ``(translation_key, locale)`` index, as it costs them; no grouping. A left
          join can be hashed in a parallel worker, which the full join below cannot
          before PostgreSQL 16: a 49,000-row page of a 100,000-page tree in 182 ms
          against 309 (301 against 326 without a worker; ``docs/performance.md``).
        - Otherwise, at most ``MAX_LOCALE_COLUMNS`` locales: the versions of the page's
          keys (looked up in that index by an array of the keys, see :class:`_AmongKeys`),
          one ``MAX(...) FILTER (WHERE locale = ...)`` per locale, grouped by key (an
          aggregate of fixed size, which PostgreSQL groups in a hash table), then
          hash-joined to the page's rows: a page's versions cost what the page holds,
          not what its site holds. A correlated subquery per row (that index probed
          once a row) took twice the time.
        - More locales: ``STRING_AGG`` of those versions in their own order, which has
          PostgreSQL sort them by key first (on disk at the default ``work_mem`` for a
          full page) and sort each key's versions again.
        """
        using = rows.db
        query = rows.order_by().query
        count = len(query.values_select) + len(query.annotation_select)
        rows_sql, rows_params = query.sql_with_params()
        names = [f"c{number}" for number in range(count)]
        key = ROW_FIELDS.index("translation_key")
        columns = [f"r.{name}" for name in names]
        locales = self.locales(using)
        if whole_tree and 0 < len(locales) <= MAX_LOCALE_COLUMNS:
            joins = []
            joins_params: list[Any] = []
            for number, locale in enumerate(locales):
                of_locale = self.versions(None).filter(locale_id=locale)
                locale_sql, locale_params = of_locale.query.sql_with_params()
                joins.append(
                    f"LEFT JOIN ({locale_sql}) t{number} (key, version) "
                    f"ON t{number}.key = r.c{key}"
                )
                joins_params.extend(locale_params)
            per_locale = ", ".join(f"t{number}.version" for number in range(len(locales)))
            columns[key] = f"CONCAT_WS(%s, {per_locale})"
            sql = (
                f"SELECT {', '.join(columns)} FROM ({rows_sql}) r ({', '.join(names)}) "
                f"{' '.join(joins)} ORDER BY r.c0"
            )
            params: tuple[Any, ...] = (SEPARATOR, *rows_params, *joins_params)
        else:
            # The page's rows are read once (the CTE below), their keys from them.
            versions = self.versions(RawSQL(f"SELECT r.c{key} FROM r", ()))
            aggregate_params: tuple[Any, ...]
            if 0 < len(locales) <= MAX_LOCALE_COLUMNS:
                versions = versions.values_list("translation_key", "locale_id", "sitemapx_version")
                per_locale = ", ".join(
                    ["MAX(t.version) FILTER (WHERE t.locale = %s)"] * len(locales)
                )
                aggregate = f"CONCAT_WS(%s, {per_locale})"
                aggregate_params = (SEPARATOR, *locales)
                columns_of_t = "key, locale, version"
            else:
                aggregate = "STRING_AGG(t.version, %s ORDER BY t.version)"
                aggregate_params = (SEPARATOR,)
                columns_of_t = "key, version"
            versions_sql, versions_params = versions.query.sql_with_params()
            columns[key] = "COALESCE(v.versions, '')"
            # A full join, which gives the left join's rows (every key of v is one of
            # r's: the versions are those of the rows' keys, read in the same statement),
            # and which PostgreSQL can only hash or merge: estimating the array of keys
            # (``_AmongKeys``) at ten, it chose a nested loop for a left join, each of a
            # page's 49,000 rows compared with its 49,000 sets of versions (101 s for a
            # page of a 400,000-page tree).
            # The rows are materialized: read once for the page's keys and once for
            # the join, they were two scans of the key range (two of a last page's
            # open range, 8 ms each where another site's pages lie past it).
            sql = (
                f"WITH r ({', '.join(names)}) AS MATERIALIZED ({rows_sql}) "
                f"SELECT {', '.join(columns)} FROM r "
                f"FULL JOIN (SELECT t.key, {aggregate} AS versions "
                f"FROM ({versions_sql}) t ({columns_of_t}) GROUP BY t.key) v "
                f"ON v.key = r.c{key} ORDER BY r.c0"
            )
            params = (*rows_params, *aggregate_params, *versions_params)
        with connections[using].cursor() as cursor:
            cursor.execute(sql, params)
            while batch := cursor.fetchmany(size):
                yield batch

    def locales(self, using: str) -> list[int]:
        """The IDs of Wagtail's locales (a key's versions are one per locale at most)."""
        from wagtail.models import Locale

        return list(Locale.objects.using(using).order_by("pk").values_list("pk", flat=True))

    def versions(self, keys: RawSQL | None) -> models.QuerySet[Any]:
        """The listed versions of the translation keys a subquery ``keys`` selects (None:
        every key): (key, version) rows.

        A version is its root's tree path then its ``url_path``, filtered as
        ``get_queryset()`` filters the rows (live, unexpired, unrestricted, in the
        site's trees): the annotation ``sitemapx_version``, which
        :meth:`versioned_rows` reads with each version's locale.
        """
        from django.db.models.functions import Concat, Left

        under = Q()
        for root in self.tree.roots:
            under |= Q(path__startswith=root.path)
        versions = page_model()._default_manager.filter(under)
        if keys is not None:
            versions = versions.filter(_AmongKeys("translation_key", keys))
        versions = (
            versions.filter(live=True, expired=False)
            .filter(Q(expire_at__isnull=True) | Q(expire_at__gt=timezone.now()))
            # A control character makes no URI (LocationBuilder skips it): such a
            # version has no link, and the separator stays one.
            .exclude(url_path__contains=SEPARATOR)
        )
        for path in self.tree.nested + self.restricted:
            versions = versions.exclude(path__startswith=path)
        version = Concat(Left("path", self.cut), "url_path", output_field=models.TextField())
        listed: models.QuerySet[Any] = versions.order_by().annotate(sitemapx_version=version)
        return listed.values_list("translation_key", "sitemapx_version")

    def versioned_entries(
        self,
        batch: Sequence[tuple[Any, ...]],
        own: dict[Any, list[tuple[str, str | None, str | None, str | None]]],
        specific: dict[int, type[models.Model]],
        changefreq: str | None,
        priority: str | None,
        skipped: SkipCounter,
    ) -> Iterator[list[EntryTuple]]:
        """The entries of a batch of :meth:`versioned_rows` (lastmods W3C text), in chunks.

        What the rows loop of ``WagtailPageSource.entries()`` gives, calling nothing
        per row but :meth:`located_links` (and :meth:`locate` where it gives no URI):
        the hot path of a translated site.
        """
        located_links = self.located_links
        locate = self.locate
        new = tuple.__new__
        chunk: list[EntryTuple] = []
        append = chunk.append
        for key, url_path, content_type, versions, lastmod in batch:
            if len(chunk) >= ENTRIES_PER_CHUNK:
                yield chunk
                chunk = []
                append = chunk.append
            if content_type in specific:
                for own_loc, own_lastmod, freq, prio in own.get(key, ()):
                    append((own_loc, own_lastmod, freq or changefreq, prio or priority, None))
                continue
            loc = links = extra = None
            if SEPARATOR in versions:
                loc, links = located_links(url_path, versions)
            if loc is None:
                loc = locate(url_path, skipped)
                if loc is None:
                    continue
            if links is not None:
                # Extras(alternates=links), without the keyword call: the same tuple.
                extra = new(Extras, (links, (), (), None))
            append((loc, lastmod, changefreq, priority, extra))
        if chunk:
            yield chunk

    def shared_extras(self, versions: str) -> Extras | None:
        """The extras of a row whose versions are ``versions``.

        Built for each row, not kept for the document: the versions of one page are
        its translations' rows, on other documents or far apart on this one. Kept
        (23,000 sets of four tuples each on a full page), they were what set the
        garbage collector off: 165 young collections for the two pages of
        ``benchmarks/wagtail_bench.py`` and, with them, a full collection over the
        whole process (140,000 objects with Django and Wagtail loaded, 60 to 130
        ms), against 34 and none now; building each set again costs less.
        """
        if SEPARATOR not in versions:  # the page alone
            return None
        links = self.links(versions)
        return Extras(alternates=links) if links else None

    def extras_of(self, alternates: dict[Any, tuple[tuple[str, str], ...]]) -> Any:
        """The extras of a row by its translation key, from :meth:`alternates`."""

        def extras(key: Any) -> Extras | None:
            links = alternates.get(key)
            return Extras(alternates=links) if links else None

        return extras

    def links(self, versions: str) -> tuple[tuple[str, str], ...] | None:
        """The alternates of a page whose versions are ``versions`` (see :meth:`versions`),
        joined by ``SEPARATOR``."""
        return self.located_links("", versions)[1]

    def located_links(
        self, url_path: str, versions: str
    ) -> tuple[str | None, tuple[tuple[str, str], ...] | None]:
        """The URI of the row at ``url_path`` when its versions give it (else None: ask
        :meth:`locate`), and the alternates of its ``versions`` (:meth:`links`).

        Each root's part resolved once per document (``links_by_root``), and the
        versions' characters checked once for them all: a set of plain versions
        (an ASCII slug's) makes each URI by one concatenation, the row's own among
        them, which is what :meth:`locate` would make of it where no root's
        ``url_path`` starts another's (``own_in_links``).
        """
        cut = self.cut
        roots = self.links_by_root
        plain = len(versions) <= self.plain_room and _plain(versions) is not None
        own = url_path if plain and self.own_in_links else None
        loc = None
        found = []
        defaults = []
        for version in versions.split(SEPARATOR):
            base = roots.get(version[:cut])
            if base is None or not version.startswith(base[0]):
                continue
            _head, start, hreflang, uri_base, default = base
            if plain:
                uri = uri_base + version[start:]  # what href() gives
                if version[cut:] == own:
                    loc = uri
            else:
                checked = self.link_uri(version)
                if checked is None:
                    continue
                uri = checked
            found.append((hreflang, uri))
            if default:
                defaults.append(uri)
        if len(found) < 2:
            return loc, None
        found.sort()
        if len(defaults) == 1:
            found.append(("x-default", defaults[0]))
        elif defaults:
            found += [("x-default", uri) for uri in sorted(defaults)]
        return loc, tuple(found)

    def link_uri(self, version: str) -> str | None:
        """The URI of one version (under one of the site's roots), checked as locate() does."""
        root, _hreflang, uri_base, start = self.bases[version[: self.cut]]
        rest = version[start:]
        if (
            uri_base is not None
            and not rest.strip(_PLAIN)
            and len(uri_base) + len(rest) <= MAX_URI
        ):
            return uri_base + rest  # what href() gives, without a call
        return self.href(root, version[self.cut :])

    # -- alternates, per batch ----------------------------------------------------------

    def alternates(self, batch: Sequence[Any]) -> dict[Any, tuple[tuple[str, str], ...]]:
        """Each translation key of ``batch`` with 2+ listed versions: its alternates.

        One query for the batch, its keys read in SQL from the batch's key range (the
        batch is in key order): no parameter per page. The URIs found are kept for the
        batch's own rows.
        """
        versions: dict[Any, list[tuple[str, str]]] = {}
        manager = page_model()._default_manager
        under = Q()
        for root in self.tree.roots:
            under |= Q(path__startswith=root.path)
        keys = manager.filter(under, pk__gte=batch[0][0], pk__lte=batch[-1][0]).values(
            "translation_key"
        )
        # By Wagtail's (translation_key, locale) index; the tree and the expiry date, which
        # listed_rows() filters in SQL, are checked here, on a handful of rows per key (a
        # query planned on the whole filter scanned the table once a batch).
        rows = (
            manager.filter(translation_key__in=keys, live=True, expired=False)
            .order_by()
            .values_list("translation_key", "url_path", "path", "expire_at")
        )
        now = timezone.now()
        roots = tuple(root.path for root in self.tree.roots)
        excluded = self.tree.nested + self.restricted  # startswith(()) is False
        memo = self.memo
        hreflangs = self.hreflangs
        root_of = self.tree.root_of
        for chunk in row_batches(rows, conf.CHUNK_SIZE):  # plain tuples, no Django per row
            for key, url_path, path, expire_at in chunk:
                if expire_at is not None and expire_at <= now:
                    continue
                if not path.startswith(roots) or path.startswith(excluded):
                    continue
                tree_root = root_of(url_path)
                if tree_root is None:
                    continue
                href = memo.get(url_path) or self.uri(url_path)
                if href is None:
                    continue
                versions.setdefault(key, []).append((hreflangs[tree_root.url_path], href))
        found = {}
        for key, links in versions.items():
            if len(links) < 2:
                continue
            links.sort()
            found[key] = tuple(
                [*links, *[("x-default", href) for code, href in links if code == self.default]]
            )
        return found


def _default_language() -> str | None:
    from wagtail.models import Locale

    try:
        language: str = Locale.get_default().language_code
    except Locale.DoesNotExist:
        return None
    return language


class _OwnUrls:
    """The URLs of pages whose type makes its own, asked of the pages, one query per type.

    As Wagtail's sitemap asks them: ``get_sitemap_urls(request)``, with one request
    for the whole document, its site and its sites' root paths found once. A type
    that overrides neither ``get_url_parts()`` nor ``get_full_url()`` has its pages'
    URL parts given (what Wagtail's own ``get_url_parts()`` returns for the page on
    this host, read from its row): no ``reverse()`` and no language switch per page.
    """

    def __init__(
        self,
        writer: _Locator,
        skipped: SkipCounter,
        most: int,
        specific: dict[int, type[models.Model]],
        page_rows: models.QuerySet[Any],
    ) -> None:
        from wagtail.models import Site

        self.writer = writer
        self.page_rows = page_rows
        # Each type's pages on the document, in key order, read as the rows reach them.
        self.streams: dict[int, _PageStream] = {}
        self.skipped = skipped
        # Each valid changefreq and priority given, by name, type and value: its text.
        self.values: dict[tuple[str, type, Any], str] = {}
        self.most = most
        self.specific = specific
        self.request = request = _request_for(writer.builder.origin)
        # Wagtail's own caches on the request (Page._get_site_root_paths() and
        # Site.find_for_request()), filled once for the document.
        paths = Site.get_site_root_paths()
        request._wagtail_cached_site_root_paths = paths  # type: ignore[attr-defined]
        if writer.tree.site is not None:
            # The site the host was matched to, kept as Site.find_for_request() keeps it.
            request._wagtail_site = writer.tree.site  # type: ignore[attr-defined]
        else:
            Site.find_for_request(request)  # by the raw host: an export's need not be allowed
        self.root_url = next(
            (path.root_url for path in paths if path.site_id == writer.tree.site_id), None
        )
        base = page_model()
        self.known_parts = {
            content_type
            for content_type, model in specific.items()
            if all(getattr(model, name) is getattr(base, name) for name in URL_METHODS[1:])
        }

    def close(self) -> None:
        """Close the queries of the pages not read yet."""
        for stream in self.streams.values():
            stream.close()

    def of(
        self, batch: Sequence[Any], lastmod_of: Callable[[Any], str | None]
    ) -> dict[Any, list[tuple[str, str | None, str | None, str | None]]]:
        """The URLs of ``batch``'s pages whose type makes its own (``lastmod_of``: a row's)."""
        wanted: dict[int, list[Any]] = {}
        rows = {}
        specific = self.specific
        for row in batch:
            if row[2] in specific:
                wanted.setdefault(row[2], []).append(row[0])
                rows[row[0]] = row
        found: dict[Any, list[tuple[str, str | None, str | None, str | None]]] = {}
        skipped = self.skipped
        builder = self.writer.builder
        request = self.request
        for content_type, keys in wanted.items():
            model: Any = specific[content_type]
            known = content_type in self.known_parts and self.root_url is not None
            stream = self.streams.get(content_type)
            if stream is None:
                pages = self.page_rows.filter(content_type_id=content_type).values("pk")
                stream = self.streams[content_type] = _PageStream(
                    _pages(model, pages), attrgetter(model._meta.pk.attname)
                )
            for pk, page in stream.up_to(keys[-1]):
                if pk not in rows:
                    continue
                full_url = uri = None
                if known:
                    full_url, uri = self.give_parts(page)
                urls = list(page.get_sitemap_urls(request) or ())
                if len(urls) > self.most:
                    skipped.count(SkipReason.OVER_URL_LIMIT, len(urls) - self.most)
                    urls = urls[: self.most]
                entries = found.setdefault(pk, [])
                for url in urls:
                    location = url.get("location")
                    try:
                        loc = uri if uri is not None and location == full_url else None
                        loc = loc or builder.absolute(location)
                    except Skip as skip:
                        skipped.count(skip.reason)
                        continue
                    lastmod = url.get("lastmod")
                    if lastmod is not None and lastmod is page.last_published_at:
                        # Wagtail's own value, formatted with the rows (in SQL, or checked).
                        lastmod_text = lastmod_of(rows[pk])
                    else:
                        lastmod_text = _value("lastmod", lastmod, skipped)
                    entries.append(
                        (
                            loc,
                            lastmod_text,
                            self.value("changefreq", url.get("changefreq")),
                            self.value("priority", url.get("priority")),
                        )
                    )
        return found

    def value(self, name: str, raw: Any) -> str | None:
        """A changefreq or priority a page gave, formatted (None, counted, if invalid).

        A type's ``get_sitemap_urls()`` tends to give its pages the same few values:
        each valid one of a plain type is formatted once a document.
        """
        if raw is None:
            return None
        if type(raw) not in _PLAIN_VALUES:
            return _value(name, raw, self.skipped)
        key = (name, type(raw), raw)
        try:
            found = self.values.get(key)
        except TypeError:  # Decimal("sNaN"), which cannot be hashed
            return _value(name, raw, self.skipped)
        if found is None:
            found = _value(name, raw, self.skipped)
            if found is not None:
                self.values[key] = found
        return found

    def give_parts(self, page: Any) -> tuple[str | None, str | None]:
        """Give ``page`` its URL parts on this host; its full URL (Wagtail's) and URI (ours).

        Only for a URL of plain characters (what ``reverse()`` leaves as it is): any
        other page keeps Wagtail's own ``get_url_parts()``.
        """
        writer = self.writer
        tree = writer.tree
        root = tree.root_of(page.url_path)
        if root is None:
            return None, None
        path = root.prefix + page.url_path[len(root.url_path) :]
        if not tree.slash and path != "/":
            path = path.rstrip("/")
        if path.strip(_PLAIN):
            return None, None
        page.get_url_parts = _UrlParts((tree.site_id, self.root_url, path))
        return f"{self.root_url}{path}", writer.href(root, page.url_path)


# The types of changefreq and priority values formatted once a document (``_OwnUrls.value``).
_PLAIN_VALUES = frozenset({str, int, float, Decimal})


class _UrlParts:
    """``get_url_parts()`` of one page, known: ``(site_id, root_url, page_path)``."""

    def __init__(self, parts: tuple[int, str | None, str]) -> None:
        self.parts = parts

    def __call__(self, request: Any = None) -> tuple[int, str | None, str]:
        return self.parts


class _PageStream:
    """Pages in key order, handed out up to a key at a time (``key``: a page's, read
    once per page: ``Model.pk`` is a property calling a method)."""

    def __init__(self, pages: Iterator[Any], key: Callable[[Any], Any]) -> None:
        self.pages = pages
        self.key = key
        self.next: Any = next(pages, None)
        self.next_key: Any = key(self.next) if self.next is not None else None

    def close(self) -> None:
        """Close the query the pages are read from (on a document left before its end)."""
        close = getattr(self.pages, "close", None)
        if close is not None:
            close()

    def up_to(self, key: Any) -> Iterator[tuple[Any, Any]]:
        """The pages left whose key is at most ``key``, each with its key."""
        while self.next is not None and self.next_key <= key:
            yield self.next_key, self.next
            self.next = next(self.pages, None)
            if self.next is not None:
                self.next_key = self.key(self.next)


def _pages(model: Any, keys: models.QuerySet[Any]) -> Iterator[Any]:
    """The pages of type ``model`` whose keys ``keys`` selects, in key order, as Django
    loads them.

    Their StreamFields deferred (Wagtail's ``defer_streamfields()``: a sitemap never
    reads page bodies). A type :func:`_row_fields` allows, with no receiver of
    ``pre_init`` or ``post_init``, is built from its rows without its constructors.
    """
    pages = model._default_manager.filter(pk__in=keys).order_by("pk")
    # Wagtail's PageQuerySet.defer_streamfields(): a sitemap never reads page bodies.
    defer = getattr(pages, "defer_streamfields", None)
    if defer is not None:
        pages = defer()
    fields = _row_fields(model, pages.query.deferred_loading)
    if (
        fields is None
        or signals.pre_init.has_listeners(model)
        or signals.post_init.has_listeners(model)
    ):
        instances = pages.iterator(conf.CHUNK_SIZE)
        with native_timestamps(pages.db):  # the query runs at the first instance
            first = next(instances, None)
        if first is not None:
            yield first
            yield from instances
        return
    using = pages.db
    for batch in row_batches(pages.values_list(*fields), conf.CHUNK_SIZE):
        for values in batch:
            page = model.__new__(model)
            state = page._state = ModelState()
            state.adding = False
            state.db = using
            page.__dict__.update(zip(fields, values, strict=True))
            yield page


@functools.lru_cache(maxsize=64)
def _row_fields(model: Any, deferred: tuple[frozenset[str], bool]) -> tuple[str, ...] | None:
    """The fields ``model``'s pages are built from without a constructor call; None if not.

    ``Model.from_db()`` calls the constructors, which on a page read from the
    database only set each loaded field's attribute and send ``pre_init`` and
    ``post_init``: Django's, modelcluster's, and Wagtail's own (which act on new
    pages only). A type with none of its own, no ``from_db()`` of its own and only
    Django's attributes for its fields gets the same instance by setting them,
    when those signals have no receiver (``tests/wagtailsite`` compares both).
    """
    from django.db.models.query_utils import DeferredAttribute

    base = page_model()
    constructors = {
        klass.__dict__["__init__"] for klass in base.__mro__ if "__init__" in klass.__dict__
    }
    if any(
        "__init__" in klass.__dict__ and klass.__dict__["__init__"] not in constructors
        for klass in model.__mro__
    ):
        return None
    if any("from_db" in klass.__dict__ for klass in model.__mro__ if klass is not models.Model):
        return None
    names, defer = deferred
    fields = []
    for field in model._meta.concrete_fields:
        if type(inspect.getattr_static(model, field.attname, None)) not in (
            DeferredAttribute,
            ForeignKeyDeferredAttribute,
        ):
            return None
        if (field.name in names) is not defer:
            fields.append(field.attname)
    return tuple(fields)


def _value(name: Any, raw: Any, skipped: SkipCounter) -> str | None:
    if raw is None:
        return None
    if name == "lastmod" and isinstance(raw, datetime.datetime) and timezone.is_naive(raw):
        raw = timezone.make_aware(raw)
    return formatted(name, raw, skipped.count)


class _OriginRequest(HttpRequest):
    """A request with ``origin``'s scheme, without a server's environ to read it from."""

    def __init__(self, scheme: str) -> None:
        super().__init__()
        self._origin_scheme = scheme

    def _get_scheme(self) -> str:
        return self._origin_scheme


def _request_for(origin: Origin) -> HttpRequest:
    """A request for ``origin``, handed to ``get_sitemap_urls()`` as Wagtail's view hands one."""
    request = _OriginRequest(origin.scheme)
    name = host_name(origin.host)
    port = origin.host[len(name) + 1 :] if origin.host.startswith(f"{name}:") else ""
    request.META.update(
        {
            "HTTP_HOST": origin.host,
            "SERVER_NAME": name,
            "SERVER_PORT": port or ("443" if origin.scheme == "https" else "80"),
        }
    )
    return request
