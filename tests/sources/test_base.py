"""The source contract, as a custom source implements it: summaries, pages, entries, skips."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client, override_settings

import django_sitemapx as sitemapx
from django_sitemapx import (
    Entry,
    EntryStream,
    LocationBuilder,
    Origin,
    Page,
    PageSummary,
    Skip,
    Skipped,
    SkipReason,
    SourceConfigurationError,
)
from django_sitemapx.documents import render_page
from django_sitemapx.registry import SitemapRegistry
from tests.conftest import content, locs, validate_sitemap

pytestmark = pytest.mark.django_db


@pytest.fixture
def client() -> Client:
    return Client(HTTP_HOST="example.com")


class Reporting(sitemapx.Source):
    """One page of four locations, two of which it leaves out and reports as ``Skipped``."""

    builders: list[tuple[object, ...]] = []
    summary = PageSummary(1, 4, "2024-01-02")

    def page_summaries(self) -> list[PageSummary]:
        return [self.summary]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        return Page(self.summary, self._entries) if number == 1 else None

    def _entries(self, *args: object) -> EntryStream:
        type(self).builders.append(args)
        [builder] = args
        assert isinstance(builder, LocationBuilder)
        yield [Entry(builder.absolute("/a/"), "2024-01-01")]
        for location in ("https://elsewhere.example/x", "/tab\there/"):
            try:
                builder.absolute(location)
            except Skip as skip:
                yield Skipped(skip.reason)
        yield Skipped(SkipReason.INVALID_PRIORITY, 2)  # the entries stay, without it
        yield [Entry(builder.absolute("/b/"), "2024-01-02")]


def test_a_custom_source_reports_skips_with_skipped_records(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    Reporting.builders = []
    registry.register("custom", Reporting)
    root = validate_sitemap(content(client.get("/sitemap-custom-1.xml")))
    assert locs(root) == ["http://example.com/a/", "http://example.com/b/"]
    # The source was handed a LocationBuilder and nothing else: no WriteStats to
    # count its skips in. The page's log record counts them all the same.
    [(builder,)] = Reporting.builders
    assert isinstance(builder, LocationBuilder)
    assert builder.origin == Origin("http", "example.com")
    [record] = [r for r in caplog.records if r.name == "django_sitemapx"]
    assert record.skipped == {  # type: ignore[attr-defined]
        "other_host": 1,
        "control_characters": 1,
        "invalid_priority": 2,
    }
    assert (record.section, record.page) == ("custom", 1)  # type: ignore[attr-defined]
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    assert locs(index) == ["http://example.com/sitemap-custom-1.xml"]
    assert index[0][1].text == "2024-01-02"
    assert client.get("/sitemap-custom-2.xml").status_code == 404


def test_skips_of_a_page_with_no_url_left_are_logged_and_it_answers_404(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    class AllSkipped(Reporting):
        def _entries(self, *args: object) -> EntryStream:
            yield Skipped(SkipReason.TOO_LONG, 3)

    registry.register("empty", AllSkipped)
    assert client.get("/sitemap-empty-1.xml").status_code == 404
    [record] = [r for r in caplog.records if r.name == "django_sitemapx"]
    assert record.skipped == {"too_long": 3}  # type: ignore[attr-defined]


class _Suspended(sitemapx.Source):
    closed = False

    def page_summaries(self) -> list[PageSummary]:
        return [PageSummary(1, 1, None)]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        return Page(PageSummary(1, 1, None), self._entries) if number == 1 else None

    def _entries(self, builder: LocationBuilder) -> Iterator[list[Entry]]:
        try:
            while True:
                yield [Entry("https://example.com/a")]
        finally:
            type(self).closed = True


@pytest.mark.parametrize("fail_on_chunk", [1, 2])
def test_a_failing_page_closes_the_source_at_once(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch, fail_on_chunk: int
) -> None:
    # Left to the garbage collector, a suspended source (an open server-side
    # cursor) can be finalised in the middle of a later query and deadlock.
    source = registry.register("suspended", _Suspended)
    calls = []

    def failing(chunk: list[object]) -> list[object]:
        calls.append(chunk)
        if len(calls) == fail_on_chunk:
            raise RuntimeError("override lookup failed")
        return chunk

    monkeypatch.setattr("django_sitemapx.overrides._Lookup.apply", lambda self, c: failing(c))
    _Suspended.closed = False
    page = source.page(1)
    assert page is not None
    try:
        stream = render_page(source, page, Origin("https", "example.com"))
        assert stream is not None
        for _ in stream:
            pass
    except RuntimeError:
        # Closed already, while the traceback still holds every frame.
        assert _Suspended.closed
    else:
        pytest.fail("the page did not fail")


# -- what every source shares --------------------------------------------------------


def test_the_base_class_leaves_pages_to_subclasses() -> None:
    source = sitemapx.Source("bare")
    with pytest.raises(NotImplementedError):
        source.page_summaries()
    with pytest.raises(NotImplementedError):
        source.page(1)
    assert source.check() == []
    assert repr(source) == "<Source section='bare'>"


def test_options_set_attributes_and_unknown_ones_are_refused() -> None:
    source = sitemapx.Source("s", limit=10, protocol="https", priority=0.5)
    assert (source.limit, source.protocol, source.priority) == (10, "https", 0.5)
    assert sitemapx.Source.limit is None  # the class is untouched
    with pytest.raises(TypeError, match="no option 'limt'"):
        sitemapx.Source("s", limt=10)
    with pytest.raises(TypeError, match="no option '_private'"):
        sitemapx.Source("s", _private=1)


def test_for_origin_binds_a_copy_in_the_sections_scheme() -> None:
    origin = sitemapx.Origin("https", "example.com:8000", site_id=3)
    plain = sitemapx.Source("s")
    bound = plain.for_origin(origin)
    assert bound is not plain and plain.origin is None
    assert bound.origin is origin
    http = sitemapx.Source("s", protocol="http").for_origin(origin).origin
    assert http is not None
    assert (http.scheme, http.host, http.site_id) == ("http", "example.com:8000", 3)
    with override_settings(SITEMAPX_PROTOCOL="http"):
        assert sitemapx.Source("s").for_origin(origin).origin == sitemapx.Origin(
            "http", "example.com:8000"
        )


def test_get_limit_is_the_source_limit_else_the_setting() -> None:
    assert sitemapx.Source("s").get_limit() == 50_000
    with override_settings(SITEMAPX_LIMIT=10):
        assert sitemapx.Source("s").get_limit() == 10
        assert sitemapx.Source("s", limit=3).get_limit() == 3
    # Google's news sitemaps list at most 1,000 URLs, whatever declares the news.
    assert sitemapx.Source("s", news=lambda item: None).get_limit() == 1000
    assert sitemapx.Source("s", news=lambda item: None, limit=3).get_limit() == 3


@override_settings(LANGUAGES=[("en", "English"), ("de", "Deutsch"), ("fr", "Français")])
def test_url_count_is_a_url_per_row_and_language() -> None:
    summary = PageSummary(1, 3, None)
    assert sitemapx.Source("s").url_count(summary) == 3
    assert sitemapx.Source("s", i18n=True).url_count(summary) == 9
    assert sitemapx.Source("s", i18n=True, languages=["en", "de"]).url_count(summary) == 6


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"limit": 0}, "limit must be an integer from 1 to 50000"),
        ({"limit": 50_001}, "limit must be an integer"),
        ({"limit": True}, "limit must be an integer"),
        ({"limit": 2.0}, "limit must be an integer"),
        ({"protocol": "ftp"}, "protocol must be 'http', 'https' or None"),
        ({"priority": 2}, "Source.priority: priority 2 is outside"),
        ({"changefreq": "often"}, "Source.changefreq: changefreq 'often'"),
        ({"lastmod": "yesterday"}, "Source.lastmod: lastmod 'yesterday'"),
    ],
)
def test_validate_refuses_values_the_protocol_refuses(
    options: dict[str, object], message: str
) -> None:
    source = sitemapx.Source("s", **options)
    with pytest.raises(SourceConfigurationError, match=message):
        source.validate()


def test_validate_accepts_valid_values_and_leaves_methods_alone() -> None:
    sitemapx.Source("s", limit=50_000, protocol="http", priority="0.5").validate()

    class PerItem(sitemapx.Source):
        def priority(self, item: object) -> float:
            return 7  # invalid per item: dropped when written, not at validation

    PerItem("s").validate()


def test_with_setting_limit_zero_validate_still_passes() -> None:
    # SITEMAPX_LIMIT is the checks' business (E001), not the source's.
    with override_settings(SITEMAPX_LIMIT=0):
        sitemapx.Source("s").validate()


class Multilingual(sitemapx.Source):
    """One page of two URLs, each listing its language versions as alternates."""

    def page_summaries(self) -> list[PageSummary]:
        return [PageSummary(1, 2, None)]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        return Page(PageSummary(1, 2, None), self._entries) if number == 1 else None

    def _entries(self, builder: LocationBuilder) -> EntryStream:
        alternates = tuple(
            sitemapx.Alternate(language, builder.absolute(f"/{language}/"))
            for language in ("en", "fr")
        )
        extras = sitemapx.Extras(alternates)
        yield [
            Entry(builder.absolute(f"/{language}/"), extras=extras) for language in ("en", "fr")
        ]


@pytest.mark.parametrize("declared", [False, True])
def test_alternates_are_valid_whether_or_not_the_source_declares_xhtml(
    registry: SitemapRegistry, client: Client, declared: bool
) -> None:
    from django_sitemapx.writer import XHTML_NAMESPACE

    namespaces = {"xhtml": XHTML_NAMESPACE} if declared else {}
    registry.register("languages", Multilingual, namespaces=namespaces)
    data = content(client.get("/sitemap-languages-1.xml"))
    root = validate_sitemap(data)
    links = root.findall(".//{http://www.w3.org/1999/xhtml}link")
    assert [link.get("hreflang") for link in links] == ["en", "fr", "en", "fr"]
    # Declared once on the root when the source says so, else on each link.
    assert data.count(XHTML_NAMESPACE.encode()) == (1 if declared else 4)
