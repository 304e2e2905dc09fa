"""Applying editors' overrides to the entries and the index of a sitemap.

Entries are matched by ``locations.keys.uri_key``: at most one query per chunk of
entries, never one per URL. A document first reads up to ``PRELOAD_LIMIT``
overrides, before keying any URL; when that is all of them (none, on most
sites) it needs no other query, and with none no URL is keyed at all.
Otherwise each chunk reads its own by the digest of their keys (the unique
``location_hash``). Memory is
bounded by the chunk size and ``PRELOAD_LIMIT``, whatever the number of rows.
Excluded entries are dropped; the other overridden values replace the source's.
An override may name a host (``Override.host``): a document applies those of
its host, which win over those of every host, and nothing of other hosts'. A
document may have a fallback host too (``Source.fallback_host()``: a Wagtail
site's hostname, where the site is served under another name): its overrides
and rules apply under the document's host's own.

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
from django.db.models import BooleanField, Exists, Max, Q
from django.db.models.expressions import RawSQL

from .conf import app_settings
from .entries import Chunk, EntryTuple, Extras, PlainChunk, RenderedChunk
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
    fallback_host: str | None = ...,
) -> Iterator[Sequence[EntryTuple]]: ...
@overload
def apply_overrides(
    chunks: Iterable[Chunk],
    section: str = ...,
    host: str | None = ...,
    alternate_hosts: Sequence[str] = ...,
    fallback_host: str | None = ...,
) -> Iterator[Chunk]: ...
def apply_overrides(
    chunks: Iterable[Chunk],
    section: str = "",
    host: str | None = None,
    alternate_hosts: Sequence[str] = (),
    fallback_host: str | None = None,
) -> Iterator[Chunk]:
    """Yield each chunk with rules and overrides applied: at most one query per chunk.

    The rules of ``section`` on ``host`` are read and compiled once, before the
    first chunk (one query), and those of each of ``alternate_hosts`` (the
    other hosts the alternates name: one query each), so that a URL another
    host's rule excludes is no alternate here either. A ``PlainChunk`` stays
    one when no override exists and no rule matches any of its URLs, else
    becomes its entries; a ``RenderedChunk`` stays one when no override and
    no rule exists. The overrides and rules of ``fallback_host`` apply
    where ``host`` has none of its own.
    """
    if not app_settings.OVERRIDES or not table_ready():
        yield from chunks
        return
    lookup = _Lookup(section, host, alternate_hosts, fallback_host)
    for chunk in chunks:
        yield lookup.apply(chunk)


def chunk_overrides(
    section: str = "",
    host: str | None = None,
    alternate_hosts: Sequence[str] = (),
    fallback_host: str | None = None,
) -> Callable[[Chunk], Chunk] | None:
    """:func:`apply_overrides` for one document read in several parts: the function that
    applies them to a chunk, reading the rules once; None when overrides are off."""
    if not app_settings.OVERRIDES or not table_ready():
        return None
    return _Lookup(section, host, alternate_hosts, fallback_host).apply


class _Lookup:
    """The overrides of one document, read all at once when they are few, else chunk by chunk,
    and the rules that apply to it.

    An override on ``host`` wins over one on ``fallback_host``, which wins over the
    host-less one of its location; they are merged into one dict per host once
    (per document when preloaded, else per chunk), so each URL costs one lookup.
    An alternate on another host is decided by that host's overrides
    (``found_on``, by the host as URIs spell it), built only when an override
    names this document's host or an alternate's, and alternates are on other
    hosts.
    """

    def __init__(
        self,
        section: str,
        host: str | None,
        alternate_hosts: Sequence[str],
        fallback_host: str | None = None,
    ) -> None:
        self.everything: dict[str, OverrideValues] | None = None
        self.first = True
        self.section = section
        self.host = host
        self.rules = EMPTY
        self.alternate_hosts = alternate_hosts
        # The rules of the other hosts alternates name, by the host as URIs spell it.
        self.host_rules: dict[str, RuleSet] = {}
        # The host as overrides store it, by the host as URIs spell it (own first).
        self.stored_hosts: dict[str, str] = {}
        if host:
            self.stored_hosts[ascii_host(host)] = canonical_host(host)
        for other in alternate_hosts:
            self.stored_hosts.setdefault(ascii_host(other), canonical_host(other))
        self.own = canonical_host(host) if host else ""
        fallback = canonical_host(fallback_host) if fallback_host else ""
        self.fallback = fallback if fallback != self.own else ""
        # The preloaded overrides of each host alternates are on; "" for any other host.
        self.found_on: dict[str, dict[str, OverrideValues]] | None = None
        # Whether an override names this document's host or an alternate's: else a
        # chunk's URLs are looked up by their host-less digest alone.
        self.named = True

    def apply(self, chunk: Chunk) -> Chunk:
        if self.first:
            self.first = False
            # Before any URL is keyed: most sites store no override, or a few.
            hosts = [*self.stored_hosts.values(), *([self.fallback] if self.fallback else [])]
            preloaded, self.named = _first_rows(PRELOAD_LIMIT + 1, list(dict.fromkeys(hosts)))
            if len(preloaded) <= PRELOAD_LIMIT:
                self.everything = _merged(preloaded, self.own, self.fallback)
                self.found_on = self._found_on(preloaded, self.everything)
            self.rules = fetch_rules(self.section, self.host, self.fallback)
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
        nothing = self.everything == {} and self.found_on is None
        if nothing and not rules and not host_rules:
            return chunk  # no override, no rule (most sites): no key per URL either
        if isinstance(chunk, RenderedChunk):
            chunk = chunk.entries()  # its XML is the entries', which may change now
        if nothing:
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
        if nothing:
            return _apply(chunk, None, {}, rules, host_rules)  # no override: no key per URL
        keys = [uri_key(loc) for loc, _lastmod, _changefreq, _priority, _extras in chunk]
        if self.everything is not None:
            found, found_on = self.everything, self.found_on
        else:
            found, found_on = self._fetch(chunk, keys)
        return _apply(chunk, keys, found, rules, host_rules, found_on)

    def _found_on(
        self, rows: list[OverrideRow], found: dict[str, OverrideValues]
    ) -> dict[str, dict[str, OverrideValues]] | None:
        """Each alternate host's overrides; None when ``found`` decides every alternate:
        no row names the document's host or an alternate's (most sites), or no
        alternate is on another host."""
        named = {host for host, _location, _values in rows if host}
        if not named or not self.alternate_hosts or named.isdisjoint(self.stored_hosts.values()):
            return None
        found_on = {"": _merged(rows, "")}
        for spelled, stored in self.stored_hosts.items():
            found_on[spelled] = found if stored == self.own else _merged(rows, stored)
        return found_on

    def _fetch(
        self, chunk: Sequence[EntryTuple], keys: list[str]
    ) -> tuple[dict[str, OverrideValues], dict[str, dict[str, OverrideValues]] | None]:
        """The overrides of one chunk's URLs and alternates, on their hosts (one query)."""
        from .models import location_hash

        if not self.named:  # no override of these hosts: one digest per URL, as ever
            wanted = set(keys)
            wanted.update(uri_key(href) for href in _alternate_hrefs(chunk))
            return _merged(_fetch_rows([location_hash(key) for key in wanted]), ""), None
        pairs = {(key, self.own) for key in keys}
        if self.fallback:
            pairs.update((key, self.fallback) for key in keys)
        for href in _alternate_hrefs(chunk):
            pairs.add((uri_key(href), self.stored_hosts.get(_uri_host(href), "")))
        digests = {location_hash(key) for key, _host in pairs}
        digests.update(location_hash(key, host) for key, host in pairs if host)
        rows = _fetch_rows(list(digests))
        found = _merged(rows, self.own, self.fallback)
        return found, self._found_on(rows, found)


def _uri_host(uri: str) -> str:
    """The host of an absolute URI as it spells it (with any port)."""
    start = uri.find("://") + 3
    end = uri.find("/", start)
    return uri[start:] if end == -1 else uri[start:end]


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
    return host_rules.get(_uri_host(href), rules)


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
    found_on: Mapping[str, dict[str, OverrideValues]] | None = None,
) -> Sequence[EntryTuple]:
    """``chunk`` with its overrides (by ``keys``, None when there is none) and rules applied.

    ``found`` holds the overrides of the document's host; ``host_rules`` and
    ``found_on`` the rules and overrides of other hosts an alternate may be on.
    """
    if not found and not rules and not host_rules and not found_on:
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
                id(extras), _prune(extras, excluded, found, rules, host_rules, found_on)
            )
        result.append((loc, lastmod, changefreq, priority, extras))
    return result


def _prune(
    extras: Extras,
    excluded: set[str],
    found: dict[str, OverrideValues],
    rules: RuleSet,
    host_rules: Mapping[str, RuleSet] | None = None,
    found_on: Mapping[str, dict[str, OverrideValues]] | None = None,
) -> Extras:
    """``extras`` without the alternates the sitemap leaves out.

    An alternate on another host is decided by that host's rules and overrides
    (``host_rules``, ``found_on``: by the host as the URI spells it, ``""`` in
    ``found_on`` for a host neither names).
    """
    kept = []
    for link in extras.alternates:
        href = link[1]
        if href in excluded:
            continue
        overrides = found if not found_on else found_on.get(_uri_host(href), found_on[""])
        values = decide(href, overrides.get(uri_key(href)), _rules_of(href, rules, host_rules))
        if values is not None and values[0]:
            continue
        kept.append(link)
    if len(kept) == len(extras.alternates):
        return extras
    return extras._replace(alternates=tuple(kept))


def fetch_rules(
    section: str = "", host: str | None = None, fallback_host: str | None = None
) -> RuleSet:
    """The rules of ``section`` (every rule when empty) on ``host``, compiled (one query).

    With ``host`` None, the rules of every host. Those of ``fallback_host`` (see
    :func:`apply_overrides`) apply on ``host`` too, in their positions.
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
        hosts = [canonical_host(name) for name in (host, fallback_host) if name]
        rows = rows.filter(host__in=["", *hosts])
    compiled = []
    for pk, matching, pattern, exclude, lastmod, changefreq, priority in rows.values_list(
        "pk", "matching", "pattern", "exclude", "lastmod", "changefreq", "priority"
    ):
        values = _format([exclude, lastmod, changefreq, priority])
        compiled.append(CompiledRule(pk, matching, pattern, values))
    return RuleSet(compiled) if compiled else EMPTY


_FIELDS = ("host", "location", "exclude", "lastmod", "changefreq", "priority")

# One override row as the hot path reads it: (host, location, values).
OverrideRow = tuple[str, str, OverrideValues]


def fetch(
    keys: Iterable[str], host: str | None = None, fallback_host: str | None = None
) -> dict[str, OverrideValues]:
    """The overrides of these location keys that apply on ``host``, formatted as protocol
    text (one query): the host's own, else ``fallback_host``'s (see :func:`apply_overrides`),
    else the host-less one. With ``host`` None (or empty), the host-less ones only.
    """
    from .models import location_hash

    own = canonical_host(host) if host else ""
    fallback = canonical_host(fallback_host) if own and fallback_host else ""
    digests = []
    for key in keys:
        digests.append(location_hash(key))
        digests.extend(location_hash(key, name) for name in (own, fallback) if name)
    return _merged(_fetch_rows(digests), own, fallback)


def override_on(location: str, host: str | None, fallback_host: str | None = None) -> Any:
    """The ``Override`` of location key ``location`` that applies on ``host`` (one query):
    the host's own, else the one of ``fallback_host`` (see :func:`apply_overrides`), else
    the one of every host; None when none exists."""
    from .models import Override, location_hash

    order = [canonical_host(name) for name in (host, fallback_host) if name]
    order.append("")
    digests = [location_hash(location, name) for name in dict.fromkeys(order)]
    found = Override.objects.filter(location_hash__in=digests)
    return min(found, key=lambda override: order.index(override.host), default=None)


def _fetch_rows(digests: list[str]) -> list[OverrideRow]:
    from .models import Override

    rows = Override.objects.filter(_hash_in(digests)).values_list(*_FIELDS)
    return [(host, location, _format(row)) for host, location, *row in rows]


def _first_rows(count: int, hosts: Sequence[str] = ()) -> tuple[list[OverrideRow], bool]:
    """The first ``count`` overrides by primary key, and whether any override (of them or
    not) names one of ``hosts``: asked in the same query, through the host's index."""
    from .models import Override

    if not hosts:
        rows = Override.objects.order_by("pk").values_list(*_FIELDS)[:count]
        return [(host, location, _format(row)) for host, location, *row in rows], False
    named = Exists(Override.objects.filter(host__in=hosts))
    flagged = Override.objects.order_by("pk").annotate(named=named).values_list(*_FIELDS, "named")
    found: list[OverrideRow] = []
    any_named = False
    for host, location, *row, is_named in flagged[:count]:
        found.append((host, location, _format(row)))
        any_named = bool(is_named)
    return found, any_named


def _merged(rows: list[OverrideRow], host: str, fallback: str = "") -> dict[str, OverrideValues]:
    """``location -> values`` on ``host``: the host-less overrides, ``fallback``'s over them,
    the host's own over both."""
    merged = {location: values for stored, location, values in rows if not stored}
    for name in (fallback, host):
        if name:
            merged.update((key, values) for stored, key, values in rows if stored == name)
    return merged


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


def adjust_index(
    listed: list[ListedPage],
    host: str | None = None,
    fallback_hosts: Mapping[str, str] | None = None,
) -> list[ListedPage]:
    """Raise each page's lastmod to the latest forced lastmod placed on it (two queries).

    Overrides raise the page they were placed on, those of ``host`` and those
    of no host (every override when ``host`` is None). A rule's forced lastmod
    raises every page of the sections it applies to on ``host`` (every host
    when None): the index cannot tell which pages hold a URL the rule matches
    without reading them, and a page announced as changed that did not is
    the cheaper mistake. ``fallback_hosts`` maps a section to its document's
    fallback host (``Source.fallback_host()``), whose overrides and rules apply
    there too: they were placed on that host's pages, not these, so each raises
    every page of the section (two more queries).
    """
    if not listed or not app_settings.OVERRIDES or not table_ready():
        return listed
    forced = forced_page_lastmods(host)
    ruled = forced_rule_lastmods(host)
    fallen = forced_fallback_lastmods(fallback_hosts) if host and fallback_hosts else {}
    if not forced and not ruled and not fallen:
        return listed
    adjusted = []
    for listed_page in listed:
        candidates = [
            forced.get((listed_page.section, listed_page.summary.number)),
            ruled.get(""),
            ruled.get(listed_page.section),
            fallen.get(listed_page.section),
        ]
        for latest in candidates:
            if latest is not None and is_later(latest, listed_page.summary.lastmod):
                text = lastmod_text_or_none(latest)
                if text is not None:
                    summary = dataclasses.replace(listed_page.summary, lastmod=text)
                    listed_page = dataclasses.replace(listed_page, summary=summary)
        adjusted.append(listed_page)
    return adjusted


def forced_fallback_lastmods(fallback_hosts: Mapping[str, str]) -> dict[str, datetime.datetime]:
    """``section -> latest forced lastmod`` of the included overrides (placed on a page)
    and rules of the section's fallback host (``fallback_hosts``: section -> host)."""
    from .models import Override, Rule, table_exists

    hosts = {section: canonical_host(name) for section, name in fallback_hosts.items()}
    latest: dict[str, datetime.datetime] = {}

    def keep(section: str, when: datetime.datetime) -> None:
        if section not in latest or when > latest[section]:
            latest[section] = when

    placed = Override.objects.filter(
        lastmod__isnull=False,
        exclude=False,
        page__isnull=False,
        section__in=list(hosts),
        host__in=set(hosts.values()),
    )
    for section, host, when in (
        placed.order_by().values_list("section", "host").annotate(latest=Max("lastmod"))
    ):
        if hosts[section] == host:
            keep(section, when)
    if table_exists(Rule, router.db_for_read(Rule)):
        rules = Rule.objects.filter(
            lastmod__isnull=False,
            exclude=False,
            section__in=["", *hosts],
            host__in=set(hosts.values()),
        )
        for ruled, host, when in (
            rules.order_by().values_list("section", "host").annotate(latest=Max("lastmod"))
        ):
            for section, fallback in hosts.items():
                if fallback == host and ruled in ("", section):
                    keep(section, when)
    return latest


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


def forced_page_lastmods(host: str | None = None) -> dict[tuple[str, int], datetime.datetime]:
    """``(section, page) -> latest forced lastmod`` of the placed, included overrides
    on ``host`` or on every host (all of them when ``host`` is None)."""
    from .models import Override

    placed = Override.objects.filter(lastmod__isnull=False, exclude=False, page__isnull=False)
    if host is not None:
        placed = placed.filter(host__in=["", canonical_host(host)])
    rows = (
        placed.exclude(section="")
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


# An override's (host, location): ``""`` for the host of one that applies on every host.
Target = tuple[str, str]


def _target(location: str | Target) -> Target:
    return ("", location) if isinstance(location, str) else location


def affected_documents(
    changes: Iterable[tuple[str | Target, Iterable[Place | None]]],
) -> AffectedDocuments:
    """What ``(location, places before and after)`` pairs touch.

    A location is a location key (an override of every host) or a ``(host, location)``.
    """
    locations: set[str] = set()
    pages: set[tuple[str, int]] = set()
    everything = False
    for location, places in changes:
        locations.add(_target(location)[1])
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
    changes: Iterable[tuple[str | Target, Iterable[Place | None]]],
    before: Mapping[str | Target, Shown | None] | None = None,
) -> AffectedDocuments:
    """Send ``overrides_changed`` for these changes and return what they affect.

    A change's location is a location key, for an override of every host, or
    ``(host, location key)`` (``host`` empty for every host). ``before`` gives,
    per location so named, what its override showed before the change
    (:data:`NOT_OVERRIDDEN` when there was none); a location it leaves out, or
    maps to None, is unknown.
    """
    changes = [(_target(location), list(places)) for location, places in changes]
    affected = affected_documents(changes)
    if affected.locations:
        known = {_target(key): value for key, value in (before or {}).items() if value is not None}
        overrides_changed.send(
            sender=sender,
            locations=affected.locations,
            pages=affected.pages,
            everything=affected.everything,
            affected=affected,
            before={location: value for (host, location), value in known.items() if not host},
            host_locations=frozenset(target for target, _places in changes),
            host_before=known,
        )
    return affected
