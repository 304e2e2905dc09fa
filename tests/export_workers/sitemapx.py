"""The worker test's only section: Documents, slow to make when ``SITEMAPX_WORKERS_SLOW`` is set.

Each process making a page touches ``started-<pid>`` in ``SITEMAPX_WORKERS_MARKERS``,
so the test knows which worker to kill while it is in a task.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from django_sitemapx import default_registry
from django_sitemapx.sources import ModelSource
from tests.testapp.models import Document


class SlowDocuments(ModelSource):
    fields = ("path",)
    lastmod_field = "published_on"

    def location(self, row: Any) -> str:
        markers = os.environ.get("SITEMAPX_WORKERS_MARKERS")
        if markers:
            Path(markers, f"started-{os.getpid()}").touch()
        time.sleep(float(os.environ.get("SITEMAPX_WORKERS_SLOW", "0")))
        return str(row.path)


for _section in list(default_registry.sections):
    default_registry.unregister(_section)
default_registry.register(Document, source_class=SlowDocuments, section="d", limit=10)
