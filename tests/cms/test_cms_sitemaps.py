"""Wagtail's and django CMS's own sitemaps, registered unchanged, on every site.

Each is served by this app and by the view its project documents (contrib's
``views.sitemap`` for django CMS's ``CMSSitemap``, Wagtail's
``wagtail.contrib.sitemaps.views.sitemap`` for its ``Sitemap``), from the same
rows, and the URLs compared for each site. Needs the packages (the ``test-cms``
extra) and ``tests.cms.settings``: ``SITEMAPX_TEST_LEGS=cms scripts/test``.
Elsewhere these tests are skipped, saying why; in that leg a skip is a failure.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

MISSING = [name for name in ("wagtail", "cms") if importlib.util.find_spec(name) is None]
if MISSING:
    REASON = (
        f"{' and '.join(MISSING)} not installed: pip install -e '.[test-cms]' "
        "(SITEMAPX_TEST_LEGS=cms scripts/test does)"
    )
elif "cms" not in settings.INSTALLED_APPS:
    REASON = (
        "needs DJANGO_SETTINGS_MODULE=tests.cms.settings (SITEMAPX_TEST_LEGS=cms scripts/test)"
    )
else:
    REASON = ""
if REASON and os.environ.get("SITEMAPX_TEST_CMS"):
    raise RuntimeError(f"The cms leg cannot run its tests: {REASON}")
if REASON:
    pytest.skip(REASON, allow_module_level=True)

from cms.api import create_page  # noqa: E402
from cms.sitemaps import CMSSitemap  # noqa: E402
from django.contrib.sitemaps import views as contrib_views  # noqa: E402
from django.contrib.sites.models import Site  # noqa: E402
from django.test import Client, RequestFactory, override_settings  # noqa: E402
from wagtail.contrib.sitemaps import Sitemap as WagtailSitemap  # noqa: E402
from wagtail.contrib.sitemaps import views as wagtail_views  # noqa: E402
from wagtail.models import Page  # noqa: E402
from wagtail.models import Site as WagtailSite  # noqa: E402

from django_sitemapx.export import export_sitemap  # noqa: E402
from django_sitemapx.export.destinations import FolderDestination  # noqa: E402
from django_sitemapx.locations import Origin  # noqa: E402
from django_sitemapx.registry import SitemapRegistry  # noqa: E402
from tests.conftest import NS, content, lastmod_day, validate_sitemap  # noqa: E402

pytestmark = pytest.mark.django_db


def urls(data: bytes) -> list[tuple[str, str]]:
    """Each URL's location and the day of its lastmod (contrib writes only the day)."""
    root = validate_sitemap(data)
    return [
        (
            str(element.findtext("sm:loc", namespaces=NS)),
            lastmod_day(element.findtext("sm:lastmod", namespaces=NS)),
        )
        for element in root.iterfind("sm:url", NS)
    ]


def ours(host: str, section: str) -> list[tuple[str, str]]:
    response = Client().get(f"/sitemap-{section}-1.xml", HTTP_HOST=host)
    assert response.status_code == 200, response
    return urls(content(response))


def theirs(view: Any, host: str, **kwargs: Any) -> list[tuple[str, str]]:
    response = view(RequestFactory().get("/sitemap.xml", HTTP_HOST=host), **kwargs)
    response.render()
    return urls(response.content)


# -- django CMS ---------------------------------------------------------------------------


@pytest.fixture
def cms_sites() -> tuple[Site, Site]:
    """Two sites, each with its page tree; a page for members only on the first."""
    first = Site.objects.get(pk=1)
    second = Site.objects.create(domain="b.example", name="B")
    for site, titles in ((first, ["Home", "About", "Team"]), (second, ["Start", "Shop"])):
        for title in titles:
            create_page(title, "page.html", "en", site=site)
    create_page("Members", "page.html", "en", site=first, login_required=True)
    return first, second


@override_settings(SITEMAPX_USE_SITES=None)
@pytest.mark.parametrize("site_id", [1, 2])
def test_django_cms_sitemap_lists_each_sites_pages_as_contrib_does(
    registry: SitemapRegistry, cms_sites: tuple[Site, Site], site_id: int
) -> None:
    # A django CMS install serves one site per SITE_ID (a process per site).
    registry.register("pages", CMSSitemap)
    host = Site.objects.get(pk=site_id).domain
    with override_settings(SITE_ID=site_id):
        expected = theirs(contrib_views.sitemap, host, sitemaps={"pages": CMSSitemap})
        assert len(expected) == (3 if site_id == 1 else 2)
        assert ours(host, "pages") == expected


@override_settings(SITEMAPX_USE_SITES=None)
def test_django_cms_sitemap_exports_every_site(
    registry: SitemapRegistry, cms_sites: tuple[Site, Site], tmp_path: Path
) -> None:
    registry.register("pages", CMSSitemap)
    second = cms_sites[1]
    export_sitemap(FolderDestination(tmp_path), origin=Origin("http", second.domain, second.pk))
    with override_settings(SITE_ID=second.pk):
        expected = theirs(contrib_views.sitemap, second.domain, sitemaps={"pages": CMSSitemap})
    assert urls((tmp_path / "sitemap-pages-1.xml").read_bytes()) == expected


# -- Wagtail ------------------------------------------------------------------------------


@pytest.fixture
def wagtail_sites() -> None:
    """Two Wagtail sites on their own hosts, a.example the default one."""
    root = Page.get_first_root_node()
    WagtailSite.objects.all().delete()
    for host, slugs, default in (
        ("a.example", ["news", "events"], True),
        ("b.example", ["shop"], False),
    ):
        home = root.add_child(instance=Page(title=host, slug=host.replace(".", "-")))
        for slug in slugs:
            child = home.add_child(instance=Page(title=slug, slug=slug))
            child.save_revision().publish()
        WagtailSite.objects.create(hostname=host, port=80, root_page=home, is_default_site=default)


@override_settings(SITEMAPX_USE_SITES=False)
@pytest.mark.parametrize("host", ["a.example", "b.example"])
def test_wagtail_sitemap_lists_each_hosts_pages_as_wagtails_view_does(
    registry: SitemapRegistry, wagtail_sites: None, host: str
) -> None:
    registry.register("wagtail", WagtailSitemap)
    expected = theirs(wagtail_views.sitemap, host)
    assert expected and all(loc.startswith(f"http://{host}/") for loc, _ in expected)
    assert ours(host, "wagtail") == expected


@override_settings(SITEMAPX_USE_SITES=False)
def test_wagtail_sitemap_exports_each_host(
    registry: SitemapRegistry, wagtail_sites: None, tmp_path: Path
) -> None:
    registry.register("wagtail", WagtailSitemap)
    export_sitemap(FolderDestination(tmp_path), origin=Origin("http", "b.example"))
    assert urls((tmp_path / "sitemap-wagtail-1.xml").read_bytes()) == theirs(
        wagtail_views.sitemap, "b.example"
    )
