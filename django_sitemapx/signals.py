"""Signals other code (a cache, a CDN purge) can listen to.

``overrides_changed`` is sent after overrides are created, changed or deleted,
by the model's save and delete and by the admin's bulk actions (which update
in SQL and so send no ``post_save``). Keyword arguments:

- ``locations``: the location keys that changed (``normalise.location_key``);
- ``pages``: ``frozenset`` of ``(section, page)`` whose ``<urlset>`` changed,
  before and after the change;
- ``everything``: True when some override is not placed on a page (its URL was
  not found when it was saved), so no page can be ruled out: drop every page.

The index is affected by any change (a forced lastmod, an excluded URL), so a
receiver should always drop the cached index too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.dispatch import Signal

overrides_changed = Signal()

sitemap_invalidated = Signal()
"""Sent after cached documents were invalidated (``django_sitemapx.invalidate``).

Keyword arguments: ``section`` (None: every section) and ``page`` (None: every
page of ``section``). Connect to it to purge a CDN or notify search engines.
"""


@dataclass(frozen=True)
class AffectedDocuments:
    """The documents a set of override changes may have altered."""

    locations: frozenset[str]
    pages: frozenset[tuple[str, int]]
    everything: bool

    @property
    def index(self) -> bool:
        """The index always changes with an override (lastmods, excluded pages)."""
        return True


Place = tuple[str, int | None]


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
    sender: type, changes: Iterable[tuple[str, Iterable[Place | None]]]
) -> AffectedDocuments:
    """Send ``overrides_changed`` for these changes and return what they affect."""
    affected = affected_documents(changes)
    if affected.locations:
        overrides_changed.send(
            sender=sender,
            locations=affected.locations,
            pages=affected.pages,
            everything=affected.everything,
            affected=affected,
        )
    return affected
