"""Whether the ``wagtail`` leg's tests can run in this process.

Each test module calls :func:`skip_unless_in_leg` before it imports Wagtail:
elsewhere its tests are skipped, saying why; in the leg
(``SITEMAPX_TEST_WAGTAIL`` set) a reason to skip is an error instead.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from django.conf import settings


def skip_unless_in_leg() -> None:
    """Skip the calling module unless Wagtail and this project's settings are in use."""
    if importlib.util.find_spec("wagtail") is None:
        reason = "wagtail not installed: pip install -e '.[test-cms]' (SITEMAPX_TEST_LEGS=wagtail)"
    elif "tests.wagtailsite" not in settings.INSTALLED_APPS:
        reason = (
            "needs DJANGO_SETTINGS_MODULE=tests.wagtailsite.settings (SITEMAPX_TEST_LEGS=wagtail)"
        )
    else:
        return
    if os.environ.get("SITEMAPX_TEST_WAGTAIL"):
        raise RuntimeError(f"The wagtail leg cannot run its tests: {reason}")
    pytest.skip(reason, allow_module_level=True)
