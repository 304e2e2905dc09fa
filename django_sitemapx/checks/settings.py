"""Checks of the ``SITEMAPX_*`` settings: E001-E018, W001-W006."""

from __future__ import annotations

import math
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
from ..locations.origins import served_hosts, uses_sites_framework
from ..registry import all_registries
from ..sources.querysets import ModelSource
from .messages import Messages, error, is_int, is_positive_number, not_a_bool


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
    return not_a_bool("OVERRIDES", app_settings.OVERRIDES, "E006")


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
    errors += not_a_bool("INDEX_LINKS_GZIP", app_settings.INDEX_LINKS_GZIP, "E008")
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
    part_bytes = app_settings.CACHE_PART_BYTES
    if part_bytes is not None and (not is_int(part_bytes) or part_bytes < 0):
        errors.append(
            error(
                "SITEMAPX_CACHE_PART_BYTES must be None or a non-negative integer, "
                f"not {part_bytes!r}.",
                "E015",
                hint="None: parts of 512 KiB on Memcached, whole documents elsewhere.",
            )
        )
    builds = app_settings.CACHE_BUILDS
    if not is_int(builds) or builds < 0:
        errors.append(
            error(
                f"SITEMAPX_CACHE_BUILDS must be a non-negative integer, not {builds!r}.",
                "E016",
                hint="0 puts no bound on the documents built at once.",
            )
        )
    build_wait = app_settings.CACHE_BUILD_WAIT
    if not (build_wait == 0 or is_positive_number(build_wait)):
        errors.append(
            error(
                f"SITEMAPX_CACHE_BUILD_WAIT must be a number of seconds (0 or more), "
                f"not {build_wait!r}.",
                "E017",
            )
        )
    errors += not_a_bool(
        "CACHE_STORE_THREAD",
        app_settings.CACHE_STORE_THREAD,
        "E710",
        hint="False stores each built document in its request, on every backend.",
    )
    wildcard_hosts = app_settings.WILDCARD_HOSTS
    if not is_int(wildcard_hosts) or wildcard_hosts < 0:
        errors.append(
            error(
                f"SITEMAPX_WILDCARD_HOSTS must be a non-negative integer, not {wildcard_hosts!r}.",
                "E018",
            )
        )
    errors += _check_wildcard_hosts()
    return errors


def _check_wildcard_hosts() -> Messages:
    if app_settings.HOSTS is not None or uses_sites_framework():
        return []
    wildcards = [host for host in settings.ALLOWED_HOSTS if host == "*" or host.startswith(".")]
    if not wildcards:
        return []
    count = app_settings.WILDCARD_HOSTS
    return [
        checks.Warning(
            f"ALLOWED_HOSTS lets in any host matching {wildcards[0]!r}, and SITEMAPX_HOSTS "
            f"is not set: sitemaps are served on the first {count} such host names asked "
            "for (SITEMAPX_WILDCARD_HOSTS), and other names get 404.",
            hint="Set SITEMAPX_HOSTS to the hosts the site serves: then exactly those get "
            "sitemaps, and no client can make the cache or the page table hold more.",
            id="django_sitemapx.W004",
        )
    ]


def check_site_id(databases: Any = None, **kwargs: Any) -> Messages:
    """W006: ``SITE_ID`` names one site of several, so every host is served that one.

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
            id="django_sitemapx.W006",
        )
    ]


# Backends that cull by count (OPTIONS MAX_ENTRIES, 300 by default).
_COUNTING_BACKENDS = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.filebased.FileBasedCache",
    "django.core.cache.backends.db.DatabaseCache",
)
# Memcached's default item size limit.
MEMCACHED_ITEM_BYTES = 1024 * 1024


def check_cache_capacity(databases: Any = None, **kwargs: Any) -> Messages:
    """The cache can hold a full crawl of the sitemap (needs the database: it counts rows)."""
    alias = app_settings.CACHE_ALIAS
    if not databases or not isinstance(alias, str) or alias not in settings.CACHES:
        return []
    config = settings.CACHES[alias]
    backend = config.get("BACKEND", "")
    if "memcached" in backend.lower():
        return _check_memcached_parts(alias)
    if backend not in _COUNTING_BACKENDS:
        return []
    try:
        pages, rows = _pages_and_rows()
    except DatabaseError:  # not migrated yet (migrate runs the checks first)
        return []
    hosts = max(1, len(served_hosts()))
    # Per host: a document (one entry) and a generation per page, the index,
    # and the global, index and section generations.
    sections = sum(1 for registry in all_registries for _source in registry)
    needed = hosts * (2 * pages + 1) + sections + 2 + max(0, app_settings.CACHE_BUILDS or 0)
    options = config.get("OPTIONS", {})
    max_entries = int(options.get("MAX_ENTRIES", 300))
    if needed <= max_entries:
        return []
    return [
        checks.Warning(
            f"The cache {alias!r} keeps at most {max_entries:,} entries (MAX_ENTRIES), and "
            f"serving the sitemap of {rows:,} rows ({pages:,} pages on {hosts} host"
            f"{'s' if hosts > 1 else ''}) needs {needed:,}: past that it culls entries, "
            "documents and generations alike, and a crawl rebuilds instead of hitting.",
            hint=f"Set CACHES[{alias!r}]['OPTIONS']['MAX_ENTRIES'] to at least "
            f"{2 * needed:,} (culling starts at the limit), or give the sitemap a cache of "
            "its own (SITEMAPX_CACHE_ALIAS), or use Redis or Memcached.",
            id="django_sitemapx.W005",
        )
    ]


def _pages_and_rows() -> tuple[int, int]:
    """Pages and rows of every registered source, unbound (a model source counts its rows)."""
    pages = rows = 0
    for registry in list(all_registries):
        for source in registry:
            if isinstance(source, ModelSource):
                count = source.listed_rows().count()
                rows += count
                pages += max(1, math.ceil(count / max(1, source.rows_per_page())))
            else:
                pages += 1
    return pages, rows


def _check_memcached_parts(alias: str) -> Messages:
    part_bytes = app_settings.CACHE_PART_BYTES
    if part_bytes is None or (0 < part_bytes <= MEMCACHED_ITEM_BYTES - 64 * 1024):
        return []
    size = "whole documents" if part_bytes == 0 else f"parts of {part_bytes:,} bytes"
    return [
        checks.Warning(
            f"SITEMAPX_CACHE_PART_BYTES stores {size} in the Memcached cache {alias!r}, whose "
            f"items hold at most {MEMCACHED_ITEM_BYTES:,} bytes by default: a page of the "
            "sitemap is up to 50 MB, and a value Memcached refuses is never cached.",
            hint="Remove SITEMAPX_CACHE_PART_BYTES (512 KiB parts on Memcached), or start "
            "Memcached with a larger -I and set it below that.",
            id="django_sitemapx.W005",
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
