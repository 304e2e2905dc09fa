"""The page editor's sitemap panel in headless Chromium (Debian's package, via Playwright).

An editor signs in to Wagtail's admin, opens a page's promote tab, ticks "Leave
this page out of the sitemap" and saves a draft: the sitemap drops the page.
No browser is downloaded (see tests/admin/test_browser.py); needs the wagtail leg.
"""

# The sites are test_wagtail_source's fixtures, imported: their names are parameters here.
# ruff: noqa: F811

from __future__ import annotations

from typing import Any

import pytest

from tests.wagtailsite.leg import skip_unless_in_leg

skip_unless_in_leg()

from urllib.parse import urlsplit

from django.contrib.auth.models import User
from django.core.cache import cache
from wagtail.models import Page, Site

from django_sitemapx.contrib.wagtail import WagtailPageSource
from django_sitemapx.models import Override
from tests.admin.test_browser import PASSWORD, browser_page  # noqa: F401 - a fixture
from tests.conftest import NS, validate_sitemap
from tests.wagtailsite.test_wagtail_source import two_sites, wagtail  # noqa: F401 - fixtures


def _locs(page: Any, url: str) -> set[str]:
    response = page.request.get(url)
    assert response.status == 200, url
    root = validate_sitemap(response.body())
    return {
        str(element.findtext("sm:loc", namespaces=NS)) for element in root.iterfind("sm:url", NS)
    }


@pytest.mark.django_db(transaction=True)
def test_an_editor_excludes_a_page_from_its_promote_tab(
    live_server: Any,
    browser_page: Any,
    wagtail: WagtailPageSource,
    two_sites: dict[str, Page],
) -> None:
    page = browser_page
    base = live_server.url
    # a.example, the default site, serves any host; the panel writes the override of
    # the site's own host, so the site is given the live server's.
    live = urlsplit(base)
    Site.objects.filter(hostname="a.example").update(hostname=live.hostname, port=live.port)
    cache.clear()  # Wagtail keeps its sites' root paths in the default cache
    story = two_sites["story"]
    story_url = f"{base}{story.url_path.removeprefix('/a-example')}".replace(
        base, base + "/pages", 1
    )
    sitemap = f"{base}/sitemap-wagtail-1.xml"
    assert story_url in _locs(page, sitemap)
    User.objects.create_superuser("editor", "editor@example.com", PASSWORD)

    page.goto(f"{base}/cms/login/?next=/cms/pages/{story.pk}/edit/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("#page-edit-form")
    page.click("#tab-label-promote")
    panel = page.locator("[data-sitemapx-panel]")
    panel.wait_for()
    page.check("input[name=sitemapx-exclude]")
    page.select_option("select[name=sitemapx-priority]", "0.2")
    page.click("button.action-save")
    page.wait_for_url(f"**/cms/pages/{story.pk}/edit/")

    override = Override.objects.get()
    assert override.location == "/pages/news/story"
    assert override.host == live.netloc
    assert override.exclude is True
    assert str(override.priority) == "0.2"
    assert story_url not in _locs(page, sitemap)
    # The panel shows what is stored; unticked and saved, the page is listed again.
    page.click("#tab-label-promote")
    assert page.is_checked("input[name=sitemapx-exclude]")
    page.uncheck("input[name=sitemapx-exclude]")
    page.select_option("select[name=sitemapx-priority]", "")
    page.click("button.action-save")
    page.wait_for_url(f"**/cms/pages/{story.pk}/edit/")
    assert not Override.objects.exists()
    assert story_url in _locs(page, sitemap)
