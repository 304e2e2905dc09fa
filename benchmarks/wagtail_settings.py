"""Benchmark settings for the Wagtail comparison: the test project's Wagtail apps, two locales.

``BENCH_DATABASE_URL`` chooses the database (PostgreSQL). Wagtail's i18n is on, its
pages under ``i18n_patterns``; nothing is cached by django-sitemapx (cold documents).
"""

import environ

from tests.wagtailsite.settings import *  # noqa: F403
from tests.wagtailsite.settings import INSTALLED_APPS

env = environ.Env()

DEBUG = False
ALLOWED_HOSTS = ["a.example", "b.example"]
ROOT_URLCONF = "benchmarks.wagtail_urls"
# No autodiscovery: the one section is the benchmark's (wagtail_urls), not the test apps'.
INSTALLED_APPS = [
    "django_sitemapx.apps.SimpleSitemapxConfig" if app == "django_sitemapx" else app
    for app in INSTALLED_APPS
]
DATABASES = {"default": env.db("BENCH_DATABASE_URL")}
DATABASES["default"]["CONN_MAX_AGE"] = None
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
WAGTAIL_I18N_ENABLED = True
SITEMAPX_CACHE_ALIAS = None
SITEMAPX_OVERRIDES = False
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django_sitemapx": {"level": "ERROR"}},
}
