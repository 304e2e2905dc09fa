"""The writer: escaping, values, limits, and golden output."""

import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from django_sitemapx.exceptions import InvalidValue
from django_sitemapx.writer import (
    CHANGEFREQS,
    escape,
    format_lastmod,
    format_priority,
    has_illegal_xml_chars,
    index_writer,
    sitemap_element,
    url_element,
    urlset_writer,
    validate_changefreq,
)
from tests.conftest import validate_sitemap

PARIS = ZoneInfo("Europe/Paris")


def test_escape_all_five_entities() -> None:
    assert escape("""a&b<c>d'e"f""") == "a&amp;b&lt;c&gt;d&apos;e&quot;f"


@pytest.mark.parametrize("char", ["\x00", "\x01", "\x08", "\x0b", "\x1f", "\ufffe", "\ud800"])
def test_escape_refuses_xml_illegal_characters(char: str) -> None:
    assert has_illegal_xml_chars(f"a{char}b")
    with pytest.raises(InvalidValue, match=r"XML 1\.0 forbids"):
        escape(f"a{char}b")


def test_tab_newline_and_non_ascii_are_legal() -> None:
    assert not has_illegal_xml_chars("a\tb\nc\rd é ☃ \U0001f600")


@pytest.mark.parametrize("text", ["plain ascii", "with é"])
def test_every_c0_control_but_tab_newline_and_return_is_illegal(text: str) -> None:
    for code in range(0x20):
        assert has_illegal_xml_chars(f"{text}{chr(code)}") is (code not in (0x09, 0x0A, 0x0D))
    assert not has_illegal_xml_chars(f"{text}\x7f")


def test_lastmod_date() -> None:
    assert format_lastmod(datetime.date(2024, 5, 1), PARIS) == "2024-05-01"


def test_lastmod_aware_datetime_keeps_its_offset_and_drops_microseconds() -> None:
    value = datetime.datetime(2024, 5, 1, 10, 0, 5, 999, tzinfo=datetime.UTC)
    assert format_lastmod(value, PARIS) == "2024-05-01T10:00:05+00:00"


def test_lastmod_naive_datetime_takes_the_project_time_zone() -> None:
    assert format_lastmod(datetime.datetime(2024, 7, 1, 12), PARIS) == "2024-07-01T12:00:00+02:00"
    assert format_lastmod(datetime.datetime(2024, 1, 1, 12), PARIS) == "2024-01-01T12:00:00+01:00"


def test_lastmod_rejects_other_types() -> None:
    with pytest.raises(InvalidValue):
        format_lastmod("2024-01-01", PARIS)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0.0"), (1, "1.0"), (0.5, "0.5"), ("0.85", "0.85"), (Decimal("0.1"), "0.1")],
)
def test_priority_formats(value: object, text: str) -> None:
    assert format_priority(value) == text  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [7, -0.1, 1.01, "high", float("nan"), float("inf"), None])
def test_priority_out_of_range_is_refused(value: object) -> None:
    with pytest.raises(InvalidValue):
        format_priority(value)  # type: ignore[arg-type]


def test_changefreq_values() -> None:
    assert len(CHANGEFREQS) == 7
    for value in CHANGEFREQS:
        assert validate_changefreq(value) == value
    with pytest.raises(InvalidValue, match="sometimes"):
        validate_changefreq("sometimes")


def test_golden_urlset() -> None:
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    data = writer.render(
        [
            url_element("https://example.com/a?x=1&y='2'", "2024-05-01", "daily", "0.5"),
            url_element("https://example.com/b", None, None, None),
        ]
    )
    data += writer.close()
    assert data == (
        b'<?xml version="1.0" encoding="UTF-8"?>\n'
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        b"<url><loc>https://example.com/a?x=1&amp;y=&apos;2&apos;</loc>"
        b"<lastmod>2024-05-01</lastmod><changefreq>daily</changefreq>"
        b"<priority>0.5</priority></url>\n"
        b"<url><loc>https://example.com/b</loc></url>\n"
        b"</urlset>\n"
    )
    validate_sitemap(data)
    assert writer.stats.urls == 2
    assert writer.stats.bytes == len(data)


def test_golden_index() -> None:
    writer = index_writer(max_urls=10, max_bytes=10_000)
    data = writer.render(
        [
            sitemap_element("https://example.com/sitemap-a-1.xml", "2024-05-01T00:00:00+00:00"),
            sitemap_element("https://example.com/sitemap-b-1.xml", None),
        ]
    )
    data += writer.close()
    root = validate_sitemap(data)
    assert root.tag.endswith("sitemapindex")
    assert data.endswith(b"</sitemapindex>\n")


def test_writer_stops_at_the_url_limit_and_counts_the_rest() -> None:
    writer = urlset_writer(max_urls=3, max_bytes=10_000)
    first = writer.render([url_element(f"https://e.com/{i}", None, None, None) for i in range(2)])
    second = writer.render(
        [url_element(f"https://e.com/x{i}", None, None, None) for i in range(5)]
    )
    data = first + second + writer.close()
    root = validate_sitemap(data)
    assert len(root) == 3
    assert writer.stats.skipped == {"over_url_limit": 4}


def test_writer_keeps_under_the_byte_limit() -> None:
    element = url_element("https://e.com/" + "a" * 80, None, None, None)
    writer = urlset_writer(max_urls=1000, max_bytes=1_000)
    data = writer.render([element] * 20) + writer.render([element]) + writer.close()
    assert len(data) <= 1_000
    root = validate_sitemap(data)
    kept = len(root)
    assert 0 < kept < 20
    assert writer.stats.skipped["over_size_limit"] == 21 - kept
    assert writer.stats.bytes == len(data)


def test_writer_with_nothing_written_produces_nothing() -> None:
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    assert writer.render([]) == b""
    assert writer.close() == b""


def test_output_is_deterministic() -> None:
    def build() -> bytes:
        writer = urlset_writer(max_urls=10, max_bytes=10_000)
        body = writer.render([url_element("https://e.com/é", "2024-01-01", None, "0.3")])
        return body + writer.close()

    assert build() == build()


def test_elements_with_illegal_characters_from_custom_sources_are_dropped() -> None:
    writer = urlset_writer(max_urls=10, max_bytes=10_000)
    data = writer.render(
        [
            url_element("https://e.com/ok", None, None, None),
            url_element("https://e.com/bad", "2024-01-01\x00", None, None),
        ]
    )
    data += writer.close()
    assert len(validate_sitemap(data)) == 1
    assert writer.stats.skipped == {"illegal_characters": 1}
