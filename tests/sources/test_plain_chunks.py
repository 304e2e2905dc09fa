"""A model page written from its rows' columns is the document the entries give, byte for byte.

``render_page`` asks a ``ModelSource`` page for ``PlainChunk``s; a page wrapped
in another ``entries`` callable is read the general way, entry by entry. Both
must give the same bytes and the same skips whatever the rows hold.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import pytest
from django.db import connection
from django.test import override_settings

from django_sitemapx import conf, writer
from django_sitemapx.documents import render_page
from django_sitemapx.entries import PlainChunk
from django_sitemapx.locations import LocationBuilder, Origin
from django_sitemapx.models import Override
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ModelSource, Page
from django_sitemapx.sources.lastmods import formats_lastmod_in_sql
from example_project.articles.models import Article
from tests.conftest import locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory, DocumentFactory
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db
ORIGIN = Origin("https", "example.com")
WHEN = datetime.datetime(2024, 5, 1, 8, tzinfo=datetime.UTC)


def _articles(registry: SitemapRegistry, **options: Any) -> ModelSource:
    values = {"lastmod_field": "updated_at", "changefreq": "weekly", "priority": 0.6, **options}
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        **values,
    )
    assert isinstance(source, ModelSource)
    return source


def _lastmod_in_sql(field: str | None) -> bool:
    """Whether a page's lastmods come as SQL text (or fixed): only then is a chunk columns.

    MariaDB and MySQL, and SQLite without ``USE_TZ``, give datetimes that Python formats.
    """
    if field is None:
        return True
    return formats_lastmod_in_sql(Article._meta.get_field(field), connection.alias)  # type: ignore[arg-type]


def _render(source: ModelSource, page: Page) -> tuple[bytes, dict[str, int]]:
    stream = render_page(source, page, ORIGIN)
    if stream is None:
        return b"", {}
    body = b"".join(stream)
    return body, dict(stream.stats.skipped)


def _both_ways(source: ModelSource) -> tuple[bytes, dict[str, int]]:
    """The page as columns and as entries: asserted the same, then returned."""
    page = source.page(1)
    assert page is not None
    general = Page(page.summary, lambda builder: page.entries(builder))
    plain = _render(source, page)
    assert plain == _render(source, general)
    return plain


class _Spy:
    """Counts the calls of the writer's two ways of writing a chunk."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = {"url_elements": 0, "plain_url_elements": 0}
        for name in self.calls:
            monkeypatch.setattr(writer, name, self._counting(name, getattr(writer, name)))

    def _counting(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return function(*args, **kwargs)

        return counted


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Spy]:
    with override_settings(SITEMAPX_OVERRIDES=True):
        yield _Spy(monkeypatch)


def test_a_plain_page_is_written_from_columns_only(registry: SitemapRegistry, spy: _Spy) -> None:
    category = CategoryFactory(slug="news")
    for number in range(5):
        ArticleFactory(category=category, slug=f"story-{number}", updated_at=WHEN)
    source = _articles(registry)
    page = source.page(1)
    assert page is not None
    body, skipped = _render(source, page)
    columns = int(_lastmod_in_sql("updated_at"))
    assert spy.calls == {"url_elements": 1 - columns, "plain_url_elements": columns}
    assert skipped == {}
    assert len(locs(validate_sitemap(body))) == 5
    assert body.count(b"<lastmod>2024-05-01T08:00:00+00:00</lastmod>") == 5


@pytest.mark.parametrize("chunk_size", [1, 2, 1000])
@pytest.mark.parametrize(
    "slugs",
    [
        ["one", "two", "three"],
        ["one", "a&b", "it's", "two"],  # escaped in <loc>
        ["one", "bad\x02slug", "two", "tab\there"],  # control characters
        ["caf\u00e9", "one", "50%"],  # percent-encoded
    ],
)
def test_columns_and_entries_give_the_same_bytes_and_skips(
    registry: SitemapRegistry, chunk_size: int, slugs: list[str]
) -> None:
    category = CategoryFactory(slug="news")
    for slug in slugs:
        ArticleFactory(category=category, slug=slug, updated_at=WHEN)
    with mock.patch.object(conf, "CHUNK_SIZE", chunk_size):
        body, skipped = _both_ways(_articles(registry))
    validate_sitemap(body)
    assert len(locs(validate_sitemap(body))) + sum(skipped.values()) == len(slugs)


def test_a_chunk_needing_escapes_is_written_from_entries(
    registry: SitemapRegistry, spy: _Spy
) -> None:
    category = CategoryFactory(slug="news")
    ArticleFactory(category=category, slug="a&b", updated_at=WHEN)
    body, _skipped = _both_ways(_articles(registry))
    assert b"/articles/news/a&amp;b/" in body
    assert spy.calls["plain_url_elements"] == 0


@override_settings(ROOT_URLCONF="tests.urls_row_locations")
@pytest.mark.parametrize("chunk_size", [1, 1000])
def test_a_location_over_the_limit_is_skipped_alike(
    registry: SitemapRegistry, spy: _Spy, chunk_size: int
) -> None:
    for word in ("one", "w" * 2100, "a&b", "two"):
        DocumentFactory(path=word)
    source = registry.register(Document, url_name="by-word", url_kwargs={"word": "path"})
    assert isinstance(source, ModelSource)
    with mock.patch.object(conf, "CHUNK_SIZE", chunk_size):
        body, skipped = _both_ways(source)
    assert skipped == {"too_long": 1}
    assert locs(validate_sitemap(body)) == [
        "https://example.com/word/one/",
        "https://example.com/word/a&b/",
        "https://example.com/word/two/",
    ]
    # Chunk by chunk, "one" and "two" alone are written from columns.
    assert spy.calls["plain_url_elements"] == (2 if chunk_size == 1 else 0)


def test_a_url_whose_values_together_may_be_too_long_is_measured(
    registry: SitemapRegistry,
) -> None:
    if connection.vendor != "sqlite":
        pytest.skip("only SQLite keeps a slug longer than its field's max_length")
    # Each location is within the limit; the longest category slug and the
    # longest article slug together are not.
    long_category = CategoryFactory(slug="c" * 1000)
    ArticleFactory(category=long_category, slug="short", updated_at=WHEN)
    ArticleFactory(category=CategoryFactory(slug="news"), slug="s" * 1100, updated_at=WHEN)
    body, skipped = _both_ways(_articles(registry))
    assert skipped == {}
    assert len(locs(validate_sitemap(body))) == 2


def test_a_page_with_an_override_is_written_from_entries(
    registry: SitemapRegistry, spy: _Spy
) -> None:
    category = CategoryFactory(slug="news")
    for slug in ("one", "two", "three"):
        ArticleFactory(category=category, slug=slug, updated_at=WHEN)
    Override.objects.create(location="/articles/news/two/", changefreq="never")
    Override.objects.create(location="/articles/news/three/", exclude=True)
    body, skipped = _both_ways(_articles(registry))
    assert spy.calls["plain_url_elements"] == 0
    assert locs(validate_sitemap(body)) == [
        "https://example.com/articles/news/one/",
        "https://example.com/articles/news/two/",
    ]
    assert b"<changefreq>never</changefreq>" in body
    assert skipped == {}


@pytest.mark.parametrize(
    "options",
    [
        {"lastmod_field": None, "lastmod": WHEN, "changefreq": None, "priority": None},
        {"lastmod_field": None, "lastmod": None, "priority": 1},
        {"changefreq": None},
    ],
)
def test_fixed_and_missing_values_are_written_alike(
    registry: SitemapRegistry, spy: _Spy, options: dict[str, Any]
) -> None:
    category = CategoryFactory(slug="news")
    for slug in ("one", "two"):
        ArticleFactory(category=category, slug=slug, updated_at=WHEN)
    _both_ways(_articles(registry, **options))
    field = options.get("lastmod_field", "updated_at")
    assert spy.calls["plain_url_elements"] == int(_lastmod_in_sql(field))


@pytest.mark.parametrize("chunk_size", [1, 1000])
def test_null_lastmods_from_sql_are_left_out_alike(
    registry: SitemapRegistry, spy: _Spy, chunk_size: int
) -> None:
    category = CategoryFactory(slug="news")
    ArticleFactory(category=category, slug="one", published_at=WHEN)
    ArticleFactory(category=category, slug="two", published_at=None)
    with mock.patch.object(conf, "CHUNK_SIZE", chunk_size):
        body, skipped = _both_ways(_articles(registry, lastmod_field="published_at"))
    assert skipped == {}
    assert len(locs(validate_sitemap(body))) == 2
    assert body.count(b"<lastmod>") == 1
    # Only a chunk without a NULL lastmod is written from columns.
    expected = 1 if chunk_size == 1 and _lastmod_in_sql("published_at") else 0
    assert spy.calls["plain_url_elements"] == expected


@override_settings(ROOT_URLCONF="tests.urls_row_locations")
def test_integer_urls(registry: SitemapRegistry, spy: _Spy) -> None:
    for _ in range(3):
        DocumentFactory()
    source = registry.register(Document, url_name="by-int", url_kwargs={"number": "id"})
    assert isinstance(source, ModelSource)
    body, skipped = _both_ways(source)
    assert skipped == {}
    assert len(locs(validate_sitemap(body))) == 3
    assert spy.calls["plain_url_elements"] == 1


def test_whoever_reads_entries_gets_lists(registry: SitemapRegistry) -> None:
    category = CategoryFactory(slug="news")
    ArticleFactory(category=category, slug="one", updated_at=WHEN)
    page = _articles(registry).page(1)
    assert page is not None
    chunks = list(page.entries(LocationBuilder(ORIGIN)))
    assert chunks == [
        [
            (
                "https://example.com/articles/news/one/",
                "2024-05-01T08:00:00+00:00",
                "weekly",
                "0.6",
                None,
            )
        ]
    ]
    assert not any(isinstance(chunk, PlainChunk) for chunk in chunks)


def test_a_plain_chunk_comes_vouched_legal_once_its_lastmods_are_proven_w3c_text(
    registry: SitemapRegistry, spy: _Spy, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not _lastmod_in_sql("updated_at"):
        pytest.skip("these lastmods are formatted in Python: no chunk is columns")
    category = CategoryFactory(slug="news")
    for number in range(3):
        ArticleFactory(category=category, slug=f"story-{number}", updated_at=WHEN)
    source = _articles(registry)
    chunks: list[PlainChunk] = []
    render_entries = writer.DocumentWriter.render_entries

    def keep(self: writer.DocumentWriter, entries: Any) -> bytes:
        if isinstance(entries, PlainChunk):
            chunks.append(entries)
        return render_entries(self, entries)

    monkeypatch.setattr(writer.DocumentWriter, "render_entries", keep)
    columns, _ = _both_ways(source)
    assert chunks and all(chunk.legal for chunk in chunks)
    # A lastmod holding anything but the database's W3C text (here: no "T"
    # allowed) is not vouched for: its chunk is written from entries, the same bytes.
    monkeypatch.setattr("django_sitemapx.sources.rows._W3C_CHARACTERS", b"0123456789-:+")
    spy.calls.update(url_elements=0, plain_url_elements=0)
    entries, _ = _both_ways(source)
    assert entries == columns
    assert spy.calls["plain_url_elements"] == 0
