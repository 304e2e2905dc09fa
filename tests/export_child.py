"""An export in its own process, for ``test_export_kill``.

``python -m tests.export_child FOLDER MARKER COUNT [--hang] [--full]`` exports
COUNT URLs in pages of 100 to FOLDER; with ``--hang`` it touches MARKER when it
reaches the third page and then waits to be killed; ``--full`` writes every page.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    from django.core.management import call_command
    from django.test import override_settings

    from django_sitemapx.registry import default_registry
    from django_sitemapx.sources import ItemSource

    folder, marker, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    hang = "--hang" in sys.argv

    class News(ItemSource):
        def location(self, item: Any) -> str:
            if hang and item == "/news/250/":
                marker.touch()
                time.sleep(120)
            return str(item)

    for section in default_registry.sections:
        default_registry.unregister(section)
    default_registry.register(
        "news", News, items=lambda: [f"/news/{n}/" for n in range(1, count + 1)], limit=100
    )
    # This process's in-memory database has no tables: leave the overrides out.
    with override_settings(SITEMAPX_OVERRIDES=False):
        call_command(
            "sitemap_export",
            output_dir=folder,
            base_url="https://example.com",
            gzip=True,
            full="--full" in sys.argv,
            verbosity=0,
        )


if __name__ == "__main__":
    main()
