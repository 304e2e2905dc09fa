"""The app of ``benchmarks/export_incremental.py``: the articles section alone.

Installed after django_sitemapx, so its ``ready`` runs once the example's
sections are registered, in every process (the benchmark and its workers).
"""

from __future__ import annotations

from django.apps import AppConfig


class OnlyArticlesConfig(AppConfig):
    name = "benchmarks"
    label = "sitemapx_export_bench"

    def ready(self) -> None:
        from django_sitemapx import default_registry

        for section in default_registry.sections:
            if section != "article":
                default_registry.unregister(section)
