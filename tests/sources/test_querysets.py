"""ModelSource: location modes, lastmod formatting in SQL and Python, query counts."""

import datetime
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import NoReverseMatch, reverse

import django_sitemapx as sitemapx
from django_sitemapx.locations import LocationBuilder, Site
from django_sitemapx.pages import page_for_key, page_range
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.writer import WriteStats
from example_project.articles.factories import bulk_published_articles
from example_project.articles.models import Article, Category
from tests.conftest import NS, content, locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory, DocumentFactory
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

BUILDER = LocationBuilder(Site("https", "example.com"))


@pytest.fixture
def client() -> Client:
    return Client(HTTP_HOST="example.com")


def _entries(source: sitemapx.Source, page: int = 1) -> list[tuple]:  # type: ignore[type-arg]
    stats = WriteStats()
    return [entry for chunk in source.iter_entries(page, BUILDER, stats) for entry in chunk]


def test_page_arithmetic() -> None:
    assert page_range(1, 50_000) == (1, 50_000)
    assert page_range(2, 50_000) == (50_001, 100_000)
    assert [page_for_key(k, 3) for k in (0, 1, 3, 4, 7)] == [None, 1, 1, 2, 3]


def test_sql_lastmod_matches_python_formatting() -> None:
    when = datetime.datetime(2024, 5, 1, 10, 11, 12, 345678, tzinfo=datetime.UTC)
    article = ArticleFactory(updated_at=when)
    source = sitemapx.site.get("article")
    [(loc, lastmod, changefreq, priority)] = _entries(source)
    assert loc == "https://example.com" + article.get_absolute_url()
    assert lastmod == "2024-05-01T10:11:12+00:00"
    assert (changefreq, priority) == ("weekly", "0.6")


@override_settings(USE_TZ=False, TIME_ZONE="Europe/Paris")
def test_naive_datetimes_without_use_tz_get_the_project_offset(registry: SitemapRegistry) -> None:
    category = CategoryFactory(slug="c")
    Article.objects.create(
        category=category,
        slug="s",
        title="t",
        is_published=True,
        updated_at=datetime.datetime(2024, 7, 1, 12, 0, 0),
    )
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        lastmod_field="updated_at",
    )
    [(_, lastmod, _, _)] = _entries(source)
    assert [page.lastmod for page in source.page_summaries()] == [lastmod]
    # SQLite formats in Python (+02:00); PostgreSQL formats the same instant in UTC.
    expected = datetime.datetime(2024, 7, 1, 12, tzinfo=ZoneInfo("Europe/Paris"))
    assert datetime.datetime.fromisoformat(lastmod) == expected
    assert lastmod in ("2024-07-01T12:00:00+02:00", "2024-07-01T10:00:00+00:00")


def test_date_field_lastmod_and_location_override(registry: SitemapRegistry) -> None:
    DocumentFactory(path="/x/", published_on=datetime.date(2023, 2, 3))
    DocumentFactory(path="/y/", published_on=None)

    class Docs(sitemapx.ModelSource):
        fields = ("path",)
        lastmod_field = "published_on"

        def location(self, row):  # type: ignore[no-untyped-def]
            return row.path

    source = registry.register(Document, Docs)
    assert _entries(source) == [
        ("https://example.com/x/", "2023-02-03", None, None),
        ("https://example.com/y/", None, None, None),
    ]
    assert [p.lastmod for p in source.page_summaries()] == ["2023-02-03"]


def test_per_row_methods_receive_the_row(registry: SitemapRegistry) -> None:
    DocumentFactory(path="/light/", weight=0.1)
    DocumentFactory(path="/heavy/", weight=0.9)

    class Weighted(sitemapx.ModelSource):
        fields = ("path", "weight")

        def location(self, row):  # type: ignore[no-untyped-def]
            return row.path

        def priority(self, row):  # type: ignore[no-untyped-def]
            return row.weight

    source = registry.register(Document, Weighted)
    assert [(e[0], e[3]) for e in _entries(source)] == [
        ("https://example.com/light/", "0.1"),
        ("https://example.com/heavy/", "0.9"),
    ]


def test_get_absolute_url_fallback_uses_instances(registry: SitemapRegistry) -> None:
    DocumentFactory(path="/legacy/")
    source = registry.register(Document)
    assert source.uses_instances
    assert [e[0] for e in _entries(source)] == ["https://example.com/legacy/"]


@pytest.mark.parametrize(
    "slug",
    ["plain", "50%off", "a%2Fb", "a b", "a?b#c", "ünï", "日本", "a&b'c", "a/b", "", "x" * 250],
)
def test_url_kwargs_give_exactly_what_reverse_gives(registry: SitemapRegistry, slug: str) -> None:
    """``<str:slug>``: reverse() refuses "" and "/"; the row is skipped exactly then."""
    category = CategoryFactory(slug="news")
    article = ArticleFactory(category=category, slug=slug)
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
    )
    stats = WriteStats()
    entries = [e for chunk in source.iter_entries(1, BUILDER, stats) for e in chunk]
    try:
        expected = "https://example.com" + reverse(
            "article-detail", kwargs={"category": "news", "slug": slug}
        )
    except NoReverseMatch:
        assert entries == []
        assert stats.skipped == {"no_reverse_match": 1}
        return
    assert [e[0] for e in entries] == [expected]
    assert expected == "https://example.com" + article.get_absolute_url()


def test_slug_converter_refuses_what_reverse_refuses(registry: SitemapRegistry) -> None:
    CategoryFactory(slug="ok")
    CategoryFactory(slug="not ok")  # a space: <slug:category> cannot reverse it
    CategoryFactory(slug="ünï")  # non-ASCII: neither can it
    source = registry.register(
        Category,
        url_name="category-detail",
        url_kwargs={"category": "slug"},
    )
    stats = WriteStats()
    entries = [e for chunk in source.iter_entries(1, BUILDER, stats) for e in chunk]
    assert [e[0] for e in entries] == ["https://example.com/articles/ok/"]
    assert stats.skipped == {"no_reverse_match": 2}


def test_null_and_control_character_values_are_skipped(registry: SitemapRegistry) -> None:
    DocumentFactory(path="ok", published_on=None)
    DocumentFactory(path="bad\x01", published_on=datetime.date(2024, 1, 1))
    source = registry.register(
        Document,
        url_name="article-detail",
        url_kwargs={"category": "path", "slug": "published_on"},
    )
    stats = WriteStats()
    assert [e for chunk in source.iter_entries(1, BUILDER, stats) for e in chunk] == []
    # The NULL row is filtered out in SQL; the control character only in Python.
    assert stats.skipped == {"control_characters": 1}


def test_index_does_not_list_a_page_of_rows_with_null_url_values(
    client: Client, registry: SitemapRegistry
) -> None:
    DocumentFactory(id=1, path="ok", published_on=None)
    DocumentFactory(id=5, path="ok", published_on=datetime.date(2024, 1, 1))
    registry.register(
        Document,
        url_name="article-detail",
        url_kwargs={"category": "path", "slug": "published_on"},
        limit=3,
    )
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert locs(index) == ["http://example.com/sitemap-document-2.xml"]
    assert client.get("/sitemap-document-1.xml").status_code == 404


@override_settings(SITEMAPX_CHUNK_SIZE=7)
def test_queries_per_page_do_not_grow_with_rows(client: Client) -> None:
    category = CategoryFactory(slug="c")

    def count_queries(rows: int) -> int:
        Article.objects.all().delete()
        bulk_published_articles(category, rows)
        with CaptureQueriesContext(connection) as queries:
            body = content(client.get("/sitemap-article-1.xml"))
        assert len(validate_sitemap(body)) == rows
        return len(queries)

    # One SELECT per page: PostgreSQL reads it through one server-side cursor;
    # SQLite fetches chunks from the same cursor too (chunk_size is not a query).
    # Plus one for the editors' overrides: with few of them, the first chunk's
    # query reads them all (see test_overrides.py), and one for the page's count
    # and greatest lastmod, read before the body for ETag and Last-Modified
    # (see validators.page_summary).
    assert count_queries(3) == count_queries(300) == 3
    with override_settings(SITEMAPX_OVERRIDES=False):
        assert count_queries(300) == 2


def test_index_costs_one_query_per_model_section(client: Client) -> None:
    ArticleFactory.create_batch(5)
    with CaptureQueriesContext(connection) as queries:
        validate_sitemap(content(client.get("/sitemap.xml")))
    # One GROUP BY for articles, one for categories, one for overrides' forced lastmods.
    assert len(queries) == 3


def test_index_lastmod_per_page_computed_in_sql(client: Client, registry: SitemapRegistry) -> None:
    category = CategoryFactory(slug="c")
    for i, day in zip(range(1, 6), (5, 1, 9, 2, 3), strict=True):
        Article.objects.create(
            id=i,
            category=category,
            slug=f"a{i}",
            title="t",
            is_published=True,
            updated_at=datetime.datetime(2024, 1, day, tzinfo=datetime.UTC),
        )
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        lastmod_field="updated_at",
        limit=2,
    )
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert [s.find("sm:lastmod", NS).text for s in index] == [
        "2024-01-05T00:00:00+00:00",
        "2024-01-09T00:00:00+00:00",
        "2024-01-03T00:00:00+00:00",
    ]
    assert locs(validate_sitemap(content(client.get("/sitemap-article-3.xml")))) == [
        "http://example.com/articles/c/a5/"
    ]
