"""``python -m tests.export_workers.cli seed N | start FOLDER | full FOLDER | empty-queue -``."""

from __future__ import annotations

import datetime
import os
import sys

import django


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.export_workers.settings")
    django.setup()
    from django_sitemapx.export import FolderDestination, export_sitemap, parallel
    from django_sitemapx.locations import Origin
    from tests.testapp.models import Document

    origin = Origin("https", "example.com")
    command, argument = sys.argv[1], sys.argv[2]
    if command == "seed":
        day = datetime.date(2024, 1, 1)
        Document.objects.bulk_create(
            Document(id=key, path=f"/d/{key}/", published_on=day)
            for key in range(1, int(argument) + 1)
        )
    elif command == "start":
        print(parallel.start_export(argument, origin=origin, gzip=True, pages_per_task=2))
    elif command == "empty-queue":
        import django_rq

        django_rq.get_queue("default").empty()
    elif command == "full":
        export_sitemap(FolderDestination(argument), origin=origin, gzip=True, full=True)
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
