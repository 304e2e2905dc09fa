"""Django settings for benchmark workers: the example site, production-like.

``BENCH_DATABASE_URL`` and ``BENCH_CACHE_URL`` choose the backends; ``DEBUG``
is off (Django would otherwise keep every SQL query in memory) and database
connections persist across requests, as in a deployment.
"""

import environ

from example_project.settings import *  # noqa: F403
from example_project.settings import INSTALLED_APPS

env = environ.Env()

DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [*INSTALLED_APPS, "django.contrib.sitemaps"]
ROOT_URLCONF = "benchmarks.urls"
DATABASES = {"default": env.db("BENCH_DATABASE_URL")}
DATABASES["default"]["CONN_MAX_AGE"] = None
CACHES = {"default": env.cache("BENCH_CACHE_URL", default="locmemcache://")}
if CACHES["default"]["BACKEND"].endswith("LocMemCache"):
    # The default 300 entries would evict a large sitemap's parts while it is stored.
    CACHES["default"].setdefault("OPTIONS", {})["MAX_ENTRIES"] = 1_000_000
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "loggers": {"django_sitemapx": {"level": "ERROR"}},
}
