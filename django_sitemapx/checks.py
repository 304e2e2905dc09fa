"""System checks. IDs are stable; docs/reference/checks.md lists them all.

- E001 ``SITEMAPX_LIMIT`` is not an integer from 1 to 50,000.
- E002 ``SITEMAPX_PROTOCOL`` is not ``None``, ``"http"`` or ``"https"``.
- E003 a source declares an invalid limit, protocol, changefreq, priority or lastmod.
- E004 ``SITEMAPX_CHUNK_SIZE`` is not a positive integer.
- E005 ``register(model)`` was called with no source and never used as a decorator.
- E006 a ``StaticSource`` URL name cannot be reversed.
- E007 a ``ModelSource`` has no model.
- E008 a ``ModelSource`` key is not a unique integer field.
- E009 a ``ModelSource`` ``lastmod_field`` is not a date or datetime field.
- E010 a ``ModelSource`` ``url_name`` cannot be reversed with its ``url_kwargs``.
- E011 a ``ModelSource`` names a field its queryset cannot select.
- E012 ``SITEMAPX_EXPORT_STORAGE`` or ``SITEMAPX_SERVE_FROM_STORAGE`` is not a ``STORAGES`` alias.
- W001 a ``ModelSource`` builds a model instance per URL (``get_absolute_url``).
"""

from __future__ import annotations

from typing import Any

from django.core import checks

from .conf import PROTOCOL_MAX_URLS, app_settings
from .registry import site


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@checks.register()
def check_settings(**kwargs: Any) -> list[checks.CheckMessage]:
    """Settings that the app reads."""
    errors: list[checks.CheckMessage] = []
    limit = app_settings.LIMIT
    if not _is_int(limit) or not 1 <= limit <= PROTOCOL_MAX_URLS:
        errors.append(
            checks.Error(
                f"SITEMAPX_LIMIT must be an integer from 1 to {PROTOCOL_MAX_URLS}, not {limit!r}.",
                hint="The sitemaps.org protocol allows at most 50,000 URLs per sitemap.",
                id="django_sitemapx.E001",
            )
        )
    if app_settings.PROTOCOL not in (None, "http", "https"):
        errors.append(
            checks.Error(
                f"SITEMAPX_PROTOCOL must be None, 'http' or 'https', not "
                f"{app_settings.PROTOCOL!r}.",
                id="django_sitemapx.E002",
            )
        )
    chunk_size = app_settings.CHUNK_SIZE
    if not _is_int(chunk_size) or chunk_size < 1:
        errors.append(
            checks.Error(
                f"SITEMAPX_CHUNK_SIZE must be a positive integer, not {chunk_size!r}.",
                id="django_sitemapx.E004",
            )
        )
    return errors


@checks.register(checks.Tags.urls)
def check_sources(**kwargs: Any) -> list[checks.CheckMessage]:
    """Every registered source, and registrations left unfinished."""
    errors: list[checks.CheckMessage] = []
    for section, origin in site.pending().items():
        errors.append(
            checks.Error(
                f"register() for section {section!r} at {origin} was given no source and "
                "was not used as a decorator, so nothing was registered.",
                hint="Pass a source class or options, or put @register(...) above a class.",
                id="django_sitemapx.E005",
            )
        )
    for source in site:
        errors.extend(source.check())
    return errors


@checks.register()
def check_export_storages(**kwargs: Any) -> list[checks.CheckMessage]:
    """The storage aliases that the export and the stored-file views use."""
    from django.core.files.storage import storages

    errors: list[checks.CheckMessage] = []
    for setting in ("EXPORT_STORAGE", "SERVE_FROM_STORAGE"):
        alias = getattr(app_settings, setting)
        if alias is not None and (not isinstance(alias, str) or alias not in storages.backends):
            errors.append(
                checks.Error(
                    f"SITEMAPX_{setting} is {alias!r}, which is not an alias in STORAGES.",
                    hint=f"Known aliases: {', '.join(sorted(storages.backends))}.",
                    id="django_sitemapx.E012",
                )
            )
    return errors
