"""Applying editors' overrides to the entries and the index of a sitemap.

Entries are matched by ``locations.keys.uri_key``: at most one query per chunk of
entries, never one per URL. A document first reads up to ``PRELOAD_LIMIT``
overrides, before keying any URL; when that is all of them (none, on most
sites) it needs no other query, and with none no URL is keyed at all.
Otherwise each chunk reads its own by the digest of their keys (the unique
``location_hash``). Memory is
bounded by the chunk size and ``PRELOAD_LIMIT``, whatever the number of rows.
Excluded entries are dropped; the other overridden values replace the source's.

The index cannot look at every URL, so a forced lastmod reaches it through the
section and page stored on the override when it was saved (see
``admin.lookup.place``): a page's lastmod in the index is the later of its
own and the forced lastmods of the overrides placed on it.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from django.db import connections, router
from django.db.models import BooleanField, Max, Q
from django.db.models.expressions import RawSQL

from .conf import app_settings
from .entries import EntryTuple, Extras, PlainChunk
from .locations.hosts import ascii_host, canonical_host
from .locations.keys import uri_key
from .rules import EMPTY, CompiledRule, RuleSet
from .signals import overrides_changed
from .sources import ListedPage
from .values import format_priority, is_later, lastmod_text_or_none

logger = logging.getLogger("django_sitemapx")

# One override as the hot path reads it: (exclude, lastmod, changefreq, priority).
OverrideValues = tuple[bool, str | None, str | None, str | None]


# A document first reads up to this many overrides along with its first chunk's:
# when that is all of them (most sites), the later chunks cost no query at all.
PRELOAD_LIMIT = 5_000


def table_ready() -> bool:
    """True once the overrides table exists; until ``migrate`` creates it, logs why not.

    Without the table there can be no override, so documents are served as the
    sources give them rather than failing with "no such table".
    """
    from .models import Override, table_exists

    if table_exists(Override, router.db_for_read(Override)):
        return True
    logger.error(
        "The table of django_sitemapx's overrides (%s) does not exist: run "
        "`python manage.py migrate`. Sitemaps are served without overrides until then.",
        Override._meta.db_table,
    )
    return False


@overload
def apply_overrides(
    chunks: Iterable[Sequence[EntryTuple]],
    section: str = ...,
    host: str | None = ...,
    alternate_hosts: Sequence[str] = ...,
) -> Iterator[Sequence[EntryTuple]]: ...
@overload
def apply_overrides(
    chunks: Iterable[Sequence[EntryTuple] | PlainChunk],
    section: str = ...,
    host: str | None = ...,
    alternate_hosts: Sequence[str] = ...,
) -> Iterator[Sequence[EntryTuple] | PlainChunk]: ...
def apply_overrides(
    chunks: Iterable[Sequence[EntryTuple] | PlainChunk],
    section: str = "",
    host: str | None = None,
    alternate_hosts: Sequence[str] = (),
) -> Iterator[Sequence[EntryTuple] | PlainChunk]:
    """Yield each chunk with rules and overrides applied: at most one query per chunk.

    The rules of ``section`` on ``host`` are read and compiled once, before the
    first chunk (one query), and those of each of ``alternate_hosts`` (the
    other hosts the alternates name: one query each), so that a URL another
    host's rule excludes is no alternate here either. A ``PlainChunk`` stays
    one when no override exists and no rule matches any of its URLs, else
    becomes its entries.
    """
    if not app_settings.OVERRIDES or not table_ready():
        yield from chunks
        return
    lookup = _Lookup(section, host, alternate_hosts)
    for chunk in chunks:
        yield lookup.apply(chunk)


def chunk_overrides(
    section: str = "", host: str | None = None, alternate_hosts: Sequence[str] = ()
) -> Callable[[Sequence[EntryTuple] | PlainChunk], Sequence[EntryTuple] | PlainChunk] | None:
    """:func:`apply_overrides` for one document read in several parts: the function that
    applies them to a chunk, reading the rules once; None when overrides are off."""
    if not app_settings.OVERRIDES or not table_ready():
        return None
    return _Lookup(section, host, alternate_hosts).apply


class _Lookup:
    """The overrides of one document, read all at once when they are few, else chunk by chunk,
    and the rules that apply to it."""

    def __init__(self, section: str, host: str | None, alternate_hosts: Sequence[str]) -> None:
        self.everything: dict[str, OverrideValues] | None = None
        self.first = True
        self.section = section
        self.host = host
        self.rules = EMPTY
        self.alternate_hosts = alternate_hosts
        # The rules of the other hosts alternates name, by the host as URIs spell it.
        self.host_rules: dict[str, RuleSet] = {}

    def apply(self, chunk: Sequence[EntryTuple] | PlainChunk) -> Sequence[EntryTuple] | PlainChunk:
        if self.first:
            self.first = False
            # Before any URL is keyed: most sites store no override, or a few.
            preloaded = fetch_first(PRELOAD_LIMIT + 1)
            if len(preloaded) <= PRELOAD_LIMIT:
                self.everything = preloaded
            self.rules = fetch_rules(self.section, self.host)
            host_rules = {
                ascii_host(other): fetch_rules(self.section, other)
                for other in self.alternate_hosts
            }
            if any(host_rules.values()):
                self.host_rules = host_rules  # else none is needed: no rule on those hosts
        if not chunk:
            return chunk
        rules = self.rules
        host_rules = self.host_rules
        if self.everything == {}:
            if not rules and not host_rules:
                return chunk  # no override, no rule (most sites): no key per URL either
            if isinstance(chunk, PlainChunk):
                # Its URIs share their first literal (the origin and the pattern's
                # start): most chunks are ruled out without building a location.
                if not rules.may_match_start(chunk.literals[0]) or not rules.may_match_any(
                    chunk.locations()
                ):
                    return chunk  # still rendered from its columns
            elif not _has_alternates(chunk) and not rules.may_match_any(
                [entry[0] for entry in chunk]
            ):
                return chunk
        if isinstance(chunk, PlainChunk):
            chunk = chunk.entries()
        if self.everything == {}:
            return _apply(chunk, None, {}, rules, host_rules)  # no override: no key per URL
        keys = [uri_key(loc) for loc, _lastmod, _changefreq, _priority, _extras in chunk]
        if self.everything is not None:
            found = self.everything
        else:
            wanted = set(keys)
            wanted.update(uri_key(href) for href in _alternate_hrefs(chunk))
            found = fetch(wanted)
        return _apply(chunk, keys, found, rules, host_rules)


def _has_alternates(chunk: Sequence[EntryTuple]) -> bool:
    return any(extras is not None and extras.alternates for *_values, extras in chunk)


def _alternate_hrefs(chunk: Sequence[EntryTuple]) -> set[str]:
    hrefs: set[str] = set()
    for *_values, extras in chunk:
        if extras is not None and extras.alternates:
            hrefs.update(href for _hreflang, href in extras.alternates)
    return hrefs


def _rules_of(href: str, rules: RuleSet, host_rules: Mapping[str, RuleSet] | None) -> RuleSet:
    """The rules that decide ``href``: its host's, when it is on another host, else ``rules``."""
    if not host_rules:
        return rules
    start = href.find("://") + 3
    end = href.find("/", start)
    host = href[start:] if end == -1 else href[start:end]
    return host_rules.get(host, rules)


def decide(uri: str, overridden: OverrideValues | None, rules: RuleSet) -> OverrideValues | None:
    """What the sitemap forces for ``uri``: its override's values, else the rules'.

    Per value, an override's wins over the rules'; an override decides on its
    own whether its URL is listed. None when neither says anything.
    """
    return _merge(overridden, rules.values(uri) if rules else None)


def _merge(
    overridden: OverrideValues | None, ruled: OverrideValues | None
) -> OverrideValues | None:
    if ruled is None:
        return overridden
    if overridden is None:
        return ruled
    exclude, lastmod, changefreq, priority = overridden
    return (
        exclude,
        ruled[1] if lastmod is None else lastmod,
        ruled[2] if changefreq is None else changefreq,
        ruled[3] if priority is None else priority,
    )


def _apply(
    chunk: Sequence[EntryTuple],
    keys: list[str] | None,
    found: dict[str, OverrideValues],
    rules: RuleSet = EMPTY,
    host_rules: Mapping[str, RuleSet] | None = None,
) -> Sequence[EntryTuple]:
    """``chunk`` with its overrides (by ``keys``, None when there is none) and rules applied.

    ``host_rules`` are the rules of other hosts an alternate may be on.
    """
    if not found and not rules and not host_rules:
        return chunk
    ruled = rules.decide([entry[0] for entry in chunk]) if rules else {}
    decided: list[OverrideValues | None]
    if keys is None or not found:
        decided = [ruled.get(index) for index in range(len(chunk))]
    else:
        decided = [_merge(found.get(key), ruled.get(index)) for index, key in enumerate(keys)]
    excluded = {
        entry[0] for entry, values in zip(chunk, decided, strict=True) if values and values[0]
    }
    # A URL left out is nobody's alternate (the alternates are one tuple per item,
    # shared by its versions: each is pruned once).
    pruned: dict[int, Extras] = {}
    result: list[EntryTuple] = []
    for values, entry in zip(decided, chunk, strict=True):
        if values is None and entry[4] is None:
            result.append(entry)
            continue
        loc, lastmod, changefreq, priority, extras = entry
        if values is not None:
            exclude, forced_lastmod, forced_changefreq, forced_priority = values
            if exclude:
                continue
            lastmod = lastmod if forced_lastmod is None else forced_lastmod
            changefreq = changefreq if forced_changefreq is None else forced_changefreq
            priority = priority if forced_priority is None else forced_priority
        if extras is not None and extras.alternates:
            extras = pruned.get(id(extras)) or pruned.setdefault(
                id(extras), _prune(extras, excluded, found, rules, host_rules)
            )
        result.append((loc, lastmod, changefreq, priority, extras))
    return result


def _prune(
    extras: Extras,
    excluded: set[str],
    found: dict[str, OverrideValues],
    rules: RuleSet,
    host_rules: Mapping[str, RuleSet] | None = None,
) -> Extras:
    """``extras`` without the alternates the sitemap leaves out.

    An alternate on another host is decided by that host's rules (``host_rules``,
    by the host as the URI spells it); overrides name no host.
    """
    kept = []
    for link in extras.alternates:
        href = link[1]
        if href in excluded:
            continue
        values = decide(href, found.get(uri_key(href)), _rules_of(href, rules, host_rules))
        if values is not None and values[0]:
            continue
        kept.append(link)
    if len(kept) == len(extras.alternates):
        return extras
    return extras._replace(alternates=tuple(kept))


def fetch_rules(section: str = "", host: str | None = None) -> RuleSet:
    """The rules of ``section`` (every rule when empty) on ``host``, compiled (one query).

    With ``host`` None, the rules of every host.
    """
    from .models import Rule, table_exists

    if not table_exists(Rule, router.db_for_read(Rule)):
        logger.error(
            "The table of django_sitemapx's rules (%s) does not exist: run `python manage.py "
            "migrate`. Sitemaps are served without rules until then.",
            Rule._meta.db_table,
        )
        return EMPTY
    rows = Rule.objects.order_by("position", "pk")
    if section:
        rows = rows.filter(section__in=["", section])
    if host is not None:
        rows = rows.filter(host__in=["", canonical_host(host)])
    compiled = []
    for pk, matching, pattern, exclude, lastmod, changefreq, priority in rows.values_list(
        "pk", "matching", "pattern", "exclude", "lastmod", "changefreq", "priority"
    ):
        values = _format([exclude, lastmod, changefreq, priority])
        compiled.append(CompiledRule(pk, matching, pattern, values))
    return RuleSet(compiled) if compiled else EMPTY


_FIELDS = ("location", "exclude", "lastmod", "changefreq", "priority")


def fetch(keys: Iterable[str]) -> dict[str, OverrideValues]:
    """The overrides of these location keys, formatted as protocol text (one query)."""
    from .models import Override, location_hash

    digests = [location_hash(key) for key in keys]
    rows = Override.objects.filter(_hash_in(digests)).values_list(*_FIELDS)
    return {location: _format(row) for location, *row in rows}


def fetch_first(count: int) -> dict[str, OverrideValues]:
    """The first ``count`` overrides by primary key: all of them when fewer come back."""
    from .models import Override

    rows = Override.objects.order_by("pk").values_list(*_FIELDS)[:count]
    return {location: _format(row) for location, *row in rows}


def _hash_in(digests: list[str]) -> Q:
    from .models import Override

    connection = connections[router.db_for_read(Override)]
    if connection.vendor == "postgresql":
        # One array parameter instead of thousands: the ORM spends more time
        # preparing a 2,000-value IN list than PostgreSQL spends running it.
        column = connection.ops.quote_name("location_hash")
        return Q(RawSQL(f"{column} = ANY(%s)", [digests], output_field=BooleanField()))
    return Q(location_hash__in=digests)


def _format(row: list[Any]) -> OverrideValues:
    exclude, lastmod, changefreq, priority = row
    return (
        bool(exclude),
        # The admin refuses a future lastmod; one written past it (the ORM, a
        # fixture) outside the lastmod range is ignored like any invalid value.
        lastmod_text_or_none(lastmod),
        changefreq or None,
        None if priority is None else format_priority(priority),
    )


def adjust_index(listed: list[ListedPage], host: str | None = None) -> list[ListedPage]:
    """Raise each page's lastmod to the latest forced lastmod placed on it (two queries).

    Overrides raise the page they were placed on. A rule's forced lastmod
    raises every page of the sections it applies to on ``host`` (every host
    when None): the index cannot tell which pages hold a URL the rule matches
    without reading them, and a page announced as changed that did not is
    the cheaper mistake.
    """
    if not listed or not app_settings.OVERRIDES or not table_ready():
        return listed
    forced = forced_page_lastmods()
    ruled = forced_rule_lastmods(host)
    if not forced and not ruled:
        return listed
    adjusted = []
    for listed_page in listed:
        candidates = [
            forced.get((listed_page.section, listed_page.summary.number)),
            ruled.get(""),
            ruled.get(listed_page.section),
        ]
        for latest in candidates:
            if latest is not None and is_later(latest, listed_page.summary.lastmod):
                text = lastmod_text_or_none(latest)
                if text is not None:
                    summary = dataclasses.replace(listed_page.summary, lastmod=text)
                    listed_page = dataclasses.replace(listed_page, summary=summary)
        adjusted.append(listed_page)
    return adjusted


def forced_rule_lastmods(host: str | None) -> dict[str, datetime.datetime]:
    """``section ("" for every section) -> latest forced lastmod`` of the rules on ``host``."""
    from .models import Rule, table_exists

    if not table_exists(Rule, router.db_for_read(Rule)):
        return {}
    rows = Rule.objects.filter(lastmod__isnull=False, exclude=False)
    if host is not None:
        rows = rows.filter(host__in=["", canonical_host(host)])
    latest = rows.order_by().values_list("section").annotate(latest=Max("lastmod"))
    return dict(latest)


def forced_page_lastmods() -> dict[tuple[str, int], datetime.datetime]:
    """``(section, page) -> latest forced lastmod`` of the placed, included overrides."""
    from .models import Override

    rows = (
        Override.objects.filter(lastmod__isnull=False, exclude=False, page__isnull=False)
        .exclude(section="")
        .order_by()
        .values_list("section", "page")
        .annotate(latest=Max("lastmod"))
    )
    return {(section, page): latest for section, page, latest in rows}


# -- what a change of overrides affects ----------------------------------------


@dataclass(frozen=True)
class AffectedDocuments:
    """The documents a set of override changes may have altered."""

    locations: frozenset[str]
    pages: frozenset[tuple[str, int]]
    everything: bool


Place = tuple[str, int | None]

# What the sitemap shows of one override: (exclude, lastmod, changefreq, priority).
Shown = tuple[bool, Any, str, Any]
# What a location without an override shows: the source's values, listed.
NOT_OVERRIDDEN: Shown = (False, None, "", None)
_SHOWN_FIELDS = ("exclude", "lastmod", "changefreq", "priority")


def shown(override: Any) -> Shown | None:
    """What ``override`` (an ``Override``) shows; None when a field of it was not loaded."""
    fields = override.__dict__  # never triggers a query for a deferred field
    if any(name not in fields for name in _SHOWN_FIELDS):
        return None
    return (
        bool(fields["exclude"]),
        fields["lastmod"],
        fields["changefreq"] or "",
        fields["priority"],
    )


def affected_documents(changes: Iterable[tuple[str, Iterable[Place | None]]]) -> AffectedDocuments:
    """What ``(location, places before and after)`` pairs touch."""
    locations: set[str] = set()
    pages: set[tuple[str, int]] = set()
    everything = False
    for location, places in changes:
        locations.add(location)
        for place in places:
            if place is None:
                continue
            section, page = place
            if section and page is not None:
                pages.add((section, page))
            else:
                everything = True
    return AffectedDocuments(frozenset(locations), frozenset(pages), everything)


def send_overrides_changed(
    sender: type,
    changes: Iterable[tuple[str, Iterable[Place | None]]],
    before: Mapping[str, Shown | None] | None = None,
) -> AffectedDocuments:
    """Send ``overrides_changed`` for these changes and return what they affect.

    ``before`` gives, per location, what its override showed before the change
    (:data:`NOT_OVERRIDDEN` when there was none); a location it leaves out, or
    maps to None, is unknown.
    """
    affected = affected_documents(changes)
    if affected.locations:
        known = {key: value for key, value in (before or {}).items() if value is not None}
        overrides_changed.send(
            sender=sender,
            locations=affected.locations,
            pages=affected.pages,
            everything=affected.everything,
            affected=affected,
            before=known,
        )
    return affected
