"""The chunked hot path gives exactly what the per-row path gives: URIs, XML and skips."""

import datetime
from unittest import mock

import pytest
from django.test import override_settings
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from django_sitemapx import conf
from django_sitemapx.conf import PROTOCOL_MAX_LOC_LENGTH
from django_sitemapx.documents import render_page
from django_sitemapx.entries import interleave
from django_sitemapx.exceptions import Skip
from django_sitemapx.locations import Origin
from django_sitemapx.locations.reverse import compile_url
from django_sitemapx.locations.rows import RowLocations
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.writer import needs_escape
from example_project.articles.models import Article
from tests.conftest import locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory
from tests.urls_row_locations import NO_PLAIN_TEMPLATE

FIELDS = ["id", "category__slug", "slug"]
PREFIX = "https://example.com"


def locations(url_name: str, kwargs: dict[str, str], row_fields: list[str]) -> RowLocations:
    return RowLocations(PREFIX, compile_url(url_name, kwargs), row_fields)


ARTICLE_KWARGS = {"category": "category__slug", "slug": "slug"}


def article() -> RowLocations:
    return locations("article-detail", ARTICLE_KWARGS, FIELDS)


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
    by_int = locations("by-int", {"number": "n"}, ["n"])
    assert by_int.many([(7,), (12,)]) == [f"{PREFIX}/n/7/", f"{PREFIX}/n/12/"]
    for value in (True, -1, "7", None):
        assert by_int.many([(7,), (value,)]) is None
    three = locations("three", {"c": "c", "a": "a", "b": "b"}, ["a", "b", "c"])
    rows = [("s-1", "t:2", "p/q/r"), ("s", "t", "u")]
    assert three.many(rows) == [three.one(row) for row in rows]
    assert three.many(rows) == [f"{PREFIX}/three/s-1/t:2/p/q/r/end", f"{PREFIX}/three/s/t/u/end"]
    assert three.many([("s", "t/u", "v")]) is None


@override_settings(ROOT_URLCONF="tests.urls_row_locations")
@pytest.mark.parametrize(("url_name", "kwargs"), NO_PLAIN_TEMPLATE)
def test_no_bulk_path_where_it_could_differ(url_name: str, kwargs: dict[str, str]) -> None:
    row_locations = locations(url_name, kwargs, list(kwargs.values()))
    assert row_locations.many([("abc",)]) is None
    assert row_locations.one(("abc",)) == PREFIX + reverse(
        url_name, kwargs={name: "abc" for name in kwargs}
    )


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
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        lastmod_field="updated_at",
        changefreq="weekly",
        priority=0.6,
    )
    with (
        override_settings(SITEMAPX_OVERRIDES=False),
        mock.patch.object(conf, "CHUNK_SIZE", chunk_size),
    ):
        page = source.page(1)
        assert page is not None and page.summary.rows == len(slugs)
        stream = render_page(source, page, Origin("https", "example.com"))
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


def test_xml_columns_are_the_values_of_plain_uris_that_need_no_escaping() -> None:
    rows = [(1, "news", "a-b_c.d~e"), (2, "sport", "x:y@z!$()*+,;=")]
    columns = article().xml_columns(rows)
    assert columns == [["news", "sport"], ["a-b_c.d~e", "x:y@z!$()*+,;="]]
    assert article().literals is not None
    assert interleave(article().literals, columns, 2) == article().many(rows)


@pytest.mark.parametrize(
    "slug",
    ["a&b", "it's", "caf\u00e9", "a\x01b", None, "", "x" * 2100],
)
def test_xml_columns_refuse_what_needs_escaping_or_other_work(slug: object) -> None:
    assert article().xml_columns([(1, "news", "plain"), (2, "news", slug)]) is None


def test_xml_columns_refuse_columns_whose_longest_values_together_are_too_long() -> None:
    # Each URI is within the limit, but the bound from each column's longest
    # value is not: the chunk goes the way that measures each URI.
    rows = [(1, "c" * 1000, "s"), (2, "c", "s" * 1100)]
    assert article().xml_columns(rows) is None
    assert article().many(rows) is not None


def test_xml_columns_need_literals_that_need_no_escaping() -> None:
    escaped = RowLocations(
        "https://e.com/a&b", compile_url("article-detail", ARTICLE_KWARGS), FIELDS
    )
    assert escaped.xml_columns([(1, "news", "plain")]) is None
    assert escaped.many([(1, "news", "plain")]) == ["https://e.com/a&b/articles/news/plain/"]


# Values of every kind a row may hold; plain ones (for a slug, then for a str
# converter) often, so that many chunks are plain.
_slugs = st.text("ab-_", min_size=1, max_size=6) | st.text("ab-", min_size=1000, max_size=1100)
_strs = _slugs | st.sampled_from(["a.b~c", "x:y@z!$()*+,;="])
_others = st.one_of(
    st.sampled_from(["a&b", "it's", "", "p/q", "50%", "caf\u00e9", "a\x01b"]),
    st.text(max_size=8),
    st.integers(-2, 10),
    st.none(),
)


_plain_rows = st.tuples(st.integers(1, 9), _slugs, _strs)
_rows = st.tuples(st.integers(1, 9), _slugs | _others, _strs | _others)


@given(st.lists(_plain_rows | _rows, min_size=1, max_size=3))
def test_xml_columns_give_what_each_row_gives_and_need_no_escaping(
    rows: list[tuple[object, ...]],
) -> None:
    locations = article()
    columns = locations.xml_columns(rows)
    if columns is None:
        return
    assert locations.literals is not None
    uris = interleave(locations.literals, columns, len(rows))
    assert uris == [locations.one(row) for row in rows]
    assert not needs_escape("".join(uris))
    assert max(map(len, uris)) <= PROTOCOL_MAX_LOC_LENGTH
