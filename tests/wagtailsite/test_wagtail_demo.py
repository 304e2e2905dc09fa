"""The example's Wagtail demo (``scripts/demo --wagtail``): seeded by its command, served.

Two Wagtail sites on two hosts, English and French: each host's sitemap lists its
own pages in both languages with reciprocal alternates, and the event's tickets
URL. Needs the wagtail leg (see test_wagtail_source).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest

from tests.wagtailsite.leg import skip_unless_in_leg

skip_unless_in_leg()

from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from django.utils import translation
from wagtail.models import Page, Site

from django_sitemapx.registry import SitemapRegistry
from example_project.wagtail_demo import sitemapx as demo_sections
from tests.conftest import NS, content, validate_sitemap

pytestmark = pytest.mark.django_db
XHTML = "{http://www.w3.org/1999/xhtml}link"


@pytest.fixture
def demo(registry: SitemapRegistry, settings: Any) -> Iterator[str]:
    """The demo's settings and section; the seed command's output."""
    settings.WAGTAIL_I18N_ENABLED = True
    settings.ROOT_URLCONF = "example_project.wagtail_urls"
    # As the example's settings: /fr/ pages are routed in French.
    settings.MIDDLEWARE = ["django.middleware.locale.LocaleMiddleware", *settings.MIDDLEWARE]
    importlib.reload(demo_sections)  # registers the demo's section in the emptied registry
    cache.clear()
    out = StringIO()
    call_command("seed_wagtail_demo", count=3, stdout=out)
    call_command("seed_wagtail_demo", count=3, stdout=StringIO())  # again: the same sites
    cache.clear()
    yield out.getvalue()
    cache.clear()
    # LocaleMiddleware left the last request's language active in this thread.
    translation.deactivate()


def fetch(host: str, path: str) -> bytes:
    # runserver's port: a port is kept in the URLs when the request reached the server on it.
    response = Client().get(path, HTTP_HOST=f"{host}:8000", SERVER_PORT="8000")
    assert response.status_code == 200, response
    return content(response)


def test_the_seeded_demo_serves_each_sites_pages_in_both_languages_on_its_host(
    demo: str,
) -> None:
    assert "a.localhost:8000: " in demo and "sitemap http://b.localhost:8000/sitemap.xml" in demo
    assert Site.objects.filter(hostname__in=["a.localhost", "b.localhost"]).count() == 2
    for host, other in (("a.localhost", "b.localhost"), ("b.localhost", "a.localhost")):
        index = validate_sitemap(fetch(host, "/sitemap.xml"))
        pages = [str(loc.text) for loc in index.iterfind("sm:sitemap/sm:loc", NS)]
        assert pages == [f"http://{host}:8000/sitemap-wagtail-1.xml"]
        root = validate_sitemap(fetch(host, "/sitemap-wagtail-1.xml"))
        links: dict[str, dict[str, str]] = {}
        for element in root.iterfind("sm:url", NS):
            loc = str(element.findtext("sm:loc", namespaces=NS))
            links[loc] = {link.get("hreflang"): link.get("href") for link in element.iter(XHTML)}
        base = f"http://{host}:8000"
        # home, three pages and the event (with its tickets), in English and French.
        assert len(links) == 2 * (1 + 3 + 2)
        assert not any(other in loc for loc in links)
        expected = {"en": f"{base}/page-1/", "fr": f"{base}/fr/page-1/"}
        expected["x-default"] = expected["en"]
        assert links[f"{base}/page-1/"] == expected
        assert links[f"{base}/fr/page-1/"] == expected
        assert f"{base}/open-day/tickets/" in links
    # The pages are served too, in French under /fr/.
    response = Client().get("/fr/page-1/", HTTP_HOST="a.localhost:8000", SERVER_PORT="8000")
    assert response.status_code == 200
    assert b"Page 1 (fr)" in response.content
    assert Page.objects.filter(slug="page-1").count() == 4  # two sites, two languages
