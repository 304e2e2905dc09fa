"""Stored pages of model sections: any key, dense, stable, counted again only where changed."""

from __future__ import annotations

import datetime
import math
import random
import uuid
from typing import Any

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

import django_sitemapx as sitemapx
from django_sitemapx.invalidation import pages_touched_by
from django_sitemapx.models import PageState
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ModelSource
from django_sitemapx.sources import pages as pages_module
from django_sitemapx.sources.codecs import (
    _decode_mariadb_uuid,
    _encode_int,
    _encode_mariadb_uuid,
    codec_for,
    key_model_field,
)
from django_sitemapx.sources.pages import mark_changed
from django_sitemapx.sources.summaries import summarize
from tests.conftest import content, locs, validate_sitemap
from tests.testapp.models import Document, Tag, UUIDThing

pytestmark = pytest.mark.django_db


class _PathSource(ModelSource):
    fields = ("path",)

    def location(self, row: Any) -> str:
        return str(row.path)


class _DatedPathSource(_PathSource):
    lastmod_field = "published_on"


class _KeySource(ModelSource):
    """Any model: the key itself as the path."""

    def location(self, row: Any) -> str:
        return f"/k/{row[0]}/"


@pytest.fixture
def client() -> Client:
    return Client(HTTP_HOST="example.com")


def test_integer_keys_encode_in_order_over_64_bits() -> None:
    keys = [-(2**63), -5, -1, 0, 1, 9, 10, 2**31, 2**53 + 1, 2**63 - 1]
    encoded = [_encode_int(key) for key in keys]
    assert encoded == sorted(encoded) and len({len(text) for text in encoded}) == 1
    codec = codec_for(key_model_field(Document, "id"), "default")
    assert codec is not None and [codec.decode(text) for text in encoded] == keys


def test_mariadb_uuids_encode_in_mariadb_order() -> None:
    # The order MariaDB 10.11's UUID type gives (groups compared from the last).
    ordered = [
        "ff000000-0000-1000-8000-000000000000",
        "10000000-0000-4000-8000-000000000000",
        "0f000000-0000-4000-8000-000000000001",
        "00000000-0000-4000-8000-00000000000f",
        "00000000-0000-1000-8000-ff0000000000",
    ]
    encoded = [_encode_mariadb_uuid(uuid.UUID(text)) for text in ordered]
    assert encoded == sorted(encoded)
    assert [str(_decode_mariadb_uuid(text)) for text in encoded] == ordered


def _pages(source: ModelSource, client: Client) -> dict[int, tuple[bytes, str]]:
    """Every listed page: its body and ETag, served through the views."""
    served = {}
    for summary in source.page_summaries():
        response = client.get(f"/sitemap-{source.section}-{summary.number}.xml")
        served[summary.number] = (content(response), response["ETag"])
    return served


def _check_rule(source: ModelSource, keys: list[Any]) -> None:
    """Dense and complete: each row on exactly one page, in key order, pages within bounds.

    ``keys`` in the database's order (MariaDB orders UUIDs its own way).
    """
    capacity = source.rows_per_page()
    summaries = source.page_summaries()
    for summary in summaries[:-1]:
        assert math.ceil(capacity / 2) <= summary.rows <= capacity, summaries
    if summaries:
        assert 1 <= summaries[-1].rows <= capacity
    listed: list[str] = []
    for summary in summaries:
        page = source.page(summary.number)
        assert page is not None and page.summary.rows == summary.rows
        for item in page.entries(sitemapx.LocationBuilder(sitemapx.Origin("https", "e.com"))):
            if not isinstance(item, sitemapx.Skipped):
                listed += [entry[0] for entry in item]
    assert listed == [f"https://e.com/k/{key}/" for key in keys]


def test_random_inserts_and_deletes_keep_pages_dense_and_complete(
    registry: SitemapRegistry,
) -> None:
    source = registry.register(Document, source_class=_KeySource, limit=4)
    rng = random.Random(15)
    keys: set[int] = set()
    for step in range(160):
        if keys and rng.random() < 0.35:
            key = rng.choice(sorted(keys))
            Document.objects.get(id=key).delete()
            keys.discard(key)
        else:
            # 64-bit keys (below 2**62: MariaDB's AUTO_INCREMENT must not overflow later).
            key = rng.randrange(-(2**63), 2**62) if step % 7 == 0 else rng.randrange(1, 500)
            if key in keys:
                continue
            Document.objects.create(id=key, path="p")
            keys.add(key)
        if step % 8 == 0:
            _check_rule(source, sorted(keys))
    _check_rule(source, sorted(keys))


def test_one_insert_changes_its_page_only_and_a_split_one_more(
    client: Client, registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    source = registry.register(Document, source_class=_PathSource, section="d", limit=4)
    for key in range(10, 130, 10):  # 12 rows: pages of 4
        Document.objects.create(id=key, path=f"/d/{key}/")
    before = _pages(source, client)
    assert sorted(before) == [1, 2, 3]
    with django_capture_on_commit_callbacks(execute=True):  # marked changed once committed
        Document.objects.create(id=55, path="/d/55/")  # page 2 (50 60 70 80) overflows: it splits
    after = _pages(source, client)
    changed = {n for n in after if after[n] != before.get(n)}
    assert changed == {2, 4}  # the page, and the page it split into
    assert after[1] == before[1] and after[3] == before[3]
    with django_capture_on_commit_callbacks(execute=True):
        Document.objects.create(id=75, path="/d/75/")  # page 4 (70 80) has room: only it changes
    again = _pages(source, client)
    assert {n for n in again if again[n] != after.get(n)} == {4}


def test_deleting_rows_changes_their_page_and_a_merge_one_neighbour(
    client: Client, registry: SitemapRegistry
) -> None:
    source = registry.register(Document, source_class=_PathSource, section="d", limit=4)
    for key in range(1, 13):
        Document.objects.create(id=key, path=f"/d/{key}/")
    before = _pages(source, client)
    Document.objects.get(id=5).delete()  # page 2 keeps 3 >= 2 rows
    after = _pages(source, client)
    assert {n for n in after if after[n] != before[n]} == {2}
    Document.objects.get(id=6).delete()
    Document.objects.get(id=7).delete()  # page 2 down to 1 row: it goes to page 1 (4 + 1 > 4)
    merged = _pages(source, client)
    assert {n for n in set(merged) | set(after) if merged.get(n) != after.get(n)} <= {1, 2}
    assert merged[3] == after[3]
    summaries = source.page_summaries()
    assert [s.rows for s in summaries[:-1]] and all(s.rows >= 2 for s in summaries[:-1])


def test_uuid_and_slug_keys_page(client: Client, registry: SitemapRegistry) -> None:
    for _ in range(7):
        UUIDThing.objects.create()
    for slug in ["b", "a-c", "zz", "ab", "m"]:
        Tag.objects.create(slug=slug)
    uuids = registry.register(UUIDThing, source_class=_KeySource, section="u", limit=3)
    tags = registry.register(Tag, source_class=_KeySource, section="t", limit=2)
    _check_rule(uuids, list(UUIDThing.objects.values_list("id", flat=True).order_by("id")))
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert len(locs(index)) == 3 + 3
    served = []
    for summary in tags.page_summaries():
        body = validate_sitemap(content(client.get(f"/sitemap-t-{summary.number}.xml")))
        served += locs(body)
    ordered = list(Tag.objects.order_by("slug").values_list("slug", flat=True))
    assert served == [f"http://example.com/k/{slug}/" for slug in ordered]
    new = UUIDThing.objects.create()
    assert pages_touched_by(uuids, new, key_known=True) == [uuids.page_table().page_of(new.id)]


def test_a_cache_flush_never_moves_a_row(client: Client, registry: SitemapRegistry) -> None:
    source = registry.register(Document, source_class=_PathSource, section="d", limit=3)
    for key in range(1, 10):
        Document.objects.create(id=key, path=f"/d/{key}/")
    for key in (2, 5):  # pages now hold 2, 2 and 3 rows: a new cut would differ
        Document.objects.get(id=key).delete()
    before = {n: body for n, (body, _) in _pages(source, client).items()}
    caches["default"].clear()
    after = {n: body for n, (body, _) in _pages(source, client).items()}
    assert after == before


def test_bulk_writes_show_after_invalidate(client: Client, registry: SitemapRegistry) -> None:
    source = registry.register(Document, source_class=_PathSource, section="d", limit=3)
    Document.objects.create(id=1, path="/d/1/")
    validate_sitemap(content(client.get("/sitemap.xml")))
    Document.objects.bulk_create(Document(id=k, path=f"/d/{k}/") for k in range(2, 9))
    sitemapx.invalidate("d")
    _check_rule_paths(source, client, [f"/d/{k}/" for k in range(1, 9)])


def _check_rule_paths(source: ModelSource, client: Client, paths: list[str]) -> None:
    served = []
    for summary in source.page_summaries():
        served += locs(validate_sitemap(content(client.get(f"/sitemap-d-{summary.number}.xml"))))
    assert served == [f"http://example.com{path}" for path in paths]


def test_the_index_after_one_change_counts_one_page(
    client: Client, registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    registry.register(Document, source_class=_PathSource, section="d", limit=3)
    documents = [Document.objects.create(id=k, path=f"/d/{k}/") for k in range(1, 31)]
    validate_sitemap(content(client.get("/sitemap.xml")))
    with django_capture_on_commit_callbacks(execute=True):  # marked changed once committed
        documents[14].path = "/d/changed/"
        documents[14].save()
    with CaptureQueriesContext(connection) as queries:
        validate_sitemap(content(client.get("/sitemap.xml")))
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert len(counts) == 1  # the changed page, of ten


def test_a_new_limit_lays_the_section_out_again(registry: SitemapRegistry) -> None:
    source = registry.register(Document, source_class=_KeySource, limit=3)
    for key in range(1, 8):
        Document.objects.create(id=key, path="p")
    assert [s.rows for s in source.page_summaries()] == [3, 3, 1]
    source.limit = 5
    assert [s.rows for s in source.page_summaries()] == [5, 2]
    assert PageState.objects.filter(section=source.section).count() == 2


def test_a_filter_on_now_keeps_its_layout(registry: SitemapRegistry) -> None:
    import time

    class Recent(_KeySource):
        def get_queryset(self) -> Any:
            # A value that differs on every call, as timezone.now() does.
            return Document.objects.filter(weight__lte=time.time())

    source = registry.register(Document, source_class=Recent, limit=2)
    for key in range(1, 6):
        Document.objects.create(id=key, path="p")
    source.page_summaries()
    ids = list(PageState.objects.filter(section=source.section).values_list("pk", flat=True))
    source.page_summaries()
    assert (
        list(PageState.objects.filter(section=source.section).values_list("pk", flat=True)) == ids
    )


def test_rows_that_depend_on_the_host_get_pages_per_host(registry: SitemapRegistry) -> None:
    class PerHost(_KeySource):
        def get_queryset(self) -> Any:
            rows = Document.objects.all()
            if self.origin is not None and self.origin.host == "small.example":
                rows = rows.filter(id__lte=3)
            return rows

    source = registry.register(Document, source_class=PerHost, section="d", limit=2)
    for key in range(1, 8):
        Document.objects.create(id=key, path="p")
    big = source.for_origin(sitemapx.Origin("https", "big.example"))
    small = source.for_origin(sitemapx.Origin("https", "small.example"))
    assert [s.rows for s in big.page_summaries()] == [2, 2, 2, 1]
    assert [s.rows for s in small.page_summaries()] == [2, 1]
    assert [s.rows for s in big.page_summaries()] == [2, 2, 2, 1]  # each keeps its own
    assert sorted(set(PageState.objects.values_list("section", flat=True))) == [
        "d",
        "d@small.example",
    ]
    assert pages_touched_by(source, Document(id=2), key_known=True) == [None]


def _summaries_page_by_page(source: ModelSource) -> list[tuple[int, str | None, int]]:
    table = source.page_table()
    states = table.states(set())
    found = []
    for state in states:
        bounds = table.bounds(states, state.number)
        assert bounds is not None
        found.append(summarize(source, bounds[1]))
    return found


class _GroupedPathSource(_PathSource):
    def _counts_pages_together(self) -> bool:
        return True


def test_a_cache_flush_counts_neighbouring_pages_in_one_grouped_query(
    registry: SitemapRegistry,
) -> None:
    source = registry.register(Document, source_class=_GroupedPathSource, section="d", limit=3)
    for key in range(1, 27):  # 9 pages; some rows undated, their page's lastmod the others'
        day = None if key % 4 == 0 else datetime.date(2024, 1, 1) + datetime.timedelta(days=key)
        Document.objects.create(id=key * 10, path=f"/d/{key}/", published_on=day)
    expected = _summaries_page_by_page(source)
    assert [rows for rows, _, _ in expected] == [3] * 8 + [2]
    assert any(undated for _, _, undated in expected)
    Document.objects.filter(id__in=[40, 50]).delete()  # page 2 keeps 1 row: a merge
    sitemapx.invalidate("d")
    with CaptureQueriesContext(connection) as queries:
        summaries = source.page_summaries()
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert len(counts) == 2  # every page at once; then the merged page alone
    assert [(s.rows, s.lastmod, s.undated) for s in summaries] == [
        summary for summary in _summaries_page_by_page(source) if summary[0]
    ]
    assert sum(s.rows for s in summaries) == 24


@pytest.mark.parametrize("model", [UUIDThing, Tag])
def test_grouped_counts_equal_page_by_page_counts_on_any_key(
    registry: SitemapRegistry, model: type[Any]
) -> None:
    if model is UUIDThing:
        for _ in range(23):
            UUIDThing.objects.create()
    else:
        for number in range(23):
            Tag.objects.create(slug=f"{'abcxyz'[number % 6]}-{number}")
    source = registry.register(model, source_class=_KeySource, section="k", limit=4)
    assert source._counts_pages_together() is (connection.vendor != "mysql")
    expected = _summaries_page_by_page(source)
    sitemapx.invalidate("k")
    assert [(s.rows, s.lastmod, s.undated) for s in source.page_summaries()] == expected
    assert sum(rows for rows, _, _ in expected) == 23


def test_pages_are_counted_one_by_one_where_the_table_is_in_key_order(
    registry: SitemapRegistry,
) -> None:
    source = registry.register(Document, source_class=_KeySource, section="d", limit=2)
    # SQLite keeps the table in the order of an integer primary key; MariaDB in any
    # primary key's. PostgreSQL in none.
    assert source._counts_pages_together() is (connection.vendor == "postgresql")
    for key in range(1, 8):
        Document.objects.create(id=key, path="p")
    sitemapx.invalidate("d")
    with CaptureQueriesContext(connection) as queries:
        assert [s.rows for s in source.page_summaries()] == [2, 2, 2, 1]
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert len(counts) == (1 if connection.vendor == "postgresql" else 4)


# -- changes kept in the page table: no cache needed to know what changed ----------------


def _three_pages(registry: SitemapRegistry) -> ModelSource:
    """Section ``d``: nine documents on three pages of three, laid out and counted."""
    source = registry.register(Document, source_class=_PathSource, section="d", limit=3)
    for key in range(1, 10):
        Document.objects.create(id=key, path=f"/d/{key}/")
    source.page_summaries()
    return source


def _counts(queries: CaptureQueriesContext) -> int:
    return sum("COUNT(" in q["sql"].upper() for q in queries.captured_queries)


def _page_table_writes(queries: CaptureQueriesContext) -> list[str]:
    table = PageState._meta.db_table
    return [
        q["sql"]
        for q in queries.captured_queries
        if table in q["sql"] and q["sql"].lstrip().upper().startswith(("UPDATE", "INSERT"))
    ]


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_without_a_cache_the_index_counts_only_the_changed_page(
    client: Client, registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=3)
    day = datetime.date(2024, 1, 1)
    documents = [
        Document.objects.create(id=k, path=f"/d/{k}/", published_on=day) for k in range(1, 31)
    ]
    validate_sitemap(content(client.get("/sitemap.xml")))  # laid out and counted
    with CaptureQueriesContext(connection) as unchanged:
        validate_sitemap(content(client.get("/sitemap.xml")))
    assert _counts(unchanged) == 0
    with django_capture_on_commit_callbacks(execute=True):
        documents[14].published_on = datetime.date(2025, 6, 1)
        documents[14].save()
    with CaptureQueriesContext(connection) as after:
        index = content(client.get("/sitemap.xml"))
    assert _counts(after) == 1  # the changed page, of ten
    assert index.count(b"<lastmod>2025-06-01</lastmod>") == 1


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_without_a_cache_a_save_in_a_transaction_marks_its_page_after_commit(
    registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    source = _three_pages(registry)
    page = source.page_table().page_of(5)
    before = PageState.objects.get(section="d", number=page).changes
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with CaptureQueriesContext(connection) as inside:
            Document.objects.get(id=5).save()
        # The caller's transaction took no lock on the page table.
        assert _page_table_writes(inside) == []
    assert callbacks
    assert PageState.objects.get(section="d", number=page).changes == before + 1
    assert {s.number: s.changes for s in PageState.objects.exclude(number=page)} == {
        s.number: 0 for s in PageState.objects.exclude(number=page)
    }


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_without_a_cache_invalidate_marks_pages_changed(registry: SitemapRegistry) -> None:
    _three_pages(registry)
    other = registry.register(Tag, source_class=_KeySource, section="t", limit=2)
    for name in "abcde":
        Tag.objects.create(slug=name)
    other.page_summaries()

    def changes() -> dict[tuple[str, int], int]:
        return {(s.section, s.number): s.changes for s in PageState.objects.all()}

    start = changes()
    sitemapx.invalidate("d", 2)
    assert {k for k, v in changes().items() if v != start[k]} == {("d", 2)}
    sitemapx.invalidate("d")
    assert changes()[("d", 1)] == start[("d", 1)] + 1
    assert all(v == start[k] for k, v in changes().items() if k[0] == "t")
    sitemapx.invalidate()
    assert all(v > start[k] for k, v in changes().items())


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_a_change_committed_while_a_page_is_counted_leaves_it_stale(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _three_pages(registry)
    table = source.page_table()

    def committed_meanwhile(source: Any, bounds: Any) -> Any:
        found = summarize(source, bounds)
        mark_changed("d", 2)  # another process commits a change to page 2 now
        return found

    sitemapx.invalidate("d", 2)
    with monkeypatch.context() as patched:
        patched.setattr(pages_module, "summarize", committed_meanwhile)
        table.states({2})
    state = PageState.objects.get(section="d", number=2)
    assert state.counted is not None and state.counted < state.changes
    with CaptureQueriesContext(connection) as again:
        source.page_table().states({2})
    assert _counts(again) == 1


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_without_a_cache_a_split_page_alone_has_its_new_count(
    registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    source = registry.register(Document, source_class=_PathSource, section="d", limit=4)
    for key in range(10, 130, 10):
        Document.objects.create(id=key, path=f"/d/{key}/")
    assert [s.rows for s in source.page_summaries()] == [4, 4, 4]
    with django_capture_on_commit_callbacks(execute=True):
        Document.objects.create(id=55, path="/d/55/")
    page = source.page(2)  # served alone, before any index: it splits, and is counted again
    assert page is not None
    assert sorted(s.rows for s in source.page_summaries()) == [2, 3, 4, 4]
    assert page.summary.rows in (2, 3)


def test_pages_never_counted_since_the_migration_are_counted_once(
    registry: SitemapRegistry,
) -> None:
    source = _three_pages(registry)
    PageState.objects.update(counted=None, rows=0)  # as migration 0004 leaves them
    with override_settings(SITEMAPX_CACHE_ALIAS=None):
        assert [s.rows for s in source.page_summaries()] == [3, 3, 3]
        with CaptureQueriesContext(connection) as again:
            source.page_summaries()
    assert _counts(again) == 0


def test_with_a_cache_a_save_marks_its_page_after_commit_and_a_flush_counts_nothing(
    registry: SitemapRegistry, django_capture_on_commit_callbacks: Any
) -> None:
    source = _three_pages(registry)
    with (
        CaptureQueriesContext(connection) as inside,
        django_capture_on_commit_callbacks(execute=False) as callbacks,
    ):
        Document.objects.get(id=5).save()
    assert _page_table_writes(inside) == []  # the caller's transaction locks nothing there
    with CaptureQueriesContext(connection) as committed:
        for callback in callbacks:
            callback()
    assert len(_page_table_writes(committed)) == 1  # one row, by its unique key
    assert list(PageState.objects.filter(changes__gt=0).values_list("number", flat=True)) == [2]
    with CaptureQueriesContext(connection) as counted:
        source.page_summaries()
    assert _counts(counted) == 1  # the marked page
    caches["default"].clear()
    with CaptureQueriesContext(connection) as flushed:
        assert [s.rows for s in source.page_summaries()] == [3, 3, 3]
    assert _counts(flushed) == 0  # the marks are in the table: the flush lost nothing


def test_a_summary_counted_under_cache_generations_is_counted_once(
    registry: SitemapRegistry,
) -> None:
    source = _three_pages(registry)
    # As an older release left it with a cache: the generations' digest, no marks kept.
    PageState.objects.filter(section="d").update(generation="0" * 40)
    with CaptureQueriesContext(connection) as first:
        assert [s.rows for s in source.page_summaries()] == [3, 3, 3]
    with CaptureQueriesContext(connection) as again:
        source.page_summaries()
    assert _counts(first) >= 1  # every page, one by one or grouped as the database counts best
    assert _counts(again) == 0


@pytest.mark.django_db
def test_marking_a_page_marks_that_page_of_every_hosts_own_table() -> None:
    # invalidate(section, page) with no origin (an override saved in the admin) rebuilds
    # that page on every host: each host's own page-table row is marked too.
    for name, number in [("sec", 2), ("sec", 3), ("sec@a.example", 2), ("sec@b.example", 3)]:
        PageState.objects.create(section=name, number=number, first=str(number), fingerprint="f")
    PageState.objects.create(section="second", number=2, fingerprint="f")
    mark_changed("sec", 2)
    marked = set(PageState.objects.filter(changes=1).values_list("section", "number"))
    assert marked == {("sec", 2), ("sec@a.example", 2)}
