"""Item, static and contrib-wrapped sources, directly and through the real views."""

import datetime
from unittest import mock

import pytest
from django.contrib.sitemaps import GenericSitemap
from django.contrib.sitemaps.views import sitemap as contrib_sitemap_view
from django.test import Client, RequestFactory, override_settings

import django_sitemapx as sitemapx
from django_sitemapx import Entry, LocationBuilder, Origin, PageSummary, Skipped, conf
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article
from tests.conftest import NS, content, locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> Client:
    return Client(HTTP_HOST="example.com")


def _values(root) -> list[dict[str, str]]:  # type: ignore[no-untyped-def]
    return [
        {child.tag.split("}")[1]: child.text for child in url}
        for url in root.iterfind("sm:url", NS)
    ]


def test_item_source_with_mappings_and_naive_datetimes(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register(
        "feeds",
        lambda: [
            {"location": "/a/", "lastmod": datetime.datetime(2024, 7, 1, 12), "priority": 0.9},
            {"location": "/b/", "lastmod": datetime.date(2024, 1, 2), "changefreq": "never"},
            "/c/",
        ],
        changefreq="monthly",
    )
    root = validate_sitemap(content(client.get("/sitemap-feeds-1.xml")))
    # Naive datetimes are taken in TIME_ZONE (Europe/Paris, +02:00 in July).
    assert _values(root) == [
        {
            "loc": "http://example.com/a/",
            "lastmod": "2024-07-01T12:00:00+02:00",
            "changefreq": "monthly",
            "priority": "0.9",
        },
        {"loc": "http://example.com/b/", "lastmod": "2024-01-02", "changefreq": "never"},
        {"loc": "http://example.com/c/", "changefreq": "monthly"},
    ]
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert index[0][1].text == "2024-07-01T12:00:00+02:00"


def _stream(source: sitemapx.Source, number: int) -> list[Entry | Skipped]:
    page = source.page(number)
    assert page is not None
    builder = LocationBuilder(Origin("https", "example.com"))
    out: list[Entry | Skipped] = []
    for item in page.entries(builder):
        out.extend([item] if isinstance(item, Skipped) else item)
    return out


def test_pages_summaries_and_entries_agree() -> None:
    source = sitemapx.ItemSource(
        "s",
        items=lambda: [
            {"location": "/a/", "lastmod": datetime.date(2024, 1, 3)},
            {"location": "/b/", "lastmod": "2024-01-05T10:00:00Z"},
            {"location": "https://elsewhere.example/c/", "lastmod": datetime.date(2024, 2, 1)},
        ],
        limit=2,
        priority=0.4,
    )
    assert source.page_summaries() == [
        PageSummary(1, 2, "2024-01-05T10:00:00+00:00"),
        PageSummary(2, 1, "2024-02-01"),
    ]
    for summary in source.page_summaries():
        page = source.page(summary.number)
        assert page is not None and page.summary == summary
    assert source.page(0) is None and source.page(3) is None
    assert _stream(source, 1) == [
        ("https://example.com/a/", "2024-01-03", None, "0.4", None),
        ("https://example.com/b/", "2024-01-05T10:00:00Z", None, "0.4", None),
    ]
    # The page counts the item in its summary (as the index does) and skips it when written.
    assert _stream(source, 2) == [Skipped(sitemapx.SkipReason.OTHER_HOST, 1)]


@mock.patch.object(conf, "CHUNK_SIZE", 2)
def test_entries_come_in_chunks_then_the_skips() -> None:
    source = sitemapx.ItemSource("s", items=lambda: ["/a/", "/b/", "relative", "/c/"])
    page = source.page(1)
    assert page is not None
    chunks = list(page.entries(LocationBuilder(Origin("https", "example.com"))))
    assert chunks == [
        [Entry("https://example.com/a/"), Entry("https://example.com/b/")],
        [Entry("https://example.com/c/")],
        Skipped(sitemapx.SkipReason.NOT_ABSOLUTE, 1),
    ]


@pytest.mark.parametrize("cache_alias", ["default", None])
def test_items_is_called_once_per_document_request(
    client: Client, registry: SitemapRegistry, cache_alias: str | None
) -> None:
    # The page's ETag summary and its body come from one items() call (the old
    # code called it once for the summary and again for the body).
    calls = []

    class Counted(sitemapx.ItemSource):
        def items(self) -> list[str]:
            calls.append(1)
            return ["/a/", "/b/", "/c/"]

    registry.register("counted", Counted, limit=2)
    with override_settings(SITEMAPX_CACHE_ALIAS=cache_alias):
        response = client.get("/sitemap-counted-2.xml")
        assert response.status_code == 200 and response.has_header("ETag")
        assert locs(validate_sitemap(content(response))) == ["http://example.com/c/"]
        assert len(calls) == 1
        calls.clear()
        validate_sitemap(content(client.get("/sitemap.xml")))
        assert len(calls) == 1
        calls.clear()
        assert client.get("/sitemap-counted-3.xml").status_code == 404
        assert len(calls) == 1


def test_item_source_pages_by_limit(client: Client, registry: SitemapRegistry) -> None:
    registry.register("many", lambda: [f"/p/{i}/" for i in range(5)], limit=2)
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert len(locs(index)) == 3
    third = validate_sitemap(content(client.get("/sitemap-many-3.xml")))
    assert locs(third) == ["http://example.com/p/4/"]
    assert client.get("/sitemap-many-4.xml").status_code == 404


def test_invalid_per_item_values_are_dropped_not_fatal(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    class Odd(sitemapx.ItemSource):
        def items(self) -> list[str]:
            return ["/a/", "/b/"]

        def priority(self, item: str) -> float:
            return 7 if item == "/a/" else 0.2

        def changefreq(self, item: str) -> str:
            return "sometimes" if item == "/b/" else "daily"

    registry.register("odd", Odd)
    root = validate_sitemap(content(client.get("/sitemap-odd-1.xml")))
    assert _values(root) == [
        {"loc": "http://example.com/a/", "changefreq": "daily"},
        {"loc": "http://example.com/b/", "priority": "0.2"},
    ]
    assert "invalid_priority" in caplog.text and "invalid_changefreq" in caplog.text


def test_mapping_with_invalid_values_keeps_the_url_without_them(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.register(
        "m",
        lambda: [
            {"location": "/a/", "priority": 7, "lastmod": "yesterday", "changefreq": "often"},
            {"location": "/b/", "lastmod": "2024-05-01T10:00:00Z"},
        ],
    )
    root = validate_sitemap(content(client.get("/sitemap-m-1.xml")))
    assert _values(root) == [
        {"loc": "http://example.com/a/"},
        {"loc": "http://example.com/b/", "lastmod": "2024-05-01T10:00:00Z"},
    ]
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert index[0][1].text == "2024-05-01T10:00:00+00:00"
    record = next(r for r in caplog.records if r.name == "django_sitemapx")
    assert record.skipped == {  # type: ignore[attr-defined]
        "invalid_lastmod": 1,
        "invalid_priority": 1,
        "invalid_changefreq": 1,
    }


def test_static_source_with_kwargs(client: Client, registry: SitemapRegistry) -> None:
    registry.register(
        "static",
        sitemapx.StaticSource,
        url_names=["home", ("category-detail", {"category": "news"})],
    )
    root = validate_sitemap(content(client.get("/sitemap-static-1.xml")))
    assert locs(root) == ["http://example.com/", "http://example.com/articles/news/"]


def test_contrib_sitemap_wrapped_gives_the_same_urls_as_contrib(
    client: Client, registry: SitemapRegistry
) -> None:
    category = CategoryFactory(slug="news")
    for i in range(3):
        ArticleFactory(
            category=category,
            slug=f"s{i}",
            updated_at=datetime.datetime(2024, 3, i + 1, 9, tzinfo=datetime.UTC),
        )
    generic = GenericSitemap(
        {"queryset": Article.objects.order_by("pk"), "date_field": "updated_at"},
        priority=0.3,
        changefreq="yearly",
    )
    registry.register("blog", generic)
    ours = validate_sitemap(content(client.get("/sitemap-blog-1.xml")))

    request = RequestFactory(HTTP_HOST="example.com").get("/sitemap.xml")
    response = contrib_sitemap_view(request, sitemaps={"blog": generic})
    response.render()
    from lxml import etree

    theirs = etree.fromstring(response.content)
    assert locs(ours) == locs(theirs)
    assert [u["priority"] for u in _values(ours)] == ["0.3"] * 3
    assert [u["lastmod"] for u in _values(ours)] == [
        f"2024-03-0{i + 1}T09:00:00+00:00" for i in range(3)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "2024-13-45",
        "2024-02-30T10:00:00+00:00",
        "2024-01-01T25:61:61+00:00",
        "2024-01-01T10:00:00+24:00",
        "\u0662\u0660\u0662\u0664-01-01",
        "2024-01-01T10:00:00",
        "2024-01-01T10:00Z",
        "2024",
    ],
)
def test_string_lastmods_that_the_schema_refuses_are_dropped(
    client: Client, registry: SitemapRegistry, text: str
) -> None:
    registry.register("s", lambda: [{"location": "/a/", "lastmod": text}])
    root = validate_sitemap(content(client.get("/sitemap-s-1.xml")))
    assert _values(root) == [{"loc": "http://example.com/a/"}]


@pytest.mark.parametrize(
    "text", ["2024-02-29", "2024-01-01T10:00:00Z", "2024-01-01T10:00:00.5-14:00"]
)
def test_valid_string_lastmods_are_kept(
    client: Client, registry: SitemapRegistry, text: str
) -> None:
    registry.register("s", lambda: [{"location": "/a/", "lastmod": text}])
    root = validate_sitemap(content(client.get("/sitemap-s-1.xml")))
    assert _values(root) == [{"loc": "http://example.com/a/", "lastmod": text}]
