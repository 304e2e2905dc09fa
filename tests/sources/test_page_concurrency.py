"""The page table under concurrent workers, deaths and deadlocks (issue 22, defects 1-5).

Each test forces one interleaving: a hook pauses a worker between two steps,
or plays the other worker's part at that point. Threads need a database with
row locks and a connection per thread: those tests run on PostgreSQL (and
MariaDB), in the services legs.
"""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.db import OperationalError, connection, transaction
from django.test import Client
from django.utils import timezone

import django_sitemapx as sitemapx
from django_sitemapx.generations import SitemapCache, page_generation
from django_sitemapx.models import PageState
from django_sitemapx.registry import SitemapRegistry, default_registry
from django_sitemapx.sources import ModelSource
from django_sitemapx.sources import pages as pages_module
from django_sitemapx.sources.pages import PageTable, State, table_section
from django_sitemapx.sources.summaries import Bounds, summarize
from tests.conftest import close_thread_connections, content, locs, validate_sitemap
from tests.support.generations import tokens
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

needs_row_locks = pytest.mark.skipif(
    connection.vendor not in ("postgresql", "mysql"),
    reason="threads writing the page table at once need row locks (services legs)",
)


class _PathSource(ModelSource):
    fields = ("path",)

    def location(self, row: Any) -> str:
        return str(row.path)


def _layout(registry: SitemapRegistry, keys: range, limit: int = 4) -> ModelSource:
    """Section ``d``: documents of ``keys``, laid out in full pages of ``limit`` and counted."""
    source = registry.register(Document, source_class=_PathSource, section="d", limit=limit)
    Document.objects.bulk_create(Document(id=key, path=f"/d/{key}/") for key in keys)
    source.page_summaries()
    return source


def _true_summaries(source: ModelSource) -> dict[int, int]:
    """Each page's row count as its rows say, over its range in the table now."""
    table = source.page_table()
    states = table._load() or []
    found = {}
    for state in states:
        bounds = table.bounds(states, state.number)
        assert bounds is not None
        found[state.number] = summarize(source, bounds[1])[0]
    return found


def _assert_true(source: ModelSource) -> None:
    """The summaries the index reads are those of the rows, and list each row once."""
    stored = {summary.number: summary.rows for summary in source.page_summaries()}
    true = {number: rows for number, rows in _true_summaries(source).items() if rows}
    assert stored == true
    assert sum(stored.values()) == Document.objects.count()


def _token(number: int) -> str:
    found = tokens([page_generation("d", number)])
    assert found is not None
    return found[0]


def _in_thread(target: Callable[[], Any], name: str) -> tuple[threading.Thread, list[Any]]:
    errors: list[Any] = []

    def run() -> None:
        try:
            target()
        except BaseException as error:  # reported by the test
            errors.append(error)
        finally:
            close_thread_connections()

    thread = threading.Thread(target=run, name=name)
    thread.start()
    return thread, errors


# -- defect 1: two workers splitting at once ------------------------------------------------


@needs_row_locks
@pytest.mark.django_db(transaction=True)
def test_two_workers_splitting_at_once_lose_no_page(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages 1-3 of 4 rows; then 2 more rows in pages 1 and 2 each, with no signal.
    # B splits page 1, then page 2 at the same time as A: both took the same new
    # number, B's insert failed, and B forgot it had split page 1 (its old count
    # stayed, under a generation never replaced).
    source = _layout(registry, range(10, 130, 10))
    Document.objects.bulk_create(Document(id=key, path=f"/d/{key}/") for key in (15, 25, 55, 65))
    sitemapx.invalidate("d")
    page_two = PageState.objects.get(section="d", number=2).first
    b_at_page_two = threading.Event()
    a_inserted = threading.Event()
    cuts, touch = PageTable._cuts, PageTable._touch

    def pausing_cuts(self: PageTable, bounds: Bounds, step: int) -> list[Any]:
        # B (the index) splits page 1, then page 2 as A (page 2 alone) does.
        if bounds.low == self.codec.decode(page_two):
            if threading.current_thread().name == "B":
                b_at_page_two.set()
                a_inserted.wait(2)
            else:
                b_at_page_two.wait(2)
        return cuts(self, bounds, step)

    def pausing_touch(self: PageTable, numbers: set[int]) -> None:
        touch(self, numbers)
        if threading.current_thread().name == "A":
            # A's new page is inserted, not committed: B reads the same greatest number.
            a_inserted.set()
            time.sleep(0.5)

    monkeypatch.setattr(PageTable, "_cuts", pausing_cuts)
    monkeypatch.setattr(PageTable, "_touch", pausing_touch)
    b, b_errors = _in_thread(lambda: source.page_table().states(), "B")
    a, a_errors = _in_thread(lambda: source.page_table().states({2}), "A")
    a.join(20)
    b.join(20)
    assert not a_errors and not b_errors, (a_errors, b_errors)
    monkeypatch.undo()
    _assert_true(source)


# -- defect 2: a count of the old range under the new generation ----------------------------


def test_a_page_split_while_it_is_counted_keeps_no_count_of_its_old_range(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _layout(registry, range(10, 130, 10))
    Document.objects.bulk_create(Document(id=key, path=f"/d/{key}/") for key in (55, 65))
    sitemapx.invalidate("d", 2)
    is_stale = PageTable._is_stale
    played: list[bool] = []

    def split_meanwhile(self: PageTable, state: State) -> bool:
        if not played:
            # Another worker splits page 2 and replaces its generation, after this
            # one loaded the table and before it counts.
            played.append(True)
            with monkeypatch.context() as inner:
                inner.setattr(PageTable, "_is_stale", is_stale)
                source.page_table().states({2})
        return is_stale(self, state)

    monkeypatch.setattr(PageTable, "_is_stale", split_meanwhile)
    source.page_table().states({2})
    monkeypatch.undo()
    assert played
    _assert_true(source)


# -- defect 3: the page of a saved row, decided at commit -------------------------------------


def test_a_row_saved_in_a_transaction_invalidates_the_page_holding_it_at_commit(
    registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    source = _layout(registry, range(10, 130, 10))
    assert source.page_table().page_of(70) == 2
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        document = Document.objects.get(id=70)
        document.path = "/d/seventy/"
        document.save()  # on page 2 now
        # Another worker's insert and split move row 70 to a new page before the commit.
        Document.objects.bulk_create([Document(id=55, path="/d/55/")])
        sitemapx.invalidate("d", 2)
        source.page_table().states({2})
        page = source.page_table().page_of(70)
        assert page not in (None, 2)
        before = _token(page)
    assert _token(page) != before  # invalidated at commit


# -- defect 4: a worker killed between a split's commit and the generations' replacement -----


class _Killed(BaseException):
    """The process dies here (SIGKILL, a timeout, the OOM killer)."""


def test_generations_owed_by_a_killed_worker_are_replaced_at_the_next_request(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = Client(HTTP_HOST="example.com")
    source = _layout(registry, range(10, 130, 10))
    Document.objects.bulk_create(Document(id=key, path=f"/d/{key}/") for key in (55, 65))
    sitemapx.invalidate("d", 2)
    before = _token(2)

    def killed(self: SitemapCache, names: Any) -> bool:
        raise _Killed

    with monkeypatch.context() as dying:
        dying.setattr(SitemapCache, "replace", killed)
        with pytest.raises(_Killed):
            source.page_table().states({2})  # the split commits, then the worker dies
    monkeypatch.setattr(pages_module, "_next_sweep", 0.0, raising=False)
    monkeypatch.setattr(pages_module, "OWED_GRACE", 0.0, raising=False)
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert _token(2) != before
    from django_sitemapx.models import OwedGeneration

    assert not OwedGeneration.objects.exists()
    listed = []
    for location in locs(index):
        listed += locs(validate_sitemap(content(client.get(urlsplit(location).path))))
    assert sorted(urlsplit(url).path for url in listed) == sorted(
        d.path for d in Document.objects.all()
    )
    _assert_true(source)


# -- defect 5: a deadlock answers no 500 ------------------------------------------------------


def _deadlock() -> OperationalError:
    """What Django raises when the database aborts a transaction to break a deadlock."""
    if connection.vendor == "postgresql":
        from psycopg import errors

        error = OperationalError("deadlock detected")
        error.__cause__ = errors.DeadlockDetected("deadlock detected")
        return error
    return OperationalError(1213, "Deadlock found when trying to get lock")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("step", ["_store", "_touch"])
def test_a_deadlock_is_run_again_and_never_answers_500(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    source = _layout(registry, range(10, 130, 10))
    Document.objects.bulk_create(Document(id=key, path=f"/d/{key}/") for key in (55, 65))
    sitemapx.invalidate("d")
    calls: list[int] = []
    original = getattr(PageTable, step)

    def deadlocked(self: PageTable, *args: Any) -> Any:
        calls.append(1)
        if len(calls) <= 2:
            raise _deadlock()
        return original(self, *args)

    monkeypatch.setattr(PageTable, step, deadlocked)
    client = Client(HTTP_HOST="example.com", raise_request_exception=False)
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    validate_sitemap(content(response))
    monkeypatch.undo()
    _assert_true(source)


@pytest.mark.django_db(transaction=True)
def test_deadlocks_that_never_end_leave_the_work_to_a_later_request(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _layout(registry, range(10, 130, 10))
    Document.objects.bulk_create(Document(id=key, path=f"/d/{key}/") for key in (55, 65))
    sitemapx.invalidate("d")

    def deadlocked(self: PageTable, *args: Any) -> Any:
        raise _deadlock()

    monkeypatch.setattr(PageTable, "_touch", deadlocked)
    monkeypatch.setattr(pages_module, "time", _NoSleep(), raising=False)
    client = Client(HTTP_HOST="example.com", raise_request_exception=False)
    assert client.get("/sitemap.xml").status_code == 200
    monkeypatch.undo()
    _assert_true(source)


class _NoSleep:
    """``time`` without its pauses between attempts."""

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)

    def sleep(self, seconds: float) -> None:
        pass


# -- the news section: one page table for every host --------------------------------------------


def test_the_news_section_shares_its_pages_between_hosts() -> None:
    # Its query filters on timezone.now(): bound to a host or not, it differs only by then.
    news = default_registry.get("news")
    hosts = [sitemapx.Origin("https", host) for host in ("a.example", "b.example:8443")]
    assert [table_section(news.for_origin(origin)) for origin in hosts] == ["news", "news"]


def test_a_filter_on_the_host_still_gets_pages_per_host(registry: SitemapRegistry) -> None:
    class Recent(_PathSource):
        def get_queryset(self) -> Any:
            since = timezone.now() - datetime.timedelta(days=2)
            rows = Document.objects.filter(published_on__gte=since.date())
            if self.origin is not None and self.origin.host == "small.example":
                rows = rows.filter(id__lte=3)
            return rows

    source = registry.register(Document, source_class=Recent, section="recent", limit=2)
    small = source.for_origin(sitemapx.Origin("https", "small.example"))
    big = source.for_origin(sitemapx.Origin("https", "big.example"))
    assert table_section(small) == "recent@small.example"
    assert table_section(big) == "recent"


def test_the_sweep_leaves_a_live_process_its_own_owed_rows(registry: SitemapRegistry) -> None:
    from django_sitemapx.models import OwedGeneration

    _layout(registry, range(10, 50, 10))
    before = _token(1)
    OwedGeneration.objects.create(name=page_generation("d", 1), batch="live")
    pages_module.settle_owed(force=True)
    assert _token(1) == before and OwedGeneration.objects.exists()  # being settled
    OwedGeneration.objects.update(created=timezone.now() - datetime.timedelta(seconds=5))
    pages_module.settle_owed(force=True)
    assert _token(1) != before and not OwedGeneration.objects.exists()
