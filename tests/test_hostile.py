"""Nothing a source, a row or a Host header holds can take a sitemap down (#14).

Every value reaching the XML is valid by the schema, or its entry (or the value)
is left out and counted: a page or the index never answers 500, and every 200
validates against the XSDs.
"""

from __future__ import annotations

import datetime
import gzip
import zoneinfo
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client, override_settings

import django_sitemapx as sitemapx
from django_sitemapx.generations import PREFIX
from django_sitemapx.registry import SitemapRegistry
from tests.conftest import content, locs, validate_sitemap

pytestmark = pytest.mark.django_db

UTC = datetime.UTC
NEW_YORK = zoneinfo.ZoneInfo("America/New_York")


@pytest.fixture
def client() -> Client:
    return Client(HTTP_HOST="example.com", raise_request_exception=False)


def _served(client: Client, path: str) -> tuple[int, bytes, Any]:
    response = client.get(path)
    body = content(response) if response.status_code == 200 else b""
    return response.status_code, body, response


def _check_all(client: Client, section: str) -> list[Any]:
    """Index, page (both variants) and a conditional request: 200 and valid, or 404."""
    roots = []
    for path in ("/sitemap.xml", f"/sitemap-{section}-1.xml", f"/sitemap-{section}-1.xml.gz"):
        status, body, response = _served(client, path)
        assert status == 200, (path, status)
        roots.append(validate_sitemap(gzip.decompress(body) if path.endswith(".gz") else body))
        again = client.get(path, HTTP_IF_NONE_MATCH=response["ETag"])
        assert again.status_code == 304
    return roots


# -- 1. lastmods late, huge, early ---------------------------------------------


@pytest.mark.parametrize(
    "lastmod",
    [
        "9999-12-31T23:00:00-05:00",  # valid text, but year 10000 in UTC
        datetime.datetime.max,  # naive, in Europe/Paris: past year 9999 in UTC
        datetime.datetime.max.replace(tzinfo=NEW_YORK),
        datetime.datetime.min.replace(tzinfo=zoneinfo.ZoneInfo("Asia/Tokyo")),
        datetime.datetime.min,  # naive, east of UTC: before year 1 in UTC
        datetime.date.max,
        datetime.date.min,
        "10000-01-01",
        "0000-01-01",
    ],
)
def test_a_lastmod_out_of_range_is_dropped_and_counted_never_a_500(
    client: Client,
    registry: SitemapRegistry,
    lastmod: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    good = datetime.datetime(2024, 5, 1, 12, tzinfo=UTC)
    registry.register(
        "late",
        items=lambda: [
            {"location": "/a/", "lastmod": lastmod},
            {"location": "/b/", "lastmod": good},
        ],
    )
    _index, page, _packed = _check_all(client, "late")
    assert [el.text for el in page.iter("{*}lastmod")] == ["2024-05-01T12:00:00+00:00"]
    assert "invalid_lastmod" in caplog.text
    status, _body, response = _served(client, "/sitemap-late-1.xml")
    assert status == 200
    # The dropped lastmod leaves "/a/" undated: by the Last-Modified rule (as
    # contrib's) a page with an undated URL sends no Last-Modified.
    assert "Last-Modified" not in response


@pytest.mark.parametrize(
    "value, expected",
    [
        # zoneinfo gives Paris its local mean time (+00:09:21) before 1911: the
        # schema takes whole minutes only, so the same instant is written in UTC.
        (datetime.datetime(1900, 6, 1, 12, 0), "1900-06-01T11:50:39+00:00"),
        (datetime.datetime(1900, 6, 1, 12, 0, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")), None),
        (datetime.datetime(2020, 6, 1, 12, 0), "2020-06-01T12:00:00+02:00"),
        (
            datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=15))),
            "2019-12-31T09:00:00+00:00",
        ),
    ],
)
def test_offsets_the_schema_refuses_are_written_in_utc(
    client: Client, registry: SitemapRegistry, value: datetime.datetime, expected: str | None
) -> None:
    registry.register("old", items=lambda: [{"location": "/a/", "lastmod": value}])
    index, page, _packed = _check_all(client, "old")
    written = [el.text for el in page.iter("{*}lastmod")]
    listed = [el.text for el in index.iter("{*}lastmod")]
    assert written == listed
    if expected is not None:
        assert written == [expected]
    assert written[0].endswith("+00:00") or written[0][-6:] in ("+01:00", "+02:00")


# -- 3. locations from custom sources --------------------------------------------


class _CustomLocations(sitemapx.ItemSource):
    def location(self, item: Any) -> Any:
        return item


BAD_LOCATIONS = [None, 12, b"/bytes/", "/x\ud800/", "http://[x/", "relative", "ftp://example.com/"]
ODD_BUT_FINE = {
    "/a[1]/": "http://example.com/a%5B1%5D/",
    "/50%/off": "http://example.com/50%25/off",
    "/q?x=%zz": "http://example.com/q?x=%25zz",
    "/a#b#c": "http://example.com/a#b%23c",
    "http://EXAMPLE.com./p": "http://example.com/p",
    "http://example.com:80/p": "http://example.com/p",
    "/caf\u00e9 au lait": "http://example.com/caf%C3%A9%20au%20lait",
}


def test_bad_locations_are_skipped_and_counted_odd_ones_encoded(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.register("custom", _CustomLocations, items=lambda: [*BAD_LOCATIONS, *ODD_BUT_FINE])
    _index, page, _packed = _check_all(client, "custom")
    assert locs(page) == list(ODD_BUT_FINE.values())
    record = next(r for r in caplog.records if "left out" in r.getMessage())
    assert record.skipped == {  # type: ignore[attr-defined]
        "invalid_location": 5,
        "not_absolute": 2,
    }


def test_a_page_of_only_malformed_locations_is_not_listed(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register("good", _CustomLocations, items=lambda: ["/ok/"])
    registry.register("bad", _CustomLocations, items=lambda: BAD_LOCATIONS, limit=2)
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert locs(index) == ["http://example.com/sitemap-good-1.xml"]
    for number in (1, 2, 3, 4):
        assert client.get(f"/sitemap-bad-{number}.xml").status_code == 404


# -- 4. one host, one document -----------------------------------------------------


HOST_SPELLINGS = [
    "example.com",
    "EXAMPLE.COM",
    "example.com.",
    "Example.Com.:80",
    "example.com:80",
    "example.com:1",
    "example.com:99999",
    "example.com:0443",
]


def test_spellings_of_one_host_share_one_document_and_its_host(
    registry: SitemapRegistry,
) -> None:
    registry.register("pages", items=lambda: ["/a/", "http://Example.COM./b/"])
    bodies = set()
    for host in HOST_SPELLINGS:
        response = Client(HTTP_HOST=host, raise_request_exception=False).get(
            "/sitemap-pages-1.xml"
        )
        assert response.status_code == 200, host
        bodies.add(content(response))
    assert len(bodies) == 1
    assert locs(validate_sitemap(bodies.pop())) == [
        "http://example.com/a/",
        "http://example.com/b/",
    ]
    stored = {key.split(":doc:")[1].split(":")[2] for key in _document_keys()}
    assert stored == {"example.com"}


def test_the_port_the_server_is_reached_on_is_kept(registry: SitemapRegistry) -> None:
    registry.register("pages", items=lambda: ["/a/"])
    client = Client(HTTP_HOST="example.com:8000")
    response = client.get("/sitemap-pages-1.xml", SERVER_PORT="8000")
    assert locs(validate_sitemap(content(response))) == ["http://example.com:8000/a/"]
    # The same port named by a client reaching the server on another one is dropped.
    response = client.get("/sitemap-pages-1.xml", SERVER_PORT="80")
    assert locs(validate_sitemap(content(response))) == ["http://example.com/a/"]


def _document_keys() -> list[str]:
    from django.core.cache.backends.locmem import LocMemCache

    cache = caches["default"]
    if not isinstance(cache, LocMemCache):  # Redis: scan for the app's keys
        client = cache._cache.get_client()  # type: ignore[attr-defined]
        return [key.decode() for key in client.scan_iter(f"*{PREFIX}:doc:*")]
    return [key for key in cache._cache if f"{PREFIX}:doc:" in key]  # type: ignore[attr-defined]


@override_settings(SITEMAPX_CACHE_ALIAS="default")
def test_disallowed_hosts_still_answer_400(registry: SitemapRegistry) -> None:
    registry.register("pages", items=lambda: ["/a/"])
    client = Client(HTTP_HOST="evil.example", raise_request_exception=False)
    assert client.get("/sitemap-pages-1.xml").status_code == 400


# -- 1. PostgreSQL values Python cannot hold --------------------------------------

OUT_OF_RANGE_SQL = ["'infinity'", "'-infinity'", "'10000-01-01 00:00:00+00'", "'0044-03-15 BC'"]


def _postgresql() -> None:
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("only PostgreSQL holds values Python cannot read")


@pytest.mark.parametrize("value", OUT_OF_RANGE_SQL)
def test_postgresql_timestamps_python_cannot_hold_are_dropped_and_counted(
    client: Client, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    from django.db import connection

    from example_project.articles.models import Article
    from tests.factories import ArticleFactory

    _postgresql()
    bad, good = ArticleFactory(), ArticleFactory()
    with connection.cursor() as cursor:
        table = Article._meta.db_table
        cursor.execute(f"UPDATE {table} SET updated_at = {value} WHERE id = %s", [bad.pk])
    _index, page, _packed = _check_all(client, "article")
    lastmods = [el.text for el in page.iter("{*}lastmod")]
    assert len(locs(page)) == 2 and len(lastmods) == 1
    assert lastmods[0].startswith(str(good.updated_at.astimezone(UTC).year))
    assert "invalid_lastmod" in caplog.text
    # A model read as instances (get_absolute_url) too.
    with override_settings(SITEMAPX_CACHE_ALIAS=None):
        registry = SitemapRegistry()
        registry.register(Article, lastmod_field="updated_at")
        from django_sitemapx.documents import render_page
        from django_sitemapx.locations import Origin

        source = registry.get("article")
        page_object = source.page(1)
        assert page_object is not None
        stream = render_page(source, page_object, Origin("http", "example.com"))
        assert stream is not None
        root = validate_sitemap(b"".join(stream))
        assert len(locs(root)) == 2
        assert stream.stats.skipped == {"invalid_lastmod": 1}


@pytest.mark.parametrize("value", ["'infinity'", "'10000-01-01'", "'0044-03-15 BC'"])
def test_postgresql_dates_python_cannot_hold_are_dropped_and_counted(
    client: Client, registry: SitemapRegistry, value: str
) -> None:
    from django.db import connection

    from tests.factories import DocumentFactory
    from tests.testapp.models import Document

    _postgresql()
    bad = DocumentFactory(path="/bad/")
    DocumentFactory(path="/good/", published_on=datetime.date(2024, 1, 2))
    with connection.cursor() as cursor:
        table = Document._meta.db_table
        cursor.execute(f"UPDATE {table} SET published_on = {value} WHERE id = %s", [bad.pk])
    registry.register(Document, lastmod_field="published_on", fields=["path"], source_class=_Paths)
    _index, page, _packed = _check_all(client, "document")
    assert [el.text for el in page.iter("{*}lastmod")] == ["2024-01-02"]


class _Paths(sitemapx.ModelSource):
    def location(self, row: Any) -> str:
        return str(row.path)
