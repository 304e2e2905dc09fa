"""Receivers: the URLs a saved or deleted row, or a changed override, changes.

IndexNow tells search engines only about URLs the sitemap lists, or listed
until the change (a URL that was unpublished, deleted or excluded): never one
it did not list before or after, such as an override prepared for an
unpublished page, or a URL excluded all along. And only when the change alters
what the sitemap says of the URL: its location or lastmod (the row values its
entry is written from), or an override's values; a save that changes neither
queues nothing.

Each receiver does nothing unless IndexNow is on. A row's entries are read from
the database as its section lists them: before the change and after the
commit. Every failure is logged and swallowed: a submission must never fail the
save that caused it.

A change to a related row (a category's slug in its articles' URLs) is not
followed: call ``indexnow.queue_urls()`` for such URLs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models.signals import post_save, pre_delete, pre_save
from django.dispatch import receiver

from .. import removed
from ..documents import read_chunks
from ..locations import LocationBuilder, Origin
from ..locations.hosts import canonical_host
from ..locations.keys import uri_key
from ..locations.origins import served_origins
from ..overrides import NOT_OVERRIDDEN, Shown, Target, fetch_rules, shown
from ..registry import default_registry
from ..signals import overrides_changed
from ..sources import ModelSource
from ..sources.base import is_overridden
from . import is_enabled, queue_urls

logger = logging.getLogger("django_sitemapx.indexnow")

# The URLs a row had before it was saved, kept on the instance until post_save.
_BEFORE = "_sitemapx_indexnow_before"


def _sources_of(instance: models.Model) -> list[ModelSource]:
    model = instance._meta.concrete_model
    return [
        source
        for source in default_registry
        if isinstance(source, ModelSource)
        and source.model is not None
        and source.model_signals
        and source.model._meta.concrete_model is model
    ]


# One entry of a row: (URI, the row values it is written from).
Listing = tuple[str, Any]

# Entries scanned per section that cannot be searched by query (in-memory items,
# get_absolute_url() or a custom location()) to tell whether it lists an
# override's URL; past it the URL counts as not listed (it is not announced).
SCAN_LIMIT = 200_000


def _listings(instance: models.Model, sources: list[ModelSource]) -> list[Listing]:
    listings: list[Listing] = []
    for source in sources:
        # Only the hosts that serve the section, with the rows it lists there.
        origins = [origin for origin in served_origins(source.protocol) if source.serves(origin)]
        for group in _host_groups(source, origins):
            bound = source.for_origin(group[0])
            assert isinstance(bound, ModelSource)
            listings += bound.listings_of(instance, [LocationBuilder(o) for o in group])
    return listings


def _host_groups(source: ModelSource, origins: list[Origin]) -> list[list[Origin]]:
    """The origins whose rows one query can read: all of them, unless the section's
    rows or locations may depend on the host (its own ``get_queryset`` or ``location``)."""
    if not origins:
        return []
    if is_overridden(source, ModelSource, "get_queryset") or source.has_custom_location:
        return [[origin] for origin in origins]
    return [origins]


def _listings_before_change(
    instance: models.Model, sources: list[ModelSource], using: str | None
) -> list[Listing] | None:
    """The row's entries inside the transaction changing it, without ever breaking it.

    None when they could not be read.
    """
    try:
        if transaction.get_connection(using).in_atomic_block:
            # A failing query must not abort the caller's transaction: a savepoint
            # confines it.
            with transaction.atomic(using=using):
                return _listings(instance, sources)
        return _listings(instance, sources)
    except Exception:
        logger.exception("IndexNow: the URLs of %r could not be read; not submitted.", instance)
        return None


def _changed_uris(before: list[Listing], after: list[Listing]) -> list[str]:
    """The URIs whose entry appeared, went away or changed, in the order listed."""
    # Lists, not sets: a row's values may hold what cannot be hashed (a JSONField's).
    changed = [uri for uri, values in before if (uri, values) not in after]
    changed += [uri for uri, values in after if (uri, values) not in before]
    return list(dict.fromkeys(changed))


def queue_listed(
    uris: list[str], removed_uris: Sequence[str] = (), returned: Sequence[str] = ()
) -> None:
    """Queue ``uris`` for IndexNow and record ``removed_uris`` (and ``returned``) for the
    removed-pages section, less those the sitemap never listed: an override, or a
    rule with no override of the URL's, excludes them."""
    unlisted = _unlisted([*uris, *removed_uris])
    if is_enabled():
        queue_urls(uri for uri in uris if uri not in unlisted)
    if removed.sections():
        removed.record((uri for uri in removed_uris if uri not in unlisted), returned)


def _unlisted(uris: list[str]) -> set[str]:
    from ..models import Override, location_hash

    if not uris:
        return set()
    keys = {uri: uri_key(uri) for uri in uris}
    hosts = {uri: _host_of(uri) for uri in uris}
    hashes = {location_hash(key) for key in keys.values()}
    hashes.update(location_hash(keys[uri], hosts[uri]) for uri in uris)
    rows = Override.objects.filter(location_hash__in=list(hashes)).values_list(
        "host", "location", "exclude"
    )
    overridden = {(host, location): exclude for host, location, exclude in rows}
    unlisted: set[str] = set()
    by_host: dict[str, list[str]] = {}
    for uri, key in keys.items():
        # The override of the URL's host decides there, else the one of every host.
        exclude = overridden.get((hosts[uri], key), overridden.get(("", key)))
        if exclude:
            unlisted.add(uri)
        elif exclude is None:
            by_host.setdefault(urlsplit(uri).netloc, []).append(uri)
    for host, candidates in by_host.items():
        # Every section's rules: a rule of another section excluding the URL keeps it
        # unannounced, the safe side.
        decided = fetch_rules("", host).decide(candidates)
        unlisted.update(candidates[index] for index, values in decided.items() if values[0])
    return unlisted


def _host_of(uri: str) -> str:
    """The canonical host of ``uri``, as an override of that host stores it."""
    parts = urlsplit(uri)
    return canonical_host(parts.netloc, parts.scheme)


def active() -> bool:
    """Whether anyone listens: IndexNow, or a removed-pages section."""
    return is_enabled() or bool(removed.sections())


def _queue_after_commit(
    instance: models.Model, sources: list[ModelSource], before: list[Listing], using: str | None
) -> None:
    def run() -> None:
        after = _listings(instance, sources)
        listed_after = list(dict.fromkeys(uri for uri, _values in after))
        gone = [uri for uri, _values in before if uri not in listed_after]
        queue_listed(_changed_uris(before, after), gone, listed_after)

    transaction.on_commit(run, using=using, robust=True)


@receiver(pre_save, dispatch_uid="django_sitemapx.indexnow.row_saving")
def row_saving(
    sender: type[models.Model], instance: models.Model, raw: bool = False, **kwargs: Any
) -> None:
    """Remember the URLs of a row about to change, which the change may move."""
    if not active() or raw or instance._state.adding or instance.pk is None:
        return
    sources = _sources_of(instance)
    if sources:
        instance.__dict__[_BEFORE] = _listings_before_change(
            instance, sources, kwargs.get("using")
        )


@receiver(post_save, dispatch_uid="django_sitemapx.indexnow.row_saved")
def row_saved(
    sender: type[models.Model], instance: models.Model, raw: bool = False, **kwargs: Any
) -> None:
    """Queue the row's URLs whose entry the save changed (moved, added, removed, re-dated)."""
    before = instance.__dict__.pop(_BEFORE, [])
    if not active() or raw or before is None:
        return
    sources = _sources_of(instance)
    if sources:
        _queue_after_commit(instance, sources, before, kwargs.get("using"))


@receiver(pre_delete, dispatch_uid="django_sitemapx.indexnow.row_deleting")
def row_deleting(sender: type[models.Model], instance: models.Model, **kwargs: Any) -> None:
    """Queue the URLs of a row being deleted, once the delete commits."""
    if not active():
        return
    sources = _sources_of(instance)
    if not sources:
        return
    using = kwargs.get("using")
    listings = _listings_before_change(instance, sources, using)
    if listings:
        uris = list(dict.fromkeys(uri for uri, _values in listings))
        transaction.on_commit(lambda: queue_listed(uris, uris), using=using, robust=True)


@receiver(overrides_changed, dispatch_uid="django_sitemapx.indexnow.overrides")
def overrides_changed_queue(
    sender: Any,
    locations: frozenset[str],
    before: Mapping[str, Shown] | None = None,
    host_locations: frozenset[Target] | None = None,
    host_before: Mapping[Target, Shown] | None = None,
    **kwargs: Any,
) -> None:
    """Queue the URLs of changed overrides (sent after commit) that the sitemap lists or
    just stopped listing, on each served host whose sections list them.

    A change that alters nothing the sitemap shows (a note, a placement) queues
    nothing; an override excluded before and after the change, or of a URL no
    section lists, neither. Where ``before`` does not know a location, an
    excluded URL is not announced. An override of one host is announced on that
    host only; one of every host on each host without an override of its own.
    """
    if not active():
        return
    if host_locations is None:  # a sender that predates Override.host: every host
        host_locations = frozenset(("", key) for key in locations)
        host_before = {("", key): value for key, value in (before or {}).items()}
    try:
        urls, gone, back = _override_urls(host_locations, host_before or {})
        if is_enabled():
            queue_urls(urls)
        if removed.sections():
            removed.record(gone, back)
    except Exception:
        logger.exception("IndexNow: the URLs of changed overrides were not queued.")


def _override_urls(
    targets: frozenset[Target], before: Mapping[Target, Shown]
) -> tuple[list[str], list[str], list[str]]:
    """The URLs to announce; those an override just excluded; those it lists again."""
    from ..models import Override, location_hash

    origins = served_origins()
    keys = {key for _host, key in targets}
    # The overrides of these locations on every served host too: one of a host, not
    # changed, keeps a change of the host-less one from showing there.
    hosts = {"", *(host for host, _key in targets), *(origin.host for origin in origins)}
    digests = [location_hash(key, host) for key in keys for host in hosts]
    rows = Override.objects.filter(location_hash__in=digests).only(*_SHOWN)
    now: dict[Target, Shown] = {
        (row.host, row.location): shown(row) or NOT_OVERRIDDEN for row in rows
    }
    urls: list[str] = []
    gone: list[str] = []
    back: list[str] = []
    for host, key in sorted(targets):
        after, was = now.get((host, key), NOT_OVERRIDDEN), before.get((host, key))
        if was == after:
            continue  # nothing the sitemap shows of this URL changed
        for origin in origins:
            if host and origin.host != host:
                continue  # an override of another host
            if not host and (origin.host, key) in now:
                continue  # this host's own override decides there
            shown_after, shown_before = after, was
            if host:
                # Where the host has no override of its own, the one of every host applies.
                every_host = now.get(("", key), NOT_OVERRIDDEN)
                if (host, key) not in now:
                    shown_after = every_host
                if was == NOT_OVERRIDDEN:
                    shown_before = every_host
                if shown_before == shown_after:
                    continue
            excluded_now = shown_after[0]
            excluded_before = shown_before is None or shown_before[0]
            if excluded_now and excluded_before:
                continue  # not listed before the change (or not known to be), nor after it
            listed = _listed_uri(origin, key)
            if listed is None:
                continue
            if shown_before in (None, NOT_OVERRIDDEN) and _rule_excludes(origin, listed):
                continue  # a rule left it out before this override existed: never listed
            urls.append(listed)
            (gone if excluded_now else back).append(listed)
    return urls, gone, back


def _rule_excludes(origin: Origin, uri: str) -> bool:
    values = fetch_rules("", origin.host).values(uri)
    return values is not None and values[0]


_SHOWN = ("host", "location", "exclude", "lastmod", "changefreq", "priority")


def _listed_uri(origin: Origin, key: str) -> str | None:
    """The URI of location key ``key`` as a section served on ``origin`` lists it, or None.

    Overrides aside: what an override excludes is still found. A one-language
    model section with ``url_name`` is asked by query (the path resolved to its
    row); any other is read entry by entry, up to ``SCAN_LIMIT`` entries.
    """
    builder = LocationBuilder(origin)
    for source in default_registry.for_origin(origin):
        # A multilingual section's other languages are in its entries, not in uris_of().
        if isinstance(source, ModelSource) and source.uses_url_name and not source.i18n:
            uri = _row_uri(source, key, builder)
            if uri is not None:
                return uri
            continue
        scanned = 0
        for summary in source.page_summaries():
            page = source.page(summary.number, summary)
            if page is not None:
                for chunk in read_chunks(page.entries(builder), {}):
                    for entry in chunk:
                        if uri_key(entry[0]) == key:
                            return entry[0]
            scanned += summary.rows
            if scanned >= SCAN_LIMIT:
                logger.info(
                    "IndexNow: section %s was searched for %s up to %s entries only; "
                    "not announced.",
                    source.section,
                    key,
                    SCAN_LIMIT,
                )
                break
    return None


def _row_uri(source: ModelSource, key: str, builder: LocationBuilder) -> str | None:
    """The URI ``source`` lists at ``key``: the row the URL resolves to's, if listed."""
    assert source.model is not None
    filters = source.row_filter_at(key)
    if filters is None:
        return None
    try:
        pks = list(source.listed_rows().filter(**filters).values_list("pk", flat=True)[:2])
    except (ValueError, TypeError, ValidationError):
        return None  # a URL value the field cannot hold: not this section's row
    for pk in pks:
        for uri in source.uris_of(source.model(pk=pk), [builder]):
            if uri_key(uri) == key:
                return uri
    return None
