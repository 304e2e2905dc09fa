"""Settings of ``storm_bench.py``: the benchmark site, with small pages and a shared cache.

``STORM_LIMIT`` sizes the pages (many pages from few rows), ``STORM_BUILDS``
and ``STORM_BUILD_WAIT`` set ``SITEMAPX_CACHE_BUILDS`` and
``SITEMAPX_CACHE_BUILD_WAIT``.
"""

import environ

from benchmarks.settings import *  # noqa: F403

env = environ.Env()

SITEMAPX_LIMIT = env.int("STORM_LIMIT", default=2_000)
SITEMAPX_CACHE_BUILDS = env.int("STORM_BUILDS", default=4)
SITEMAPX_CACHE_BUILD_WAIT = env.float("STORM_BUILD_WAIT", default=5.0)
