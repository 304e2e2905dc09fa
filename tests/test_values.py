"""The protocol's values: lastmod, changefreq and priority, parsed, validated and formatted."""

import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.test import override_settings

from django_sitemapx import values
from django_sitemapx.exceptions import InvalidValue
from django_sitemapx.values import (
    CHANGEFREQS,
    format_lastmod,
    format_priority,
    is_later,
    lastmod_text,
    lastmod_timestamp,
    latest_lastmod,
    parse_lastmod,
    validate_changefreq,
)

PARIS = ZoneInfo("Europe/Paris")  # the tests' TIME_ZONE
UTC = datetime.UTC

# -- format_lastmod ---------------------------------------------------------------


def test_lastmod_date() -> None:
    assert format_lastmod(datetime.date(2024, 5, 1), PARIS) == "2024-05-01"


def test_lastmod_aware_datetime_keeps_its_offset_and_drops_microseconds() -> None:
    value = datetime.datetime(2024, 5, 1, 10, 0, 5, 999, tzinfo=UTC)
    assert format_lastmod(value, PARIS) == "2024-05-01T10:00:05+00:00"


def test_lastmod_naive_datetime_takes_the_given_time_zone() -> None:
    assert format_lastmod(datetime.datetime(2024, 7, 1, 12), PARIS) == "2024-07-01T12:00:00+02:00"
    assert format_lastmod(datetime.datetime(2024, 1, 1, 12), PARIS) == "2024-01-01T12:00:00+01:00"


# -- lastmod_text -------------------------------------------------------------------


def test_lastmod_text_formats_dates_and_datetimes_in_the_project_time_zone() -> None:
    assert lastmod_text(None) is None
    assert lastmod_text(datetime.date(2024, 5, 1)) == "2024-05-01"
    assert lastmod_text(datetime.datetime(2024, 7, 1, 12)) == "2024-07-01T12:00:00+02:00"
    aware = datetime.datetime(2024, 7, 1, 12, 0, 0, 5, tzinfo=UTC)
    assert lastmod_text(aware) == "2024-07-01T12:00:00+00:00"
    with override_settings(TIME_ZONE="America/New_York"):
        assert lastmod_text(datetime.datetime(2024, 7, 1, 12)) == "2024-07-01T12:00:00-04:00"


@pytest.mark.parametrize("value", [42, 1.5, object(), b"2024-01-01", ["2024-01-01"]])
def test_lastmod_text_rejects_other_types(value: object) -> None:
    # format_lastmod() takes only dates; lastmod_text() is where other types are refused.
    with pytest.raises(InvalidValue, match="must be a date or datetime"):
        lastmod_text(value)


@pytest.mark.parametrize(
    "text", ["2024-02-29", "2024-01-01T10:00:00Z", "2024-01-01T10:00:00.5-14:00"]
)
def test_lastmod_text_keeps_w3c_strings_unchanged(text: str) -> None:
    assert lastmod_text(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "2024-13-45",
        "2024-02-30T10:00:00+00:00",
        "2024-01-01T25:61:61+00:00",
        "2024-01-01T10:00:00+14:01",
        "\u0662\u0660\u0662\u0664-01-01",
        "2024-01-01T10:00:00",
        "2024-01-01T10:00Z",
        "2024",
        "",
    ],
)
def test_lastmod_text_refuses_strings_the_schema_refuses(text: str) -> None:
    with pytest.raises(InvalidValue, match="not a W3C Datetime"):
        lastmod_text(text)


# -- parse_lastmod, lastmod_timestamp, is_later ----------------------------------


def test_parse_lastmod() -> None:
    assert parse_lastmod("2024-01-01T10:00:00Z") == datetime.datetime(2024, 1, 1, 10, tzinfo=UTC)
    offset = parse_lastmod("2024-01-01T11:00:00+01:00")
    assert offset == datetime.datetime(2024, 1, 1, 10, tzinfo=UTC)
    assert offset is not None and offset.utcoffset() == datetime.timedelta(hours=1)
    # A date (or a naive text) is midnight in the project's time zone.
    assert parse_lastmod("2024-07-01") == datetime.datetime(2024, 7, 1, tzinfo=PARIS)
    assert parse_lastmod("2024-07-01T12:00:00") == datetime.datetime(2024, 7, 1, 12, tzinfo=PARIS)
    assert parse_lastmod("not a date") is None
    assert parse_lastmod("") is None


def test_lastmod_timestamps() -> None:
    assert lastmod_timestamp("2024-01-01T00:00:00+00:00") == 1704067200.0
    assert lastmod_timestamp("2024-01-01T01:00:00+01:00") == 1704067200.0
    assert (
        lastmod_timestamp("2024-01-01")
        == datetime.datetime(
            2024, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1))
        ).timestamp()
    )  # the tests' default time zone, Europe/Paris
    assert lastmod_timestamp("not a date") is None


def test_is_later() -> None:
    noon = datetime.datetime(2024, 1, 1, 12, tzinfo=UTC)
    assert is_later(noon, None)  # a missing lastmod is the earliest
    assert is_later(noon, "not a date")  # so is one that cannot be read
    assert is_later(noon, "2024-01-01T11:59:59Z")
    assert not is_later(noon, "2024-01-01T12:00:00Z")
    assert not is_later(noon, "2024-01-01T13:00:00+01:00")  # the same instant
    assert is_later(noon, "2024-01-01")  # midnight in Paris
    assert not is_later(noon, "2024-01-02")


# -- latest_lastmod ---------------------------------------------------------------


def test_latest_lastmod_of_nothing_is_none() -> None:
    assert latest_lastmod([]) is None
    assert latest_lastmod([None, None]) is None


def test_latest_lastmod_compares_instants_across_types_and_offsets() -> None:
    values = [
        datetime.date(2024, 1, 1),
        "2024-01-01T22:30:00-02:00",  # 2024-01-02T00:30 UTC: the latest
        datetime.datetime(2024, 1, 2, 1, 0),  # naive, Paris: 2024-01-02T00:00 UTC
        datetime.datetime(2024, 1, 1, 23, tzinfo=UTC),
    ]
    assert latest_lastmod(values) == "2024-01-01T22:30:00-02:00"
    assert latest_lastmod(reversed(values)) == "2024-01-01T22:30:00-02:00"


def test_latest_lastmod_keeps_a_date_a_date() -> None:
    assert latest_lastmod([datetime.date(2024, 3, 2), "2024-03-01"]) == "2024-03-02"
    # A date is midnight in the project's time zone: later than 22:00 UTC the day before.
    assert latest_lastmod(["2024-03-01T22:00:00Z", "2024-03-02"]) == "2024-03-02"
    assert latest_lastmod(["2024-03-01T23:30:00Z", "2024-03-02"]) == "2024-03-01T23:30:00+00:00"


def test_latest_lastmod_writes_z_as_an_offset_and_drops_fractions() -> None:
    assert latest_lastmod(["2024-05-01T10:00:00Z"]) == "2024-05-01T10:00:00+00:00"
    assert latest_lastmod(["2024-05-01T10:00:00.75+02:00"]) == "2024-05-01T10:00:00+02:00"


def test_latest_lastmod_ignores_invalid_values() -> None:
    values = ["yesterday", 42, None, "2024-13-01", "2024-02-01", object(), "2025-01-01T10:00"]
    assert latest_lastmod(values) == "2024-02-01"
    assert latest_lastmod(["yesterday", 42]) is None


# -- changefreq and priority --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0.0"),
        (1, "1.0"),
        (0.5, "0.5"),
        ("0.85", "0.85"),
        (Decimal("0.1"), "0.1"),
        (0.1234, "0.123"),
        ("1.000", "1.0"),
    ],
)
def test_priority_formats(value: object, text: str) -> None:
    assert format_priority(value) == text  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [7, -0.1, 1.01, "high", float("nan"), float("inf"), None])
def test_priority_out_of_range_is_refused(value: object) -> None:
    with pytest.raises(InvalidValue):
        format_priority(value)  # type: ignore[arg-type]


def test_changefreq_values() -> None:
    assert CHANGEFREQS == ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")
    for value in CHANGEFREQS:
        assert validate_changefreq(value) == value
    with pytest.raises(InvalidValue, match="sometimes"):
        validate_changefreq("sometimes")
    with pytest.raises(InvalidValue):
        validate_changefreq("Daily")


@pytest.mark.parametrize(
    ("code", "hreflang"),
    [
        ("en", "en"),
        ("en-us", "en-US"),
        ("EN-GB", "en-GB"),
        ("zh-hans", "zh-Hans"),
        ("sr-latn-rs", "sr-Latn-RS"),
        ("es-419", "es-419"),
        ("de-ch-x-phonebk", "de-CH-x-phonebk"),
        ("x-default", "x-default"),
    ],
)
def test_format_hreflang_writes_bcp47_letter_case(code: str, hreflang: str) -> None:
    assert values.format_hreflang(code) == hreflang


@pytest.mark.parametrize("code", ["", "en_US", "e", "en--us", "en us", "é"])
def test_format_hreflang_refuses_what_is_not_a_language_tag(code: str) -> None:
    with pytest.raises(ValueError, match="not a language tag"):
        values.format_hreflang(code)
