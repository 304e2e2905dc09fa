"""Reproducible benchmarks of django-sitemapx against django.contrib.sitemaps; see run.py."""

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
