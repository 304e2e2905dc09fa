"""App configs: the default autodiscovers ``<app>/sitemapx.py`` modules."""

from __future__ import annotations

from django.apps import AppConfig


class SimpleSitemapxConfig(AppConfig):
    """django-sitemapx without autodiscovery (register sections yourself)."""

    name = "django_sitemapx"
    label = "django_sitemapx"
    verbose_name = "Sitemap"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import (
            checks,  # noqa: F401  (registers the system checks)
            handlers,  # noqa: F401  (connects the receivers: overrides, cache invalidation)
        )


class SitemapxConfig(SimpleSitemapxConfig):
    """The default config: also imports every installed app's sitemap module."""

    default = True

    def ready(self) -> None:
        super().ready()
        from .registry import site

        site.autodiscover()
