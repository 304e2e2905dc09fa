"""Base URLs of an export: what is accepted, and how it is normalised."""

from __future__ import annotations

import pytest

from django_sitemapx.baseurls import files_root_from_url, site_from_url
from django_sitemapx.exceptions import ExportError
from django_sitemapx.locations import Site


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("https://example.com", Site("https", "example.com")),
        ("https://example.com/", Site("https", "example.com")),
        ("http://Example.COM:8000", Site("http", "example.com:8000")),
        ("https://bücher.example", Site("https", "xn--bcher-kva.example")),
        ("http://127.0.0.1:8000", Site("http", "127.0.0.1:8000")),
        ("http://[::1]:8000", Site("http", "[::1]:8000")),
        ("http://localhost", Site("http", "localhost")),
    ],
)
def test_site_from_url(url: str, site: Site) -> None:
    assert site_from_url(url) == site


@pytest.mark.parametrize(
    "url", ["", "example.com", "//example.com", "https://example.com#x", "https://example.com?"]
)
def test_malformed(url: str) -> None:
    with pytest.raises(ExportError, match="Malformed base URL"):
        site_from_url(url)


def test_files_root_keeps_an_encoded_path() -> None:
    assert files_root_from_url("https://cdn.example.net/site maps/") == (
        Site("https", "cdn.example.net"),
        "/site%20maps",
    )
    assert files_root_from_url("https://cdn.example.net") == (Site("https", "cdn.example.net"), "")
