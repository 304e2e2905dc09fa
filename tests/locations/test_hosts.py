"""Which origin a document is written for: requests, base URLs, the Sites framework."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.sites.models import Site
from django.core.exceptions import DisallowedHost
from django.http import Http404
from django.test import RequestFactory, modify_settings, override_settings

from django_sitemapx.exceptions import ExportError
from django_sitemapx.locations import Origin
from django_sitemapx.locations.hosts import (
    SiteSelection,
    canonical_host,
    files_root_from_url,
    host_name,
    known_origins,
    origin_for_request,
    origin_from_sites_framework,
    origin_from_url,
    parse_sites,
    scheme_for,
    uses_sites_framework,
)

# -- base URLs ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://example.com", Origin("https", "example.com")),
        ("https://example.com/", Origin("https", "example.com")),
        ("http://Example.COM:8000", Origin("http", "example.com:8000")),
        ("https://bücher.example", Origin("https", "xn--bcher-kva.example")),
        ("http://127.0.0.1:8000", Origin("http", "127.0.0.1:8000")),
        ("http://[::1]:8000", Origin("http", "[::1]:8000")),
        ("http://localhost", Origin("http", "localhost")),
    ],
)
def test_origin_from_url(url: str, origin: Origin) -> None:
    assert origin_from_url(url) == origin


@pytest.mark.parametrize(
    "url", ["", "example.com", "//example.com", "https://example.com#x", "https://example.com?"]
)
def test_malformed(url: str) -> None:
    with pytest.raises(ExportError, match="Malformed base URL"):
        origin_from_url(url)


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://example.com", "must start with http"),
        ("https://user:secret@example.com", "user name or password"),
        ("https://example.com:99999", "port is not a number"),
        ("https://exa mple.com", "not a valid domain name"),
    ],
)
def test_malformed_says_why(url: str, problem: str) -> None:
    with pytest.raises(ExportError, match=problem):
        origin_from_url(url)


def test_a_base_url_with_a_path_is_refused() -> None:
    with pytest.raises(ExportError, match="has a path"):
        origin_from_url("https://example.com/blog/")


def test_files_root_keeps_an_encoded_path() -> None:
    assert files_root_from_url("https://cdn.example.net/site maps/") == (
        Origin("https", "cdn.example.net"),
        "/site%20maps",
    )
    assert files_root_from_url("https://cdn.example.net") == (
        Origin("https", "cdn.example.net"),
        "",
    )
    with pytest.raises(ExportError, match="Malformed files base URL"):
        files_root_from_url("cdn.example.net/maps")


# -- the scheme rule -----------------------------------------------------------------


def test_scheme_for_prefers_the_source_then_the_setting_then_the_default() -> None:
    assert scheme_for(None, "http") == "http"
    assert scheme_for("https", "http") == "https"
    with override_settings(SITEMAPX_PROTOCOL="https"):
        assert scheme_for(None, "http") == "https"
        assert scheme_for("http", "https") == "http"


# -- requests ------------------------------------------------------------------------


def test_origin_for_request_takes_the_host_and_scheme_of_the_request() -> None:
    request = RequestFactory().get("/sitemap.xml", HTTP_HOST="example.com")
    assert origin_for_request(request) == Origin("http", "example.com")
    secure = RequestFactory().get("/sitemap.xml", HTTP_HOST="example.com:8443", secure=True)
    assert origin_for_request(secure) == Origin("https", "example.com:8443")


def test_origin_for_request_follows_the_scheme_rule() -> None:
    request = RequestFactory().get("/sitemap.xml", HTTP_HOST="example.com")
    assert origin_for_request(request, "https") == Origin("https", "example.com")
    with override_settings(SITEMAPX_PROTOCOL="https"):
        assert origin_for_request(request) == Origin("https", "example.com")
        assert origin_for_request(request, "http") == Origin("http", "example.com")


def test_origin_for_request_refuses_a_host_not_in_allowed_hosts() -> None:
    request = RequestFactory().get("/sitemap.xml", HTTP_HOST="evil.example")
    with pytest.raises(DisallowedHost):
        origin_for_request(request)


def test_uses_sites_framework_defaults_to_whether_it_is_installed() -> None:
    assert not uses_sites_framework()  # the tests' settings turn it off
    with override_settings(SITEMAPX_USE_SITES=None):
        assert uses_sites_framework()  # django.contrib.sites is installed
        with modify_settings(INSTALLED_APPS={"remove": "django.contrib.sites"}):
            assert not uses_sites_framework()
    with override_settings(SITEMAPX_USE_SITES=True):
        assert uses_sites_framework()


@pytest.mark.django_db
@override_settings(SITEMAPX_USE_SITES=True)
def test_origin_for_request_from_the_sites_framework() -> None:
    Site.objects.filter(pk=1).update(domain="sites.example")
    request = RequestFactory().get("/sitemap.xml", HTTP_HOST="example.com")
    assert origin_for_request(request) == Origin("http", "sites.example")
    with override_settings(SITE_ID=None):
        Site.objects.create(domain="other.example", name="other")
        other = RequestFactory().get("/sitemap.xml", HTTP_HOST="other.example")
        assert origin_for_request(other) == Origin("http", "other.example")
        with pytest.raises(Http404):
            origin_for_request(request)  # no Site has the domain example.com


# -- the Sites framework for exports ----------------------------------------------


@pytest.mark.django_db
def test_origin_from_sites_framework() -> None:
    Site.objects.filter(pk=1).update(domain="Sites.Example")
    Site.objects.create(pk=7, domain="seven.example", name="seven")
    assert origin_from_sites_framework() == Origin("https", "sites.example")
    assert origin_from_sites_framework(7) == Origin("https", "seven.example")
    with override_settings(SITEMAPX_PROTOCOL="http"):
        assert origin_from_sites_framework(7) == Origin("http", "seven.example")
    with pytest.raises(ExportError, match="No site with ID 8"):
        origin_from_sites_framework(8)


def test_origin_from_sites_framework_needs_the_app() -> None:
    with (
        modify_settings(INSTALLED_APPS={"remove": "django.contrib.sites"}),
        pytest.raises(ExportError, match=r"needs django\.contrib\.sites"),
    ):
        origin_from_sites_framework()


# -- one canonical host, and the sites a section is limited to ---------------------------


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


@override_settings(ALLOWED_HOSTS=["*"])
def test_origin_for_request_is_canonical() -> None:
    request = RequestFactory().get("/sitemap.xml", HTTP_HOST="Example.COM.")
    assert origin_for_request(request) == Origin("http", "example.com")


@pytest.mark.django_db
@override_settings(SITEMAPX_USE_SITES=True)
def test_origin_for_request_carries_the_site_id() -> None:
    Site.objects.filter(pk=1).update(domain="Example.com")
    Site.objects.clear_cache()
    origin = origin_for_request(RequestFactory().get("/", HTTP_HOST="example.com"))
    assert (origin.host, origin.site_id) == ("example.com", 1)
    assert origin_from_sites_framework(1).site_id == 1


def test_parse_sites_splits_ids_and_hosts() -> None:
    selection = parse_sites([2, "Example.COM.", "dev.example:8000", 2])
    assert selection == SiteSelection(
        frozenset({2}), frozenset({"example.com", "dev.example:8000"})
    )


def test_a_host_without_port_matches_every_port_and_one_with_a_port_only_it() -> None:
    selection = parse_sites(["example.com", "dev.example:8000"])
    assert selection.matches(Origin("https", "example.com"))
    assert selection.matches(Origin("https", "example.com:8443"))
    assert selection.matches(Origin("https", "dev.example:8000"))
    assert not selection.matches(Origin("https", "dev.example"))
    assert not selection.matches(Origin("https", "dev.example:9000"))
    assert not selection.matches(Origin("https", "sub.example.com"))


@pytest.mark.django_db
def test_site_ids_match_by_the_origins_site_id_or_else_by_domain(
    django_assert_num_queries: Any,
) -> None:
    Site.objects.filter(pk=1).update(domain="example.com")
    selection = parse_sites([1])
    with django_assert_num_queries(0):
        assert selection.matches(Origin("https", "anything", 1))
        assert not selection.matches(Origin("https", "example.com", 2))
    with django_assert_num_queries(1):
        assert selection.matches(Origin("https", "example.com:8000"))
    assert not selection.matches(Origin("https", "other.example"))


@pytest.mark.django_db
def test_known_origins_are_the_sites_then_the_named_hosts() -> None:
    Site.objects.filter(pk=1).update(domain="Example.com")
    Site.objects.create(domain="b.example", name="B")
    origins = known_origins(["c.example", "example.com"])
    assert [(o.host, o.site_id) for o in origins] == [
        ("example.com", 1),
        ("b.example", origins[1].site_id),
        ("c.example", None),
    ]
    assert {o.scheme for o in origins} == {"https"}
