"""Benchmark data: the example's articles, N rows, every tenth unpublished.

Rows are those ``seed_demo`` makes (same slugs, titles, categories and
timestamps) but written with one ``INSERT ... SELECT`` over a generated series,
which fills a million rows in seconds rather than minutes. Run inside a worker
process with Django set up; ``ensure(n)`` is a no-op when the data is there.
"""

from __future__ import annotations

from django.core.management import call_command
from django.db import connection, transaction

from example_project.articles.management.commands.seed_demo import CATEGORY_SLUGS

# seed_demo's EPOCH (2024-01-01T00:00:00Z) as a Unix time; row n is n minutes later.
EPOCH_SECONDS = 1_704_067_200

_SERIES = {
    "postgresql": "SELECT n FROM generate_series(1, %(n)s) AS n",
    "sqlite": (
        "WITH RECURSIVE series(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM series "
        "WHERE n < %(n)s) SELECT n FROM series"
    ),
}
_TIMESTAMP = {
    "postgresql": f"to_timestamp({EPOCH_SECONDS} + n::bigint * 60)",
    "sqlite": f"strftime('%%Y-%%m-%%d %%H:%%M:%%S', {EPOCH_SECONDS} + n * 60, 'unixepoch')",
}


def current_size() -> int | None:
    """The number of articles if the data is a complete benchmark set, else None."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*), max(id) FROM articles_article")
        count, highest = cursor.fetchone()
        cursor.execute("SELECT count(*) FROM articles_category")
        (categories,) = cursor.fetchone()
    if count and count == highest and categories == len(CATEGORY_SLUGS):
        return int(count)
    return None


def ensure(n: int) -> bool:
    """Make the database hold exactly the N-row data set; True if it was rebuilt."""
    call_command("migrate", verbosity=0, interactive=False)
    if current_size() == n:
        return False
    vendor = connection.vendor
    with transaction.atomic(), connection.cursor() as cursor:
        if vendor == "postgresql":
            cursor.execute("TRUNCATE articles_article, articles_category RESTART IDENTITY CASCADE")
        else:
            cursor.execute("DELETE FROM articles_articleimage")
            cursor.execute("DELETE FROM articles_articlevideo")
            cursor.execute("DELETE FROM articles_article")
            cursor.execute("DELETE FROM articles_category")
            cursor.execute(
                "DELETE FROM sqlite_sequence WHERE name IN "
                "('articles_article', 'articles_category')"
            )
        for number, slug in enumerate(CATEGORY_SLUGS, start=1):
            cursor.execute(
                "INSERT INTO articles_category (id, name, slug) VALUES (%s, %s, %s)",
                [number, slug.capitalize(), slug],
            )
        # Row n is in category n % 5, as seed_demo does it.
        series = _SERIES[vendor] % {"n": int(n)}
        cursor.execute(
            "INSERT INTO articles_article (id, category_id, slug, title, updated_at, "
            f"is_published) SELECT n, (n %% {len(CATEGORY_SLUGS)}) + 1, "
            "'demo-article-' || n, 'Demo article ' || n, "
            f"{_TIMESTAMP[vendor]}, (n %% 10 <> 0) FROM ({series}) AS numbers",
            [],  # with parameters, "%%" reaches the database as "%"
        )
        if vendor == "postgresql":
            for table in ("articles_article", "articles_category"):
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"(SELECT max(id) FROM {table}))"
                )
    # A new data set, written behind Django's signals: the page table of the one
    # before (an earlier run at another N) would describe rows that are gone.
    from django_sitemapx.models import OwedGeneration, PageState, SectionLock

    for model in (PageState, SectionLock, OwedGeneration):
        model.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        if vendor == "postgresql":
            cursor.execute("VACUUM (ANALYZE) articles_article")
    return True


# As seed_demo: article n has n % 4 images, one article in 25 a video, one author per
# 10 articles; the 36 newest published articles are news (published in the last 36 hours).
IMAGE_CYCLE = 4
VIDEO_EVERY = 25
AUTHOR_EVERY = 10
NEWS_ARTICLES = 36


def ensure_media(n: int) -> None:
    """The rest of the example's data for the N articles of ``ensure(n)``, as ``seed_demo``.

    Images, videos and authors are written with one ``INSERT ... SELECT`` each when
    their counts are not those of N articles; the news articles are dated again.
    """
    from benchmarks.scale import seed_authors

    vendor = connection.vendor
    series = _SERIES[vendor] % {"n": int(n)}
    images = sum(k % IMAGE_CYCLE for k in range(IMAGE_CYCLE)) * (n // IMAGE_CYCLE) + sum(
        k % IMAGE_CYCLE for k in range(n - n % IMAGE_CYCLE + 1, n + 1)
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM articles_articleimage")
        if cursor.fetchone()[0] != images:
            cursor.execute("DELETE FROM articles_articleimage")
            for k in range(IMAGE_CYCLE - 1):
                cursor.execute(
                    "INSERT INTO articles_articleimage (article_id, url, position) "
                    f"SELECT n, '/static/demo/' || n || '-{k}.jpg', {k} FROM ({series}) AS s "
                    f"WHERE n %% {IMAGE_CYCLE} > {k}",
                    [],
                )
        cursor.execute("SELECT count(*) FROM articles_articlevideo")
        if cursor.fetchone()[0] != n // VIDEO_EVERY:
            cursor.execute("DELETE FROM articles_articlevideo")
            cursor.execute(
                "INSERT INTO articles_articlevideo (article_id, title, description, "
                "thumbnail_url, content_url, duration, family_friendly) "
                "SELECT n, 'Demo video ' || n, 'A short demo clip for article ' || n || '.', "
                "'/static/demo/' || n || '-thumb.jpg', '/static/demo/' || n || '.mp4', "
                f"30 + n %% 600, {'true' if vendor == 'postgresql' else '1'} "
                f"FROM ({series}) AS s WHERE n %% {VIDEO_EVERY} = 0",
                [],
            )
    seed_authors(n // AUTHOR_EVERY)
    newest = (
        "SELECT id FROM articles_article WHERE is_published ORDER BY id DESC "
        f"LIMIT {NEWS_ARTICLES}"
    )
    moment = {
        "postgresql": "now() - (%s - id) * interval '1 hour'",
        "sqlite": "strftime('%%Y-%%m-%%d %%H:%%M:%%S', 'now', '-' || (%s - id) || ' hours')",
    }[vendor]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE articles_article SET published_at = NULL")
        cursor.execute(
            f"UPDATE articles_article SET published_at = {moment % n} WHERE id IN ({newest})"
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
