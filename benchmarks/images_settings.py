"""Settings for ``images_bench.py``: the example site, uncached, with contrib's sitemaps."""

from example_project.settings import *  # noqa: F403
from example_project.settings import INSTALLED_APPS, TEMPLATES

DEBUG = False
ALLOWED_HOSTS = ["localhost"]
INSTALLED_APPS = [*INSTALLED_APPS, "django.contrib.sitemaps"]
ROOT_URLCONF = "benchmarks.images_urls"
# Both sides build every document: no cache in front of either.
SITEMAPX_CACHE_ALIAS = None
TEMPLATES = [{**TEMPLATES[0], "DIRS": [*TEMPLATES[0].get("DIRS", []), "benchmarks/templates"]}]
LOGGING = {"version": 1, "disable_existing_loggers": False}
