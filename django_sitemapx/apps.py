"""App configs: the default one autodiscovers ``<app>/sitemapx.py`` modules."""

from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class SimpleSitemapxConfig(AppConfig):
    """django-sitemapx without autodiscovery (register sections yourself)."""

    name = "django_sitemapx"
    label = "django_sitemapx"
    verbose_name = "Sitemap"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import handlers  # noqa: F401  (connects the receivers)
        from .checks import (
            check_cache_capacity,
            check_deployment,
            check_discovery,
            check_export,
            check_language_hosts,
            check_people,
            check_settings,
            check_site_id,
            check_site_ids,
            check_sources,
        )
        from .indexnow import handlers as indexnow_handlers  # noqa: F401

        checks.register(check_settings)
        checks.register(check_discovery)
        checks.register(check_people)
        checks.register(check_export)
        checks.register(check_language_hosts)
        checks.register(check_sources, checks.Tags.urls)
        checks.register(check_site_ids, checks.Tags.database)
        checks.register(check_cache_capacity, checks.Tags.database)
        checks.register(check_site_id, checks.Tags.database)
        checks.register(check_deployment, checks.Tags.caches, deploy=True)


class SitemapxConfig(SimpleSitemapxConfig):
    """The default config: also imports every installed app's sitemap module."""

    default = True

    def ready(self) -> None:
        super().ready()
        self.module.autodiscover()  # type: ignore[union-attr]
