"""Origins and absolute URIs: one host, percent-encoding, length and control characters."""

import pytest

from django_sitemapx.exceptions import Skip, SkipReason
from django_sitemapx.locations import LocationBuilder, Origin

builder = LocationBuilder(Origin("https", "example.com"))


def test_origin_prefix() -> None:
    assert Origin("https", "example.com").prefix == "https://example.com"
    assert Origin("http", "localhost:8000").prefix == "http://localhost:8000"
    assert Origin("https", "bücher.example").prefix == "https://xn--bcher-kva.example"


def test_path_becomes_absolute() -> None:
    assert builder.absolute("/a/b/") == "https://example.com/a/b/"


def test_non_ascii_is_percent_encoded_like_iri_to_uri() -> None:
    assert builder.absolute("/café/ü ☃/") == "https://example.com/caf%C3%A9/%C3%BC%20%E2%98%83/"


def test_existing_percent_escapes_are_kept() -> None:
    assert builder.absolute("/a%20b/") == "https://example.com/a%20b/"


def test_same_host_absolute_url_is_kept_and_other_hosts_are_skipped() -> None:
    # Written with the canonical host (#14).
    assert builder.absolute("http://EXAMPLE.com/x") == "http://example.com/x"
    with pytest.raises(Skip) as info:
        builder.absolute("https://other.example/x")
    assert info.value.reason == SkipReason.OTHER_HOST == "other_host"


@pytest.mark.parametrize("location", ["relative/path", "//example.com/x", "ftp://example.com/x"])
def test_not_absolute(location: str) -> None:
    with pytest.raises(Skip) as info:
        builder.absolute(location)
    assert info.value.reason == "not_absolute"


def test_length_limit_is_below_2048() -> None:
    room = 2047 - len("https://example.com")
    assert len(builder.absolute("/" + "a" * (room - 1))) == 2047
    with pytest.raises(Skip) as info:
        builder.absolute("/" + "a" * room)
    assert info.value.reason == "too_long"


@pytest.mark.parametrize("char", ["\x00", "\x07", "\n", "\x7f"])
def test_control_characters_are_skipped(char: str) -> None:
    with pytest.raises(Skip) as info:
        builder.absolute(f"/a{char}b/")
    assert info.value.reason == "control_characters"


def test_internationalised_domain_is_written_as_idna() -> None:
    idn = LocationBuilder(Origin("https", "bücher.example:8443"))
    assert idn.prefix == "https://xn--bcher-kva.example:8443"
    assert idn.absolute("/a/") == "https://xn--bcher-kva.example:8443/a/"
    assert idn.absolute("https://bücher.example:8443/ü/") == (
        "https://xn--bcher-kva.example:8443/%C3%BC/"
    )
    assert idn.absolute("https://xn--bcher-kva.example:8443/b/") == (
        "https://xn--bcher-kva.example:8443/b/"
    )
