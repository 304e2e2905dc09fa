"""The app config: connects Wagtail's page events and registers the checks."""

from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class WagtailSitemapxConfig(AppConfig):
    """``django_sitemapx.contrib.wagtail``: Wagtail's page events, the W401 check."""

    name = "django_sitemapx.contrib.wagtail"
    label = "sitemapx_wagtail"
    verbose_name = "Sitemap (Wagtail)"

    def ready(self) -> None:
        from .checks import check_wagtail_hosts
        from .handlers import connect

        connect()
        checks.register(check_wagtail_hosts, checks.Tags.database)
