"""System checks of the Wagtail source (the 4xx range is contrib's).

- W401 (a database check) a Wagtail ``Site``'s hostname is not in ``ALLOWED_HOSTS``:
  its sitemap (and its pages) answer 400 there.
- W402 (``WagtailPageSource.check()``) a ``WagtailPageSource`` is registered but
  ``django_sitemapx.contrib.wagtail`` is not in ``INSTALLED_APPS``: Wagtail's page events
  invalidate nothing.
"""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.db import DatabaseError
from django.http.request import validate_host

from ...registry import all_registries
from .sources import WagtailPageSource

Messages = list[checks.CheckMessage]


def warning(message: str, number: str, hint: str | None = None, obj: Any = None) -> checks.Warning:
    """A warning with the ID ``django_sitemapx.<number>``."""
    return checks.Warning(message, hint=hint, obj=obj, id=f"django_sitemapx.{number}")


def _sources() -> list[WagtailPageSource]:
    return [
        source
        for registry in list(all_registries)
        for source in registry
        if isinstance(source, WagtailPageSource)
    ]


def check_wagtail_hosts(databases: Any = None, **kwargs: Any) -> Messages:
    """W401: Wagtail sites on hosts Django refuses (needs the database)."""
    if not databases or not apps.is_installed("wagtail") or not _sources():
        return []
    from wagtail.models import Site

    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    try:
        hostnames = list(Site.objects.order_by("hostname").values_list("hostname", flat=True))
    except DatabaseError:  # not migrated yet
        return []
    return [
        warning(
            f"The Wagtail site {hostname!r} is not in ALLOWED_HOSTS: its sitemap answers 400.",
            "W401",
            hint="Add the hostname to ALLOWED_HOSTS, or correct the site's hostname.",
        )
        for hostname in dict.fromkeys(hostnames)
        if not validate_host(hostname.lower(), allowed)
    ]
