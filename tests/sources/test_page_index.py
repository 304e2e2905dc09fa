"""The index's cost does not grow with a section's page count: queries and cache round trips."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import caches
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from django_sitemapx.models import PageState
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ModelSource
from tests.conftest import content, validate_sitemap
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

# The cache methods a request may call: each is one round trip to a shared cache.
_CALLS = ("get", "get_many", "set", "set_many", "add", "delete", "delete_many", "touch", "incr")


class _PathSource(ModelSource):
    fields = ("path",)

    def location(self, row: Any) -> str:
        return str(row.path)


class _GroupedPathSource(_PathSource):
    """Counted in grouped passes on every database (SQLite counts a rowid page by page)."""

    def _counts_pages_together(self) -> bool:
        return True


class _RoundTrips:
    """Counts the calls made on the default cache's backend while active."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: Counter[str] = Counter()
        self.active = False
        self.inside = False
        backend = type(caches["default"])
        for name in _CALLS:
            original = getattr(backend, name)

            def counted(
                *args: Any, _name: str = name, _original: Any = original, **kw: Any
            ) -> Any:
                # Only the outermost call: a backend may make get_many() of get()s.
                if not self.active or self.inside:
                    return _original(*args, **kw)
                self.calls[_name] += 1
                self.inside = True
                try:
                    return _original(*args, **kw)
                finally:
                    self.inside = False

            monkeypatch.setattr(backend, name, counted)

    def measure(self) -> Iterator[None]:
        self.calls.clear()
        self.active = True
        try:
            yield
        finally:
            self.active = False


def _index(client: Client, trips: _RoundTrips) -> tuple[int, int, int]:
    """Queries, cache round trips and page counts (aggregates) of one index request."""
    with CaptureQueriesContext(connection) as queries:
        for _ in trips.measure():
            validate_sitemap(content(client.get("/sitemap.xml")))
    sql = [query["sql"] for query in queries.captured_queries]
    counts = sum("COUNT(" in statement.upper() for statement in sql)
    return len(sql), sum(trips.calls.values()), counts


def _costs(
    registry: SitemapRegistry,
    client: Client,
    trips: _RoundTrips,
    pages: int,
    capture: Any,
) -> dict[str, tuple[int, int, int]]:
    """The index's cost, with ``pages`` pages of two rows, in each state."""
    Document.objects.all().delete()
    PageState.objects.all().delete()
    caches["default"].clear()
    registry.register(Document, source_class=_GroupedPathSource, section="d", limit=2)
    Document.objects.bulk_create(
        Document(id=key, path=f"/d/{key}/") for key in range(1, 2 * pages + 1)
    )
    validate_sitemap(content(client.get("/sitemap.xml")))  # cut and counted
    assert PageState.objects.filter(section="d").count() == pages
    # (200 pages: the local-memory cache keeps 300 entries, 200 page generations among them.)
    costs = {"unchanged": _index(client, trips)}
    with capture(execute=True):
        document = Document.objects.get(id=pages)  # a page in the middle
        document.path = "/d/changed/"
        document.save()
    costs["after one change"] = _index(client, trips)
    caches["default"].clear()
    costs["after a flush"] = _index(client, trips)
    costs["after the flush, unchanged"] = _index(client, trips)
    registry.unregister("d")
    return costs


def test_the_index_costs_the_same_at_3_and_200_pages(
    registry: SitemapRegistry,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client = Client(HTTP_HOST="example.com")
    trips = _RoundTrips(monkeypatch)
    small = _costs(registry, client, trips, 3, django_capture_on_commit_callbacks)
    large = _costs(registry, client, trips, 200, django_capture_on_commit_callbacks)
    assert large == small
    assert small["after one change"][2] == 1  # the changed page
    assert small["after a flush"][2] == 0  # the page table keeps what changed
