"""The pages for people in headless Chromium: overview, a section's pages, a page's URLs.

Browsers no longer render XSL, so these admin pages are how an editor reads the
sitemap; this drives them as an editor would. Uses the Chromium fixtures of
``test_browser`` (same skip and CI rules; ``SITEMAPX_SCREENSHOTS=docs/images``
refreshes ``browse-section.png`` and ``browse-page.png``).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User

from django_sitemapx.registry import default_registry
from example_project.articles.factories import CategoryFactory
from example_project.articles.models import Article
from tests.admin.test_browser import PASSWORD, _urls, browser_page, shots
from tests.factories import ArticleFactory

__all__ = ["browser_page", "shots"]  # fixtures, used by name

WHEN = datetime.datetime(2024, 3, 1, 9, 30, tzinfo=datetime.UTC)


@pytest.mark.django_db(transaction=True, reset_sequences=True)  # pages cut on keys 1-120
def test_editor_browses_and_searches_the_urls_of_a_page(
    live_server: Any, browser_page: Any, shots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = browser_page
    base = live_server.url
    news = CategoryFactory(name="News", slug="news")
    sport = CategoryFactory(name="Sport", slug="sport")
    Article.objects.bulk_create(
        ArticleFactory.build(
            category=news if n % 3 else sport,
            slug=f"story-{n:03}",
            is_published=True,
            updated_at=WHEN + datetime.timedelta(hours=n),
        )
        for n in range(1, 261)
    )
    User.objects.create_user("reader", password=PASSWORD, is_staff=True).user_permissions.set(
        Permission.objects.filter(codename="view_override")
    )
    # Pages of 120 URLs (a limit of 122, less 2%): three pages, the first shown on two screens.
    monkeypatch.setattr(default_registry.get("article"), "limit", 122)
    # What crawlers get is the XML, unchanged: these pages only read it for people.
    crawled = _urls(page, f"{base}/sitemap-article-1.xml")
    assert len(crawled) == 120

    page.goto(f"{base}/admin/login/?next=/admin/django_sitemapx/override/overview/")
    page.fill("#id_username", "reader")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#sections")
    page.evaluate("localStorage.setItem('django.admin.navSidebarIsOpen', 'false')")
    page.reload()

    # The overview links each section to its pages.
    page.click("a.browse-section:text-is('article')")
    page.wait_for_selector("#pages")
    assert "URLs: 260 · Pages: 3" in page.inner_text("#section-summary")
    row = page.inner_text("#pages tbody tr >> nth=0")
    assert row.split("\t")[:3] == ["Page 1", "120", "2024-03-06T09:30:00+00:00"]
    page.screenshot(path=str(shots / "browse-section.png"), full_page=True)

    # A page's URLs, a hundred at a time, with their values.
    page.click("a.browse-page >> nth=0")
    page.wait_for_selector("#urls")
    assert page.locator("#urls tbody tr").count() == 100
    first = page.inner_text("#urls tbody tr >> nth=0")
    assert first.split("\t")[1:4] == ["2024-03-01T10:30:00+00:00", "weekly", "0.6"]
    page.click("#screens a[rel=next]")
    page.wait_for_selector("#urls")
    assert page.locator("#urls tbody tr").count() == 20

    # Search: part of a URL, then follow one to the inspector.
    page.fill("#searchbar", "sport/story-00")
    page.click("#changelist-search input[type=submit]")
    page.wait_for_selector("#urls")
    found = [page.inner_text(f"#urls tbody tr >> nth={n} >> td >> nth=0") for n in range(3)]
    assert found == [
        f"{base}/articles/sport/story-003/",
        f"{base}/articles/sport/story-006/",
        f"{base}/articles/sport/story-009/",
    ]
    assert all(url in crawled for url in found)
    assert "3 of 120 URLs match" in page.inner_text("#toolbar")
    page.screenshot(path=str(shots / "browse-page.png"), full_page=True)
    page.click("#urls a.inspect-link >> nth=0")
    page.wait_for_selector("#inspect-result")
    assert "Yes" in page.inner_text("#in-sitemap")
