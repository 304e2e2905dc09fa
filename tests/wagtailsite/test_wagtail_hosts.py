"""A Wagtail site's overrides wherever the site is served, through hostname changes, and in
the inspector on the URL's own host.

The default site answers any host no site has (``get_site_for_hostname``): what editors set
for its pages applies there too. A site whose hostname or port changes takes its overrides
along, in the transaction of the change, and only the two hosts' documents are built
again. Needs the wagtail leg (see test_wagtail_source).
"""

# The sites are test_wagtail_source's fixtures, imported: their names are parameters here.
# ruff: noqa: F811

from __future__ import annotations

import datetime
from datetime import UTC
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.wagtailsite.leg import skip_unless_in_leg

skip_unless_in_leg()

from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from wagtail.models import Page, Site

from django_sitemapx.contrib.wagtail import WagtailPageSource
from django_sitemapx.export import FolderDestination, export_every_site
from django_sitemapx.invalidation import invalidate
from django_sitemapx.models import Override, Rule
from tests.conftest import NS, validate_sitemap
from tests.wagtailsite.test_wagtail_source import (  # noqa: F401 - fixtures
    _fresh_site_root_paths,
    _served,
    document,
    every_loc,
    index,
    invalidated,
    paged,
    two_sites,
    urls,
    wagtail,
)

pytestmark = pytest.mark.django_db


def by_loc(data: bytes, element: str, field: str) -> dict[str, str | None]:
    """Each ``<element>`` of the document ``data`` (validated): its location, its ``field``."""
    root = validate_sitemap(data)
    return {
        str(found.findtext("sm:loc", namespaces=NS)): found.findtext(f"sm:{field}", namespaces=NS)
        for found in root.iterfind(f"sm:{element}", NS)
    }


def priorities(host: str) -> dict[str, str | None]:
    """Each URL of ``host``'s first Wagtail page, with its priority."""
    return by_loc(document(host), "url", "priority")


def move(site: Site, commits: Any, **fields: Any) -> None:
    for name, value in fields.items():
        setattr(site, name, value)
    with commits(execute=True):
        site.save()


# -- the default site under another name ------------------------------------------------


def test_the_default_site_under_another_host_applies_the_sites_overrides(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    # a.example is the default site: example.com, which no site has, is served its pages.
    Override.objects.create(location="/pages/news", host="a.example", priority=Decimal("0.9"))
    Override.objects.create(location="/pages/fair", host="a.example", exclude=True)
    Override.objects.create(location="/pages/fair", host="b.example", priority=Decimal("0.1"))
    assert priorities("a.example")["http://a.example/pages/news/"] == "0.9"
    found = priorities("example.com")
    assert found["http://example.com/pages/news/"] == "0.9"
    assert "http://example.com/pages/fair/" not in found
    # The host's own override wins over its site's; another site's never applies.
    Override.objects.create(location="/pages/news", host="example.com", priority=Decimal("0.3"))
    invalidate()  # an override written outside the admin
    assert priorities("example.com")["http://example.com/pages/news/"] == "0.3"
    assert priorities("a.example")["http://a.example/pages/news/"] == "0.9"


def test_the_default_sites_forced_lastmod_raises_the_index_under_another_host(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    # Placed on a.example's page 1, as the admin places it; example.com has its own
    # page table, so the override raises every page of the section there.
    forced = datetime.datetime(2031, 5, 4, tzinfo=UTC)
    Override.objects.create(
        location="/pages/news", host="a.example", lastmod=forced, section="wagtail", page=1
    )
    invalidate()  # an override written outside the admin
    expected = "2031-05-04T00:00:00+00:00"
    assert wagtail_lastmods("a.example") == {"http://a.example/sitemap-wagtail-1.xml": expected}
    assert wagtail_lastmods("example.com") == {
        "http://example.com/sitemap-wagtail-1.xml": expected
    }
    # Another site's override raises nothing of it.
    assert expected not in wagtail_lastmods("b.example").values()
    # A rule of the site raises the section wherever the site is served.
    Rule.objects.create(
        pattern="/pages/", host="a.example", lastmod=datetime.datetime(2032, 1, 2, tzinfo=UTC)
    )
    invalidate()
    assert set(wagtail_lastmods("example.com").values()) == {"2032-01-02T00:00:00+00:00"}
    assert "2032-01-02T00:00:00+00:00" not in wagtail_lastmods("b.example").values()


def wagtail_lastmods(host: str) -> dict[str, str | None]:
    """The index of ``host``: each Wagtail page's location and lastmod."""
    listed = by_loc(index(host), "sitemap", "lastmod")
    return {loc: lastmod for loc, lastmod in listed.items() if "sitemap-wagtail-" in loc}


def test_a_sites_hostname_at_another_port_applies_the_sites_overrides(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    # Wagtail serves a hostname's only site on any port of it.
    Override.objects.create(location="/pages/shop", host="b.example", priority=Decimal("0.7"))
    response = Client().get(
        "/sitemap-wagtail-1.xml", HTTP_HOST="b.example:8080", SERVER_PORT="8080"
    )
    assert response.status_code == 200
    loc = "http://b.example:8080/pages/shop/"
    found = by_loc(b"".join(response.streaming_content), "url", "priority")
    assert found[loc] == "0.7"


# -- a site's hostname or port changes ---------------------------------------------------


def test_a_hostname_change_takes_the_sites_overrides_along(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    Override.objects.create(location="/pages/shop", host="b.example", priority=Decimal("0.8"))
    Override.objects.create(location="/pages/news", host="a.example", exclude=True)
    every = Override.objects.create(location="/pages/shop", changefreq="daily")
    site = Site.objects.get(hostname="b.example")
    move(site, django_capture_on_commit_callbacks, hostname="b.localhost")
    assert sorted(Override.objects.values_list("host", "location")) == [
        ("", "/pages/shop"),
        ("a.example", "/pages/news"),
        ("b.localhost", "/pages/shop"),
    ]
    assert priorities("b.localhost")["http://b.localhost/pages/shop/"] == "0.8"
    # A port is part of the host the site is served on.
    move(site, django_capture_on_commit_callbacks, port=8000)
    moved = Override.objects.get(location="/pages/shop", host="b.localhost:8000")
    assert moved.priority == Decimal("0.8")
    # Each found again under its unique key: the admin saves it, the hot path finds it.
    moved.save()
    assert Override.objects.get(pk=every.pk).host == ""


def test_an_override_the_new_host_has_already_is_kept_and_the_old_one_stays(
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    Override.objects.create(location="/pages/shop", host="b.example", priority=Decimal("0.8"))
    Override.objects.create(location="/pages/shop", host="b.localhost", priority=Decimal("0.2"))
    Override.objects.create(location="/pages/shop/café", host="b.example", exclude=True)
    site = Site.objects.get(hostname="b.example")
    move(site, django_capture_on_commit_callbacks, hostname="b.localhost")
    assert sorted(Override.objects.values_list("host", "location", "priority")) == [
        ("b.example", "/pages/shop", Decimal("0.8")),
        ("b.localhost", "/pages/shop", Decimal("0.2")),
        ("b.localhost", "/pages/shop/caf%C3%A9", None),
    ]


def test_a_hostname_change_rebuilds_only_the_two_hosts_documents(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    # example.com is the default site's (a.example) until b.example takes its name.
    for host in ("a.example", "b.example", "example.com"):
        _served(host, "/sitemap-wagtail-1.xml")
        _served(host, "/sitemap.xml")
    before = _served("a.example", "/sitemap-wagtail-1.xml")
    assert before[0] is False
    site = Site.objects.get(hostname="b.example")
    move(site, django_capture_on_commit_callbacks, hostname="example.com")
    assert invalidated == [("wagtail", None), ("wagtail", None)]
    # The other site's documents are the cached ones.
    assert _served("a.example", "/sitemap-wagtail-1.xml") == before
    assert _served("a.example", "/sitemap.xml")[0] is False
    # example.com now lists b.example's pages.
    assert _served("example.com", "/sitemap-wagtail-1.xml")[0] is True
    assert _served("example.com", "/sitemap.xml")[0] is True
    assert every_loc("example.com") == {
        "http://example.com/pages/",
        "http://example.com/pages/shop/",
        "http://example.com/pages/shop/caf%C3%A9/",
    }
    assert _served("b.example", "/sitemap.xml")[0] is True


def test_a_sites_name_change_invalidates_nothing(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    move(Site.objects.get(hostname="b.example"), django_capture_on_commit_callbacks, site_name="B")
    assert invalidated == []
    assert Site.objects.get(hostname="b.example").site_name == "B"


def test_a_change_of_the_default_site_invalidates_the_section(
    paged: dict[str, Page],
    invalidated: list[tuple[str | None, int | None]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    Override.objects.create(location="/pages/shop", host="b.example", priority=Decimal("0.8"))
    Site.objects.filter(hostname="a.example").update(is_default_site=False)
    site = Site.objects.get(hostname="b.example")
    move(site, django_capture_on_commit_callbacks, is_default_site=True)
    assert invalidated == [("wagtail", None)]
    assert Override.objects.get().host == "b.example"
    # example.com is b.example's now, with its overrides.
    assert priorities("example.com")["http://example.com/pages/shop/"] == "0.8"


# -- the inspector -----------------------------------------------------------------------


@pytest.fixture
def admin() -> Client:
    """A superuser in the Django admin of a.example."""
    user = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw")
    client = Client(HTTP_HOST="a.example")
    client.force_login(user)
    return client


def inspect(client: Client, url: str) -> str:
    response = client.get("/admin/django_sitemapx/override/inspect/", {"url": url})
    assert response.status_code == 200
    return str(response.content.decode())


def test_the_inspector_looks_a_url_up_on_its_own_sites_host(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], admin: Client
) -> None:
    Override.objects.create(location="/pages/shop", host="b.example", priority=Decimal("0.8"))
    html = inspect(admin, "http://b.example/pages/shop/")
    assert "Looked up in the sitemap of b.example" in html
    assert "http://b.example/pages/shop/" in html  # listed as
    assert "The override of b.example" in html
    assert "<code>0.8</code>" in html
    # Its document, on its host.
    assert 'href="http://b.example/sitemap-wagtail-1.xml"' in html
    # A path is looked up on the admin's own host: a.example has no /pages/shop.
    html = inspect(admin, "/pages/shop/")
    assert "Looked up in the sitemap of" not in html
    assert "The override of b.example" not in html


def test_the_inspector_shows_the_sites_override_on_a_host_the_default_site_serves(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], admin: Client
) -> None:
    Override.objects.create(location="/pages/news", host="a.example", exclude=True)
    html = inspect(admin, "http://example.com/pages/news/")
    assert "Looked up in the sitemap of example.com" in html
    assert "The override of a.example" in html
    assert "An override excludes this URL from the sitemap." in html


def test_the_inspector_names_a_host_no_sitemap_is_served_on(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], admin: Client
) -> None:
    html = inspect(admin, "https://unknown.example/pages/news/")
    assert "No sitemap is served on this URL&#x27;s host" in html


# -- browsing in the admin ------------------------------------------------------------------

PAGE = "admin:django_sitemapx_browse_page"


def browsed(client: Client, host: str | None = None) -> dict[str, Any]:
    """Each URL of the Wagtail section's first page as the admin browses it on ``host``."""
    query = {"host": host} if host else {}
    response = client.get(reverse(PAGE, kwargs={"section": "wagtail", "number": 1}), query)
    assert response.status_code == 200
    return {row["loc"]: row["priority"] for row in response.context["rows"]}


def test_the_admin_offers_each_wagtail_sites_host_and_browses_its_pages(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], admin: Client
) -> None:
    Site.objects.filter(hostname="b.example").update(port=8080)
    Override.objects.create(location="/pages/shop", host="b.example:8080", priority=Decimal("0.8"))
    response = admin.get(reverse("admin:django_sitemapx_overview"))
    hosts = [origin.host for origin in response.context["site"].choices]
    # The Django Sites framework's site (installed, unused) is known too: example.com.
    assert hosts == ["a.example", "example.com", "b.example:8080"]
    section = admin.get(
        reverse("admin:django_sitemapx_browse_section", kwargs={"section": "wagtail"}),
        {"host": "b.example:8080"},
    )
    assert section.status_code == 200
    assert section.context["pages"][0]["browse_url"].endswith("?host=b.example%3A8080")
    found = browsed(admin, "b.example:8080")
    assert found["http://b.example:8080/pages/shop/"] == "0.8"
    assert all(loc.startswith("http://b.example:8080/pages/") for loc in found)
    assert "http://a.example/pages/news/" in browsed(admin)


def test_browsing_the_default_sites_other_name_shows_the_sites_overrides(
    wagtail: WagtailPageSource, two_sites: dict[str, Page]
) -> None:
    Override.objects.create(location="/pages/news", host="a.example", priority=Decimal("0.9"))
    user = get_user_model().objects.create_superuser("admin", "admin@example.com", "pw")
    client = Client(HTTP_HOST="example.com")  # no site has it: the default site serves it
    client.force_login(user)
    hosts = [
        o.host
        for o in client.get(reverse("admin:django_sitemapx_overview")).context["site"].choices
    ]
    assert hosts == ["example.com", "a.example", "b.example"]
    assert browsed(client)["http://example.com/pages/news/"] == "0.9"
    assert browsed(client, "a.example")["http://a.example/pages/news/"] == "0.9"
    assert (
        client.get(reverse("admin:django_sitemapx_overview"), {"host": "evil.example"}).status_code
        == 404
    )


def test_every_site_export_writes_each_wagtail_sites_own_pages(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], tmp_path: Path
) -> None:
    exports = export_every_site(FolderDestination(tmp_path))
    written = {export.origin.host: export.result is not None for export in exports}
    # example.com is the Django Sites framework's site: the default Wagtail site serves it.
    assert written == {"example.com": True, "a.example": True, "b.example": True}
    shop = (tmp_path / "b.example" / "sitemap-wagtail-1.xml").read_text()
    assert "https://b.example/pages/shop/" in shop
    assert "/pages/news/" not in shop


def test_before_wagtails_tables_are_migrated_the_sites_hosts_are_the_options_only(
    wagtail: WagtailPageSource, two_sites: dict[str, Page], monkeypatch: pytest.MonkeyPatch
) -> None:
    from django_sitemapx import models
    from django_sitemapx.sources import ModelSource

    assert {"a.example", "b.example"} <= set(wagtail.site_hosts())
    # What migrate's own checks, or a command run before it, meet.
    monkeypatch.setattr(models, "_FOUND_TABLES", set())
    monkeypatch.setattr(Site._meta, "db_table", "wagtailcore_site_not_migrated")
    assert wagtail.site_hosts() == ModelSource.site_hosts(wagtail)
