"""Finding one URL in the sitemap: which section and page hold it, or why none does.

Used by the admin: by its URL inspector, and when an override is saved, to place it
on its section and page (see ``overrides.adjust_index``). A model section with
``url_name`` is searched with one query (the URL is resolved, its keyword
arguments become a filter, the key gives the page); any other section is
scanned entry by entry, up to ``SCAN_LIMIT`` entries per section.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.http.request import validate_host
from django.urls import Resolver404, resolve
from django.utils import translation

from ..conf import PROTOCOL_MAX_LOC_LENGTH
from ..documents import read_chunks
from ..entries import EntryTuple
from ..exceptions import InvalidLocation
from ..extensions.declarations import declared_kinds
from ..locations import LocationBuilder, Origin
from ..locations.hosts import canonical_host, host_name
from ..locations.keys import location_key, uri_key
from ..locations.origins import is_served_host, uses_sites_framework
from ..locations.reverse import path_language
from ..registry import SitemapRegistry
from ..sources import ModelSource, PageSummary, Source

# Entries scanned per section that cannot be searched by query (in-memory items,
# get_absolute_url() or a custom location()): bounds an inspector request.
SCAN_LIMIT = 200_000

# Reasons a URL is not in the sitemap (stable codes; the admin words them).
NOT_REGISTERED = "not_registered"
EXCLUDED = "excluded"
EXCLUDED_BY_RULE = "excluded_by_rule"
FILTERED_OUT = "filtered_out"
TOO_LONG = "too_long"
SKIPPED = "skipped"
INVALID = "invalid"
UNKNOWN_HOST = "unknown_host"


@dataclass
class Finding:
    """What the sitemap does with one URL."""

    key: str
    section: str = ""
    page: int | None = None
    entry: EntryTuple | None = None
    reason: str | None = None
    filtered_sections: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    unscanned_sections: list[str] = field(default_factory=list)
    other_host: str | None = None
    resolves: bool = False
    # The host whose overrides apply under the origin's own (``Source.fallback_host()``).
    fallback_host: str | None = None

    @property
    def found(self) -> bool:
        """A section lists this URL (it may still be excluded by an override)."""
        return self.entry is not None


# Whether whoever asks may learn that a model has rows its section leaves out.
MayViewHidden = Callable[[type[Model]], bool]


def _anyone(model: type[Model]) -> bool:
    return True


def locate(
    registry: SitemapRegistry,
    value: str,
    origin: Origin,
    may_view_hidden: MayViewHidden = _anyone,
) -> Finding:
    """Search every section of ``registry`` served on ``origin`` for ``value`` (a path or URL).

    A row a section's queryset leaves out (``FILTERED_OUT``) is looked for only in
    the models ``may_view_hidden`` accepts: for any other, the answer is the one
    given when no row exists, and no query asks. The URL is resolved in its own
    language (:func:`path_language`), not the editor's.
    """
    try:
        key = location_key(value)
    except InvalidLocation as error:
        return Finding(key="", reason=INVALID, skipped={error.code: 1})
    with translation.override(path_language(key.partition("?")[0])):
        return _locate(registry, value, key, origin, may_view_hidden)


def _locate(
    registry: SitemapRegistry,
    value: str,
    key: str,
    origin: Origin,
    may_view_hidden: MayViewHidden,
) -> Finding:
    finding = Finding(key=key)
    host = urlsplit(value.strip()).netloc  # location_key() parsed it: cannot raise
    if host and host.lower() != origin.host.lower():
        finding.other_host = host
    finding.resolves = _resolves(key)
    if len(origin.prefix + key) > PROTOCOL_MAX_LOC_LENGTH:
        finding.reason = TOO_LONG
        return finding
    builder = LocationBuilder(origin)
    for source in registry.for_origin(origin):
        if _search(source, key, builder, finding, may_view_hidden):
            return finding
    finding.reason = (
        FILTERED_OUT
        if finding.filtered_sections
        else (SKIPPED if finding.skipped else NOT_REGISTERED)
    )
    return finding


def extension_findings(
    registry: SitemapRegistry, finding: Finding, origin: Origin
) -> list[Finding]:
    """Every section listing the found URL with images, videos or news, the found one first.

    Google reads extension tags in the main sitemap or in a separate one (an
    image sitemap, a news section), so the same URL may carry them elsewhere.
    """
    if not finding.found:
        return []
    builder = LocationBuilder(origin)
    found = [finding] if _has_extras(finding) else []
    for source in registry:
        if source.section == finding.section or not declared_kinds(source):
            continue
        other = Finding(key=finding.key)
        if _search(source, finding.key, builder, other) and _has_extras(other):
            found.append(other)
    return found


def _has_extras(finding: Finding) -> bool:
    if finding.entry is None:
        return False
    _loc, _lastmod, _changefreq, _priority, extras = finding.entry
    return bool(extras)


def place(registry: SitemapRegistry, value: str, origin: Origin) -> tuple[str, int | None]:
    """``(section, page)`` of a URL, or ``("", None)`` if no section lists it.

    A full URL on another host the project serves is looked for on that host
    (:func:`inspected_origin`): with a host per language, only its own host lists
    it; a Wagtail site's URL, only its site's.
    """
    finding = locate(registry, value, inspected_origin(registry, value, origin) or origin)
    return (finding.section, finding.page) if finding.found else ("", None)


def _search(
    source: Source,
    key: str,
    builder: LocationBuilder,
    finding: Finding,
    may_view_hidden: MayViewHidden = _anyone,
) -> bool:
    if isinstance(source, ModelSource) and source.uses_url_name:
        number = _page_by_query(source, key, finding, may_view_hidden)
        if number is None:
            return False
        skipped: dict[str, int] = {}
        # The lookup reads the page's entries, never its summary: handing one in
        # spares ModelSource.page() its aggregate query (the key's query found a row).
        summary = PageSummary(number, 1, None)
        if _find_in_page(source, summary, key, builder, finding, skipped):
            return True
        # The row exists but its entry was left out: say why.
        for reason, count in skipped.items():
            finding.skipped[reason] = finding.skipped.get(reason, 0) + count
        return False
    scanned = 0
    for summary in source.page_summaries():
        if _find_in_page(source, summary, key, builder, finding, {}):
            return True
        scanned += summary.rows
        if scanned >= SCAN_LIMIT:
            finding.unscanned_sections.append(source.section)
            break
    return False


def _page_by_query(
    source: ModelSource, key: str, finding: Finding, may_view_hidden: MayViewHidden
) -> int | None:
    assert source.model is not None
    filters = source.row_filter_at(key)
    if filters is None:
        return None
    try:
        rows = source.get_queryset().filter(**filters).values_list(source.key_name, flat=True)
        keys = list(rows[:1])
        if not keys:
            if (
                may_view_hidden(source.model)
                and source.model._default_manager.filter(**filters).exists()
            ):
                finding.filtered_sections.append(source.section)
            return None
    except (ValueError, TypeError, ValidationError):
        return None  # a URL value the field cannot hold: not this section's row
    table = source.page_table()
    number = table.page_of(keys[0])
    # Bring the page up to date first (the section's first count, or a split
    # of the page since its last count may move the row), then look again.
    table.states(None if number is None else {number})
    return table.page_of(keys[0])


def _find_in_page(
    source: Source,
    summary: PageSummary,
    key: str,
    builder: LocationBuilder,
    finding: Finding,
    skipped: dict[str, int],
) -> bool:
    for entry in _entries(source, summary, builder, skipped):
        loc, *_values = entry
        if uri_key(loc) == key:
            finding.section, finding.page, finding.entry = source.section, summary.number, entry
            finding.fallback_host = source.fallback_host()
            return True
    return False


def _entries(
    source: Source, summary: PageSummary, builder: LocationBuilder, skipped: dict[str, int]
) -> Iterator[EntryTuple]:
    page = source.page(summary.number, summary)
    if page is None:
        return
    for chunk in read_chunks(page.entries(builder), skipped):
        yield from chunk


def _resolves(key: str) -> bool:
    path = key.partition("?")[0]
    for candidate in (path, path + "/"):
        try:
            resolve(unquote(candidate))
        except Resolver404:
            continue
        return True
    return False


def inspected_origin(registry: SitemapRegistry, value: str, origin: Origin) -> Origin | None:
    """The origin a URL to inspect is on: a full URL's own host, ``origin`` for a path.

    None for a full URL on a host the project does not serve: not ``origin``'s,
    not a served host (``served_hosts()``), not a host the sections name
    (``SitemapRegistry.site_hosts()``: ``sites``, language hosts, Wagtail sites'),
    and not one a section is served on that ``ALLOWED_HOSTS`` lets in (any host
    the default Wagtail site answers).
    """
    try:
        parts = urlsplit(value.strip())
    except ValueError:
        return origin
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return origin
    host = canonical_host(parts.netloc, parts.scheme)
    if host == origin.host:
        return origin
    named = Origin(parts.scheme, host)
    if is_served_host(host) or host in {canonical_host(name) for name in registry.site_hosts()}:
        return named
    if uses_sites_framework() or not validate_host(host_name(host), settings.ALLOWED_HOSTS):
        return None  # with the Sites framework, its domains are the served hosts
    return named if any(source.serves(named) for source in registry) else None
