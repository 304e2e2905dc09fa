"""Which origin a document is written for: requests, base URLs, the Sites framework."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.sites.models import Site
from django.core.exceptions import DisallowedHost
from django.http import Http404
from django.test import RequestFactory, modify_settings, override_settings

from django_sitemapx.exceptions import InvalidURL
from django_sitemapx.locations import Origin
from django_sitemapx.locations.origins import (
    SiteSelection,
    files_root_from_url,
    known_origins,
    origin_for_request,
    origin_from_url,
    parse_sites,
    scheme_for,
    served_hosts,
    served_origins,
    site_origin,
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
    with pytest.raises(InvalidURL, match="Malformed base URL"):
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
    with pytest.raises(InvalidURL, match=problem):
        origin_from_url(url)


def test_a_base_url_with_a_path_is_refused() -> None:
    with pytest.raises(InvalidURL, match="has a path"):
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
    with pytest.raises(InvalidURL, match="Malformed files base URL"):
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
    secure = RequestFactory().get(
        "/sitemap.xml", HTTP_HOST="example.com:8443", SERVER_PORT="8443", secure=True
    )
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


# -- the Sites framework ------------------------------------------------------------------


def test_site_origin_is_the_domain_with_the_site_id() -> None:
    assert site_origin("Sites.Example", 7) == Origin("https", "sites.example", 7)
    with override_settings(SITEMAPX_PROTOCOL="http"):
        assert site_origin("sites.example", 7) == Origin("http", "sites.example", 7)
    with pytest.raises(
        InvalidURL, match=re.escape("'example.com/shop' of django.contrib.sites site 2")
    ):
        site_origin("example.com/shop", 2)


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


@pytest.mark.django_db
def test_known_origins_refuse_a_site_whose_domain_is_no_host() -> None:
    Site.objects.filter(pk=1).update(domain="example.com/shop")
    with pytest.raises(InvalidURL, match="is not a host name"):
        known_origins()


# -- the hosts the site serves ------------------------------------------------------------


@override_settings(
    ALLOWED_HOSTS=[
        "Example.com",
        "www.example.com:8443",
        "*",
        ".wild.example",
        "localhost",
        "testserver",
        "127.0.0.1",
        "[::1]",
        "10.0.0.5",
        "192.168.1.2",
        "8.8.8.8",
        "example.com",
    ]
)
def test_served_hosts_are_the_public_exact_names_of_allowed_hosts() -> None:
    assert served_hosts() == ["example.com", "www.example.com:8443", "8.8.8.8"]


@override_settings(SITEMAPX_HOSTS=["WWW.example.com", "localhost"], ALLOWED_HOSTS=["*"])
def test_sitemapx_hosts_is_taken_as_given() -> None:
    assert served_hosts() == ["www.example.com", "localhost"]


@pytest.mark.django_db
@override_settings(SITEMAPX_USE_SITES=True)
def test_served_hosts_with_the_sites_framework_are_every_sites_domain() -> None:
    Site.objects.update_or_create(pk=1, defaults={"domain": "example.com", "name": "a"})
    Site.objects.create(domain="other.example", name="b")
    Site.objects.create(domain="localhost:8000", name="dev")

    assert served_hosts() == ["example.com", "other.example"]


@override_settings(ALLOWED_HOSTS=["example.com", "other.example"], SITEMAPX_PROTOCOL="http")
def test_served_origins_follow_the_scheme_rule() -> None:
    assert served_origins() == [Origin("http", "example.com"), Origin("http", "other.example")]
    assert served_origins("https")[0] == Origin("https", "example.com")


# -- the sites a section is limited to ---------------------------------------------------


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
