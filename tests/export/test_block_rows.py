"""The changed blocks' rows read again, and the page table's summaries stored in one statement.

``splice.block_keys`` says, for each changed block, how many rows it holds, the
place of each changed key among them and their greatest lastmod: on
PostgreSQL counted in pieces in SQL (``width_bucket``), elsewhere from the keys
read. Both must agree with the rows, and with each other. ``splice.KeyRanges``
selects the rows of key ranges as a ``Q`` of ``gte`` and ``lt`` lookups would.
``PageTable._store_many`` stores each page's summary only while its range is
the one loaded.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from django.db import connection
from django.db.models import F, Q
from django.test.utils import CaptureQueriesContext

from django_sitemapx import ModelSource
from django_sitemapx.export import splice
from django_sitemapx.models import PageState
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources.lastmods import formats_lastmod_in_sql
from django_sitemapx.sources.pages import MARKED
from django_sitemapx.sources.summaries import Bounds
from example_project.articles.models import Article, Category
from tests.support.exports import DatedArticleSource

pytestmark = pytest.mark.django_db

START = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)


@pytest.fixture
def source(registry: SitemapRegistry) -> ModelSource:
    """Articles 10 to 600 by tens, their lastmods not in key order."""
    category = Category.objects.create(slug="c", name="C")
    for key in range(10, 610, 10):
        Article.objects.create(
            id=key,
            category=category,
            slug=f"a{key}",
            title="t",
            updated_at=START + datetime.timedelta(minutes=(key * 7) % 601),
            is_published=True,
        )
    return registry.register(Article, source_class=DatedArticleSource, section="a", limit=20)


def _encode(source: ModelSource, key: int) -> str:
    return source.page_table().codec.encode(key)


# Blocks as (low, high) keys (None: no bound) with the changed keys whose places are asked.
_BLOCKS: list[tuple[int | None, int | None, list[int]]] = [
    (None, 60, [10, 40]),  # no lower bound
    (60, 120, [60]),  # a changed key at the block's low
    (200, 250, [240]),  # the block's last row
    (300, 340, []),  # none asked
    (400, 460, [410, 420, 430]),  # several, side by side
    (560, None, [590]),  # no upper bound
]


def _ranges(source: ModelSource) -> tuple[list[tuple[str, str]], list[list[str]]]:
    ranges = [
        (
            "" if low is None else _encode(source, low),
            "" if high is None else _encode(source, high),
        )
        for low, high, _keys in _BLOCKS
    ]
    keys = [[_encode(source, key) for key in found] for _low, _high, found in _BLOCKS]
    return ranges, keys


def _counted_rows(
    source: ModelSource,
    rows: Any,
    ranges: list[tuple[str, str]],
    keys: list[list[str]],
    dated: bool,
) -> list[splice.BlockRows]:
    """``splice._count_rows``, its result read as ``block_keys`` reads it."""
    cursor = splice._count_rows(source, rows, ranges, keys, dated)
    return splice._read_counts([splice._Sent(list(range(len(ranges))), keys, cursor)], len(ranges))


def _counted_lateral(
    source: ModelSource, ranges: list[tuple[str, str]], keys: list[list[str]], dated: bool
) -> list[splice.BlockRows]:
    """``splice._count_lateral``, its result read as ``block_keys`` reads it."""
    cursor = splice._count_lateral(source, ranges, keys, dated)
    return splice._read_counts([splice._Sent(list(range(len(ranges))), keys, cursor)], len(ranges))


def _expected(source: ModelSource) -> list[tuple[int, dict[str, int]]]:
    """Each block's row count and its asked keys' places, from the rows."""
    listed = sorted(source.listed_rows().values_list("id", flat=True))
    found = []
    for low, high, keys in _BLOCKS:
        rows = [
            key for key in listed if (low is None or key >= low) and (high is None or key < high)
        ]
        found.append((len(rows), {_encode(source, key): rows.index(key) for key in keys}))
    return found


def test_block_keys_count_place_and_date_the_rows_of_each_block(source: ModelSource) -> None:
    ranges, keys = _ranges(source)
    found = splice.block_keys(source, ranges, keys)
    assert [(rows.count, rows.places) for rows in found] == _expected(source)
    # Read the other way: the keys themselves, each compared in Python.
    rows = source.listed_rows().filter(
        splice._in_ranges(source, source.page_table().codec, ranges)
    )
    dated = formats_lastmod_in_sql(Article._meta.get_field("updated_at"), "default")
    read = splice._read_rows(source, rows.order_by("id"), ranges, keys, dated)
    assert [(rows.count, rows.places) for rows in read] == _expected(source)
    assert [rows.latest for rows in found] == [rows.latest for rows in read]
    if dated:
        assert all(rows.latest for rows in found)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="counted in pieces on PostgreSQL")
def test_pieces_counted_in_sql_agree_with_the_keys_read(source: ModelSource) -> None:
    ranges, keys = _ranges(source)
    codec = source.page_table().codec
    rows = source.listed_rows().filter(splice._in_ranges(source, codec, ranges))
    counted = _counted_rows(source, rows.order_by(), ranges, keys, True)
    read = splice._read_rows(source, rows.order_by("id"), ranges, keys, True)
    assert counted == read
    # One block alone: one piece per key and one before them.
    alone = source.listed_rows().filter(splice._in_ranges(source, codec, ranges[3:4]))
    assert _counted_rows(source, alone.order_by(), ranges[3:4], keys[3:4], True) == read[3:4]


def test_block_keys_in_several_queries(
    source: ModelSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    ranges, keys = _ranges(source)
    whole = splice.block_keys(source, ranges, keys)
    monkeypatch.setattr(splice, "_RANGES_PER_QUERY", 2)
    assert splice.block_keys(source, ranges, keys) == whole
    assert splice.block_keys(source, []) == []


def test_key_ranges_select_the_rows_a_q_of_lookups_selects(source: ModelSource) -> None:
    bounds = [Bounds(None, 60), Bounds(200, 260), Bounds(560, None)]
    expected = Q()
    for low, high in [(None, 60), (200, 260), (560, None)]:
        part = Q()
        if low is not None:
            part &= Q(id__gte=low)
        if high is not None:
            part &= Q(id__lt=high)
        expected |= part
    articles = Article.objects.order_by("id")
    wanted = list(articles.filter(expected).values_list("id", flat=True))
    found = list(articles.filter(splice.KeyRanges(F("id"), bounds)).values_list("id", flat=True))
    assert (
        found
        == wanted
        == [10, 20, 30, 40, 50, 200, 210, 220, 230, 240, 250, 560, 570, 580, 590, 600]
    )
    assert not articles.filter(splice.KeyRanges(F("id"), [])).exists()
    assert articles.filter(splice.KeyRanges(F("id"), [Bounds(None, None)])).count() == 60


def test_store_many_stores_each_page_only_while_its_range_is_as_loaded(
    source: ModelSource,
) -> None:
    table = source.page_table()
    states = table.states()
    assert len(states) >= 3
    first, second, third = states[:3]
    loaded = second.rows
    # Another process moved the second page's range meanwhile (its changes went up).
    PageState.objects.filter(section="a", number=second.number).update(changes=second.changes + 1)
    summaries = {
        first.number: (7, "2030-01-01T00:00:00+00:00", 0),
        second.number: (8, None, 0),
        third.number: (9, None, 2),
    }
    for state in (first, second, third):
        state.rows, state.lastmod, state.undated = summaries[state.number]
        state.generation = MARKED
    table._store_many([first, second, third])
    row = PageState.objects.get(section="a", number=first.number)
    assert (row.rows, row.lastmod, row.undated, row.generation, row.counted) == (
        7,
        "2030-01-01T00:00:00+00:00",
        0,
        MARKED,
        row.changes,
    )
    row = PageState.objects.get(section="a", number=third.number)
    assert (row.rows, row.lastmod, row.undated, row.counted) == (9, None, 2, row.changes)
    untouched = PageState.objects.get(section="a", number=second.number)
    assert untouched.rows == loaded != 8
    assert untouched.counted != untouched.changes


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner settings")
def test_counted_without_parallel_workers_or_jit_and_set_back_after() -> None:
    def settings() -> tuple[str, str]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('max_parallel_workers_per_gather'), current_setting('jit')"
            )
            found = cursor.fetchone()
        return found[0], found[1]

    before = settings()
    assert before != ("0", "off")  # the server's defaults, or the test proves nothing
    with splice._serial_plans("default"):
        assert settings() == ("0", "off")
    assert settings() == before


@pytest.mark.skipif(connection.vendor != "postgresql", reason="counted in pieces on PostgreSQL")
def test_pieces_counted_in_sql_date_only_their_rows_in_the_lastmod_range(
    source: ModelSource,
) -> None:
    """A piece's greatest lastmod is formatted once in SQL: of its rows in range, as read."""
    beyond = datetime.datetime(9999, 12, 31, 12, tzinfo=datetime.UTC)
    before = datetime.datetime(1, 1, 1, 12, tzinfo=datetime.UTC)
    # Block 3 has no row in range; blocks 4 and 5 have their greatest out of it.
    Article.objects.filter(id__in=[300, 310, 320, 330, 410, 590]).update(updated_at=beyond)
    Article.objects.filter(id__in=[420, 580]).update(updated_at=before)
    ranges, keys = _ranges(source)
    rows = source.listed_rows().filter(
        splice._in_ranges(source, source.page_table().codec, ranges)
    )
    counted = _counted_rows(source, rows.order_by(), ranges, keys, True)
    read = splice._read_rows(source, rows.order_by("id"), ranges, keys, True)
    assert counted == read
    assert read[3].latest is None
    # Of 400, 430, 440, 450 (minutes 396, 5, 75, 145), and of 560, 570, 600 (314, 384, 594).
    assert [read[4].latest, read[5].latest] == [
        "2024-01-01T06:36:00+00:00",
        "2024-01-01T09:54:00+00:00",
    ]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="counted in pieces on PostgreSQL")
def test_ranges_bounded_at_both_ends_are_counted_in_one_lateral_query(
    source: ModelSource,
) -> None:
    ranges, keys = _ranges(source)
    with CaptureQueriesContext(connection) as queries:
        found = splice.block_keys(source, ranges, keys)
    assert [(rows.count, rows.places) for rows in found] == _expected(source)
    counting = [query["sql"] for query in queries if "width_bucket" in query["sql"]]
    # The four bounded blocks in one query; the first (no lower bound) and the last
    # (no upper bound) filtered on their ranges.
    assert len(counting) == 2
    assert sum("CROSS JOIN LATERAL" in sql for sql in counting) == 1
    # The same counts, places and lastmods as the keys read, one by one.
    codec = source.page_table().codec
    bounded = ranges[1:5]
    rows = source.listed_rows().filter(splice._in_ranges(source, codec, bounded))
    read = splice._read_rows(source, rows.order_by("id"), bounded, keys[1:5], True)
    assert _counted_lateral(source, bounded, keys[1:5], True) == read == found[1:5]
    assert _counted_lateral(source, bounded, keys[1:5], False) == [
        splice.BlockRows(rows.count, rows.places, None) for rows in read
    ]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="counted in pieces on PostgreSQL")
def test_counted_laterally_date_only_their_rows_in_the_lastmod_range(
    source: ModelSource,
) -> None:
    beyond = datetime.datetime(9999, 12, 31, 12, tzinfo=datetime.UTC)
    before = datetime.datetime(1, 1, 1, 12, tzinfo=datetime.UTC)
    Article.objects.filter(id__in=[300, 310, 320, 330, 410]).update(updated_at=beyond)
    Article.objects.filter(id__in=[420]).update(updated_at=before)
    ranges, keys = _ranges(source)
    bounded = ranges[1:5]
    rows = source.listed_rows().filter(
        splice._in_ranges(source, source.page_table().codec, bounded)
    )
    read = splice._read_rows(source, rows.order_by("id"), bounded, keys[1:5], True)
    assert _counted_lateral(source, bounded, keys[1:5], True) == read
    assert read[2].latest is None
    assert read[3].latest == "2024-01-01T06:36:00+00:00"


@pytest.mark.parametrize("limit", [6, 3, 0])
def test_changed_blocks_are_counted_as_they_are_found(
    source: ModelSource, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """``settle``'s counting: on PostgreSQL each ``_RANGES_PER_QUERY`` ranges are sent as
    they are found (pipeline mode), read at the end; the first ``limit`` only."""
    ranges, keys = _ranges(source)
    whole = splice.block_keys(source, ranges, keys)
    monkeypatch.setattr(splice, "_RANGES_PER_QUERY", 2)
    with CaptureQueriesContext(connection) as queries, splice._Counting(source, limit) as counting:
        for bounds, changed in zip(ranges, keys, strict=True):
            counting.add(bounds, changed)
        sent = [query["sql"] for query in queries if "width_bucket" in query["sql"]]
        found = counting.rows()
    assert counting.ranges == ranges
    assert found == whole[:limit]
    if connection.vendor == "postgresql" and limit:
        # Sent before any was read: the first two ranges' query once they were found.
        assert len(sent) >= limit // 2
    else:
        assert sent == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's arrays")
def test_store_many_joins_the_pages_values_as_arrays_on_postgresql(source: ModelSource) -> None:
    # One statement whatever the pages: seven arrays joined to the rows, not a CASE per column.
    table = source.page_table()
    states = table.states()
    for state in states:
        state.rows, state.lastmod, state.undated, state.generation = 5, None, 0, MARKED
    with CaptureQueriesContext(connection) as queries:
        table._store_many(states)
    (update,) = [query["sql"] for query in queries if query["sql"].startswith("UPDATE")]
    assert "unnest(" in update and "CASE" not in update
    stored = PageState.objects.filter(section="a").values_list("rows", "counted", "changes")
    assert {(rows, counted == changes) for rows, counted, changes in stored} == {(5, True)}
