"""Reading and pruning the log of changed rows (``sources.changes``)."""

from __future__ import annotations

import contextlib
import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from django_sitemapx.models import ChangedKey
from django_sitemapx.sources.changes import EVERY_SECTION, KEEP, changes_since, prune_changes

pytestmark = pytest.mark.django_db


def _log(count: int, created: datetime.datetime, start: int = 0) -> None:
    """``count`` rows logged a millisecond apart, the last at ``created``."""
    ChangedKey.objects.bulk_create(
        ChangedKey(
            section="d",
            page=1,
            key=str(start + n),
            created=created - datetime.timedelta(milliseconds=count - 1 - n),
        )
        for n in range(count)
    )


def test_the_rows_older_than_the_cut_go_and_a_mark_says_where_they_ended() -> None:
    now = timezone.now()
    _log(3, now - KEEP - datetime.timedelta(hours=1))
    _log(2, now, start=3)
    last_old = ChangedKey.objects.filter(key="2").get().pk
    assert prune_changes() == 3
    left = ChangedKey.objects.order_by("id")
    assert [row.key for row in left if row.section == "d"] == ["3", "4"]
    mark = left.get(section=EVERY_SECTION)
    assert (mark.page, mark.key) == (None, str(last_old))
    assert prune_changes() == 0  # nothing older left: no second mark
    assert ChangedKey.objects.filter(section=EVERY_SECTION).count() == 1


def test_an_old_row_logged_late_goes_at_the_next_prune() -> None:
    cut = timezone.now() - KEEP
    _log(1, cut - datetime.timedelta(hours=3))
    _log(1, cut - datetime.timedelta(hours=1), start=1)
    # Older than the newest old row, under a greater ID: a save logged late.
    _log(1, cut - datetime.timedelta(hours=2), start=2)
    _log(1, timezone.now(), start=3)
    assert prune_changes() == 2
    logged = ChangedKey.objects.filter(section="d").order_by("id")
    assert list(logged.values_list("key", flat=True)) == ["2", "3"]
    assert prune_changes() == 1
    assert list(logged.values_list("key", flat=True)) == ["3"]
    assert ChangedKey.objects.filter(section=EVERY_SECTION).count() == 2


def _rows_read(sql: str, params: Any) -> int:
    """Rows a PostgreSQL query's table scans read: those they return and those they filter out.

    A bitmap index scan's rows are counted by the heap scan above it."""
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        plan = json.loads(plan)
    total, nodes = 0, [plan[0]["Plan"]]
    while nodes:
        node = nodes.pop()
        kind = node["Node Type"]
        if kind.endswith("Scan") and kind != "Bitmap Index Scan":
            total += node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
        nodes.extend(node.get("Plans", []))
    return total


@contextlib.contextmanager
def _log_rows_read() -> Iterator[list[int]]:
    """The rows each query on the log reads (``_rows_read``), as they run."""
    read: list[int] = []

    def explained(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql.startswith("SELECT") and ChangedKey._meta.db_table in sql:
            read.append(_rows_read(sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(explained):
        yield read


def test_finding_where_to_cut_reads_no_newer_row() -> None:
    """The week of rows newer than the cut is not read to find where it is: each export
    prunes, and a busy site logs millions a week."""
    if connection.vendor != "postgresql":
        pytest.skip("reads PostgreSQL's plans")
    now = timezone.now()
    _log(5_000, now - KEEP - datetime.timedelta(hours=1))
    _log(20_000, now, start=5_000)
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {ChangedKey._meta.db_table}")
    with _log_rows_read() as read:
        assert prune_changes() == 5_000
    # The rows deleted are read (to send their signals), and those only.
    assert read
    assert max(read) <= 5_000, read


def test_reading_the_log_after_a_cursor_reads_no_row_before_it() -> None:
    """An export reads the rows after its cursor, not the week of rows the log keeps
    before it, whatever PostgreSQL's statistics say: here, those of the log when it was
    empty, as the benchmark's log had them (its whole log was read for 1,000 rows)."""
    if connection.vendor != "postgresql":
        pytest.skip("reads PostgreSQL's plans")
    with connection.cursor() as sql:
        # Emptied for good (an earlier test's rows leave pages behind), then analyzed so.
        sql.execute(f"TRUNCATE {ChangedKey._meta.db_table}")
        sql.execute(f"ANALYZE {ChangedKey._meta.db_table}")
    _log(20_000, timezone.now())
    cursor = ChangedKey.objects.order_by("-id").values_list("id", flat=True)[1_000]
    with _log_rows_read() as read:
        log = changes_since({"d": cursor})
    assert log.counts == {("d", 1): 1_000}
    assert read
    assert max(read) <= 1_000 + 100, read


def test_the_log_read_after_a_cursor_holds_every_row_after_it() -> None:
    _log(5, timezone.now())
    ids = list(ChangedKey.objects.order_by("id").values_list("id", flat=True))
    assert changes_since({"d": ids[1]}).keys == {"d": ["2", "3", "4"]}
    assert changes_since({"d": ids[-1]}).keys == {}
    ChangedKey.objects.all().delete()
    assert changes_since({"d": ids[-1]}).keys == {}
