"""Override keys: one row per page whatever form of its URL an editor pastes."""

import pytest

from django_sitemapx.exceptions import InvalidLocation
from django_sitemapx.locations.keys import location_key, uri_key


@pytest.mark.parametrize(
    "value",
    [
        "/a/",
        "/a",
        "https://example.com/a/",
        "http://other.example/a",
        "//example.com/a//",
        " /a#top ",
    ],
)
def test_forms_of_one_url_share_a_key(value: str) -> None:
    assert location_key(value) == "/a"


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("/", "/"),
        ("https://example.com", "/"),
        ("/list/?page=2", "/list?page=2"),
        ("/café/", "/caf%C3%A9"),
        ("/caf%c3%a9", "/caf%C3%A9"),
        ("/A/", "/A"),
        ("/a?", "/a"),
    ],
)
def test_key(value: str, key: str) -> None:
    assert location_key(value) == key


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("", "empty"),
        ("  ", "empty"),
        ("a/b", "not_http"),
        ("ftp://h/a", "not_http"),
        ("mailto:x@y", "not_http"),
        ("/a\x00", "control_characters"),
    ],
)
def test_invalid(value: str, code: str) -> None:
    with pytest.raises(InvalidLocation) as error:
        location_key(value)
    assert error.value.code == code


@pytest.mark.parametrize(
    "uri", ["https://example.com/a/", "https://example.com/a", "http://example.com/a#x"]
)
def test_uri_key_matches_location_key(uri: str) -> None:
    assert uri_key(uri) == location_key(uri) == "/a"


def test_uri_key_of_root_and_encoded_paths() -> None:
    assert uri_key("https://example.com") == "/"
    assert uri_key("https://example.com/?q=1") == "/?q=1"
    assert uri_key("https://example.com/caf%c3%a9/") == location_key("/café")
