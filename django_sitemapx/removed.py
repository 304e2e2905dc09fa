"""The removed-pages section: URLs the sitemap stopped listing, for a while.

Google's advice for a page that now answers 404 or 410, or carries
``noindex``, is to list it for a while in a sitemap with the removal as its
lastmod, so it is crawled, and dropped from the index, sooner. Registering a
:class:`RemovedSource` turns this on (opt-in)::

    sitemapx.register("removed", RemovedSource, days=30)

The change capture IndexNow uses (``indexnow.handlers``) then records, once a
change commits, each URL the sitemap listed and stopped listing: a row deleted
or filtered out (unpublished), or a URL an override excluded. A URL listed
again leaves the section. A URL the sitemap never listed (excluded by an
override or a rule all along) is never recorded. Entries older than ``days``
drop out by themselves (the document expires when the oldest does), and at
most ``limit`` URLs per host are kept, the most recent.
"""

from __future__ import annotations

import datetime
import hashlib
import logging
import time
from collections.abc import Iterable
from typing import Any

from django.db import router, transaction
from django.utils import timezone

from .conf import PROTOCOL_MAX_URLS
from .exceptions import NotRegistered
from .invalidation import invalidate
from .locations.hosts import canonical_host
from .models import RemovedUrl, table_exists
from .registry import SitemapRegistry, default_registry
from .sources import ItemSource

logger = logging.getLogger("django_sitemapx")


class RemovedSource(ItemSource):
    """URLs removed from the sitemap in the last ``days`` days, the removal as lastmod.

    Overrides and rules do not apply to it: an excluded URL is listed here
    because it was excluded.
    """

    days: int = 30
    limit: int | None = 10_000
    overridable = False

    def items(self) -> Iterable[Any]:
        if not _ready():
            return []
        rows = RemovedUrl.objects.filter(removed_at__gte=self._since()).order_by("-removed_at")
        if self.origin is not None:
            rows = rows.filter(host=canonical_host(self.origin.host))
        return [
            {"location": url, "lastmod": removed_at}
            for url, removed_at in rows.values_list("url", "removed_at")[: self.get_limit()]
        ]

    def expires(self) -> float | None:
        """When the oldest listed URL drops out (or in an hour, if sooner)."""
        if not _ready():
            return None
        oldest = (
            RemovedUrl.objects.filter(removed_at__gte=self._since())
            .order_by("removed_at")
            .values_list("removed_at", flat=True)
            .first()
        )
        hour = time.time() + 3600
        if oldest is None:
            return hour
        return min(hour, (oldest + datetime.timedelta(days=self.days)).timestamp())

    def _since(self) -> datetime.datetime:
        return timezone.now() - datetime.timedelta(days=self.days)

    def validate(self) -> None:
        super().validate()
        from .exceptions import SourceConfigurationError

        if not isinstance(self.days, int) or isinstance(self.days, bool) or self.days < 1:
            raise SourceConfigurationError(
                f"{type(self).__name__}.days must be a whole number of days, at least 1, "
                f"not {self.days!r}"
            )
        if self.limit is not None and self.limit > PROTOCOL_MAX_URLS:
            raise SourceConfigurationError(
                f"{type(self).__name__}.limit is at most {PROTOCOL_MAX_URLS}"
            )


def _ready() -> bool:
    return table_exists(RemovedUrl, router.db_for_write(RemovedUrl))


def sections(registry: SitemapRegistry | None = None) -> list[RemovedSource]:
    """The registered removed-pages sections (none: the capture is off)."""
    return [source for source in registry or default_registry if isinstance(source, RemovedSource)]


def url_hash(url: str) -> str:
    """The digest a removed URL is unique under."""
    return hashlib.sha256(url.encode()).hexdigest()


def _host(url: str) -> str:
    start = url.find("://")
    rest = url[start + 3 :] if start != -1 else url
    return canonical_host(rest.split("/", 1)[0])


def record(uris: Iterable[str], returned: Iterable[str] = ()) -> None:
    """Record ``uris`` as removed now and forget ``returned`` (listed again); then prune.

    Called after the change committed; the removed-pages sections are invalidated.
    """
    found = sections()
    if not found or not _ready():
        return
    removed, back = list(dict.fromkeys(uris)), list(dict.fromkeys(returned))
    if not removed and not back:
        return
    now = timezone.now()
    with transaction.atomic():
        if back:
            RemovedUrl.objects.filter(url_hash__in=[url_hash(uri) for uri in back]).delete()
        for uri in removed:
            RemovedUrl.objects.update_or_create(
                url_hash=url_hash(uri),
                defaults={"url": uri, "host": _host(uri), "removed_at": now},
            )
        _prune(found, now)
    for source in found:
        try:
            invalidate(source.section)
        except NotRegistered:
            continue


def _prune(found: list[RemovedSource], now: datetime.datetime) -> None:
    """Delete what no section lists any more: past the longest ``days``, or past ``limit``."""
    days = max(source.days for source in found)
    RemovedUrl.objects.filter(removed_at__lt=now - datetime.timedelta(days=days)).delete()
    limit = max(source.get_limit() for source in found)
    for host in RemovedUrl.objects.values_list("host", flat=True).distinct():
        rows = RemovedUrl.objects.filter(host=host).order_by("-removed_at", "-pk")
        stale = list(rows.values_list("pk", flat=True)[limit:])
        if stale:
            RemovedUrl.objects.filter(pk__in=stale).delete()
