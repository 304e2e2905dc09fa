"""Sources with images, videos and news: declarations, one query per chunk, skips, news ageing."""

import datetime
import io
import re
from collections import Counter
from typing import Any
from unittest import mock

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from lxml import etree

import django_sitemapx as sitemapx
from django_sitemapx import conf
from django_sitemapx.conf import PROTOCOL_MAX_BYTES
from django_sitemapx.documents import render_page
from django_sitemapx.entries import IMAGE_NAMESPACE, NEWS_NAMESPACE, VIDEO_NAMESPACE
from django_sitemapx.exceptions import SourceConfigurationError
from django_sitemapx.extensions.declarations import extension_url_bytes
from django_sitemapx.locations import LocationBuilder, Origin
from django_sitemapx.registry import SitemapRegistry, default_registry
from django_sitemapx.sources.base import DOCUMENT_FRAME_BYTES, URL_VALUES_BYTES
from example_project.articles.models import Article, ArticleImage, ArticleVideo
from tests.conftest import NS, content, locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory
from tests.support.sources import page_stream

pytestmark = pytest.mark.django_db

ORIGIN = Origin("https", "example.com")
BUILDER = LocationBuilder(ORIGIN)
IMG = "{" + IMAGE_NAMESPACE + "}"
VID = "{" + VIDEO_NAMESPACE + "}"
NEWS = "{" + NEWS_NAMESPACE + "}"


@pytest.fixture
def client() -> Client:
    return Client(HTTP_HOST="example.com")


def _stream(source: sitemapx.Source) -> tuple[list[Any], Counter[str]]:
    """Every entry of every page (keys need not start at 1), and the skips by reason."""
    entries: list[Any] = []
    skipped: Counter[str] = Counter()
    for summary in source.page_summaries():
        found = page_stream(source, BUILDER, summary.number)
        assert found is not None
        entries += found[0]
        skipped.update(found[1])
    return entries, skipped


def _articles_with_images(count: int, images: int) -> list[Article]:
    category = CategoryFactory(slug="c")
    articles = [ArticleFactory(category=category, slug=f"a{n}") for n in range(count)]
    ArticleImage.objects.bulk_create(
        ArticleImage(article=article, url=f"/img/{article.pk}/{n}.jpg", position=images - n)
        for article in articles
        for n in range(images)
    )
    return articles


class ImageArticles(sitemapx.ModelSource):
    queryset = Article.objects.filter(is_published=True)
    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}
    images = sitemapx.RelatedImages("images", loc="url", order_by=["position"])
    max_images = 3


# -- related images: one query per chunk --------------------------------------------


@mock.patch.object(conf, "CHUNK_SIZE", 10)
def test_related_images_cost_one_query_per_chunk(registry: SitemapRegistry) -> None:
    articles = _articles_with_images(35, 3)
    Article.objects.filter(pk=articles[4].pk).update(is_published=False)
    source = registry.register(Article, source_class=ImageArticles)
    with CaptureQueriesContext(connection) as queries:
        entries, skipped = _stream(source)
    image_queries = [q for q in queries if "articleimage" in q["sql"]]
    assert len(entries) == 34
    # Chunks of at most ten rows (four, when the keys share a page): one image
    # query per chunk, never one per row.
    chunks = sum(-(-summary.rows // 10) for summary in source.page_summaries())
    assert len(image_queries) == chunks <= 5
    assert not skipped
    first = entries[0]
    assert first[4].images == tuple(
        f"https://example.com/img/{articles[0].pk}/{n}.jpg" for n in (2, 1, 0)
    )
    # The unpublished article's images are in the key range but not listed.
    assert all(f"/img/{articles[4].pk}/" not in " ".join(e[4].images) for e in entries)


def test_image_section_document_is_valid_and_declares_only_the_image_namespace(
    registry: SitemapRegistry,
) -> None:
    _articles_with_images(3, 2)
    ArticleFactory(category=CategoryFactory(slug="d"), slug="bare")
    source = registry.register(Article, source_class=ImageArticles)
    (summary,) = source.page_summaries()
    page = source.page(summary.number)
    assert page is not None
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    data = b"".join(stream)
    root = validate_sitemap(data)
    assert root.nsmap == {
        None: "http://www.sitemaps.org/schemas/sitemap/0.9",
        "image": IMAGE_NAMESPACE,
    }
    urls = root.findall("sm:url", NS)
    assert [len(url.findall(f"{IMG}image")) for url in urls] == [2, 2, 2, 0]


def test_plain_sections_declare_no_extension_namespace(client: Client) -> None:
    ArticleFactory()
    data = content(client.get("/sitemap-article-1.xml"))
    assert b"sitemap-image" not in data and b"sitemap-video" not in data
    assert b"sitemap-news" not in data


def test_images_over_the_limit_and_bad_ones_are_skipped_and_counted(
    registry: SitemapRegistry,
) -> None:
    articles = _articles_with_images(2, 5)
    ArticleImage.objects.create(article=articles[1], url="javascript:alert(1)", position=0)
    ArticleImage.objects.create(article=articles[1], url="/bad\x07.jpg", position=0)
    source = registry.register(Article, source_class=ImageArticles)
    entries, skipped = _stream(source)
    assert len(entries) == 2  # no URL is dropped for its images
    assert [len(entry[4].images) for entry in entries] == [3, 3]
    # The bad ones come first (position 0): counted, and three good ones listed.
    assert skipped == {"over_image_limit": 2 + 2, "invalid_image": 2}


def test_image_filter_and_instances_path(registry: SitemapRegistry) -> None:
    articles = _articles_with_images(2, 2)

    class ByInstance(sitemapx.ModelSource):
        queryset = Article.objects.all()
        images = sitemapx.RelatedImages("images", loc="url", filter={"position": 1})

    source = registry.register(Article, source_class=ByInstance)
    entries, _ = _stream(source)
    assert [entry[4].images for entry in entries] == [
        (f"https://example.com/img/{article.pk}/1.jpg",) for article in articles
    ]


def test_related_declarations_are_checked_at_registration(registry: SitemapRegistry) -> None:
    with pytest.raises(SourceConfigurationError, match="no relation 'pictures'"):
        registry.register(Article, images=sitemapx.RelatedImages("pictures", loc="url"))
    with pytest.raises(SourceConfigurationError, match="has no field 'href'"):
        registry.register(Article, images=sitemapx.RelatedImages("images", loc="href"))
    with pytest.raises(SourceConfigurationError, match="not a reverse foreign key"):
        registry.register(Article, images=sitemapx.RelatedImages("category", loc="url"))
    with pytest.raises(SourceConfigurationError, match="only a ModelSource"):
        registry.register(
            "items",
            sitemapx.ItemSource,
            items=lambda: ["/"],
            images=sitemapx.RelatedImages("images", loc="url"),
        )
    with pytest.raises(SourceConfigurationError, match="RelatedVideos needs"):
        sitemapx.RelatedVideos("videos", thumbnail_loc="t", title="t", description="d")


def test_static_values_are_refused_at_the_boundary(registry: SitemapRegistry) -> None:
    with pytest.raises(SourceConfigurationError, match="images"):
        registry.register("a", sitemapx.StaticSource, url_names=["home"], images=["ftp://x/y"])
    with pytest.raises(SourceConfigurationError, match="one string"):
        registry.register("b", sitemapx.StaticSource, url_names=["home"], images="/a.png")
    bad_video = sitemapx.Video(thumbnail_loc="/t", title="t", description="d", player_loc="/p")
    with pytest.raises(SourceConfigurationError, match="duration"):
        registry.register(
            "c",
            sitemapx.StaticSource,
            url_names=["home"],
            videos=[sitemapx.Video(**{**bad_video.__dict__, "duration": 28_801})],
        )
    with pytest.raises(SourceConfigurationError, match="max_images"):
        registry.register("d", sitemapx.StaticSource, url_names=["home"], max_images=1001)
    with pytest.raises(SourceConfigurationError, match="news must be a method"):
        registry.register("e", sitemapx.StaticSource, url_names=["home"], news="x")
    with pytest.raises(SourceConfigurationError, match="cache_timeout"):
        registry.register("g", sitemapx.StaticSource, url_names=["home"], cache_timeout=0)
    registry.register("f", sitemapx.StaticSource, url_names=["home"], videos=[bad_video])


def test_a_bad_static_value_is_a_check_error(registry: SitemapRegistry) -> None:
    source = registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    source.images = ["not a url"]
    with pytest.raises(SystemCheckError) as info:
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
    assert re.search(r"django_sitemapx\.E101", str(info.value))
    assert "images" in str(info.value)


# -- per-item methods and item sources ------------------------------------------------


def test_item_source_methods_give_images_videos_and_news(registry: SitemapRegistry) -> None:
    now = datetime.datetime.now(datetime.UTC)

    class Media(sitemapx.ItemSource):
        news_publication = sitemapx.Publication("Daily", "en")
        max_videos = 2

        def items(self) -> list[Any]:
            return [
                {"location": "/a", "n": 1},
                {"location": "/b", "n": 2},
                {"location": "/old", "n": 3},
                {"location": "/bad", "n": 4},
            ]

        def images(self, item: Any) -> list[str]:
            return [f"/i/{item['n']}.png", "https://cdn.example.net/x.png"]

        def videos(self, item: Any) -> Any:
            good = {
                "thumbnail_loc": "/t.jpg",
                "title": f"Video {item['n']}",
                "description": "D & <d>",
                "player_loc": "/p",
                "rating": 4.5,
            }
            return [good, {**good, "rating": 9}, good, good]

        def news(self, item: Any) -> Any:
            if item["n"] == 3:
                return sitemapx.News(
                    title="Old", publication_date=now - datetime.timedelta(days=3)
                )
            if item["n"] == 4:
                return {"title": "", "publication_date": now}
            return sitemapx.News(title=f"News {item['n']}", publication_date=now)

    source = registry.register("media", Media)
    entries, skipped = _stream(source)
    assert [entry[0] for entry in entries] == ["https://example.com/a", "https://example.com/b"]
    assert skipped == {
        "old_news": 1,
        "invalid_news": 1,
        "invalid_video": 4,
        "over_video_limit": 4,
    }
    page = source.page(1)
    assert page is not None
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    root = validate_sitemap(b"".join(stream))
    assert set(root.nsmap) == {None, "image", "video", "news"}
    assert len(root.findall(f".//{VID}video")) == 4
    assert [e.text for e in root.findall(f".//{NEWS}title")] == ["News 1", "News 2"]


def test_a_model_source_row_reaches_per_item_methods(registry: SitemapRegistry) -> None:
    ArticleFactory(slug="x", title="Hello & <world>")

    class Rows(sitemapx.ModelSource):
        url_name = "article-detail"
        url_kwargs = {"category": "category__slug", "slug": "slug"}
        fields = ("title",)

        def images(self, row: Any) -> list[str]:
            return [f"/covers/{row.slug}.jpg"]

    source = registry.register(Article, source_class=Rows)
    entries, _ = _stream(source)
    assert entries[0][4].images == ("https://example.com/covers/x.jpg",)


# -- videos from the example ------------------------------------------------------------


def test_example_video_section_skips_and_counts_a_bad_row(client: Client) -> None:
    good, bad = ArticleFactory(), ArticleFactory()
    ArticleVideo.objects.create(
        article=good,
        title="Steaks & more",
        description="<Grilling>",
        thumbnail_url="/thumbs/1.jpg",
        content_url="https://cdn.example.net/1.mp4",
        duration=600,
    )
    ArticleVideo.objects.create(
        article=bad,
        title="Too long",
        description="d",
        thumbnail_url="/thumbs/2.jpg",
        content_url="/v/2.mp4",
        duration=30_000,  # over eight hours: the video is skipped, the URL stays
    )
    root = validate_sitemap(content(client.get("/sitemap-videos-1.xml")))
    assert len(locs(root)) == 2
    videos = root.findall(f".//{VID}video")
    assert len(videos) == 1
    assert videos[0].find(f"{VID}title").text == "Steaks & more"


def test_related_videos(registry: SitemapRegistry) -> None:
    article = ArticleFactory()
    ArticleVideo.objects.create(
        article=article,
        title="T",
        description="D",
        thumbnail_url="/t.jpg",
        content_url="/c.mp4",
        duration=None,
    )

    class WithVideos(sitemapx.ModelSource):
        url_name = "article-detail"
        url_kwargs = {"category": "category__slug", "slug": "slug"}
        videos = sitemapx.RelatedVideos(
            "video",
            thumbnail_loc="thumbnail_url",
            title="title",
            description="description",
            content_loc="content_url",
            duration="duration",
            family_friendly="family_friendly",
        )

    source = registry.register(Article, source_class=WithVideos)
    entries, skipped = _stream(source)
    assert not skipped
    (video,) = entries[0][4].videos
    assert video.content_loc == "https://example.com/c.mp4"
    assert video.duration is None and video.family_friendly == "yes"


# -- page sizing --------------------------------------------------------------------------


def test_pages_are_sized_so_the_largest_urls_fit(registry: SitemapRegistry) -> None:
    source = registry.register(Article, source_class=ImageArticles)
    # A model section's pages are sized by the URL limit; the byte limit is kept
    # as they are built (tests/sources/test_page_fill.py). A source paged by
    # slices is sized on the worst-case URL, the base rule:
    assert source.rows_per_page() == 49_000  # the URL limit less 2%
    rows = sitemapx.Source.rows_per_page(source)
    assert rows < 50_000
    # The extension elements are one part of the one per-URL bound pages are sized on.
    url_bytes = source.max_url_bytes()
    assert extension_url_bytes(source) > 0
    assert url_bytes == URL_VALUES_BYTES + source.max_location_bytes() + extension_url_bytes(
        source
    )
    assert rows * url_bytes <= PROTOCOL_MAX_BYTES - DOCUMENT_FRAME_BYTES
    assert (rows + 1) * url_bytes > PROTOCOL_MAX_BYTES - DOCUMENT_FRAME_BYTES
    plain = registry.register("plain", sitemapx.StaticSource, url_names=["home"])
    assert plain.rows_per_page() == 50_000


def test_a_page_of_the_largest_image_urls_drops_none(registry: SitemapRegistry) -> None:
    # Locations and image URIs at their longest, every character escaped at its
    # largest ("'" is six bytes): the page still holds every URL.
    # usable_location() measures a path on a longer host than example.com.
    long_tail = "'" * (2047 - len("https://sitemapx.invalid/"))

    class Worst(sitemapx.ItemSource):
        max_images = 40

        def items(self) -> list[str]:
            return [f"/{n:04d}{long_tail[5:]}" for n in range(120)]

        def images(self, item: str) -> list[str]:
            return ["/" + long_tail] * 40

    source = registry.register("worst", Worst)
    rows = source.rows_per_page()
    page = source.page(1)
    assert page is not None and page.summary.rows == rows
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    data = b"".join(stream)
    assert stream.stats.skipped == {}
    assert stream.stats.urls == rows
    assert len(data) <= PROTOCOL_MAX_BYTES
    assert etree.fromstring(data) is not None


# -- news sections ------------------------------------------------------------------------


def _news_articles(now: datetime.datetime, ages: list[datetime.timedelta]) -> list[Article]:
    category = CategoryFactory(slug="news")
    return [
        ArticleFactory(category=category, slug=f"n{n}", title=f"Story {n}", published_at=now - age)
        for n, age in enumerate(ages)
    ]


def _news_page(articles: list[Article]) -> str:
    """The path of the news page listing ``articles`` (read from the section's stored
    layout, which the first page_summaries() cuts)."""
    source = default_registry.get("news")
    assert isinstance(source, sitemapx.ModelSource)
    source.page_summaries()
    number = source.page_table().page_of(articles[0].pk)
    assert number is not None
    return f"/sitemap-news-{number}.xml"


def test_news_section_lists_the_last_two_days_only(client: Client) -> None:
    with time_machine.travel(
        datetime.datetime(2024, 5, 3, 10, 0, tzinfo=datetime.UTC), tick=False
    ):
        now = datetime.datetime.now(datetime.UTC)
        hours = datetime.timedelta(hours=1)
        news_page = _news_page(_news_articles(now, [hours, 47 * hours, 49 * hours]))
        root = validate_sitemap(content(client.get(news_page)))
        assert locs(root) == [
            "http://example.com/articles/news/n0/",
            "http://example.com/articles/news/n1/",
        ]
        assert root.find(f".//{NEWS}name").text == "Sitemapx Demo Times"
        assert root.find(f".//{NEWS}language").text == "en"
        assert root.find(f".//{NEWS}publication_date").text == "2024-05-03T09:00:00+00:00"
        assert root.nsmap["news"] == NEWS_NAMESPACE
        assert "image" not in root.nsmap


def test_news_pages_hold_at_most_a_thousand() -> None:
    source = default_registry.get("news")
    assert source.rows_per_page() <= 1000
    assert source.get_limit() <= 1000


def test_a_cached_news_page_never_lists_an_item_past_two_days(client: Client) -> None:
    start = datetime.datetime(2024, 5, 3, 10, 0, tzinfo=datetime.UTC)
    hours = datetime.timedelta(hours=1)
    with time_machine.travel(start, tick=False) as clock:
        # Published 47 hours ago: listed at 10:00, two days old at 11:00.
        news_page = _news_page(_news_articles(start, [47 * hours, 2 * hours]))
        first = locs(validate_sitemap(content(client.get(news_page))))
        assert len(first) == 2
        # Served from the cache a minute later: the same document.
        clock.shift(datetime.timedelta(minutes=1))
        again = client.get(news_page)
        assert locs(validate_sitemap(content(again))) == first
        # Just past 11:00 the first item is over two days old: the cached copy expired.
        clock.move_to(start + hours + datetime.timedelta(seconds=1))
        later = locs(validate_sitemap(content(client.get(news_page))))
        assert later == ["http://example.com/articles/news/n1/"]
        # The next day at 10:00: the second is 26 hours old, still listed.
        clock.move_to(start + 24 * hours)
        assert locs(validate_sitemap(content(client.get(news_page)))) == later
        # Once it is over two days old, the page has no URL left.
        clock.move_to(start + 46 * hours + datetime.timedelta(seconds=1))
        assert client.get(news_page).status_code == 404


def test_a_news_page_expires_within_its_cache_timeout(client: Client) -> None:
    start = datetime.datetime(2024, 5, 3, 10, 0, tzinfo=datetime.UTC)
    with time_machine.travel(start, tick=False) as clock:
        (article,) = _news_articles(start, [datetime.timedelta(minutes=1)])
        news_page = _news_page([article])
        assert len(locs(validate_sitemap(content(client.get(news_page))))) == 1
        # A new article, saved without the signal (bulk): shown once the page expires.
        Article.objects.bulk_create(
            [
                Article(
                    category=article.category,
                    slug="fresh",
                    title="Fresh",
                    updated_at=start,
                    published_at=start,
                    is_published=True,
                )
            ]
        )
        clock.shift(datetime.timedelta(seconds=299))
        assert len(locs(validate_sitemap(content(client.get(news_page))))) == 1
        clock.shift(datetime.timedelta(seconds=2))
        assert len(locs(validate_sitemap(content(client.get(news_page))))) == 2


def test_the_index_expires_with_the_news_section(client: Client) -> None:
    start = datetime.datetime(2024, 5, 3, 10, 0, tzinfo=datetime.UTC)
    with time_machine.travel(start, tick=False) as clock:
        news_page = _news_page(_news_articles(start, [datetime.timedelta(hours=47)]))
        index = locs(validate_sitemap(content(client.get("/sitemap.xml"))))
        assert f"http://example.com{news_page}" in index
        clock.move_to(start + datetime.timedelta(hours=1, seconds=1))
        index = locs(validate_sitemap(content(client.get("/sitemap.xml"))))
        assert not any("sitemap-news-" in loc for loc in index)


def test_news_source_needs_its_fields(registry: SitemapRegistry) -> None:
    with pytest.raises(SourceConfigurationError, match="publication_date_field"):
        registry.register(Article, source_class=sitemapx.NewsSource)
    with pytest.raises(SourceConfigurationError, match="news_publication"):
        registry.register(
            Article,
            source_class=sitemapx.NewsSource,
            publication_date_field="published_at",
            title_field="title",
        )


def test_without_a_cap_a_news_page_expires_when_its_oldest_item_ages_out(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(default_registry.get("news"), "cache_timeout", None)
    start = datetime.datetime(2024, 5, 3, 10, 0, tzinfo=datetime.UTC)
    hours = datetime.timedelta(hours=1)
    with time_machine.travel(start, tick=False) as clock:
        (old,) = _news_articles(start, [47 * hours])
        news_page = _news_page([old])
        first = locs(validate_sitemap(content(client.get(news_page))))
        assert first == ["http://example.com/articles/news/n0/"]
        # A bulk insert sends no signal: the cached page stays as built...
        Article.objects.bulk_create(
            [
                Article(
                    category=old.category,
                    slug="fresh",
                    title="Fresh",
                    updated_at=start,
                    published_at=start,
                    is_published=True,
                )
            ]
        )
        clock.move_to(start + 59 * datetime.timedelta(minutes=1))
        assert locs(validate_sitemap(content(client.get(news_page)))) == first
        # ...until its oldest item turns two days old: then it is built again.
        clock.move_to(start + hours + datetime.timedelta(seconds=1))
        assert locs(validate_sitemap(content(client.get(news_page)))) == [
            "http://example.com/articles/news/fresh/"
        ]


# -- with i18n ----------------------------------------------------------------------------


@override_settings(LANGUAGES=[("de", "Deutsch"), ("en", "English")], LANGUAGE_CODE="en")
def test_every_language_version_carries_its_items_images(registry: SitemapRegistry) -> None:
    articles = _articles_with_images(2, 2)

    class Multilingual(ImageArticles):
        i18n = True
        alternates = True

    source = registry.register(Article, source_class=Multilingual)
    # Two languages with their alternates and the images: all in the one per-URL bound.
    assert source.max_url_bytes() > source.max_extension_bytes() + source.max_alternates_bytes()
    page = source.page(1)
    assert page is not None
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    root = validate_sitemap(b"".join(stream))
    assert stream.stats.skipped == {}
    assert set(root.nsmap.values()) >= {IMAGE_NAMESPACE, "http://www.w3.org/1999/xhtml"}
    urls = root.findall("sm:url", NS)
    assert len(urls) == 2 * len(articles)
    for url in urls:
        links = url.findall("{http://www.w3.org/1999/xhtml}link")
        assert {link.get("hreflang") for link in links} == {"de", "en"}
        images = [loc.text for loc in url.iter(f"{IMG}loc")]
        assert len(images) == 2 and all("/img/" in image for image in images)
    # Both versions of an article list the same images.
    by_article: dict[str, set[tuple[str, ...]]] = {}
    for url in urls:
        slug = url.findtext("sm:loc", namespaces=NS).rstrip("/").rsplit("/", 1)[1]
        by_article.setdefault(slug, set()).add(tuple(loc.text for loc in url.iter(f"{IMG}loc")))
    assert all(len(found) == 1 for found in by_article.values())


@override_settings(LANGUAGES=[("de", "Deutsch"), ("en", "English")], LANGUAGE_CODE="en")
def test_an_item_source_in_every_language_with_its_images(registry: SitemapRegistry) -> None:
    class Pages(sitemapx.StaticSource):
        url_names = ["home", "about"]
        i18n = True

        def images(self, item: str) -> list[str]:
            return [f"/img/{item}.jpg"]

    source = registry.register("pages-with-images", Pages)
    page = source.page(1)
    assert page is not None
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    root = validate_sitemap(b"".join(stream))
    found = [[loc.text for loc in url.iter(f"{IMG}loc")] for url in root.findall("sm:url", NS)]
    assert len(found) == 4
    assert sorted(image for images in found for image in images) == [
        "https://example.com/img/about.jpg",
        "https://example.com/img/about.jpg",
        "https://example.com/img/home.jpg",
        "https://example.com/img/home.jpg",
    ]
