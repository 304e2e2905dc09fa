"""Settings for ``default_caches.py``: the benchmark site with one cache as Django ships it.

``BENCH_CACHES_JSON`` is the ``CACHES["default"]`` entry, default options and all
(``benchmarks.settings`` raises ``LocMemCache``'s ``MAX_ENTRIES``; not here).
"""

import json
import os

from benchmarks.settings import *  # noqa: F403

CACHES = {"default": json.loads(os.environ["BENCH_CACHES_JSON"])}
