"""Checks of the ``SITEMAPX_*`` settings: E001-E014, W001-W004."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.files.storage import storages
from django.db import DatabaseError

from ..conf import (
    PREFIX,
    PROTOCOL_MAX_URLS,
    REMOVED_SETTINGS,
    RENAMED_SETTINGS,
    SETTING_NAMES,
    app_settings,
)
from .messages import Messages, error, is_int, is_positive_number


def check_settings(**kwargs: Any) -> Messages:
    """Every ``SITEMAPX_*`` setting."""
    return [
        *_check_pages(),
        *_check_hosts(),
        *_check_app(),
        *_check_storages(),
        *_check_http(),
        *_check_cache(),
        *_check_unknown(),
    ]


def _check_pages() -> Messages:
    errors: Messages = []
    limit = app_settings.LIMIT
    if not is_int(limit) or not 1 <= limit <= PROTOCOL_MAX_URLS:
        errors.append(
            error(
                f"SITEMAPX_LIMIT must be an integer from 1 to {PROTOCOL_MAX_URLS}, not {limit!r}.",
                "E001",
                hint="The sitemaps.org protocol allows at most 50,000 URLs per sitemap.",
            )
        )
    return errors


def _check_hosts() -> Messages:
    errors: Messages = []
    protocol = app_settings.PROTOCOL
    if protocol not in (None, "http", "https"):
        errors.append(
            error(f"SITEMAPX_PROTOCOL must be None, 'http' or 'https', not {protocol!r}.", "E002")
        )
    use_sites = app_settings.USE_SITES
    if use_sites is not None and not isinstance(use_sites, bool):
        errors.append(
            error(f"SITEMAPX_USE_SITES must be None, True or False, not {use_sites!r}.", "E004")
        )
    elif use_sites and not apps.is_installed("django.contrib.sites"):
        errors.append(
            error(
                "SITEMAPX_USE_SITES is True but django.contrib.sites is not installed.",
                "E004",
                hint="Add django.contrib.sites to INSTALLED_APPS, or set it to None.",
            )
        )
    return errors


def _check_app() -> Messages:
    errors: Messages = []
    if not isinstance(app_settings.OVERRIDES, bool):
        errors.append(
            error(
                f"SITEMAPX_OVERRIDES must be True or False, not {app_settings.OVERRIDES!r}.",
                "E006",
            )
        )
    return errors


def _check_storages() -> Messages:
    errors: Messages = []
    for name in ("EXPORT_STORAGE", "SERVE_FROM_STORAGE"):
        alias = getattr(app_settings, name)
        if alias is not None and (not isinstance(alias, str) or alias not in storages.backends):
            errors.append(
                error(
                    f"SITEMAPX_{name} is {alias!r}, which is not an alias in STORAGES.",
                    "E007",
                    hint=f"Known aliases: {', '.join(sorted(storages.backends))}.",
                )
            )
    return errors


def _check_http() -> Messages:
    errors: Messages = []
    links_gzip = app_settings.INDEX_LINKS_GZIP
    if not isinstance(links_gzip, bool):
        errors.append(
            error(f"SITEMAPX_INDEX_LINKS_GZIP must be True or False, not {links_gzip!r}.", "E008")
        )
    cache_control = app_settings.HTTP_CACHE_CONTROL
    if not isinstance(cache_control, str | None):
        errors.append(
            error(
                f"SITEMAPX_HTTP_CACHE_CONTROL must be None or a string, not {cache_control!r}.",
                "E009",
            )
        )
    robots = app_settings.X_ROBOTS_TAG
    if robots is not None and (
        not isinstance(robots, str) or not robots.strip() or any(c in robots for c in "\r\n\0")
    ):
        errors.append(
            error(
                f"SITEMAPX_X_ROBOTS_TAG must be None or a one-line header value, not {robots!r}.",
                "E014",
                hint='For example "noindex" (the default), or None to send no X-Robots-Tag.',
            )
        )
    return errors


def _check_cache() -> Messages:
    errors: Messages = []
    alias = app_settings.CACHE_ALIAS
    if alias is not None and (not isinstance(alias, str) or alias not in settings.CACHES):
        errors.append(
            error(
                f"SITEMAPX_CACHE_ALIAS is {alias!r}, which is not an alias in CACHES.",
                "E010",
                hint="Name a configured cache, or set it to None to serve sitemaps uncached.",
            )
        )
    elif alias is not None and settings.CACHES[alias].get("BACKEND", "").endswith(".DummyCache"):
        errors.append(
            checks.Warning(
                f"SITEMAPX_CACHE_ALIAS {alias!r} is a DummyCache: no sitemap is cached and "
                "no stampede protection applies.",
                hint="Use a real cache, or set SITEMAPX_CACHE_ALIAS = None to say so.",
                id="django_sitemapx.W001",
            )
        )
    timeout = app_settings.CACHE_TIMEOUT
    if timeout is not None and not is_positive_number(timeout):
        errors.append(
            error(
                f"SITEMAPX_CACHE_TIMEOUT must be None or a positive number of seconds, "
                f"not {timeout!r}.",
                "E011",
                hint="To turn the cache off, set SITEMAPX_CACHE_ALIAS = None.",
            )
        )
    wait = app_settings.CACHE_WAIT
    if not is_positive_number(wait):
        errors.append(
            error(
                f"SITEMAPX_CACHE_WAIT must be a positive number of seconds, not {wait!r}.", "E012"
            )
        )
    local_bytes = app_settings.CACHE_LOCAL_BYTES
    if not is_int(local_bytes) or local_bytes < 0:
        errors.append(
            error(
                f"SITEMAPX_CACHE_LOCAL_BYTES must be a non-negative integer, not {local_bytes!r}.",
                "E013",
                hint="0 keeps no document in each process's memory.",
            )
        )
    return errors


def check_site_id(databases: Any = None, **kwargs: Any) -> Messages:
    """W004: ``SITE_ID`` names one site of several, so every host is served that one.

    A database check (``manage.py check --database default``), as it counts the
    ``Site`` rows; silent once ``SITEMAPX_USE_SITES`` says which is meant.
    """
    if (
        not databases
        or app_settings.USE_SITES is not None
        or not apps.is_installed("django.contrib.sites")
        or getattr(settings, "SITE_ID", None) is None
    ):
        return []
    from django.contrib.sites.models import Site

    try:
        domains = dict(Site.objects.order_by("pk").values_list("pk", "domain")[:6])
    except DatabaseError:  # not migrated yet (migrate runs the checks first)
        return []
    if len(domains) < 2:
        return []
    site_id = settings.SITE_ID
    others = ", ".join(domain for pk, domain in domains.items() if pk != site_id)
    return [
        checks.Warning(
            f"SITE_ID is {site_id!r} and django.contrib.sites has other sites ({others}): "
            f"every host is served the sitemap of site {site_id!r} "
            f"({domains.get(site_id, 'no such site')}), its URLs on that site's domain.",
            hint="To serve each host the sitemap of its own URLs, set SITEMAPX_USE_SITES = "
            "False (the host is the request's) or remove SITE_ID (the site is the one whose "
            "domain is the request's host). To serve site "
            f"{site_id!r}'s on every host, as django.contrib.sitemaps does, set "
            "SITEMAPX_USE_SITES = True.",
            id="django_sitemapx.W004",
        )
    ]


def check_deployment(**kwargs: Any) -> Messages:
    """``check --deploy`` only: settings fine for one process, wrong for several."""
    alias = app_settings.CACHE_ALIAS
    if not isinstance(alias, str) or alias not in settings.CACHES:
        return []  # E010 reports it
    if not settings.CACHES[alias].get("BACKEND", "").endswith(".LocMemCache"):
        return []
    return [
        checks.Warning(
            f"SITEMAPX_CACHE_ALIAS {alias!r} is a local-memory cache, which each worker "
            "process keeps for itself: after an edit, the other processes serve the old "
            "sitemap until their copy expires (SITEMAPX_CACHE_TIMEOUT).",
            hint="Point SITEMAPX_CACHE_ALIAS at a cache all processes share (Redis, "
            "Memcached, database), or set it to None; ignore this warning if one process "
            "serves the site.",
            id="django_sitemapx.W003",
        )
    ]


def _check_unknown() -> Messages:
    unknown = sorted(
        name for name in dir(settings) if name.startswith(PREFIX) and name not in SETTING_NAMES
    )
    return [
        checks.Warning(
            f"{name} is not a setting of django-sitemapx, so it has no effect.",
            hint=_unknown_hint(name),
            id="django_sitemapx.W002",
        )
        for name in unknown
    ]


def _unknown_hint(name: str) -> str:
    if name in RENAMED_SETTINGS:
        return f"It was renamed {RENAMED_SETTINGS[name]}."
    if name in REMOVED_SETTINGS:
        return f"It was removed: {REMOVED_SETTINGS[name]}"
    return f"The settings are: {', '.join(sorted(SETTING_NAMES))}."
