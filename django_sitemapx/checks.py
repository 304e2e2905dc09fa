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
- E013 ``SITEMAPX_CACHE_ALIAS`` is neither ``None`` nor an alias in ``CACHES``.
- E014 ``SITEMAPX_CACHE_TIMEOUT`` is neither ``None`` nor a positive number.
- E015 ``SITEMAPX_CACHE_WAIT`` or ``SITEMAPX_CACHE_LOCK_TIMEOUT`` is not a positive number.
- E016 ``SITEMAPX_CACHE_CONTROL`` is neither ``None`` nor a string.
- E017 ``SITEMAPX_GZIP`` is not ``True`` or ``False``.
- E018 ``SITEMAPX_CACHE_LOCAL_BYTES`` is not a non-negative integer.
- W002 ``SITEMAPX_CACHE_ALIAS`` names a ``DummyCache``: nothing is cached.
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


def _is_positive_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


@checks.register(checks.Tags.caches)
def check_cache_settings(**kwargs: Any) -> list[checks.CheckMessage]:
    """The settings of the document cache, conditional GET and gzip."""
    from django.conf import settings

    errors: list[checks.CheckMessage] = []
    alias = app_settings.CACHE_ALIAS
    if alias is not None and alias not in settings.CACHES:
        errors.append(
            checks.Error(
                f"SITEMAPX_CACHE_ALIAS is {alias!r}, which is not an alias in CACHES.",
                hint="Name a configured cache, or set it to None to serve sitemaps uncached.",
                id="django_sitemapx.E013",
            )
        )
    elif alias is not None and settings.CACHES[alias].get("BACKEND", "").endswith(".DummyCache"):
        errors.append(
            checks.Warning(
                f"SITEMAPX_CACHE_ALIAS {alias!r} is a DummyCache: no sitemap is cached and "
                "no stampede protection applies.",
                hint="Use a real cache, or set SITEMAPX_CACHE_ALIAS = None to say so.",
                id="django_sitemapx.W002",
            )
        )
    timeout = app_settings.CACHE_TIMEOUT
    if timeout is not None and not _is_positive_number(timeout):
        errors.append(
            checks.Error(
                f"SITEMAPX_CACHE_TIMEOUT must be None or a positive number of seconds, "
                f"not {timeout!r}.",
                hint="To turn the cache off, set SITEMAPX_CACHE_ALIAS = None.",
                id="django_sitemapx.E014",
            )
        )
    for name in ("CACHE_WAIT", "CACHE_LOCK_TIMEOUT"):
        value = getattr(app_settings, name)
        if not _is_positive_number(value):
            errors.append(
                checks.Error(
                    f"SITEMAPX_{name} must be a positive number of seconds, not {value!r}.",
                    id="django_sitemapx.E015",
                )
            )
    if not isinstance(app_settings.CACHE_CONTROL, str | None):
        errors.append(
            checks.Error(
                f"SITEMAPX_CACHE_CONTROL must be None or a string, not "
                f"{app_settings.CACHE_CONTROL!r}.",
                id="django_sitemapx.E016",
            )
        )
    local_bytes = app_settings.CACHE_LOCAL_BYTES
    if not _is_int(local_bytes) or local_bytes < 0:
        errors.append(
            checks.Error(
                f"SITEMAPX_CACHE_LOCAL_BYTES must be a non-negative integer, not {local_bytes!r}.",
                hint="0 keeps no document in each process's memory.",
                id="django_sitemapx.E018",
            )
        )
    if not isinstance(app_settings.GZIP, bool):
        errors.append(
            checks.Error(
                f"SITEMAPX_GZIP must be True or False, not {app_settings.GZIP!r}.",
                id="django_sitemapx.E017",
            )
        )
    return errors
