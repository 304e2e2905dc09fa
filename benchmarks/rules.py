"""What applying editors' rules costs when serving one full sitemap page.

Renders page 1 of a section of the example's articles (``--rows`` rows, at most 50,000,
all on that page: the section declares how long its URLs can be)
with no rule, with ``--rules`` rules of which none matches a URL of the page, and
with as many rules of which two match: a glob excluding about a tenth of the
URLs and a prefix setting the priority of all of them. Prints the best of
``--repeat`` runs. Uses the test settings, so ``DATABASE_URL=postgres://...``
measures PostgreSQL (a throwaway test database is created and dropped).

    python benchmarks/rules.py --rows 50000 --rules 50
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

from django_sitemapx.documents import render_page  # noqa: E402
from django_sitemapx.locations import Origin  # noqa: E402
from django_sitemapx.models import Rule  # noqa: E402
from django_sitemapx.registry import default_registry  # noqa: E402
from django_sitemapx.sources import ModelSource  # noqa: E402
from example_project.articles.factories import bulk_published_articles  # noqa: E402
from example_project.articles.models import Article, Category  # noqa: E402

ORIGIN = Origin("https", "example.com")


class BenchSource(ModelSource):
    """The articles, with a bound on their URLs' length so 50,000 fit one page."""

    queryset = Article.objects.filter(is_published=True)
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    lastmod_field = "updated_at"

    def max_location_bytes(self) -> int:
        return 200


def render() -> tuple[float, int, int]:
    start = time.perf_counter()
    source = default_registry.get("bench")
    page = source.page(1)
    stream = render_page(source, page, ORIGIN) if page is not None else None
    size = sum(len(chunk) for chunk in stream or [])
    urls = stream.stats.urls if stream is not None else 0
    return time.perf_counter() - start, size, urls


def best(repeat: int) -> tuple[float, int, int]:
    runs = [render() for _ in range(repeat)]
    return min(run[0] for run in runs), runs[0][1], runs[0][2]


def unmatched(count: int) -> list[Rule]:
    """Rules of both kinds that match no article URL (their heads share its first character)."""
    return [
        Rule(matching="glob", pattern=f"/archive/{i}/*/old", exclude=True)
        if i % 2
        else Rule(pattern=f"/tag/{i}/", priority="0.1")
        for i in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--rules", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = min(args.rows, 50_000)
    count = max(args.rules, 2)
    default_registry.register("bench", BenchSource)
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        bulk_published_articles(Category.objects.create(name="News", slug="news"), rows)
        none, size, urls = best(args.repeat)
        Rule.objects.bulk_create(unmatched(count))
        missing, _, _ = best(args.repeat)
        Rule.objects.all().delete()
        Rule.objects.bulk_create(
            [
                *unmatched(count - 2),
                Rule(matching="glob", pattern="/articles/*/a1*", exclude=True),
                Rule(pattern="/articles/", priority="0.7", position=200),
            ]
        )
        matching, _, listed = best(args.repeat)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    header = f"{connection.vendor}: {rows} rows, {urls} URLs, {size / 1e6:.1f} MB"
    print(f"{header}, best of {args.repeat}")
    print(f"  no rule                          {none * 1000:8.0f} ms")
    print(
        f"  {count} rules, none matching        {missing * 1000:8.0f} ms  "
        f"({(missing / none - 1) * 100:+.0f}%)"
    )
    print(
        f"  {count} rules, 2 matching (every URL) {matching * 1000:6.0f} ms  "
        f"({(matching / none - 1) * 100:+.0f}%), {listed} URLs listed"
    )


if __name__ == "__main__":
    main()
