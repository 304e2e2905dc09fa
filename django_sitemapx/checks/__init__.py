"""System checks: every ID django-sitemapx reports, in one place and one sequence.

``docs/reference/checks.md`` lists them with their fixes. Settings are
checked here rather than when they are read, so a bad value makes ``manage.py
check`` report its ID instead of failing with a traceback. One module per
range: ``settings`` (0xx), ``sources`` (1xx), ``discovery`` (2xx), ``export`` (3xx),
``languages`` (5xx), ``people`` (6xx); ``apps.py`` registers the functions this package
exports.

Settings:

- E001 ``SITEMAPX_LIMIT`` is not an integer from 1 to 50,000.
- E002 ``SITEMAPX_PROTOCOL`` is not ``None``, ``"http"`` or ``"https"``.
- E003 retired (``SITEMAPX_CHUNK_SIZE`` was removed).
- E004 ``SITEMAPX_USE_SITES`` is not ``None``/``True``/``False``, or is ``True``
  without ``django.contrib.sites``.
- E005 retired (``SITEMAPX_AUTODISCOVER_MODULE`` was removed).
- E006 ``SITEMAPX_OVERRIDES`` is not ``True`` or ``False``.
- E007 ``SITEMAPX_EXPORT_STORAGE`` or ``SITEMAPX_SERVE_FROM_STORAGE`` is not a ``STORAGES`` alias.
- E008 ``SITEMAPX_INDEX_LINKS_GZIP`` is not ``True`` or ``False``.
- E009 ``SITEMAPX_HTTP_CACHE_CONTROL`` is neither ``None`` nor a string.
- E010 ``SITEMAPX_CACHE_ALIAS`` is neither ``None`` nor an alias in ``CACHES``.
- E011 ``SITEMAPX_CACHE_TIMEOUT`` is neither ``None`` nor a positive number.
- E012 ``SITEMAPX_CACHE_WAIT`` is not a positive number.
- E013 ``SITEMAPX_CACHE_LOCAL_BYTES`` is not a non-negative integer.
- E014 ``SITEMAPX_X_ROBOTS_TAG`` is neither ``None`` nor a one-line, non-empty string.
- E015 ``SITEMAPX_CACHE_PART_BYTES`` is neither ``None`` nor a non-negative integer.
- E016 ``SITEMAPX_CACHE_BUILDS`` is not a non-negative integer.
- E017 ``SITEMAPX_CACHE_BUILD_WAIT`` is not a number of seconds, 0 or more.
- E018 ``SITEMAPX_WILDCARD_HOSTS`` is not a non-negative integer.
- E710 ``SITEMAPX_CACHE_STORE_THREAD`` is not ``True`` or ``False`` (numbered in a block
  of its own, given when the store thread came).
- W001 ``SITEMAPX_CACHE_ALIAS`` names a ``DummyCache``: nothing is cached.
- W002 a ``SITEMAPX_*`` setting that django-sitemapx does not read (a typo, a renamed or a
  removed one).
- W003 (``check --deploy`` only) ``SITEMAPX_CACHE_ALIAS`` names a local-memory cache, which
  each worker process keeps for itself: an edit seen by one is not seen by the others.
- W004 ``ALLOWED_HOSTS`` has a wildcard and ``SITEMAPX_HOSTS`` is not set: sitemaps are
  served on ``SITEMAPX_WILDCARD_HOSTS`` host names only.
- W005 (a database check: ``manage.py check --database default``) the cache cannot hold
  a full crawl: ``MAX_ENTRIES`` below the entries the sitemap needs, or Memcached given
  values over its 1 MB item limit.
- W006 ``SITE_ID`` names one of several ``django.contrib.sites`` sites while
  ``SITEMAPX_USE_SITES`` is unset: every host is served that site's sitemap (a database
  check: ``manage.py check --database default``).

Discovery and push (robots.txt, IndexNow):

- E201 ``SITEMAPX_INDEXNOW_KEY`` is not ``None`` nor 8 to 128 characters of
  ``a-z``, ``A-Z``, ``0-9`` and ``-``.
- E202 ``SITEMAPX_INDEXNOW_ENDPOINT`` is not an http(s) URL.
- E203 ``SITEMAPX_INDEXNOW_TASK_BACKEND`` is not ``None`` nor an alias in ``TASKS``,
  or names one where no Tasks framework is installed.
- E204 ``SITEMAPX_HOSTS`` is not ``None`` nor a list of host names ``ALLOWED_HOSTS``
  accepts.
- E205 retired (``SITEMAPX_INDEXNOW_RETRIES``, ``_BACKOFF`` and ``_TIMEOUT`` were removed).
- E206 ``SITEMAPX_ROBOTS_RULES`` is not a string.
- E207 ``SITEMAPX_FILES_BASE_URL`` is not ``None`` nor an http(s) URL without query.
- W201 IndexNow is on but no host is known to submit for.
- W202 IndexNow submissions run on an ``ImmediateBackend``: inside the request.
- W203 the IndexNow key file is not served at the site root by ``django_sitemapx.urls``.

Exports run as tasks or after changes:

- E301 ``SITEMAPX_EXPORT_TASK_BACKEND`` is not an alias in ``TASKS`` (checked when set to
  another alias than ``"default"``, or when ``SITEMAPX_EXPORT_ON_CHANGE`` is set), or
  ``SITEMAPX_EXPORT_ON_CHANGE`` is set where no Tasks framework is installed.
- E302 ``SITEMAPX_EXPORT_LEASE`` is not a positive number.
- E303 ``SITEMAPX_EXPORT_DEBOUNCE`` is not a number of seconds, 0 or more.
- E304 ``SITEMAPX_EXPORT_ON_CHANGE`` is not ``None`` nor a dict of ``export_changed``'s
  arguments naming a destination.
- W301 ``SITEMAPX_EXPORT_ON_CHANGE`` runs on an ``ImmediateBackend``: inside the request.
- E730 ``SITEMAPX_EXPORT_SPLICE`` is not ``True`` or ``False`` (numbered in a block of its
  own, given when spliced pages came).
- E731 ``SITEMAPX_EXPORT_SPARES`` is not ``True`` or ``False``.

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

Contrib sources (4xx), registered by their own apps (``contrib.wagtail.checks``):

- W401 a Wagtail ``Site``'s hostname is not in ``ALLOWED_HOSTS`` (a database check).
- W402 a ``WagtailPageSource`` without ``django_sitemapx.contrib.wagtail`` installed.

The hosts of the language versions (a domain per country):

- E501 ``SITEMAPX_LANGUAGE_HOSTS`` or a source's ``language_hosts`` is not ``None`` nor a
  dict of language codes to host names.
- E502 it names a host the project does not serve (``SITEMAPX_HOSTS``, else the public
  names of ``ALLOWED_HOSTS``; not checked when only the Sites framework's rows know them).
- E503 a multilingual section puts some of its languages on their own hosts but not all.

For people, and the audit:

- E601 ``SITEMAPX_XML_STYLESHEET`` is not ``None`` nor the URL, path or static file name of
  a stylesheet (a string without spaces, at most 1,024 characters).
- E602 ``SITEMAPX_AUDIT_TASK_BACKEND`` is not a string, or, set explicitly, is not an alias
  in ``TASKS``.
"""

from __future__ import annotations

from .discovery import check_discovery
from .export import check_export
from .languages import check_language_hosts
from .people import check_people
from .settings import check_cache_capacity, check_deployment, check_settings, check_site_id
from .sources import check_site_ids, check_source, check_sources

__all__ = [
    "check_cache_capacity",
    "check_deployment",
    "check_discovery",
    "check_export",
    "check_language_hosts",
    "check_people",
    "check_settings",
    "check_site_id",
    "check_site_ids",
    "check_source",
    "check_sources",
]
