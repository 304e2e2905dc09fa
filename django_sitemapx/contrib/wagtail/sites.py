"""A Wagtail ``Site``'s host as our overrides name it, and its overrides following it.

Editors' values set from a page's panel are overrides of the page's location
on its site's host (``Override.host``): :func:`site_host` is that host. A site
is served under other names too (the default site for any host no site
matches, a hostname at another port): ``WagtailPageSource.fallback_host()``
makes the site's own overrides apply there. When a site's hostname or port
changes, :func:`move_overrides` moves the overrides of its old host to the
new one, in the transaction of the change (``handlers``).

Overrides stay keyed by host, not by site: a host is what the Django admin,
the CSV files and the rules name, what a copy of the database into another
environment keeps meaning, and what survives a site deleted and made again.
Moving them is one ``UPDATE`` per hundred rows of the site's host.
"""

from __future__ import annotations

import logging

from django.db import router, transaction

from ...locations.hosts import canonical_host

logger = logging.getLogger("django_sitemapx")


def site_host(hostname: str, port: int) -> str:
    """The host a site with ``hostname`` and ``port`` is served on, canonical.

    As its ``root_url`` spells it (``Site.root_url``): port 80 is http's and 443
    https's default, so neither is part of it; any other port is.
    """
    scheme = "https" if port == 443 else "http"
    return canonical_host(f"{hostname}:{port}", scheme)


def move_overrides(before: str, after: str) -> list[str]:
    """Give the overrides of host ``before`` to host ``after``; the locations moved.

    An override whose location ``after`` already has one of its own stays on
    ``before`` (logged): the one of ``after`` was set for that host, and what
    it shows there is kept.
    """
    from ...models import Override, location_hash

    if not before or not after or before == after:
        return []
    using = router.db_for_write(Override)
    with transaction.atomic(using=using):
        rows = list(
            Override.objects.using(using)
            .select_for_update()
            .filter(host=before)
            .only("pk", "location", "host", "location_hash")
        )
        taken = set(
            Override.objects.using(using)
            .filter(host=after, location__in=[row.location for row in rows])
            .values_list("location", flat=True)
        )
        moved = []
        for row in rows:
            if row.location in taken:
                logger.warning(
                    "The override of %s%s stays on %s: %s has its own.",
                    before,
                    row.location,
                    before,
                    after,
                )
                continue
            row.host = after
            row.location_hash = location_hash(row.location, after)
            moved.append(row)
        Override.objects.using(using).bulk_update(moved, ["host", "location_hash"], batch_size=100)
    return [row.location for row in moved]
