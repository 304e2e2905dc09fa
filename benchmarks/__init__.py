"""Reproducible benchmarks of django-sitemapx against django.contrib.sitemaps.

``run.py`` measures time, memory and queries (``docs/performance.md``);
``instructions.py`` counts instructions with Valgrind, for comparing two commits
on a noisy machine; ``i18n_bench.py``, ``images_bench.py``, ``scale.py``,
``cache_bench.py`` and ``export_bench.py`` measure one feature each.
"""

import sys


def _measure_this_checkout() -> None:
    # An editable install of another checkout puts setuptools' finder on
    # sys.meta_path, which would supply any module this checkout lacks (and so
    # measure a mix of two trees). The benchmark measures the tree it sits in.
    sys.meta_path[:] = [
        finder
        for finder in sys.meta_path
        if not getattr(finder, "__module__", "").startswith("__editable___django_sitemapx")
    ]


_measure_this_checkout()
