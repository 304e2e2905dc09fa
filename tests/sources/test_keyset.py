"""Keyset pages: fixed key ranges, and every page's row count and lastmod in one query."""

import datetime

import pytest
from django.db import connection
from django.db.models import Max
from django.test.utils import CaptureQueriesContext

from django_sitemapx.sources.keyset import bucket_summaries, page_for_key, page_range
from example_project.articles.models import Article
from tests.factories import CategoryFactory


def test_page_arithmetic() -> None:
    assert page_range(1, 50_000) == (1, 50_000)
    assert page_range(2, 50_000) == (50_001, 100_000)
    assert [page_for_key(k, 3) for k in (0, 1, 3, 4, 7)] == [None, 1, 1, 2, 3]


@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_every_key_is_on_the_page_whose_range_holds_it(limit: int) -> None:
    for key in range(-2, 30):
        page = page_for_key(key, limit)
        if key < 1:
            assert page is None
            continue
        assert page is not None
        low, high = page_range(page, limit)
        assert low <= key <= high and high - low + 1 == limit


@pytest.mark.django_db
def test_bucket_summaries_count_rows_and_latest_per_non_empty_page() -> None:
    category = CategoryFactory(slug="c")
    days = {1: 5, 2: 1, 3: 9, 7: 2, 9: 3}  # key: day; keys 4-6 and 8 do not exist
    for key, day in days.items():
        Article.objects.create(
            id=key,
            category=category,
            slug=f"a{key}",
            title="t",
            updated_at=datetime.datetime(2024, 1, day, tzinfo=datetime.UTC),
        )
    with CaptureQueriesContext(connection) as queries:
        summaries = bucket_summaries(Article.objects.all(), "id", 3, Max("updated_at"))
    assert len(queries) == 1
    day = lambda d: datetime.datetime(2024, 1, d, tzinfo=datetime.UTC)  # noqa: E731
    assert summaries == [(1, 3, day(9), 3), (3, 2, day(3), 2)]  # page 2 (keys 4-6) is empty
    assert bucket_summaries(Article.objects.all(), "id", 3) == [(1, 3, None, 3), (3, 2, None, 2)]
    # The queryset's filters apply; its ordering (Article orders by -updated_at) does not.
    ordered = Article.objects.filter(id__gte=3).order_by("-updated_at")
    assert bucket_summaries(ordered, "id", 2) == [
        (2, 1, None, 1),
        (4, 1, None, 1),
        (5, 1, None, 1),
    ]
    assert bucket_summaries(Article.objects.none(), "id", 3) == []
