"""Multilingual sections: one <url> per (item, language), alternates, x-default, page sizes."""

from collections import Counter
from typing import Any
from unittest import mock

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import translation
from lxml import etree

import django_sitemapx as sitemapx
from django_sitemapx import conf
from django_sitemapx.conf import PROTOCOL_MAX_BYTES
from django_sitemapx.documents import render_page
from django_sitemapx.entries import Skipped
from django_sitemapx.exceptions import SourceConfigurationError
from django_sitemapx.locations import LocationBuilder, Origin
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.factories import bulk_published_articles
from example_project.articles.models import Article
from tests.conftest import NS, content, locs, validate_sitemap
from tests.factories import CategoryFactory, DocumentFactory
from tests.testapp.models import Document

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("registry"),
    pytest.mark.urls("tests.i18n_urls"),
]

LANGUAGES = [("en", "English"), ("de", "German"), ("pt-br", "Portuguese")]
ORIGIN = Origin("https", "example.com")
XHTML = "{http://www.w3.org/1999/xhtml}"

multilingual = override_settings(LANGUAGES=LANGUAGES, LANGUAGE_CODE="en")


def _render(source: sitemapx.Source, number: int = 1) -> tuple[bytes, dict[str, int]]:
    page = source.page(number)
    assert page is not None
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    return b"".join(stream), dict(stream.stats.skipped)


def _alternates(root: etree._Element) -> dict[str, dict[str, str]]:
    """Each <loc>'s alternates: hreflang to href."""
    return {
        url.findtext("sm:loc", namespaces=NS): {
            link.get("hreflang"): link.get("href") for link in url.iter(f"{XHTML}link")
        }
        for url in root.iterfind("sm:url", NS)
    }


def _assert_reciprocal(alternates: dict[str, dict[str, str]]) -> None:
    for loc, links in alternates.items():
        assert loc in links.values(), f"{loc} does not list itself"
        for hreflang, href in links.items():
            if hreflang != "x-default":
                assert alternates[href] == links, f"{href} does not list {loc} back"


@multilingual
def test_a_model_section_lists_every_language_with_reciprocal_alternates(
    registry: SitemapRegistry,
) -> None:
    bulk_published_articles(CategoryFactory(slug="news"), 3)
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        i18n=True,
        alternates=True,
        x_default=True,
    )
    body, skipped = _render(source)
    root = validate_sitemap(body)
    assert not skipped
    assert root.nsmap == {None: NS["sm"], "xhtml": XHTML[1:-1]}
    assert body.count(b"xmlns:xhtml") == 1  # declared once, on the root
    assert locs(root)[:3] == [
        "https://example.com/en/articles/news/a1/",
        "https://example.com/de/artikel/news/a1/",
        "https://example.com/pt-br/artigos/news/a1/",
    ]
    alternates = _alternates(root)
    assert len(alternates) == 9
    assert alternates["https://example.com/de/artikel/news/a2/"] == {
        "en": "https://example.com/en/articles/news/a2/",
        "de": "https://example.com/de/artikel/news/a2/",
        "pt-BR": "https://example.com/pt-br/artigos/news/a2/",
        "x-default": "https://example.com/en/articles/news/a2/",
    }
    _assert_reciprocal(alternates)


@multilingual
def test_without_alternates_there_is_no_xhtml_at_all(registry: SitemapRegistry) -> None:
    bulk_published_articles(CategoryFactory(slug="news"), 2)
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        i18n=True,
        languages=["de", "en"],
    )
    body, _ = _render(source)
    assert b"xhtml" not in body
    assert locs(validate_sitemap(body)) == [
        "https://example.com/de/artikel/news/a1/",
        "https://example.com/en/articles/news/a1/",
        "https://example.com/de/artikel/news/a2/",
        "https://example.com/en/articles/news/a2/",
    ]


@multilingual
def test_languages_per_item_read_the_row_and_cost_no_query_per_row(
    registry: SitemapRegistry,
) -> None:
    bulk_published_articles(CategoryFactory(slug="news"), 40)

    class Articles(sitemapx.ModelSource):
        url_name = "article-detail"
        url_kwargs = {"category": "category__slug", "slug": "slug"}
        i18n = True
        alternates = True
        x_default = "de"

        def get_languages_for_item(self, item: Any) -> list[str]:
            # Odd rows in English only; "xx" is not a language of the section.
            return ["en", "xx"] if item.id % 2 else ["en", "de", "en"]

    source = registry.register(Article, Articles)
    with mock.patch.object(conf, "CHUNK_SIZE", 6), CaptureQueriesContext(connection) as queries:
        body, skipped = _render(source)
    # The page's summary, then one fetch per chunk of rows (SQLite reads a
    # chunk at a time): nothing per row.
    assert len(queries) <= 2 + 40 * 3 // 6
    root = validate_sitemap(body)
    alternates = _alternates(root)
    assert len(alternates) == 20 + 2 * 20
    assert skipped == {"unknown_language": 20}
    assert alternates["https://example.com/en/articles/news/a1/"] == {
        "en": "https://example.com/en/articles/news/a1/"
    }
    assert alternates["https://example.com/en/articles/news/a2/"] == {
        "en": "https://example.com/en/articles/news/a2/",
        "de": "https://example.com/de/artikel/news/a2/",
        "x-default": "https://example.com/de/artikel/news/a2/",
    }
    _assert_reciprocal(alternates)


@multilingual
def test_item_and_static_sources_are_located_with_the_language_active(
    registry: SitemapRegistry,
) -> None:
    registry.register(
        "pages",
        sitemapx.StaticSource,
        url_names=["home", "about"],
        i18n=True,
        alternates=True,
        x_default=True,
    )
    registry.register(
        "things",
        sitemapx.ItemSource,
        items=lambda: [{"location": "/same/for-all/", "priority": 0.3}],
        i18n=True,
        languages=["pt-br"],
        alternates=True,
    )
    client = Client()
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    pages = validate_sitemap(content(client.get(locs(index)[0])))
    alternates = _alternates(pages)
    assert alternates["http://testserver/de/about/"] == {
        "en": "http://testserver/en/about/",
        "de": "http://testserver/de/about/",
        "pt-BR": "http://testserver/pt-br/about/",
        "x-default": "http://testserver/en/about/",
    }
    _assert_reciprocal(alternates)
    things = validate_sitemap(content(client.get(locs(index)[1])))
    assert _alternates(things) == {
        "http://testserver/same/for-all/": {"pt-BR": "http://testserver/same/for-all/"}
    }
    assert things.findtext("sm:url/sm:priority", namespaces=NS) == "0.3"


@multilingual
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"alternates": True}, "without i18n"),
        ({"i18n": True, "x_default": True}, "set alternates = True"),
        ({"i18n": True, "alternates": True, "x_default": "fr"}, "not one of its languages"),
        ({"i18n": True, "languages": ["en", "en"]}, "twice"),
        ({"i18n": True, "languages": ["en_US"]}, "not a language tag"),
        ({"i18n": True, "limit": 2}, "below its 3 languages"),
        ({"i18n": True, "languages": []}, "no language"),
    ],
)
def test_a_multilingual_configuration_that_cannot_work_is_refused(
    registry: SitemapRegistry, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(SourceConfigurationError, match=message):
        registry.register("pages", sitemapx.StaticSource, url_names=["home"], **options)


@override_settings(LANGUAGES=LANGUAGES, LANGUAGE_CODE="en-us")
def test_x_default_true_needs_language_code_among_the_languages(
    registry: SitemapRegistry,
) -> None:
    with pytest.raises(SourceConfigurationError, match="'en-us'"):
        registry.register(
            "pages",
            sitemapx.StaticSource,
            url_names=["home"],
            i18n=True,
            alternates=True,
            x_default=True,
        )


# -- no URL vanishes: pages sized on the largest <url> a source can write -----------

TEN = [(code, code) for code in ("en", "de", "fr", "es", "it", "nl", "pl", "pt", "sv", "fi")]


class _LongDocuments(sitemapx.ModelSource):
    """Paths near the protocol's 2,047 characters, in ten languages, with alternates."""

    url_name = "document"
    url_kwargs = {"path": "path"}
    i18n = True
    alternates = True
    x_default = True

    def max_location_bytes(self) -> int:
        # Declared (the path field allows 3,000 characters): pages near 50 MB.
        return 2_047


@override_settings(LANGUAGES=TEN, LANGUAGE_CODE="en")
def test_ten_languages_of_long_urls_are_all_served_in_pages_under_50_mb(
    registry: SitemapRegistry,
) -> None:
    source = registry.register(Document, _LongDocuments)
    # Sized by the URL limit (less 2%): 4,900 items of ten languages. 50 MB is what limits
    # here, kept as pages are built: a page that goes over it is split.
    assert source.rows_per_page() == 4_900
    per_page = sitemapx.Source.rows_per_page(source)  # what the worst case allows
    assert 100 < per_page < 5_000
    rows = per_page + per_page // 4  # more than 50 MB holds
    stem = "x" * 2_000
    Document.objects.bulk_create(
        [Document(id=n, path=f"{stem}{n:08d}") for n in range(1, rows + 1)]
    )
    Document.objects.create(id=rows + 1, path="y" * 2_100)  # over the declared bound
    client = Client()
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert len(locs(index)) == 1  # counted, not built yet: one page of 4,900 items
    served: Counter[str] = Counter()
    # The first build goes over 50 MB: the page is split before a byte is sent.
    assert len(content(client.get("/sitemap-document-1.xml"))) < PROTOCOL_MAX_BYTES
    pages = locs(validate_sitemap(content(client.get("/sitemap.xml"))))
    assert len(pages) == 2
    for page in pages:
        body = content(client.get(page))
        assert len(body) < PROTOCOL_MAX_BYTES
        root = validate_sitemap(body)
        served.update(locs(root))
    assert len(served) == rows * 10 and set(served.values()) == {1}
    # The first page is nearly full: the bound is tight, not a wild guess.
    first = content(client.get(pages[0]))
    assert len(first) > PROTOCOL_MAX_BYTES * 0.9


@mock.patch.object(conf, "CHUNK_SIZE", 500)
def test_plain_urls_of_2047_characters_fill_pages_without_losing_one(
    registry: SitemapRegistry,
) -> None:
    # No static bound (a location() method): the protocol's worst case sizes pages.
    class Paths(sitemapx.ModelSource):
        fields = ("path",)

        def location(self, row: Any) -> str:
            return row.path

    source = registry.register(Document, Paths)
    # The worst case would hold per_page; pages sized by the URL limit hold them all.
    assert source.rows_per_page() == 49_000
    per_page = sitemapx.Source.rows_per_page(source)
    assert per_page * 2_047 < PROTOCOL_MAX_BYTES < 50_000 * 2_047
    rows = per_page + 1
    prefix = "/" + "p" * (2_047 - len("https://example.com/") - 8)
    Document.objects.bulk_create(
        [Document(id=n, path=f"{prefix}{n:08d}") for n in range(1, rows + 1)]
    )
    served = []
    body, skipped = _render(source, 1)
    assert not skipped and len(body) < PROTOCOL_MAX_BYTES
    served += locs(validate_sitemap(body))
    assert len(served) == rows and max(map(len, served)) == 2_047
    assert source.page(2) is None


def test_an_entry_over_the_sources_bound_is_left_out_and_counted(
    registry: SitemapRegistry,
) -> None:
    class Small(sitemapx.ItemSource):
        def max_location_bytes(self) -> int:
            return 40

    source = registry.register("small", Small, items=lambda: ["/short/", "/" + "long" * 100 + "/"])
    body, skipped = _render(source)
    assert locs(validate_sitemap(body)) == ["https://example.com/short/"]
    assert skipped == {"over_size_limit": 1}


def test_page_sizes_follow_the_bound_of_the_url_pattern(registry: SitemapRegistry) -> None:
    # <slug:category> (50) and <str:slug> (255 characters, each up to 12 once
    # percent-encoded): about 3.6 kB per <url>, so about 14,700 per page.
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
    )
    assert 3_000 < source.max_url_bytes() < 4_000
    # The bound each URL is held to; a model section's pages are sized by the URL
    # limit (the byte limit is kept as they are built), a sliced one's by the bound.
    assert source.rows_per_page() == 49_000
    worst = sitemapx.Source.rows_per_page(source)
    assert worst == (PROTOCOL_MAX_BYTES - 4_096) // source.max_url_bytes()
    # A slug-only pattern is small: the URL limit, not the bytes, decides.
    pages = registry.register("pages", sitemapx.StaticSource, url_names=["home", "about"])
    assert pages.rows_per_page() == 50_000


@multilingual
def test_the_skips_of_one_language_version_are_counted_once(registry: SitemapRegistry) -> None:
    DocumentFactory(id=1, path="ok")
    DocumentFactory(id=2, path="")  # the path converter refuses an empty value

    source = registry.register(
        Document, url_name="document", url_kwargs={"path": "path"}, i18n=True, alternates=True
    )
    chunks = list(source.page(1).entries(LocationBuilder(ORIGIN)))  # type: ignore[union-attr]
    skips = [chunk for chunk in chunks if isinstance(chunk, Skipped)]
    assert skips == [Skipped("no_reverse_match", 3)]  # type: ignore[arg-type]


@multilingual
def test_only_the_values_of_items_listed_are_read_and_counted(registry: SitemapRegistry) -> None:
    # As in every other path: a row none of whose versions is listed writes no
    # value, so its invalid priority is not counted.
    DocumentFactory(id=1, path="ok")
    DocumentFactory(id=2, path="")  # the path converter refuses an empty value

    class Documents(sitemapx.ModelSource):
        url_name = "document"
        url_kwargs = {"path": "path"}
        i18n = True

        def priority(self, item: Any) -> int:
            return 7  # outside 0.0 to 1.0

    source = registry.register(Document, Documents)
    chunks = list(source.page(1).entries(LocationBuilder(ORIGIN)))  # type: ignore[union-attr]
    skips: Counter[str] = Counter()
    for chunk in chunks:
        if isinstance(chunk, Skipped):
            skips[chunk.reason] += chunk.total
    assert skips == {"no_reverse_match": 3, "invalid_priority": 1}


@pytest.mark.urls("tests.i18n_sitemap_urls")
@pytest.mark.parametrize("cache_alias", [None, "default"])
def test_one_language_a_request_asked_for_is_not_written_into_another_languages_documents(
    registry: SitemapRegistry, cache_alias: str | None
) -> None:
    # A one-language section reversed its url_name once, memoised without the active
    # language: after one request in French every language's document listed /fr/ (#28).
    bulk_published_articles(CategoryFactory(slug="news"), 2)
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
    )
    middleware = [*settings.MIDDLEWARE, "django.middleware.locale.LocaleMiddleware"]
    client = Client(HTTP_HOST="example.com")
    # LocaleMiddleware leaves the last request's language active: restored on leaving.
    with (
        translation.override(None),
        override_settings(MIDDLEWARE=middleware, SITEMAPX_CACHE_ALIAS=cache_alias),
    ):
        for code in ("fr", "en", "de", "fr"):
            response = client.get(f"/{code}/sitemap-article-1.xml", HTTP_ACCEPT_LANGUAGE="fr")
            assert response.status_code == 200
            assert locs(validate_sitemap(content(response))) == [
                f"http://example.com/{code}/articles/news/a1/",
                f"http://example.com/{code}/articles/news/a2/",
            ]


@multilingual
def test_a_one_language_sections_pages_have_one_size_whatever_the_active_language(
    registry: SitemapRegistry,
) -> None:
    # Its URLs are the active language's ("/pt-br/artigos/" is longer than
    # "/en/articles/"): pages are sized for the longest, so a page table is not cut
    # anew each time a request of another language comes.
    sizes = set()
    for code in ("en", "pt-br", "de"):
        source = registry.register(
            Article,
            section=f"article-{code}",
            url_name="article-detail",
            url_kwargs={"category": "category__slug", "slug": "slug"},
        )
        with translation.override(code):
            sizes.add((source.max_location_bytes(), source.rows_per_page()))
    assert len(sizes) == 1
