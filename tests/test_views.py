"""The views, end to end: index, pages, 404s, hosts, protocol, ASGI streaming."""

import asyncio
import datetime

import pytest
from asgiref.sync import sync_to_async
from django.contrib.sites.models import Site
from django.db import connections
from django.test import AsyncClient, Client, override_settings

import django_sitemapx as sitemapx
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.factories import bulk_published_articles
from tests.conftest import content, locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory, DocumentFactory
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

XML = "application/xml; charset=utf-8"


@pytest.fixture
def client() -> Client:
    return Client(HTTP_HOST="example.com")


def test_index_lists_every_non_empty_section(client: Client) -> None:
    category = CategoryFactory(slug="news")
    ArticleFactory.create_batch(3, category=category)
    response = client.get("/sitemap.xml")
    assert response.status_code == 200
    assert response["Content-Type"] == XML
    assert response.streaming
    root = validate_sitemap(content(response))
    assert locs(root) == [
        "http://example.com/sitemap-article-1.xml",
        "http://example.com/sitemap-category-1.xml",
        "http://example.com/sitemap-pages-1.xml",
    ]


def test_index_lastmod_is_the_greatest_of_the_page(client: Client) -> None:
    category = CategoryFactory()
    for day in (1, 9, 3):
        ArticleFactory(
            category=category, updated_at=datetime.datetime(2024, 5, day, tzinfo=datetime.UTC)
        )
    ArticleFactory(
        category=category,
        is_published=False,
        updated_at=datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC),
    )
    root = validate_sitemap(content(client.get("/sitemap.xml")))
    first = root[0]
    assert first[1].text == "2024-05-09T00:00:00+00:00"


def test_article_page(client: Client) -> None:
    category = CategoryFactory(slug="news")
    published = ArticleFactory(
        category=category,
        slug="hello",
        updated_at=datetime.datetime(2024, 5, 1, 8, tzinfo=datetime.UTC),
    )
    ArticleFactory(category=category, slug="draft", is_published=False)
    response = client.get("/sitemap-article-1.xml")
    assert response["Content-Type"] == XML
    root = validate_sitemap(content(response))
    assert locs(root) == ["http://example.com/articles/news/hello/"]
    url = root[0]
    assert [child.text for child in url] == [
        "http://example.com/articles/news/hello/",
        "2024-05-01T08:00:00+00:00",
        "weekly",
        "0.6",
    ]
    assert published.get_absolute_url() == "/articles/news/hello/"


def test_locations_match_get_absolute_url(client: Client) -> None:
    articles = [ArticleFactory(slug=slug) for slug in ["ünïcödé-slug", "plain", "日本語"]]
    root = validate_sitemap(content(client.get("/sitemap-article-1.xml")))
    assert set(locs(root)) == {"http://example.com" + a.get_absolute_url() for a in articles}
    assert "http://example.com/articles/category-" in locs(root)[0]
    assert any("%C3%BCn%C3%AFc%C3%B6d%C3%A9-slug" in loc for loc in locs(root))
    for loc in locs(root):
        assert loc.isascii()


def test_static_pages(client: Client) -> None:
    # The example's pages are in three languages, English unprefixed.
    root = validate_sitemap(content(client.get("/sitemap-pages-1.xml")))
    assert locs(root) == [
        "http://example.com/",
        "http://example.com/de/",
        "http://example.com/fr/",
        "http://example.com/about/",
        "http://example.com/de/about/",
        "http://example.com/fr/about/",
    ]


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-article-0.xml",
        "/sitemap-article-01.xml",
        "/sitemap-article-abc.xml",
        "/sitemap-article-1.5.xml",
        "/sitemap-article--1.xml",
        "/sitemap-article-%EF%BC%91.xml",  # a full-width digit one
        "/sitemap-article-99999999999999999999999.xml",
        "/sitemap-article-9999999999999999999.xml",  # 19 digits: past any 64-bit key
        "/sitemap-article-184467440737095517.xml",
        "/sitemap-article-2.xml",
        "/sitemap-nosuchsection-1.xml",
        "/sitemap-article-.xml",
    ],
)
def test_bad_pages_are_404(client: Client, path: str) -> None:
    ArticleFactory()
    assert client.get(path).status_code == 404


def test_snowflake_keys_share_dense_pages(client: Client, registry: SitemapRegistry) -> None:
    # 64-bit keys far apart: pages are cut on the rows, not on the key's value.
    registry.register(Document, source_class=_PathSource, fields=["path"], limit=2)
    # (Not 2**63 - 1: MariaDB's AUTO_INCREMENT would then overflow for later tests.)
    keys = [3_000_000_000_000_000_001, 4_000_000_000_000_000_001, 2**62]
    for key in keys:
        DocumentFactory(id=key, path=f"/d/{key}/")
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert locs(index) == [
        "http://example.com/sitemap-document-1.xml",
        "http://example.com/sitemap-document-2.xml",
    ]
    pages = [
        locs(validate_sitemap(content(client.get(f"/sitemap-document-{n}.xml")))) for n in (1, 2)
    ]
    assert pages == [
        [f"http://example.com/d/{keys[0]}/", f"http://example.com/d/{keys[1]}/"],
        [f"http://example.com/d/{keys[2]}/"],
    ]


def test_empty_section_is_left_out_of_the_index_and_its_page_is_404(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register(Document, url_name="home", section="empty")
    registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    root = validate_sitemap(content(client.get("/sitemap.xml")))
    assert locs(root) == ["http://example.com/sitemap-pages-1.xml"]
    assert client.get("/sitemap-empty-1.xml").status_code == 404


def test_index_with_no_url_at_all_is_404(client: Client, registry: SitemapRegistry) -> None:
    assert client.get("/sitemap.xml").status_code == 404
    registry.register(Document, url_name="home")
    assert client.get("/sitemap.xml").status_code == 404


def test_host_comes_from_the_request(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["about"])
    for host in ["example.com", "other.example"]:
        root = validate_sitemap(content(Client(HTTP_HOST=host).get("/sitemap-pages-1.xml")))
        assert locs(root) == [f"http://{host}/about/"]


def test_disallowed_host_is_400_not_500(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["about"])
    assert Client(HTTP_HOST="evil.example").get("/sitemap.xml").status_code == 400


@override_settings(SITEMAPX_USE_SITES=True)
def test_host_comes_from_the_sites_framework(registry: SitemapRegistry) -> None:
    Site.objects.filter(pk=1).update(domain="www.example.org")
    Site.objects.clear_cache()
    registry.register("pages", sitemapx.StaticSource, url_names=["about"])
    root = validate_sitemap(content(Client(HTTP_HOST="example.com").get("/sitemap-pages-1.xml")))
    assert locs(root) == ["http://www.example.org/about/"]
    index = validate_sitemap(content(Client(HTTP_HOST="example.com").get("/sitemap.xml")))
    assert locs(index) == ["http://www.example.org/sitemap-pages-1.xml"]
    Site.objects.clear_cache()


def test_protocol_follows_the_request_then_the_setting_then_the_source(
    registry: SitemapRegistry,
) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["about"])
    registry.register("secure", sitemapx.StaticSource, url_names=["home"], protocol="https")
    client = Client(HTTP_HOST="example.com")
    assert locs(validate_sitemap(content(client.get("/sitemap-pages-1.xml", secure=True)))) == [
        "https://example.com/about/"
    ]
    assert locs(validate_sitemap(content(client.get("/sitemap-secure-1.xml")))) == [
        "https://example.com/"
    ]
    with override_settings(SITEMAPX_PROTOCOL="https"):
        assert locs(validate_sitemap(content(client.get("/sitemap-pages-1.xml")))) == [
            "https://example.com/about/"
        ]


def test_other_host_and_overlong_urls_are_skipped_and_logged(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.register(
        "mixed",
        lambda: [
            "/ok/",
            "https://other.example/x/",
            "/" + "a" * 3000,
            "/bad\x01char/",
            "http://example.com/also-ok/",
        ],
    )
    root = validate_sitemap(content(client.get("/sitemap-mixed-1.xml")))
    assert locs(root) == ["http://example.com/ok/", "http://example.com/also-ok/"]
    assert "3 entries left out" in caplog.text
    record = next(r for r in caplog.records if r.name == "django_sitemapx")
    assert record.skipped == {"other_host": 1, "too_long": 1, "control_characters": 1}  # type: ignore[attr-defined]


def test_a_page_whose_every_entry_is_skipped_is_404(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register("bad", lambda: ["https://other.example/"])
    assert client.get("/sitemap-bad-1.xml").status_code == 404


def test_escaping_and_control_characters_in_model_data(
    client: Client, registry: SitemapRegistry
) -> None:
    DocumentFactory(path="/q/?a=1&b='2'&c=\"3\"<4>")
    DocumentFactory(path="/ctl/\x01/")
    DocumentFactory(path="/tab/\t/")
    registry.register(Document, fields=["path"], source_class=_PathSource)
    data = content(client.get("/sitemap-document-1.xml"))
    root = validate_sitemap(data)
    assert b"&amp;b=&apos;2&apos;&amp;c=%223%22%3C4%3E" in data
    assert locs(root) == ["http://example.com/q/?a=1&b='2'&c=%223%22%3C4%3E"]


class _PathSource(sitemapx.ModelSource):
    def location(self, row):  # type: ignore[no-untyped-def]
        return row.path


def test_unpublished_rows_are_never_listed(client: Client) -> None:
    ArticleFactory.create_batch(4, is_published=False)
    ArticleFactory(slug="visible")
    root = validate_sitemap(content(client.get("/sitemap-article-1.xml")))
    assert [loc.rsplit("/", 2)[-2] for loc in locs(root)] == ["visible"]


def test_rows_without_any_published_article_leave_the_section_out(client: Client) -> None:
    ArticleFactory.create_batch(2, is_published=False)
    root = validate_sitemap(content(client.get("/sitemap.xml")))
    assert "http://example.com/sitemap-article-1.xml" not in locs(root)
    assert client.get("/sitemap-article-1.xml").status_code == 404


@override_settings(SITEMAPX_LIMIT=2_000)
@pytest.mark.parametrize(("extra", "pages"), [(0, 1), (1, 2)])
def test_a_full_page_of_rows_makes_one_page_and_one_more_makes_two(
    client: Client, extra: int, pages: int
) -> None:
    # A page holds as many rows as the URL limit (SITEMAPX_LIMIT here) allows, less 2%.
    capacity = sitemapx.default_registry.get("article").rows_per_page()
    assert capacity == 1_960
    rows = capacity + extra
    bulk_published_articles(CategoryFactory(slug="c"), rows)
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    article_pages = [loc for loc in locs(index) if "sitemap-article-" in loc]
    assert article_pages == [
        f"http://example.com/sitemap-article-{n}.xml" for n in range(1, pages + 1)
    ]
    first = validate_sitemap(content(client.get("/sitemap-article-1.xml")))
    assert len(first) == capacity
    if pages == 2:
        second = validate_sitemap(content(client.get("/sitemap-article-2.xml")))
        assert locs(second) == [f"http://example.com/articles/c/a{rows}/"]


def test_deleting_a_row_does_not_move_other_rows_between_pages(
    client: Client, registry: SitemapRegistry
) -> None:
    for i in range(1, 8):
        DocumentFactory(id=i, path=f"/d/{i}/")
    registry.register(Document, source_class=_PathSource, fields=["path"], limit=3)
    before = [
        locs(validate_sitemap(content(client.get(f"/sitemap-document-{n}.xml"))))
        for n in (1, 2, 3)
    ]
    Document.objects.filter(id=2).delete()
    after = [
        locs(validate_sitemap(content(client.get(f"/sitemap-document-{n}.xml"))))
        for n in (1, 2, 3)
    ]
    assert after[0] == [loc for loc in before[0] if not loc.endswith("/2/")]
    assert after[1:] == before[1:]


def test_sparse_keys_fill_pages(client: Client, registry: SitemapRegistry) -> None:
    for i in (1, 2, 10, 5_000, 90_000):
        DocumentFactory(id=i, path=f"/d/{i}/")
    registry.register(Document, source_class=_PathSource, fields=["path"], limit=3)
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert locs(index) == [
        "http://example.com/sitemap-document-1.xml",
        "http://example.com/sitemap-document-2.xml",
    ]
    page = validate_sitemap(content(client.get("/sitemap-document-1.xml")))
    assert len(locs(page)) == 3
    assert client.get("/sitemap-document-3.xml").status_code == 404


def test_asgi_streams_with_an_async_iterator(registry: SitemapRegistry) -> None:
    # A sync iterator under ASGI would raise Django's "must consume synchronous
    # iterators" warning, which this suite turns into an error.
    registry.register("pages", sitemapx.StaticSource, url_names=["home", "about"])

    async def fetch() -> tuple[int, str, bytes, bool]:
        response = await AsyncClient().get("/sitemap-pages-1.xml")
        assert response.is_async
        body = b"".join([chunk async for chunk in response.streaming_content])
        # The stream read overrides in asgiref's sync thread, whose connection the
        # test client leaves open (it disconnects close_old_connections): close it.
        await sync_to_async(connections.close_all)()
        return response.status_code, response["Content-Type"], body, response.streaming

    status, content_type, body, streaming = asyncio.run(fetch())
    assert (status, content_type, streaming) == (200, XML, True)
    assert locs(validate_sitemap(body)) == ["http://testserver/", "http://testserver/about/"]


@override_settings(ROOT_URLCONF="tests.urls_custom")
def test_a_custom_registry_with_its_own_urls(client: Client) -> None:
    index = validate_sitemap(content(client.get("/custom/sitemap.xml")))
    assert locs(index) == ["http://example.com/custom/sitemap-extra-1.xml"]
    page = validate_sitemap(content(client.get("/custom/sitemap-extra-1.xml")))
    assert locs(page) == ["http://example.com/about/"]
    assert client.get("/custom/sitemap-article-1.xml").status_code == 404


@override_settings(SITEMAPX_USE_SITES=True, SITE_ID=None)
def test_sites_framework_without_site_id_and_an_unknown_host_is_404(
    registry: SitemapRegistry,
) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["about"])
    Site.objects.create(domain="other.example", name="other")
    Site.objects.clear_cache()
    assert Client(HTTP_HOST="localhost").get("/sitemap.xml").status_code == 404
    root = validate_sitemap(content(Client(HTTP_HOST="other.example").get("/sitemap.xml")))
    assert locs(root) == ["http://other.example/sitemap-pages-1.xml"]
    Site.objects.clear_cache()


def test_past_one_index_of_pages_the_next_index_files_list_the_rest(
    client: Client, registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django_sitemapx.documents import index_paths

    monkeypatch.setattr("django_sitemapx.documents.INDEX_CAPACITY", 2)
    registry.register(
        "pages", sitemapx.ItemSource, items=lambda: [f"/p{i}/" for i in range(5)], limit=1
    )
    listed = []
    for path in ("/sitemap.xml", "/sitemap-index-2.xml", "/sitemap-index-3.xml"):
        listed += locs(validate_sitemap(content(client.get(path))))
    assert listed == [f"http://example.com/sitemap-pages-{n}.xml" for n in range(1, 6)]
    assert client.get("/sitemap-index-4.xml").status_code == 404
    assert client.get("/sitemap-index-1.xml").status_code == 404  # that is /sitemap.xml
    gz = client.get("/sitemap-index-2.xml.gz")
    assert gz.status_code == 200 and gz["Content-Type"] == "application/gzip"
    assert index_paths(registry) == [
        "/sitemap.xml",
        "/sitemap-index-2.xml",
        "/sitemap-index-3.xml",
    ]
