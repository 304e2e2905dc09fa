"""The sitemap for people, and the XML with its stylesheet, in headless Chromium.

Debian's Chromium driven by Playwright, as tests/admin/test_browser.py does (no browser is
downloaded; skipped without one, except in CI or with ``SITEMAPX_REQUIRE_SERVICES``).
``SITEMAPX_SCREENSHOTS=docs/images`` refreshes the documentation's screenshots.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from example_project.articles.factories import ArticleFactory, CategoryFactory
from tests.admin.test_browser import WHEN, browser_page, shots  # noqa: F401  (fixtures)


@pytest.mark.django_db(transaction=True)
def test_people_walk_the_html_sitemap(
    live_server: Any,
    browser_page: Any,  # noqa: F811
    shots: Path,  # noqa: F811
) -> None:
    page = browser_page
    news = CategoryFactory(name="News", slug="news")
    for slug in ("hello-world", "a-second-story", "the-third-one"):
        ArticleFactory(category=news, slug=slug, updated_at=WHEN)
    page.set_viewport_size({"width": 1024, "height": 700})
    page.goto(f"{live_server.url}/sitemap/")

    # What a screen reader announces: one main landmark, a level-1 heading, a heading per
    # section, and links named for what they lead to.
    assert page.get_by_role("main").count() == 1
    assert page.get_by_role("heading", level=1).inner_text() == "Sitemap"
    sections = page.get_by_role("heading", level=2).all_inner_texts()
    assert {"article", "category", "pages"} <= set(sections)
    page.get_by_role("link", name="article, page 1").click()
    page.wait_for_selector("ol.urls")
    assert page.get_by_role("heading", level=1).inner_text() == "article, page 1"
    links = page.get_by_role("main").get_by_role("listitem").get_by_role("link")
    assert links.count() == 3
    assert f"{live_server.url}/articles/news/hello-world/" in links.all_inner_texts()
    page.get_by_role("link", name="Skip to the list").focus()
    assert page.evaluate("document.activeElement.textContent") == "Skip to the list"
    page.get_by_role("navigation", name="Breadcrumbs").get_by_role("link").click()
    page.wait_for_selector("h2")
    page.screenshot(path=str(shots / "html-sitemap.png"), full_page=True)


@pytest.mark.django_db(transaction=True)
def test_the_xml_opened_in_the_browser_is_styled(
    live_server: Any,
    browser_page: Any,  # noqa: F811
    shots: Path,  # noqa: F811
    settings: Any,
) -> None:
    settings.SITEMAPX_XML_STYLESHEET = "django_sitemapx/sitemap.css"
    news = CategoryFactory(name="News", slug="news")
    for slug in ("hello-world", "a-second-story"):
        ArticleFactory(category=news, slug=slug, updated_at=WHEN)
    page = browser_page
    page.set_viewport_size({"width": 1024, "height": 400})
    response = page.goto(f"{live_server.url}/sitemap-article-1.xml")
    assert response.status == 200
    page.wait_for_load_state("load")
    styled = page.evaluate(
        """() => {
            const loc = document.getElementsByTagName('loc')[0];
            const url = document.getElementsByTagName('url')[0];
            return {
                root: document.documentElement.localName,
                loc: getComputedStyle(loc).color,
                url: getComputedStyle(url).display,
                maxWidth: getComputedStyle(document.documentElement).maxWidth,
            };
        }"""
    )
    # The stylesheet's colour and layout, not Chromium's tree view of raw XML.
    assert styled["root"] == "urlset"
    assert styled["loc"] == "rgb(6, 69, 173)"
    assert styled["url"] == "block"
    assert styled["maxWidth"] == "960px"
    page.screenshot(path=str(shots / "xml-stylesheet.png"))
