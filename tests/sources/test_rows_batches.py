"""row_batches: the rows of iterator(), batched, straight from the cursor."""

import datetime
from typing import Any

import pytest
from django.db import connection
from django.db.models import QuerySet
from django.test import override_settings

from django_sitemapx.sources.rows import _c_timestamptz_loader, native_timestamps, row_batches
from example_project.articles.factories import bulk_published_articles
from example_project.articles.models import Article, Category

pytestmark = pytest.mark.django_db


def _flat(batches: Any) -> list[tuple[Any, ...]]:
    return [row for batch in batches for row in batch]


def _open_cursors() -> int:
    """The server-side cursors open on PostgreSQL's connection."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_cursors")
        (found,) = cursor.fetchone()
    return int(found)


@pytest.fixture
def articles() -> QuerySet[Article]:
    bulk_published_articles(Category.objects.create(name="News", slug="news"), 7)
    return Article.objects.order_by("pk")


def test_plain_rows_come_in_batches_of_at_most_the_size(articles: QuerySet[Article]) -> None:
    rows = articles.values_list("pk", "slug", "category__slug")
    batches = list(row_batches(rows, 3))
    assert [len(batch) for batch in batches] == [3, 3, 1]
    assert all(type(row) is tuple for batch in batches for row in batch)
    assert _flat(batches) == list(rows.iterator(chunk_size=3))


def test_rows_needing_converters_are_converted_as_iterator_does(
    articles: QuerySet[Article],
) -> None:
    # Datetimes (converted on SQLite and MySQL) and booleans: Django's converters run.
    rows = articles.values_list("pk", "updated_at", "is_published")
    assert _flat(row_batches(rows, 2)) == list(rows.iterator(chunk_size=2))


def test_no_row_no_batch(articles: QuerySet[Article]) -> None:
    assert list(row_batches(articles.filter(pk__in=[]).values_list("pk"), 5)) == []
    assert list(row_batches(articles.filter(pk=-1).values_list("pk"), 5)) == []


def test_closing_the_batches_early_releases_the_cursor(articles: QuerySet[Article]) -> None:
    batches = row_batches(articles.values_list("pk", "slug"), 2)
    assert len(next(batches)) == 2
    batches.close()
    # The connection serves the next query at once (a server-side cursor left
    # open would hold it on PostgreSQL).
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


def test_the_cursor_goes_with_the_last_batch(articles: QuerySet[Article]) -> None:
    # A short batch is the last one: no server-side cursor stays open for a caller
    # that stops there (a response never read to its end).
    if connection.vendor != "postgresql":
        pytest.skip("server-side cursors are PostgreSQL's")
    batches = row_batches(articles.values_list("pk"), 10)
    assert len(next(batches)) == 7
    assert _open_cursors() == 0
    batches.close()


def test_postgresql_reads_a_page_without_a_server_side_cursor(
    articles: QuerySet[Article],
) -> None:
    # Outside a transaction Django's server-side cursor is WITH HOLD: the server
    # builds the whole result anyway, then one round trip per batch. A page is
    # bounded, so its rows are read at once.
    if connection.vendor != "postgresql":
        pytest.skip("server-side cursors are PostgreSQL's")
    batches = row_batches(articles.values_list("pk"), 3)
    assert len(next(batches)) == 3
    assert _open_cursors() == 0
    assert _flat(batches) == [(pk,) for pk in articles.values_list("pk", flat=True)[3:]]


# -- timestamptz read by psycopg's C loader ---------------------------------------------------

MOMENTS = [
    datetime.datetime(1, 1, 2, 0, 0, 1, tzinfo=datetime.UTC),
    datetime.datetime(2024, 3, 1, 23, 30, 0, 123456, tzinfo=datetime.UTC),
    datetime.datetime(2024, 3, 31, 1, 30, 0, 5, tzinfo=datetime.UTC),  # Paris's DST change
    datetime.datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=datetime.UTC),
]


def _dated(articles: QuerySet[Article]) -> QuerySet[Article]:
    for article, moment in zip(articles, MOMENTS, strict=False):
        Article.objects.filter(pk=article.pk).update(updated_at=moment)
    return articles.values_list("pk", "updated_at")


def _c_loader_available() -> bool:
    return connection.vendor == "postgresql" and _c_timestamptz_loader() is not None


def test_timestamps_read_natively_are_the_values_django_reads(
    articles: QuerySet[Article],
) -> None:
    rows = _dated(articles)
    ours = _flat(row_batches(rows, 3))
    theirs = list(rows.iterator(chunk_size=3))
    assert ours == theirs
    assert [row[1] for row in ours[: len(MOMENTS)]] == MOMENTS
    # The same objects, not only equal instants: the same tzinfo as Django gives.
    assert [type(row[1].tzinfo) for row in ours] == [type(row[1].tzinfo) for row in theirs]
    assert all(row[1].tzinfo is theirs[0][1].tzinfo for row in ours)


def test_within_native_timestamps_a_query_takes_psycopgs_c_loader() -> None:
    if not _c_loader_available():
        pytest.skip("psycopg's C loader reads PostgreSQL's timestamptz")
    import psycopg
    from psycopg.pq import Format

    oid = psycopg.adapters.types["timestamptz"].oid

    def loader_of_a_query() -> type[Any]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT now()")
            cursor.fetchone()
            loader: type[Any] = cursor.cursor.adapters.get_loader(oid, Format.TEXT)
            return loader

    assert loader_of_a_query().__module__.startswith("django.")  # Django's own, in Python
    with native_timestamps(connection.alias):
        assert loader_of_a_query() is _c_timestamptz_loader()[1]  # type: ignore[index]
    assert loader_of_a_query().__module__.startswith("django.")  # for that query only


@override_settings(USE_TZ=False)
def test_without_use_tz_timestamps_are_read_as_django_reads_them(
    articles: QuerySet[Article],
) -> None:
    # Naive datetimes in TIME_ZONE, which the C loader does not give: Django's loader reads.
    rows = articles.values_list("pk", "updated_at")
    ours = _flat(row_batches(rows, 3))
    assert ours == list(rows.iterator(chunk_size=3))
    assert all(row[1].tzinfo is None for row in ours)
