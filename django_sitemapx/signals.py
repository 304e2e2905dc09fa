"""Signals other code (a cache, a CDN purge) can listen to.

``overrides_changed`` is sent after overrides are created, changed or deleted,
by the model's save and delete and by the admin's bulk actions (which update
in SQL and so send no ``post_save``). Keyword arguments:

- ``locations``: the location keys that changed (``locations.keys.location_key``);
- ``pages``: ``frozenset`` of ``(section, page)`` whose ``<urlset>`` changed,
  before and after the change;
- ``everything``: True when some override is not placed on a page (its URL was
  not found when it was saved), so no page can be ruled out: drop every page.
- ``affected``: the same three as one ``overrides.AffectedDocuments``;
- ``before``: what the host-less overrides of ``locations`` showed before the
  change, as ``overrides.Shown`` tuples ``(exclude, lastmod, changefreq, priority)``
  (``overrides.NOT_OVERRIDDEN`` where there was none); a location it leaves out
  is unknown. IndexNow reads it to announce only URLs the sitemap listed or lists.
- ``host_locations``: ``frozenset`` of ``(host, location)``, the overrides that
  changed, each with the host it applies on (``""``: every host). Added with
  ``Override.host``; a location in ``locations`` is on every host when a
  sender leaves this out.
- ``host_before``: ``before`` by ``(host, location)``, for the overrides of one
  host too.

The index is affected by any change (a forced lastmod, an excluded URL), so a
receiver should always drop the cached index too.
"""

from __future__ import annotations

from django.dispatch import Signal

overrides_changed = Signal()

sitemap_invalidated = Signal()
"""Sent after cached documents were invalidated (``django_sitemapx.invalidate``).

Keyword arguments: ``section`` (None: every section) and ``page`` (None: every
page of ``section``). Connect to it to purge a CDN or notify search engines.
"""
