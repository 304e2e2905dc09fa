"""System checks: every ID django-sitemapx reports, in one place and one sequence.

``docs/reference/checks.md`` lists them with their fixes. Settings are
checked here rather than when they are read, so a bad value makes ``manage.py
check`` report its ID instead of failing with a traceback.

Settings:

- E001 ``SITEMAPX_LIMIT`` is not an integer from 1 to 50,000.
- E002 ``SITEMAPX_PROTOCOL`` is not ``None``, ``"http"`` or ``"https"``.
- E003 ``SITEMAPX_CHUNK_SIZE`` is not a positive integer.
- E004 ``SITEMAPX_USE_SITES`` is not ``None``/``True``/``False``, or is ``True``
  without ``django.contrib.sites``.
- E005 ``SITEMAPX_AUTODISCOVER_MODULE`` is not a module name.
- E006 ``SITEMAPX_OVERRIDES`` is not ``True`` or ``False``.
- E007 ``SITEMAPX_EXPORT_STORAGE`` or ``SITEMAPX_SERVE_FROM_STORAGE`` is not a ``STORAGES`` alias.
- E008 ``SITEMAPX_INDEX_LINKS_GZIP`` is not ``True`` or ``False``.
- E009 ``SITEMAPX_HTTP_CACHE_CONTROL`` is neither ``None`` nor a string.
- E010 ``SITEMAPX_CACHE_ALIAS`` is neither ``None`` nor an alias in ``CACHES``.
- E011 ``SITEMAPX_CACHE_TIMEOUT`` is neither ``None`` nor a positive number.
- E012 ``SITEMAPX_CACHE_WAIT`` or ``SITEMAPX_CACHE_LOCK_TIMEOUT`` is not a positive number.
- E013 ``SITEMAPX_CACHE_LOCAL_BYTES`` is not a non-negative integer.
- E014 ``SITEMAPX_X_ROBOTS_TAG`` is neither ``None`` nor a one-line, non-empty string.
- W001 ``SITEMAPX_CACHE_ALIAS`` names a ``DummyCache``: nothing is cached.
- W002 a ``SITEMAPX_*`` setting that django-sitemapx does not read (a typo, or a renamed one).
- W003 (``check --deploy`` only) ``SITEMAPX_CACHE_ALIAS`` names a local-memory cache, which
  each worker process keeps for itself: an edit seen by one is not seen by the others.

Discovery and push (robots.txt, IndexNow):

- E201 ``SITEMAPX_INDEXNOW_KEY`` is not ``None`` nor 8 to 128 characters of
  ``a-z``, ``A-Z``, ``0-9`` and ``-``.
- E202 ``SITEMAPX_INDEXNOW_ENDPOINT`` is not an http(s) URL.
- E203 ``SITEMAPX_INDEXNOW_TASK_BACKEND`` is not ``None`` nor an alias in ``TASKS``,
  or names one where no Tasks framework is installed.
- E204 ``SITEMAPX_HOSTS`` is not ``None`` nor a list of host names ``ALLOWED_HOSTS``
  accepts.
- E205 ``SITEMAPX_INDEXNOW_RETRIES``, ``_BACKOFF`` or ``_TIMEOUT`` is out of range.
- E206 ``SITEMAPX_ROBOTS_RULES`` is not a string.
- E207 ``SITEMAPX_FILES_BASE_URL`` is not ``None`` nor an http(s) URL without query.
- W201 IndexNow is on but no host is known to submit for.
- W202 IndexNow submissions run on an ``ImmediateBackend``: inside the request.
- W203 the IndexNow key file is not served at the site root by ``django_sitemapx.urls``.

Sources, in every registry:

- E101 a source's own ``limit``, ``protocol``, ``changefreq``, ``priority`` or ``lastmod``
  is invalid.
- E102 a ``StaticSource`` URL name cannot be reversed.
- E103 a ``ModelSource`` has no model.
- E104 a ``ModelSource`` key is not a unique integer, UUID or string (up to 255 characters)
  field, or is a composite primary key.
- E105 a ``ModelSource`` ``lastmod_field`` is not a date or datetime field.
- E106 a ``ModelSource`` ``url_name`` cannot be reversed with its ``url_kwargs``.
- E107 a ``ModelSource`` names a field its queryset cannot select.
- E108 a source's ``sites`` names site IDs but ``django.contrib.sites`` is not installed.
- E109 a source's ``sites`` names a site ID that no ``Site`` has (a database check:
  ``manage.py check --database default``).
- E110 a wrapped ``django.contrib.sitemaps`` sitemap cannot be served as contrib serves it
  (a class that needs arguments, a ``limit`` over 50,000, an invalid static value, ...).
- E111 a ``ModelSource`` has no way to build a location: no ``url_name``, no
  ``location`` and a model without ``get_absolute_url()``.
- W101 a ``ModelSource`` builds a model instance per URL (``get_absolute_url``).
- W102 a source's ``sites`` names a host that ``ALLOWED_HOSTS`` refuses: never served there.
"""

from __future__ import annotations

import re
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core import checks
from django.core.exceptions import FieldDoesNotExist, FieldError, ValidationError
from django.core.files.storage import storages
from django.core.validators import URLValidator
from django.db import DatabaseError, models
from django.http.request import validate_host
from django.urls import NoReverseMatch, reverse

from .compat import backend_aliases, backend_class_path, tasks_module
from .conf import (
    INDEXNOW_KEY_PATTERN,
    PREFIX,
    PROTOCOL_MAX_URLS,
    RENAMED_SETTINGS,
    SETTING_NAMES,
    app_settings,
)
from .documents import URL_NAMESPACE
from .exceptions import InvalidURL, SourceConfigurationError
from .locations.hosts import host_name
from .locations.origins import (
    files_root_from_url,
    origin_from_url,
    served_hosts,
    uses_sites_framework,
)
from .registry import all_registries, is_module_name
from .sources import ModelSource, Source, StaticSource
from .sources.codecs import MAX_STRING_KEY, key_kind, key_model_field

Messages = list[checks.CheckMessage]


def _error(message: str, number: str, hint: str | None = None, obj: Any = None) -> checks.Error:
    return checks.Error(message, hint=hint, obj=obj, id=f"django_sitemapx.{number}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_positive_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


# -- settings ----------------------------------------------------------------------------


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
    if not _is_int(limit) or not 1 <= limit <= PROTOCOL_MAX_URLS:
        errors.append(
            _error(
                f"SITEMAPX_LIMIT must be an integer from 1 to {PROTOCOL_MAX_URLS}, not {limit!r}.",
                "E001",
                hint="The sitemaps.org protocol allows at most 50,000 URLs per sitemap.",
            )
        )
    chunk_size = app_settings.CHUNK_SIZE
    if not _is_int(chunk_size) or chunk_size < 1:
        errors.append(
            _error(f"SITEMAPX_CHUNK_SIZE must be a positive integer, not {chunk_size!r}.", "E003")
        )
    return errors


def _check_hosts() -> Messages:
    errors: Messages = []
    protocol = app_settings.PROTOCOL
    if protocol not in (None, "http", "https"):
        errors.append(
            _error(f"SITEMAPX_PROTOCOL must be None, 'http' or 'https', not {protocol!r}.", "E002")
        )
    use_sites = app_settings.USE_SITES
    if use_sites is not None and not isinstance(use_sites, bool):
        errors.append(
            _error(f"SITEMAPX_USE_SITES must be None, True or False, not {use_sites!r}.", "E004")
        )
    elif use_sites and not apps.is_installed("django.contrib.sites"):
        errors.append(
            _error(
                "SITEMAPX_USE_SITES is True but django.contrib.sites is not installed.",
                "E004",
                hint="Add django.contrib.sites to INSTALLED_APPS, or set it to None.",
            )
        )
    return errors


def _check_app() -> Messages:
    errors: Messages = []
    module = app_settings.AUTODISCOVER_MODULE
    if not is_module_name(module):
        errors.append(
            _error(f"SITEMAPX_AUTODISCOVER_MODULE must be a module name, not {module!r}.", "E005")
        )
    if not isinstance(app_settings.OVERRIDES, bool):
        errors.append(
            _error(
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
                _error(
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
            _error(f"SITEMAPX_INDEX_LINKS_GZIP must be True or False, not {links_gzip!r}.", "E008")
        )
    cache_control = app_settings.HTTP_CACHE_CONTROL
    if not isinstance(cache_control, str | None):
        errors.append(
            _error(
                f"SITEMAPX_HTTP_CACHE_CONTROL must be None or a string, not {cache_control!r}.",
                "E009",
            )
        )
    robots = app_settings.X_ROBOTS_TAG
    if robots is not None and (
        not isinstance(robots, str) or not robots.strip() or any(c in robots for c in "\r\n\0")
    ):
        errors.append(
            _error(
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
            _error(
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
    if timeout is not None and not _is_positive_number(timeout):
        errors.append(
            _error(
                f"SITEMAPX_CACHE_TIMEOUT must be None or a positive number of seconds, "
                f"not {timeout!r}.",
                "E011",
                hint="To turn the cache off, set SITEMAPX_CACHE_ALIAS = None.",
            )
        )
    for name in ("CACHE_WAIT", "CACHE_LOCK_TIMEOUT"):
        value = getattr(app_settings, name)
        if not _is_positive_number(value):
            errors.append(
                _error(
                    f"SITEMAPX_{name} must be a positive number of seconds, not {value!r}.", "E012"
                )
            )
    local_bytes = app_settings.CACHE_LOCAL_BYTES
    if not _is_int(local_bytes) or local_bytes < 0:
        errors.append(
            _error(
                f"SITEMAPX_CACHE_LOCAL_BYTES must be a non-negative integer, not {local_bytes!r}.",
                "E013",
                hint="0 keeps no document in each process's memory.",
            )
        )
    return errors


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
            hint=f"It was renamed {RENAMED_SETTINGS[name]}."
            if name in RENAMED_SETTINGS
            else f"The settings are: {', '.join(sorted(SETTING_NAMES))}.",
            id="django_sitemapx.W002",
        )
        for name in unknown
    ]


# -- discovery and push: robots.txt, IndexNow ---------------------------------------------


def check_discovery(**kwargs: Any) -> Messages:
    """The robots.txt and IndexNow settings."""
    errors = [*_check_robots(), *_check_hosts_setting()]
    key = app_settings.INDEXNOW_KEY
    if key is not None and (not isinstance(key, str) or not _KEY.fullmatch(key)):
        errors.append(
            _error(
                f"SITEMAPX_INDEXNOW_KEY must be None or 8 to 128 characters of a-z, A-Z, "
                f"0-9 and '-', not {key!r}.",
                "E201",
                hint="IndexNow's rule (indexnow.org). For example: python -c "
                '"import uuid; print(uuid.uuid4().hex)"',
            )
        )
    errors += _check_indexnow_values()
    if not errors and key:
        errors += _check_indexnow_running(key)
    return errors


_KEY = re.compile(INDEXNOW_KEY_PATTERN)
_URL = URLValidator(schemes=["http", "https"])


def _check_robots() -> Messages:
    errors: Messages = []
    if not isinstance(app_settings.ROBOTS_RULES, str):
        errors.append(
            _error(
                f"SITEMAPX_ROBOTS_RULES must be a string, not {app_settings.ROBOTS_RULES!r}.",
                "E206",
            )
        )
    files_base_url = app_settings.FILES_BASE_URL
    if files_base_url is not None:
        problem = None
        if not isinstance(files_base_url, str):
            problem = "it is not a string"
        else:
            try:
                files_root_from_url(files_base_url)
            except InvalidURL as error:
                problem = str(error)
        if problem is not None:
            errors.append(
                _error(
                    f"SITEMAPX_FILES_BASE_URL {files_base_url!r} is unusable: {problem}",
                    "E207",
                    hint="The URL the exported files are served at, e.g. "
                    "https://cdn.example.net/sitemaps.",
                )
            )
    return errors


def _check_hosts_setting() -> Messages:
    hosts = app_settings.HOSTS
    if hosts is None:
        return []
    if not isinstance(hosts, list | tuple) or not all(isinstance(h, str) for h in hosts):
        return [_error(f"SITEMAPX_HOSTS must be None or a list of hosts, not {hosts!r}.", "E204")]
    errors: Messages = []
    for host in hosts:
        try:
            origin_from_url(f"https://{host}")
            valid = "/" not in host
        except InvalidURL:
            valid = False
        if not valid:
            errors.append(_error(f"SITEMAPX_HOSTS: {host!r} is not a host name.", "E204"))
        elif settings.ALLOWED_HOSTS and not validate_host(host.lower(), settings.ALLOWED_HOSTS):
            errors.append(
                _error(
                    f"SITEMAPX_HOSTS: ALLOWED_HOSTS does not accept {host!r}, so the site "
                    "does not serve it.",
                    "E204",
                )
            )
    return errors


def _check_indexnow_values() -> Messages:
    errors: Messages = []
    endpoint = app_settings.INDEXNOW_ENDPOINT
    try:
        _URL(endpoint)
    except (ValidationError, TypeError):
        errors.append(
            _error(f"SITEMAPX_INDEXNOW_ENDPOINT must be an http(s) URL, not {endpoint!r}.", "E202")
        )
    retries = app_settings.INDEXNOW_RETRIES
    if not _is_int(retries) or not 0 <= retries <= 10:
        errors.append(
            _error(
                f"SITEMAPX_INDEXNOW_RETRIES must be an integer from 0 to 10, not {retries!r}.",
                "E205",
            )
        )
    backoff = app_settings.INDEXNOW_BACKOFF
    if not (_is_positive_number(backoff) or backoff == 0):
        errors.append(
            _error(
                f"SITEMAPX_INDEXNOW_BACKOFF must be a number of seconds (0 or more), "
                f"not {backoff!r}.",
                "E205",
            )
        )
    timeout = app_settings.INDEXNOW_TIMEOUT
    if not _is_positive_number(timeout):
        errors.append(
            _error(
                f"SITEMAPX_INDEXNOW_TIMEOUT must be a positive number of seconds, "
                f"not {timeout!r}.",
                "E205",
            )
        )
    alias = app_settings.INDEXNOW_TASK_BACKEND
    if alias is not None:
        if not isinstance(alias, str):
            errors.append(
                _error(
                    f"SITEMAPX_INDEXNOW_TASK_BACKEND must be None or a TASKS alias, "
                    f"not {alias!r}.",
                    "E203",
                )
            )
        elif app_settings.INDEXNOW_KEY and tasks_module() is None:
            errors.append(
                _error(
                    "SITEMAPX_INDEXNOW_TASK_BACKEND needs Django's Tasks framework, which "
                    "is not installed.",
                    "E203",
                    hint='Use Django 6, or pip install "django-sitemapx[tasks]" (the '
                    "django-tasks backport), or set it to None and run "
                    "manage.py sitemap_indexnow from cron.",
                )
            )
        elif app_settings.INDEXNOW_KEY and alias not in backend_aliases():
            errors.append(
                _error(
                    f"SITEMAPX_INDEXNOW_TASK_BACKEND is {alias!r}, which is not an alias "
                    "in TASKS.",
                    "E203",
                    hint=f"Known aliases: {', '.join(sorted(backend_aliases()))}.",
                )
            )
    return errors


def _check_indexnow_running(key: str) -> Messages:
    warnings: Messages = []
    if not uses_sites_framework() and not served_hosts():
        warnings.append(
            checks.Warning(
                "IndexNow is on, but no host is known to submit URLs for: ALLOWED_HOSTS "
                "names no public host.",
                hint="Set SITEMAPX_HOSTS to the hosts the site serves.",
                id="django_sitemapx.W201",
            )
        )
    alias = app_settings.INDEXNOW_TASK_BACKEND
    if alias is not None and backend_class_path(alias).endswith(".ImmediateBackend"):
        warnings.append(
            checks.Warning(
                f"The {alias!r} task backend is an ImmediateBackend: IndexNow submissions "
                "(with their retries) run inside the request that saved the change.",
                hint="Configure a task backend with workers (django-tasks-db, RQ, ...), or set "
                "SITEMAPX_INDEXNOW_TASK_BACKEND = None and run manage.py sitemap_indexnow "
                "from cron.",
                id="django_sitemapx.W202",
            )
        )
    try:
        path = reverse(f"{URL_NAMESPACE}:indexnow-key", kwargs={"key": key})
    except NoReverseMatch:
        path = None
    if path != f"/{key}.txt":
        where = "is not routed" if path is None else f"is served at {path}"
        warnings.append(
            checks.Warning(
                f"The IndexNow key file {where}; search engines look for it at /{key}.txt "
                "and accept only URLs below the folder it is in.",
                hint='Include django_sitemapx.urls at the site root (path("", include(...))), '
                f"or serve /{key}.txt yourself.",
                id="django_sitemapx.W203",
            )
        )
    return warnings


# -- sources -----------------------------------------------------------------------------


def check_sources(**kwargs: Any) -> Messages:
    """Every source of every registry, the default one and custom ones."""
    errors: Messages = []
    for registry in list(all_registries):
        for source in registry:
            errors += check_source(source)
    return errors


def check_source(source: Source) -> Messages:
    """The messages about one source: built-in checks, then its own ``check()``."""
    errors: Messages = []
    try:
        source.validate()
    except SourceConfigurationError as error:
        errors.append(_error(f"Section {source.section!r}: {error}.", "E101", obj=source))
    if isinstance(source, StaticSource):
        errors += _check_static(source)
    if isinstance(source, ModelSource):
        errors += _check_model_source(source)
    errors += _check_sites(source)
    return errors + source.check()


def _check_sites(source: Source) -> Messages:
    try:
        selection = source.site_selection()
    except ValueError:  # reported as E101
        return []
    if selection is None:
        return []
    errors: Messages = []
    if selection.site_ids and not apps.is_installed("django.contrib.sites"):
        errors.append(
            _error(
                f"Section {source.section!r} is limited to site IDs "
                f"{sorted(selection.site_ids)}, but django.contrib.sites is not installed.",
                "E108",
                hint="Add django.contrib.sites to INSTALLED_APPS, or name the hosts instead.",
                obj=source,
            )
        )
    allowed = settings.ALLOWED_HOSTS
    for host in sorted(selection.hosts):
        if allowed and not validate_host(host_name(host), allowed):
            errors.append(
                checks.Warning(
                    f"Section {source.section!r} is limited to host {host!r}, which "
                    "ALLOWED_HOSTS refuses: it is never served there.",
                    hint="Add the host to ALLOWED_HOSTS, or correct the sites option.",
                    obj=source,
                    id="django_sitemapx.W102",
                )
            )
    return errors


def check_site_ids(databases: Any = None, **kwargs: Any) -> Messages:
    """Site IDs named by sources that no ``Site`` has (needs the database)."""
    if not databases or not apps.is_installed("django.contrib.sites"):
        return []
    from django.contrib.sites.models import Site

    errors: Messages = []
    for registry in list(all_registries):
        for source in registry:
            try:
                selection = source.site_selection()
            except ValueError:
                continue
            if selection is None or not selection.site_ids:
                continue
            try:
                known = set(
                    Site.objects.filter(pk__in=selection.site_ids).values_list("pk", flat=True)
                )
            except DatabaseError:  # not migrated yet (migrate runs the checks first)
                return []
            for site_id in sorted(selection.site_ids - known):
                errors.append(
                    _error(
                        f"Section {source.section!r} is limited to site ID {site_id}, which "
                        "no django.contrib.sites Site has.",
                        "E109",
                        hint="Create the site, or correct the sites option.",
                        obj=source,
                    )
                )
    return errors


def _check_static(source: StaticSource) -> Messages:
    errors: Messages = []
    for item in source.url_names:
        name, kwargs = item if isinstance(item, tuple) else (item, {})
        try:
            reverse(name, kwargs=dict(kwargs))
        except NoReverseMatch:
            errors.append(
                _error(
                    f"URL name {item!r} of section {source.section!r} cannot be reversed.",
                    "E102",
                    hint="Check the name (and namespace) in your URLconf.",
                    obj=source,
                )
            )
    return errors


def _check_model_source(source: ModelSource) -> Messages:
    if source.model is None:
        return [_error(f"Section {source.section!r} has no model.", "E103", obj=source)]
    if source.uses_instances and not hasattr(source.model, "get_absolute_url"):
        return [
            _error(
                f"Section {source.section!r} has no way to build a location: "
                f"{source.model.__name__} has no get_absolute_url(), and the section sets "
                "neither url_name nor location.",
                "E111",
                hint="Set url_name and url_kwargs (fastest), override location(row), or "
                "give the model a get_absolute_url() method.",
                obj=source,
            )
        ]
    errors = _check_key(source) + _check_lastmod_field(source)
    if not errors:
        errors += _check_query(source)
    if source.url_name is not None and not errors:
        try:
            source.compiled_url()
        except NoReverseMatch:
            errors.append(
                _error(
                    f"Section {source.section!r}: URL name {source.url_name!r} cannot be "
                    f"reversed with keyword arguments {sorted(source.url_fields())}.",
                    "E106",
                    hint="url_kwargs maps each URL keyword argument to a field name.",
                    obj=source,
                )
            )
    if source.uses_instances:
        errors.append(
            checks.Warning(
                f"Section {source.section!r} builds a model instance per URL to call "
                "get_absolute_url().",
                hint="Set url_name and url_kwargs, or override location(row), to stream "
                "plain rows.",
                obj=source,
                id="django_sitemapx.W101",
            )
        )
    return errors


def _check_key(source: ModelSource) -> Messages:
    assert source.model is not None
    pk = source.model._meta.pk
    if source.key_field == "pk" and pk is not None and not pk.concrete:
        return [
            _error(
                f"Section {source.section!r}: the model's primary key is composite; pages "
                "need a single key.",
                "E104",
                hint="Set key_field to a unique integer, UUID or string field of the model.",
                obj=source,
            )
        ]
    field = key_model_field(source.model, source.key_name)
    declared = _declared_field(source.model, source.key_name)
    unique = declared is not None and bool(declared.unique or declared.primary_key)
    if unique and key_kind(field) is not None:
        return []
    return [
        _error(
            f"Section {source.section!r}: key_field {source.key_field!r} must be a unique "
            "integer, UUID or string field of the model.",
            "E104",
            hint="Pages are ranges of one unique, orderable key: an integer (up to 64-bit), "
            f"a UUID, or a string of at most {MAX_STRING_KEY} characters with the "
            "database's default collation.",
            obj=source,
        )
    ]


def _declared_field(model: type[models.Model], name: str) -> Any:
    try:
        return model._meta.get_field(name)
    except FieldDoesNotExist:
        return None


def _check_lastmod_field(source: ModelSource) -> Messages:
    assert source.model is not None
    if source.lastmod_field is None:
        return []
    try:
        field = source.model._meta.get_field(source.lastmod_field)
    except FieldDoesNotExist:
        field = None
    if isinstance(field, models.DateField):
        return []
    return [
        _error(
            f"Section {source.section!r}: lastmod_field {source.lastmod_field!r} is not a "
            "date or datetime field of the model.",
            "E105",
            obj=source,
        )
    ]


def _check_query(source: ModelSource) -> Messages:
    try:
        source.rows_queryset().query.sql_with_params()
    except (FieldError, FieldDoesNotExist) as error:
        return [
            _error(
                f"Section {source.section!r}: {error}",
                "E107",
                hint="Check fields and url_kwargs.",
                obj=source,
            )
        ]
    return []
