"""Django's own sitemap tests as the yardstick: every section served by contrib and by us.

Each of the 33 sections of ``tests/sitemaps_tests`` (re-described in
``tests.contrib_sitemaps``) is registered unchanged and served through our real
views; contrib's own ``sitemap`` view serves the same sitemap. Both documents are
parsed and compared URL by URL: location, lastmod (to the day: contrib writes
dates only), changefreq, priority and alternates (``hreflang`` compared without
case: contrib writes Django's lower-case codes, we write BCP 47 case).
"""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.sitemaps import views as contrib_views
from django.core import checks
from django.test import Client, RequestFactory, override_settings
from lxml import etree

from django_sitemapx import invalidate
from django_sitemapx.registry import SitemapRegistry
from tests.conftest import content, lastmod_day, validate_sitemap
from tests.contrib_sitemaps import MARCH_13, SECTIONS, Case
from tests.contribapp.models import Thing, TranslatedThing

pytestmark = pytest.mark.django_db

NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9", "xhtml": "http://www.w3.org/1999/xhtml"}

Url = tuple[str, str | None, str | None, str | None, tuple[tuple[str, str], ...]]


def _urls(root: Any) -> list[Url]:
    found = []
    for url in root.iterfind("sm:url", NS):

        def text(name: str, url: Any = url) -> str | None:
            element = url.find(f"sm:{name}", NS)
            return None if element is None or not element.text else element.text.strip()

        lastmod = text("lastmod")
        priority = text("priority")
        alternates = tuple(
            sorted(
                (link.get("hreflang").lower(), link.get("href"))
                for link in url.iterfind("xhtml:link", NS)
            )
        )
        found.append(
            (
                text("loc") or "",
                lastmod_day(lastmod) if lastmod else None,
                text("changefreq"),
                str(Decimal(priority).normalize()) if priority else None,
                alternates,
            )
        )
    return found


def _pages(sitemap: Any) -> int:
    instance = sitemap() if isinstance(sitemap, type) else sitemap
    return max(1, instance.paginator.num_pages)


def contrib_urls(case: Case) -> list[Url]:
    """What contrib's ``sitemap`` view writes for the section, every page."""
    found: list[Url] = []
    for number in range(1, _pages(case.sitemap) + 1):
        request = RequestFactory(HTTP_HOST="example.com").get("/", {"p": number})
        response = contrib_views.sitemap(
            request, sitemaps={case.section: case.sitemap}, section=case.section
        )
        response.render()
        found += _urls(etree.fromstring(response.content))
    return found


def our_urls(client: Client, case: Case) -> list[Url]:
    """What our views serve for the section, every page (an empty one is a 404)."""
    found: list[Url] = []
    for number in range(1, _pages(case.sitemap) + 1):
        response = client.get(f"/sitemap-{case.section}-{number}.xml")
        if response.status_code == 404:
            continue
        assert response.status_code == 200
        found += _urls(validate_sitemap(content(response)))
    return found


@pytest.fixture
def rows() -> None:
    Thing.objects.create(name="Test Object", lastmod=MARCH_13.replace(tzinfo=datetime.UTC))
    TranslatedThing.objects.create(name="Test Object")
    TranslatedThing.objects.create(name="Only for PT")


def compare(case: Case, registry: SitemapRegistry) -> tuple[list[Url], list[Url], list[Any]]:
    # Several cases share a section name: a changed registration needs invalidate().
    invalidate()
    with override_settings(ROOT_URLCONF="tests.contrib_urls", **case.settings):
        source = registry.register(case.section, case.sitemap)
        refused = source.check()
        theirs = contrib_urls(case)
        ours = our_urls(Client(HTTP_HOST="example.com"), case)
        registry.unregister(case.section)
    return theirs, ours, refused


def test_every_section_of_djangos_suite(registry: SitemapRegistry, rows: None) -> None:
    same, different, refused = [], [], []
    for case in SECTIONS:
        theirs, ours, errors = compare(case, registry)
        (same if theirs == ours else different).append(case.label)
        refused += [case.label for error in errors if error.level >= checks.ERROR]
    print(f"\n{len(same)} of {len(SECTIONS)} sections give the same URLs; different: {different}")
    assert len(SECTIONS) == 33
    assert not refused
    assert len(same) >= 30, different
