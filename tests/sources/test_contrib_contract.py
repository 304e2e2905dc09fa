"""``ContribSitemapSource`` keeps the contract contrib's views give a sitemap.

Django documents it: the views call ``get_urls(page, site, protocol)`` with
``site`` from ``get_current_site(request)`` (a ``Site`` of the Sites framework,
or a ``RequestSite`` without it), and make an instance of a registered class
for each request while a registered instance is used as it is. A sitemap that
needs the request (Wagtail's ``Sitemap(request)``) is given one here that
names the origin being built, in the views and in the export alike.
"""

from __future__ import annotations

import datetime
import logging
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.contrib.sitemaps import Sitemap
from django.contrib.sites.models import Site
from django.contrib.sites.requests import RequestSite
from django.http import HttpRequest
from django.test import Client, override_settings

from django_sitemapx import invalidate
from django_sitemapx.export import export_sitemap
from django_sitemapx.export.destinations import FolderDestination
from django_sitemapx.locations import Origin
from django_sitemapx.registry import SitemapRegistry
from tests.conftest import content, locs, validate_sitemap

pytestmark = pytest.mark.django_db

# Every site given to get_urls() and every instance made, by the sitemaps below;
# the request of each items() call.
seen: list[Any] = []
listed: list[Any] = []


@pytest.fixture(autouse=True)
def _forget() -> None:
    seen.clear()
    listed.clear()


class SiteReading(Sitemap[str]):
    """Stores the site it is given, as django CMS's ``CMSSitemap`` does, and lists by it."""

    site: Any = None

    def items(self) -> list[str]:
        return [f"/site-{getattr(self.site, 'pk', 'none')}/"]

    def location(self, item: str) -> str:
        return item

    def get_urls(self, page: Any = 1, site: Any = None, protocol: Any = None) -> Any:
        self.site = site
        seen.append(site)
        return super().get_urls(page, site, protocol)


class Counting(Sitemap[str]):
    """Records each instance made, as state its ``__init__`` would compute."""

    def __init__(self) -> None:
        seen.append(self)

    def items(self) -> list[str]:
        return ["/a/"]

    def location(self, item: str) -> str:
        return item


class RequestReading(Sitemap[str]):
    """Finds its site from the request it is made with, as Wagtail's ``Sitemap(request)``."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        self.request = request
        seen.append(request)

    def items(self) -> list[str]:
        listed.append(self.request)
        host = self.request.get_host() if self.request is not None else "none"
        return [f"/for-{host.replace(':', '-')}/"]

    def location(self, item: str) -> str:
        return item


def get(client: Client, path: str, host: str = "example.com", **extra: Any) -> list[str]:
    response = client.get(path, HTTP_HOST=host, **extra)
    assert response.status_code == 200, response
    return locs(validate_sitemap(content(response)))


# -- the site -------------------------------------------------------------------------


@override_settings(SITEMAPX_USE_SITES=True)
def test_get_urls_is_given_the_site_row_with_its_pk(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register("pages", SiteReading)
    assert get(client, "/sitemap-pages-1.xml") == ["http://example.com/site-1/"]
    site = seen[-1]
    assert isinstance(site, Site)
    assert (site.pk, site.domain, site.name) == (1, "example.com", "example.com")


@override_settings(SITEMAPX_USE_SITES=True, SITE_ID=None)
def test_each_host_gets_its_own_site_row(client: Client, registry: SitemapRegistry) -> None:
    other = Site.objects.create(domain="other.example", name="Other")
    registry.register("pages", SiteReading)
    assert get(client, "/sitemap-pages-1.xml") == ["http://example.com/site-1/"]
    assert get(client, "/sitemap-pages-1.xml", host="other.example") == [
        f"http://other.example/site-{other.pk}/"
    ]
    assert [site.pk for site in seen] == [1, other.pk]


def test_a_host_no_site_matches_gets_a_request_site(
    client: Client, registry: SitemapRegistry
) -> None:
    # SITEMAPX_USE_SITES = False (the test settings): the host is the request's.
    registry.register("pages", SiteReading)
    assert get(client, "/sitemap-pages-1.xml", host="testserver") == [
        "http://testserver/site-none/"
    ]
    site = seen[-1]
    assert isinstance(site, RequestSite)
    assert (site.domain, site.name) == ("testserver", "testserver")


# -- instances ------------------------------------------------------------------------


def test_a_registered_class_gives_a_new_instance_per_document(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register("pages", Counting)
    get(client, "/sitemap-pages-1.xml")
    made = len(seen)
    get(client, "/sitemap-pages-1.xml", host="other.example")
    assert len(seen) > made  # the second document made its own
    assert len({id(instance) for instance in seen}) == len(seen)


def test_a_registered_instance_is_shared_and_the_callers_object_left_alone(
    client: Client, registry: SitemapRegistry
) -> None:
    instance = SiteReading()
    registry.register("pages", instance, priority=0.7)
    get(client, "/sitemap-pages-1.xml")
    get(client, "/sitemap-pages-1.xml", host="other.example")
    assert len(seen) == 2
    assert instance.site is None and "priority" not in vars(instance)
    # One object served both, as contrib's views share it: it kept the last site.
    source: Any = registry.get("pages")
    assert source.wrapped() is source.wrapped()
    assert source.wrapped().site is seen[-1]


# -- the request ----------------------------------------------------------------------


def test_a_sitemap_taking_the_request_gets_one_for_each_host(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register("pages", RequestReading)
    assert get(client, "/sitemap-pages-1.xml") == ["http://example.com/for-example.com/"]
    assert get(client, "/sitemap-pages-1.xml", host="other.example", secure=True) == [
        "https://other.example/for-other.example/"
    ]
    request = seen[-1]
    assert isinstance(request, HttpRequest)
    assert (request.get_host(), request.scheme, request.get_port()) == (
        "other.example",
        "https",
        "443",
    )
    # The index counts the pages of the host's own sitemap too.
    response = client.get("/sitemap.xml", HTTP_HOST="other.example")
    assert response.status_code == 200
    assert listed[-1].get_host() == "other.example"


def test_the_export_gives_the_request_for_the_exported_origin(
    registry: SitemapRegistry, tmp_path: Path
) -> None:
    # Not in ALLOWED_HOSTS: the export's base URL is the host, validated already.
    registry.register("pages", RequestReading)
    export_sitemap(FolderDestination(tmp_path), origin=Origin("http", "shop.example:8080"))
    data = (tmp_path / "sitemap-pages-1.xml").read_bytes()
    assert locs(validate_sitemap(data)) == ["http://shop.example:8080/for-shop.example-8080/"]
    request = seen[-1]
    assert (request.get_host(), request.scheme, request.get_port()) == (
        "shop.example:8080",
        "http",
        "8080",
    )


# -- URLs on the project's other hosts --------------------------------------------------


class OnEveryHost(Sitemap[str]):
    """A section listing URLs of the project's other hosts too, by full URL."""

    def items(self) -> list[str]:
        return [
            "http://example.com/here/",
            "http://other.example/there/",
            "http://elsewhere.example/not-ours/",
        ]

    def location(self, item: str) -> str:
        return item

    def get_urls(self, page: Any = 1, site: Any = None, protocol: Any = None) -> Any:
        return [{"location": item, "lastmod": None} for item in self.items()]


def test_urls_on_a_served_host_are_kept_others_left_out(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    # other.example is in ALLOWED_HOSTS (the served hosts): contrib's sections keep
    # such URLs; elsewhere.example is served by no one here.
    registry.register("pages", OnEveryHost)
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        assert get(client, "/sitemap-pages-1.xml") == [
            "http://example.com/here/",
            "http://other.example/there/",
        ]
    assert "1 entries left out, 0 values dropped" in caplog.text


@override_settings(SITEMAPX_HOSTS=["example.com"])
def test_the_served_hosts_setting_decides(client: Client, registry: SitemapRegistry) -> None:
    registry.register("pages", OnEveryHost)
    assert get(client, "/sitemap-pages-1.xml") == ["http://example.com/here/"]


# -- the log --------------------------------------------------------------------------


class BadPriority(Counting):
    def priority(self, item: str) -> float:
        return 2.0


def test_a_dropped_value_is_not_logged_as_an_entry_left_out(
    client: Client, registry: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    registry.register("pages", BadPriority)
    with caplog.at_level(logging.WARNING, logger="django_sitemapx"):
        assert get(client, "/sitemap-pages-1.xml") == ["http://example.com/a/"]
    assert "0 entries left out, 1 values dropped" in caplog.text


def test_one_request_makes_one_instance(client: Client, registry: SitemapRegistry) -> None:
    # Contrib's view makes one per request: a costly __init__ is not run once per question
    # the page's build asks (its scheme, its limit, its URLs).
    registry.register("pages", Counting)
    get(client, "/sitemap-pages-1.xml")
    made = len(seen)
    get(client, "/sitemap-pages-1.xml", host="other.example")
    # The bound copy's one for the URLs, limit and namespaces; the section's scheme is
    # asked twice before the source is bound to the host (get_protocol() may be overridden).
    assert len(seen) - made <= 3


class WeekOld(Sitemap[str]):
    """Lists what is newer than a week ago, computed when made (a common pattern)."""

    def __init__(self) -> None:
        self.since = datetime.date.today() - datetime.timedelta(days=7)

    def items(self) -> list[str]:
        return [f"/since-{self.since.isoformat()}/"]

    def location(self, item: str) -> str:
        return item


def test_with_the_clock_moved_on_a_new_document_computes_again(
    client: Client, registry: SitemapRegistry
) -> None:
    registry.register("pages", WeekOld)
    with time_machine.travel(datetime.datetime(2026, 1, 10, 12, tzinfo=datetime.UTC), tick=False):
        assert get(client, "/sitemap-pages-1.xml") == ["http://example.com/since-2026-01-03/"]
    invalidate("pages")
    with time_machine.travel(datetime.datetime(2026, 3, 10, 12, tzinfo=datetime.UTC), tick=False):
        assert get(client, "/sitemap-pages-1.xml") == ["http://example.com/since-2026-03-03/"]
