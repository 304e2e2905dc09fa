"""The chunked hot path gives exactly what the per-row path gives: URIs, XML and skips."""

import datetime

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

import django_sitemapx as sitemapx
from django_sitemapx.documents import render_page
from django_sitemapx.locations import Site, Skip
from django_sitemapx.model_source import _nullable
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.row_locations import RowLocations
from django_sitemapx.urltemplates import plain_template
from django_sitemapx.writer import url_element, url_elements
from example_project.articles.models import Article
from tests.conftest import locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory
from tests.testapp.models import Document

FIELDS = ["id", "category__slug", "slug"]
PREFIX = "https://example.com"


def article() -> RowLocations:
    kwargs = {"category": "category__slug", "slug": "slug"}
    return RowLocations(PREFIX, "article-detail", kwargs, FIELDS)


def one_or_skip(locations: RowLocations, row: tuple[object, ...]) -> str:
    try:
        return locations.one(row)
    except Skip as skip:
        return f"skip:{skip.reason}"


def test_plain_rows_take_the_bulk_path_and_match_reverse() -> None:
    rows = [(1, "news", "a-b_c.d~e"), (2, "news", "x:y@z!$&'()*+,;=")]
    uris = article().many(rows)
    assert uris == [article().one(row) for row in rows]
    assert uris == [
        PREFIX + reverse("article-detail", kwargs={"category": c, "slug": s}) for _, c, s in rows
    ]


@pytest.mark.parametrize(
    ("category", "slug", "expected"),
    [
        ("news", None, "skip:missing_value"),
        ("news", "a\x01b", "skip:control_characters"),
        ("news", "caf\u00e9 au lait", f"{PREFIX}/articles/news/caf%C3%A9%20au%20lait/"),
        ("news", "50%", f"{PREFIX}/articles/news/50%25/"),
        ("news", "a/b", "skip:no_reverse_match"),
        ("news", "", "skip:no_reverse_match"),
        ("news", "x" * 2100, "skip:too_long"),
        ("news", 42, f"{PREFIX}/articles/news/42/"),
        ("caf\u00e9", "s", "skip:no_reverse_match"),
        ("a.b", "s", "skip:no_reverse_match"),
    ],
)
def test_any_other_value_sends_the_chunk_row_by_row(
    category: object, slug: object, expected: str
) -> None:
    rows = [(1, "news", "plain"), (2, category, slug)]
    assert article().many(rows) is None
    assert one_or_skip(article(), rows[1]) == expected


@override_settings(ROOT_URLCONF="tests.urls_row_locations")
def test_every_built_in_converter_matches_the_row_by_row_path() -> None:
    by_int = RowLocations(PREFIX, "by-int", {"number": "n"}, ["n"])
    assert by_int.many([(7,), (12,)]) == [f"{PREFIX}/n/7/", f"{PREFIX}/n/12/"]
    for value in (True, -1, "7", None):
        assert by_int.many([(7,), (value,)]) is None
    three = RowLocations(PREFIX, "three", {"c": "c", "a": "a", "b": "b"}, ["a", "b", "c"])
    rows = [("s-1", "t:2", "p/q/r"), ("s", "t", "u")]
    assert three.many(rows) == [three.one(row) for row in rows]
    assert three.many(rows) == [f"{PREFIX}/three/s-1/t:2/p/q/r/end", f"{PREFIX}/three/s/t/u/end"]
    assert three.many([("s", "t/u", "v")]) is None


@override_settings(ROOT_URLCONF="tests.urls_row_locations")
@pytest.mark.parametrize(
    ("url_name", "kwargs"),
    [
        ("path-first", {"rest": "rest"}),  # "/" + a value starting with "/" needs reverse()'s fix
        ("regex", {"slug": "slug"}),  # re_path: converters unknown
        ("custom", {"word": "word"}),  # a converter of the project's own
    ],
)
def test_no_bulk_path_where_it_could_differ(url_name: str, kwargs: dict[str, str]) -> None:
    assert plain_template(url_name, kwargs) is None
    locations = RowLocations(PREFIX, url_name, kwargs, list(kwargs.values()))
    assert locations.many([("abc",)]) is None


def test_fields_come_in_path_order_whatever_the_kwargs_order() -> None:
    template = plain_template("article-detail", {"slug": "slug", "category": "cat"})
    assert template is not None
    assert template.fields == ["cat", "slug"]
    assert template.literals == ["/articles/", "/", "/"]
    assert template.kinds == ["slug", "str"]


def test_url_elements_match_url_element() -> None:
    entries = [
        ("https://e.com/a", "2024-01-01", "daily", "0.5"),
        ("https://e.com/b?x=1&y='2'", None, "weekly", None),
        ("https://e.com/c", "2024-01-02", None, "1.0"),
        ("https://e.com/d", None, None, None),
    ]
    assert url_elements(entries) == [url_element(*entry) for entry in entries]
    clean = [entries[0], entries[2]]
    assert url_elements(clean) == [url_element(*entry) for entry in clean]
    assert "&amp;y=&apos;2&apos;" in url_elements(entries)[1]


@pytest.mark.django_db
@pytest.mark.parametrize("chunk_size", [1, 2, 1000])
def test_model_pages_are_the_same_in_any_chunking(
    registry: SitemapRegistry, chunk_size: int, caplog: pytest.LogCaptureFixture
) -> None:
    category = CategoryFactory(slug="news")
    slugs = ["one", "caf\u00e9", "bad\x02slug", "two", "a&b", "three"]
    when = datetime.datetime(2024, 5, 1, 8, tzinfo=datetime.UTC)
    for slug in slugs:
        ArticleFactory(category=category, slug=slug, updated_at=when)
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        lastmod_field="updated_at",
        changefreq="weekly",
        priority=0.6,
    )
    with override_settings(SITEMAPX_CHUNK_SIZE=chunk_size, SITEMAPX_OVERRIDES=False):
        stream = render_page(registry.get("article"), 1, Site("https", "example.com"))
        assert stream is not None
        body = b"".join(stream)
    root = validate_sitemap(body)
    assert locs(root) == [
        "https://example.com/articles/news/one/",
        "https://example.com/articles/news/caf%C3%A9/",
        "https://example.com/articles/news/two/",
        "https://example.com/articles/news/a&b/",
        "https://example.com/articles/news/three/",
    ]
    assert body.count(b"<lastmod>2024-05-01T08:00:00+00:00</lastmod>") == 5
    assert b"a&amp;b" in body
    [record] = [r for r in caplog.records if r.name == "django_sitemapx"]
    assert record.skipped == {"control_characters": 1}  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_per_item_methods_still_receive_named_rows(registry: SitemapRegistry) -> None:
    ArticleFactory(category=CategoryFactory(slug="news"), slug="s", title="T")

    class Titled(sitemapx.ModelSource):
        def priority(self, row: object) -> float:
            return 0.9 if row.title == "T" else 0.1  # type: ignore[attr-defined]

    registry.register(
        Article,
        source_class=Titled,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        fields=["title"],
    )
    stream = render_page(registry.get("article"), 1, Site("https", "example.com"))
    assert stream is not None
    assert b"<priority>0.9</priority>" in b"".join(stream)


class _Suspended(sitemapx.ItemSource):
    closed = False

    def iter_entries(self, page, builder, stats):  # type: ignore[no-untyped-def]
        try:
            while True:
                yield [("https://example.com/a", None, None, None)]
        finally:
            type(self).closed = True


@pytest.mark.django_db
@pytest.mark.parametrize("fail_on_chunk", [1, 2])
def test_a_failing_page_closes_the_source_at_once(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch, fail_on_chunk: int
) -> None:
    # Left to the garbage collector, a suspended source (an open server-side
    # cursor) can be finalised in the middle of a later query and deadlock.
    registry.register("suspended", _Suspended)
    calls = []

    def failing(chunk: list[object]) -> list[object]:
        calls.append(chunk)
        if len(calls) == fail_on_chunk:
            raise RuntimeError("override lookup failed")
        return chunk

    monkeypatch.setattr("django_sitemapx.overrides._Lookup.apply", lambda self, c: failing(c))
    _Suspended.closed = False
    try:
        stream = render_page(registry.get("suspended"), 1, Site("https", "example.com"))
        assert stream is not None
        for _ in stream:
            pass
    except RuntimeError:
        # Closed already, while the traceback still holds every frame.
        assert _Suspended.closed
    else:
        pytest.fail("the page did not fail")


@pytest.mark.django_db
def test_a_page_query_has_one_lower_key_bound(registry: SitemapRegistry) -> None:
    # Two lower bounds (key >= 1 and key >= page start) let SQLite scan from key 1.
    ArticleFactory(category=CategoryFactory(slug="news"))
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        limit=10,
    )
    with CaptureQueriesContext(connection) as queries:
        render_page(registry.get("article"), 3, Site("https", "example.com"))
    [page_query] = [q["sql"] for q in queries.captured_queries if "articles_article" in q["sql"]]
    assert page_query.count('"articles_article"."id" >=') == 1
    assert '"articles_article"."id" >= 21' in page_query


def test_never_null_url_values_need_no_filter() -> None:
    assert not _nullable(Article, "slug")
    assert not _nullable(Article, "category__slug")
    assert _nullable(Article, "category__articles")  # reverse relation: NULL in a LEFT JOIN
    assert _nullable(Document, "published_on")
    assert _nullable(Article, "no_such_field")
