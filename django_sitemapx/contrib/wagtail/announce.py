"""What a Wagtail site lists on each of its hosts, and the announcement of a new host.

The page events' receivers (``handlers``) find the Wagtail sections and bind them
to each site's host here; a site whose hostname or port changed has every URL it
lists on its new host queued for IndexNow by :func:`announce_moved_site`, which
``tasks`` runs in a worker when the project has a task backend.
"""

from __future__ import annotations

import logging

from ...documents import read_chunks
from ...indexnow.handlers import queue_listed
from ...locations import LocationBuilder, Origin
from ...locations.hosts import canonical_host
from ...locations.origins import scheme_for, served_hosts
from ...registry import SitemapRegistry, default_registry
from .sources import WagtailPageSource

# URLs of a moved site whose overrides and rules are read at once before they are queued.
ANNOUNCE_CHUNK = 1_000

logger = logging.getLogger("django_sitemapx.indexnow")


def wagtail_sources(registry: SitemapRegistry | None = None) -> list[WagtailPageSource]:
    """Every registered ``WagtailPageSource``."""
    return [
        source for source in registry or default_registry if isinstance(source, WagtailPageSource)
    ]


def site_origins(source: WagtailPageSource) -> list[Origin]:
    """The origin of each Wagtail ``Site``'s host, as requests for it are spelled."""
    from wagtail.models import Site

    origins = []
    for hostname, port in Site.objects.order_by("pk").values_list("hostname", "port"):
        scheme = scheme_for(source.protocol, "https" if port == 443 else "http")
        default = 443 if scheme == "https" else 80
        host = hostname if port in (default, 80, 443) else f"{hostname}:{port}"
        origins.append(Origin(scheme, host.lower()))
    return origins


def bound_sources(source: WagtailPageSource) -> list[WagtailPageSource]:
    """``source`` bound to each Wagtail site's host it is served on."""
    found = []
    for origin in site_origins(source):
        bound = source.for_origin(origin)
        assert isinstance(bound, WagtailPageSource)
        if bound.tree is not None:
            found.append(bound)
    return found


def announce_moved_site(old: str, new: str) -> int:
    """Queue for IndexNow every URL a site lists on its ``new`` host, and the same URLs on
    its ``old`` host while this project still serves it (they are gone or changed there).

    Every document of the site on the new host is read: a hostname change is rare, and
    each of its URLs is new to search engines. A host the project does not serve
    (``served_hosts()``) is not announced: IndexNow could not find its key there.
    Returns how many URLs were offered to the queue (those the sitemap does not
    list are left out there, ``queue_listed``).
    """
    served = {canonical_host(host) for host in served_hosts()}
    if new not in served:
        logger.warning("IndexNow: %s is not a host this site serves; its URLs are not sent.", new)
        return 0
    uris: list[str] = []
    for source in wagtail_sources():
        for bound in bound_sources(source):
            assert bound.origin is not None
            if canonical_host(bound.origin.host, bound.origin.scheme) != new:
                continue
            builder = LocationBuilder(bound.origin)
            for summary in bound.page_summaries():
                page = bound.page(summary.number, summary)
                if page is not None:
                    for chunk in read_chunks(page.entries(builder), {}):
                        uris.extend(entry[0] for entry in chunk)
    uris = list(dict.fromkeys(uris))
    if old in served:
        uris += [_on_host(uri, new, old) for uri in uris]
    for start in range(0, len(uris), ANNOUNCE_CHUNK):
        # Each batch's overrides and rules are read in one query, as a save's are.
        queue_listed(uris[start : start + ANNOUNCE_CHUNK])
    return len(uris)


def _on_host(uri: str, host: str, other: str) -> str:
    """``uri`` of ``host`` with ``other`` in its place."""
    scheme, _, rest = uri.partition("://")
    return f"{scheme}://{other}{rest[len(host) :]}"
