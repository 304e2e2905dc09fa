"""ModelSource: location modes, lastmod formatting in SQL and Python, pages and query counts."""

import datetime
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import NoReverseMatch, get_resolver, reverse
from django.urls.resolvers import URLResolver

import django_sitemapx as sitemapx
from django_sitemapx import conf
from django_sitemapx.checks import check_source
from django_sitemapx.documents import listed_pages, render_page
from django_sitemapx.invalidation import pages_touched_by, related_models
from django_sitemapx.locations import LocationBuilder, Origin
from django_sitemapx.registry import SitemapRegistry, default_registry
from django_sitemapx.sources.querysets import _nullable
from example_project.articles.factories import bulk_published_articles
from example_project.articles.models import Article, Category
from tests.conftest import NS, content, locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory, DocumentFactory
from tests.support.sources import page_stream
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

ORIGIN = Origin("https", "example.com")
BUILDER = LocationBuilder(ORIGIN)


@pytest.fixture
def client() -> Client:
    return Client(HTTP_HOST="example.com")


def _stream(source: sitemapx.Source, page: int = 1) -> tuple[list[tuple[Any, ...]], Counter[str]]:
    """The entries of a page, and its skips by reason."""
    return page_stream(source, BUILDER, page) or ([], Counter())


def _entries(source: sitemapx.Source, page: int = 1) -> list[tuple[Any, ...]]:
    return _stream(source, page)[0]


def test_sql_lastmod_matches_python_formatting() -> None:
    when = datetime.datetime(2024, 5, 1, 10, 11, 12, 345678, tzinfo=datetime.UTC)
    article = ArticleFactory(updated_at=when)
    source = sitemapx.default_registry.get("article")
    [(loc, lastmod, changefreq, priority, extras)] = _entries(source)
    assert extras is None
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
    [(_, lastmod, _, _, _)] = _entries(source)
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
        ("https://example.com/x/", "2023-02-03", None, None, None),
        ("https://example.com/y/", None, None, None, None),
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
    entries, skipped = _stream(source)
    try:
        expected = "https://example.com" + reverse(
            "article-detail", kwargs={"category": "news", "slug": slug}
        )
    except NoReverseMatch:
        assert entries == []
        assert skipped == {"no_reverse_match": 1}
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
    entries, skipped = _stream(source)
    assert [e[0] for e in entries] == ["https://example.com/articles/ok/"]
    assert skipped == {"no_reverse_match": 2}


def test_null_and_control_character_values_are_skipped(registry: SitemapRegistry) -> None:
    DocumentFactory(path="ok", published_on=None)
    DocumentFactory(path="bad\x01", published_on=datetime.date(2024, 1, 1))
    source = registry.register(
        Document,
        url_name="article-detail",
        url_kwargs={"category": "path", "slug": "published_on"},
    )
    entries, skipped = _stream(source)
    assert entries == []
    # The NULL row is filtered out in SQL; the control character only in Python.
    assert skipped == {"control_characters": 1}


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
    assert locs(index) == ["http://example.com/sitemap-document-1.xml"]
    assert len(validate_sitemap(content(client.get("/sitemap-document-1.xml")))) == 1


@mock.patch.object(conf, "CHUNK_SIZE", 7)
def test_queries_per_page_do_not_grow_with_rows(client: Client) -> None:
    category = CategoryFactory(slug="c")

    def count_queries(rows: int) -> int:
        Article.objects.all().delete()
        bulk_published_articles(category, rows)
        sitemapx.invalidate("article")  # bulk_create sends no signal
        content(client.get("/sitemap.xml"))  # counts the pages
        with CaptureQueriesContext(connection) as queries:
            body = content(client.get("/sitemap-article-1.xml"))
        assert len(validate_sitemap(body)) == rows
        return len(queries)

    # One SELECT per page: PostgreSQL reads it through one server-side cursor;
    # SQLite fetches chunks from the same cursor too (chunk_size is not a query).
    # Plus one for the editors' overrides: with few of them, the first chunk's
    # query reads them all (see test_overrides.py), one for the editors' rules that
    # apply to the section (read once per document, see test_rules.py), and one for
    # the section's page table, whose stored summary gives the ETag and Last-Modified.
    # On PostgreSQL the lastmods out of the lastmod range, which SQL turned into
    # NULL (#14), are counted as the rows stream: updated_at is not nullable.
    # Plus one recording the page's size as built, when it is not the size recorded.
    assert count_queries(3) == count_queries(300) == 5
    with override_settings(SITEMAPX_OVERRIDES=False):
        assert count_queries(300) == 2


def test_the_index_counts_only_changed_pages(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    articles = ArticleFactory.create_batch(5)
    validate_sitemap(content(client.get("/sitemap.xml")))
    with django_capture_on_commit_callbacks(execute=True):  # marked changed once committed
        articles[0].title = "changed"
        articles[0].save()
    with CaptureQueriesContext(connection) as queries:
        validate_sitemap(content(client.get("/sitemap.xml")))
    # The page table of each model section; for each page the saved article
    # changed (in the sections reading articles: article, article-images, videos)
    # and for the news page (counted on every read: its rows age out), its count
    # and its stored summary; the overrides' forced lastmods, and the rules'; and
    # the news section's oldest item, which says when the index goes stale.
    sections = [source for source in default_registry if isinstance(source, sitemapx.ModelSource)]
    assert len(sections) == 6
    sql = [query["sql"] for query in queries.captured_queries]
    assert len(queries) == len(sections) + 2 * 4 + 2 + 1, sql


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


def test_per_item_methods_still_receive_named_rows(registry: SitemapRegistry) -> None:
    ArticleFactory(category=CategoryFactory(slug="news"), slug="s", title="T")

    class Titled(sitemapx.ModelSource):
        def priority(self, row: object) -> float:
            return 0.9 if row.title == "T" else 0.1  # type: ignore[attr-defined]

    source = registry.register(
        Article,
        source_class=Titled,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        fields=["title"],
    )
    page = source.page(1)
    assert page is not None
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    body = b"".join(stream)
    validate_sitemap(body)
    assert b"<priority>0.9</priority>" in body


def test_a_page_query_is_one_key_range(registry: SitemapRegistry) -> None:
    category = CategoryFactory(slug="news")
    for key in range(1, 26):
        Article.objects.create(
            id=key,
            category=category,
            slug=f"s{key}",
            title="t",
            updated_at=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
        )
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        limit=10,
    )
    assert [s.rows for s in source.page_summaries()] == [10, 10, 5]
    column = connection.ops.quote_name("id")
    for number, bounds in ((2, (f"{column} >= 11", f"{column} < 21")), (3, (f"{column} >= 21",))):
        with CaptureQueriesContext(connection) as queries:
            page = source.page(number)
            assert page is not None
            stream = render_page(source, page, ORIGIN)
            assert stream is not None
            validate_sitemap(b"".join(stream))
        [sql] = [q["sql"] for q in queries.captured_queries if "articles_article" in q["sql"]]
        for bound in bounds:
            assert sql.count(bound) == 1
        assert "OFFSET" not in sql and "LIMIT" not in sql


def test_never_null_url_values_need_no_filter() -> None:
    assert not _nullable(Article, "slug")
    assert not _nullable(Article, "category__slug")
    assert _nullable(Article, "category__articles")  # reverse relation: NULL in a LEFT JOIN
    assert _nullable(Document, "published_on")
    assert _nullable(Article, "no_such_field")


# -- one summary per page: the index, a page's headers and its body agree -----------

DATED_DOCUMENTS = {"category": "path", "slug": "published_on"}


@override_settings(SITEMAPX_CACHE_ALIAS=None)  # no cache generation in the ETag
def test_a_page_summary_counts_only_rows_its_body_can_list(
    client: Client, registry: SitemapRegistry
) -> None:
    DocumentFactory(id=1, path="a", published_on=datetime.date(2024, 1, 1))
    DocumentFactory(id=2, path="b", published_on=datetime.date(2024, 1, 2))
    source = registry.register(
        Document, url_name="article-detail", url_kwargs=DATED_DOCUMENTS, limit=3
    )
    before = client.get("/sitemap-document-1.xml")
    assert len(validate_sitemap(content(before))) == 2

    # A row on page 1 whose URL field is NULL: never listed, so the page is unchanged.
    DocumentFactory(id=3, path="c", published_on=None)
    after = client.get("/sitemap-document-1.xml")
    assert len(validate_sitemap(content(after))) == 2
    assert after["ETag"] == before["ETag"]

    page = source.page(1)
    assert page is not None
    [listed] = listed_pages(registry)
    assert page.summary == listed.summary == source.page_summaries()[0]
    assert page.summary.rows == 2


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_a_page_of_rows_with_null_url_values_only_is_404_and_not_indexed(
    client: Client, registry: SitemapRegistry
) -> None:
    DocumentFactory(id=1, path="a", published_on=None)
    DocumentFactory(id=2, path="b", published_on=None)
    source = registry.register(
        Document, url_name="article-detail", url_kwargs=DATED_DOCUMENTS, limit=3
    )
    registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    assert source.page(1) is None
    assert client.get("/sitemap-document-1.xml").status_code == 404
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert locs(index) == ["http://example.com/sitemap-pages-1.xml"]


# -- location= as a register() option -------------------------------------------------


def test_a_location_option_receives_rows_and_streams_without_instances(
    client: Client, registry: SitemapRegistry
) -> None:
    DocumentFactory(path="/one/")
    DocumentFactory(path="/two/")
    received = []

    def location(row: Any) -> str:
        received.append(row)
        return f"/by-path{row.path}"

    source = sitemapx.default_registry.register(Document, location=location, fields=("path",))
    assert source.has_custom_location and not source.uses_instances
    root = validate_sitemap(content(client.get("/sitemap-document-1.xml")))
    assert locs(root) == ["http://example.com/by-path/one/", "http://example.com/by-path/two/"]
    assert all(not isinstance(row, Document) for row in received)
    assert [row._fields for row in received] == [("id", "path")] * 2
    assert not [m for m in check_source(source) if m.id == "django_sitemapx.W101"]


def test_get_absolute_url_alone_is_warned_about(registry: SitemapRegistry) -> None:
    source = registry.register(Document)
    assert [m.id for m in check_source(source)] == ["django_sitemapx.W101"]


# -- the URL is compiled once per document --------------------------------------------


@contextmanager
def _url_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Count every reverse() and every resolve() of the root URLconf."""
    calls: Counter[str] = Counter()
    reverse_with_prefix = URLResolver._reverse_with_prefix
    resolve = URLResolver.resolve
    root = get_resolver()

    def counted_reverse(self: URLResolver, *args: Any, **kwargs: Any) -> str:
        calls["reverse"] += 1
        return reverse_with_prefix(self, *args, **kwargs)

    def counted_resolve(self: URLResolver, path: str) -> Any:
        if self is root:
            calls["resolve"] += 1
        return resolve(self, path)

    with monkeypatch.context() as patch:
        patch.setattr(URLResolver, "_reverse_with_prefix", counted_reverse)
        patch.setattr(URLResolver, "resolve", counted_resolve)
        yield calls


@override_settings(SITEMAPX_OVERRIDES=False)
@mock.patch.object(conf, "CHUNK_SIZE", 2)
def test_the_url_is_reversed_and_resolved_once_per_language_not_per_document(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    category = CategoryFactory(slug="news")
    bulk_published_articles(category, 5)
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
    )
    with _url_calls(monkeypatch) as calls:
        page = source.page(1)
        assert page is not None
        stream = render_page(source, page, ORIGIN)
        assert stream is not None
        body = b"".join(stream)
    assert len(validate_sitemap(body)) == 5
    # Pages are sized for the longest URL of any language a request may activate
    # (one page table whatever the request's language): once per language, the
    # active one's shared with the document.
    languages = len(settings.LANGUAGES)
    assert calls == {"reverse": languages, "resolve": languages}
    with _url_calls(monkeypatch) as calls:
        assert b"".join(render_page(source, page, ORIGIN) or ()) == body
    assert not calls
    with _url_calls(monkeypatch) as calls:
        reverse("article-detail", kwargs={"category": "news", "slug": "a1"})
    assert calls == {"reverse": 1}  # the counter counts what it says


# -- what the rest of the app reads from a ModelSource ---------------------------------


def test_rows_and_their_fields(registry: SitemapRegistry) -> None:
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        fields=("title", "slug"),
        lastmod_field="updated_at",
    )
    assert source.key_name == "id"
    assert source.url_fields() == {"category": "category__slug", "slug": "slug"}
    assert source.row_fields() == ["id", "category__slug", "slug", "title"]
    assert source.lastmod_column == "updated_at"
    assert source.uses_url_name and not source.has_custom_location
    assert source.compiled_url().fields == ["category__slug", "slug"]
    ArticleFactory(
        category=CategoryFactory(slug="c"),
        slug="s",
        title="T",
        updated_at=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
    )
    [row] = source.rows_queryset()
    assert row._fields[:4] == ("id", "category__slug", "slug", "title")
    assert row[1:4] == ("c", "s", "T")
    assert row[4] in (
        "2024-01-01T00:00:00+00:00",
        datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC),
    )


def test_a_lastmod_method_wins_over_lastmod_field(registry: SitemapRegistry) -> None:
    class Dated(sitemapx.ModelSource):
        lastmod_field = "updated_at"

        def lastmod(self, row: Any) -> datetime.date:
            return datetime.date(2020, 1, 1)

    source = registry.register(Article, Dated)
    assert source.lastmod_column is None
    ArticleFactory(updated_at=datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC))
    assert [entry[1] for entry in _entries(source)] == ["2020-01-01"]


def test_a_key_field_other_than_pk(registry: SitemapRegistry) -> None:
    source = registry.register(Document, key_field="id")
    assert source.key_name == "id"
    assert registry.register(Category, section="c").key_name == "id"


def test_a_given_summary_spares_the_summary_query(registry: SitemapRegistry) -> None:
    ArticleFactory()
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
    )
    [summary] = source.page_summaries()
    with CaptureQueriesContext(connection) as queries:
        page = source.page(1, summary)
    assert page is not None and page.summary is summary
    assert len(queries) == 1  # the page table: its key range
    assert len(_entries(source)) == 1


def testsections_touched_by(registry: SitemapRegistry) -> None:
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        limit=10,
    )
    category = CategoryFactory(slug="c")
    article = ArticleFactory(id=25, category=category)
    assert pages_touched_by(source, article) == [None]  # no layout yet: every page
    source.page_summaries()
    assert pages_touched_by(source, article) == [1]
    assert pages_touched_by(source, Article(id=0, category=category)) == [1]
    assert pages_touched_by(source, category) == [None]  # read through category__slug
    assert pages_touched_by(source, DocumentFactory()) == []
    assert related_models(source) == {Category}
    assert related_models(registry.register(Category)) == set()
