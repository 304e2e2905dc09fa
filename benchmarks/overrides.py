"""What applying editors' overrides costs when serving one full sitemap page.

Renders page 1 of the example's article section (``--rows`` rows, at most 50,000)
with overrides off, on with none stored, and on with ``--overrides`` stored, and
prints the best of ``--repeat`` runs. Uses the test settings, so
``DATABASE_URL=postgres://...`` measures PostgreSQL (a throwaway test database is
created and dropped).

    python benchmarks/overrides.py --rows 50000 --overrides 1000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from django_sitemapx.documents import render_page  # noqa: E402
from django_sitemapx.locations import Origin  # noqa: E402
from django_sitemapx.models import Override, location_hash  # noqa: E402
from django_sitemapx.registry import default_registry  # noqa: E402
from example_project.articles.factories import bulk_published_articles  # noqa: E402
from example_project.articles.models import Category  # noqa: E402

ORIGIN = Origin("https", "example.com")


def seed(rows: int) -> None:
    category = Category.objects.create(name="News", slug="news")
    bulk_published_articles(category, rows)


def render() -> tuple[float, int]:
    start = time.perf_counter()
    source = default_registry.get("article")
    page = source.page(1)
    stream = render_page(source, page, ORIGIN) if page is not None else None
    size = sum(len(chunk) for chunk in stream or [])
    return time.perf_counter() - start, size


def best(repeat: int) -> tuple[float, int]:
    runs = [render() for _ in range(repeat)]
    return min(run[0] for run in runs), runs[0][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--overrides", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = min(args.rows, 50_000)
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        seed(rows)
        with override_settings(SITEMAPX_OVERRIDES=False):
            off, size = best(args.repeat)
        empty, _ = best(args.repeat)
        step = max(rows // max(args.overrides, 1), 1)
        Override.objects.bulk_create(
            Override(
                location=f"/articles/news/a{i}",
                location_hash=location_hash(f"/articles/news/a{i}"),
                priority="0.9",
                exclude=i % 10 == 0,
            )
            for i in range(1, rows + 1, step)
        )
        stored = Override.objects.count()
        full, _ = best(args.repeat)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    print(f"{connection.vendor}: {rows} rows, {size / 1e6:.1f} MB, best of {args.repeat}")
    print(f"  overrides off          {off * 1000:8.0f} ms")
    print(f"  on, none stored        {empty * 1000:8.0f} ms  ({(empty / off - 1) * 100:+.0f}%)")
    print(f"  on, {stored:>6} stored     {full * 1000:8.0f} ms  ({(full / off - 1) * 100:+.0f}%)")


if __name__ == "__main__":
    main()
