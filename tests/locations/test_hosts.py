"""Host spelling: IDNA, one canonical form, the name without its port, export folders."""

from __future__ import annotations

import pytest

from django_sitemapx.locations.hosts import (
    ascii_host,
    canonical_host,
    checked_host,
    host_folder,
    host_name,
)


@pytest.mark.parametrize(
    ("host", "ascii"),
    [
        ("example.com", "example.com"),
        ("Example.COM:8443", "Example.COM:8443"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("bücher.example:8443", "xn--bcher-kva.example:8443"),
        ("日本.example", "xn--wgv71a.example"),
        ("[::1]:8000", "[::1]:8000"),
    ],
)
def test_ascii_host(host: str, ascii: str) -> None:
    assert ascii_host(host) == ascii


def test_ascii_host_that_idna_refuses_is_percent_encoded() -> None:
    # An empty label: IDNA cannot encode it, so the host is kept, percent-encoded.
    assert ascii_host("bücher..example") == "b%C3%BCcher..example"


@pytest.mark.parametrize(
    ("host", "canonical"),
    [
        ("example.com", "example.com"),
        ("Example.COM.", "example.com"),
        (" example.com ", "example.com"),
        ("Example.com.:8000", "example.com:8000"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("[::1]:8000", "[::1]:8000"),
        ("127.0.0.1", "127.0.0.1"),
    ],
)
def test_canonical_host(host: str, canonical: str) -> None:
    assert canonical_host(host) == canonical
    assert canonical_host(canonical) == canonical


@pytest.mark.parametrize(
    ("host", "name"),
    [("example.com:8000", "example.com"), ("example.com", "example.com"), ("[::1]:80", "[::1]")],
)
def test_host_name(host: str, name: str) -> None:
    assert host_name(host) == name


@pytest.mark.parametrize(
    ("host", "scheme", "ports", "checked"),
    [
        ("Example.COM.:443", "https", None, "example.com"),
        ("example.com:8443", "https", None, "example.com:8443"),
        ("example.com:8443", "https", {443}, "example.com"),
        ("[::1]:8000", "http", None, "[::1]:8000"),
        ("example.com:99999", None, None, None),
        ("example.com:99999", None, {80}, "example.com"),
        ("exa mple.com", None, None, None),
        ("", None, None, None),
    ],
)
def test_checked_host(
    host: str, scheme: str | None, ports: set[int] | None, checked: str | None
) -> None:
    assert checked_host(host, scheme, ports=ports) == checked


def test_host_folder_keeps_letters_digits_dots_and_dashes() -> None:
    assert host_folder("Example.com:8000") == "example.com_8000"
    assert host_folder("bücher.example") == "xn--bcher-kva.example"
    assert host_folder("[::1]:8000") == "___1__8000"
