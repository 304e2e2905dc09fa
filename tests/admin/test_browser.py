"""The admin flows end to end in headless Chromium (Debian's package, via Playwright).

No browser is downloaded: Playwright drives ``/usr/bin/chromium`` (or
``SITEMAPX_CHROMIUM``). Without it the test is skipped, except in CI or when
``SITEMAPX_REQUIRE_SERVICES`` is set, where it fails. ``SITEMAPX_TEST_BROWSER=0`` skips
it: scripts/test sets it in the legs whose Django release another leg already drives the
browser on (what the browser adds, the admin's pages and scripts, is the same on every
database; the test client covers the views on each). ``SITEMAPX_SCREENSHOTS=docs/images``
refreshes the documentation's screenshots.
"""

from __future__ import annotations

import datetime
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission, User
from django.db import connections
from django.test import Client

from example_project.articles.factories import ArticleFactory, CategoryFactory
from tests.conftest import NS, validate_sitemap

CHROMIUM = os.environ.get("SITEMAPX_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
PASSWORD = "correct horse battery staple"
WHEN = datetime.datetime(2024, 3, 1, 9, 30, tzinfo=datetime.UTC)


def _unavailable(reason: str) -> None:
    if os.environ.get("SITEMAPX_REQUIRE_SERVICES") or os.environ.get("CI"):
        pytest.fail(f"{reason}; the browser test is required here (CI/SITEMAPX_REQUIRE_SERVICES).")
    pytest.skip(reason)


@pytest.fixture
def browser_page(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install -e '.[test]')")
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        _unavailable(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM
    # calls are ordinary blocking calls, which Django would otherwise refuse.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 800})
            page.set_default_timeout(15_000)
            yield page
        finally:
            browser.close()
            # The test body ran in Playwright's greenlet, whose context has its own
            # database connection: close it, or the test database cannot be dropped.
            connections.close_all()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    directory = os.environ.get("SITEMAPX_SCREENSHOTS")
    path = Path(directory) if directory else tmp_path
    path.mkdir(parents=True, exist_ok=True)
    return path


def _urls(page: Any, url: str) -> dict[str, dict[str, str]]:
    response = page.request.get(url)
    assert response.status == 200, url
    root = validate_sitemap(response.body())
    return {
        el.findtext("sm:loc", namespaces=NS): {
            child.tag.split("}")[1]: child.text for child in el if not child.tag.endswith("loc")
        }
        for el in root.iterfind("sm:url", NS)
    }


@pytest.mark.django_db(transaction=True)
def test_editor_overrides_excludes_and_inspects(
    live_server: Any, browser_page: Any, shots: Path
) -> None:
    page = browser_page
    base = live_server.url
    news = CategoryFactory(name="News", slug="news")
    hello = ArticleFactory(category=news, slug="hello-world", title="Hello", updated_at=WHEN)
    old = ArticleFactory(category=news, slug="old-story", title="Old", updated_at=WHEN)
    editor = User.objects.create_user("editor", password=PASSWORD, is_staff=True)
    editor.user_permissions.set(
        Permission.objects.filter(content_type__app_label="django_sitemapx")
    )
    hello_url = f"{base}{hello.get_absolute_url()}"
    old_url = f"{base}{old.get_absolute_url()}"
    sitemap = f"{base}/sitemap-article-1.xml"
    assert _urls(page, sitemap)[hello_url]["priority"] == "0.6"

    # Log in.
    page.goto(f"{base}/admin/login/?next=/admin/django_sitemapx/override/add/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#override_form")
    # Close the admin's navigation sidebar so the screenshots show the screens.
    page.evaluate("localStorage.setItem('django.admin.navSidebarIsOpen', 'false')")
    page.reload()

    # An invalid priority is refused with a clear message, and kept for fixing.
    page.fill("#id_location", hello_url)
    page.fill("#id_priority", "7")
    page.click("input[name=_save]")
    error = page.locator(".errorlist").first
    assert "Priority must be between 0.0 and 1.0." in error.inner_text()
    page.screenshot(path=str(shots / "override-form-error.png"), full_page=True)
    page.fill("#id_priority", "0.9")
    page.select_option("#id_changefreq", "daily")
    page.click("input[name=_save]")
    page.wait_for_selector("#result_list")
    assert "/articles/news/hello-world" in page.inner_text("#result_list")

    # The served sitemap carries the new values.
    assert _urls(page, sitemap)[hello_url] == {
        "lastmod": "2024-03-01T09:30:00+00:00",
        "changefreq": "daily",
        "priority": "0.9",
    }

    # Exclude another URL with a bulk action: it disappears from the sitemap.
    page.goto(f"{base}/admin/django_sitemapx/override/add/?location={old.get_absolute_url()}")
    page.select_option("#id_changefreq", "yearly")
    page.click("input[name=_save]")
    page.wait_for_selector("#result_list")
    row = page.locator("#result_list tr", has_text="old-story")
    row.locator("input.action-select").check()
    page.select_option("select[name=action]", "exclude_urls")
    page.click("button[name=index]")
    page.wait_for_selector(".messagelist")
    assert "1 URL excluded." in page.inner_text(".messagelist")
    page.screenshot(path=str(shots / "override-list.png"), full_page=True)
    urls = _urls(page, sitemap)
    assert old_url not in urls and hello_url in urls

    # The inspector: where a URL is, its values and their origin, and why not.
    page.click("text=URL inspector")
    page.fill("#id_url", hello_url)
    page.click("#inspect-form input[type=submit]")
    page.wait_for_selector("#inspect-result")
    assert "Yes" in page.inner_text("#in-sitemap")
    assert "article, page 1" in page.inner_text("#section")
    values = page.inner_text("#effective-values")
    assert "0.9" in values and "override" in values and "section" in values
    page.screenshot(path=str(shots / "inspector.png"), full_page=True)
    page.fill("#id_url", old.get_absolute_url())
    page.click("#inspect-form input[type=submit]")
    page.wait_for_selector("#why-not")
    assert "excludes this URL" in page.inner_text("#why-not")
    page.click("#override-link")
    page.wait_for_selector("#override_form")
    assert page.input_value("#id_location") == "/articles/news/old-story"

    # The overview lists the sections with links to their documents.
    page.goto(f"{base}/admin/django_sitemapx/override/overview/")
    table = page.inner_text("#sections")
    assert "article" in table and "/sitemap-article-1.xml" in table
    page.screenshot(path=str(shots / "overview.png"), full_page=True)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [1280, 1920])
def test_the_list_fits_the_window_with_the_sidebar_open(
    live_server: Any, browser_page: Any, shots: Path, width: int
) -> None:
    page = browser_page
    base = live_server.url
    news = CategoryFactory(name="News", slug="news")
    long_slug = "a-very-long-article-slug-that-editors-paste-from-the-address-bar-" * 2
    article = ArticleFactory(category=news, slug=long_slug.strip("-"), updated_at=WHEN)
    admin_user = User.objects.create_superuser("admin", "admin@example.com", PASSWORD)
    from django_sitemapx.models import Override

    Override.objects.create(
        location=article.get_absolute_url(), exclude=True, section="article", page=1
    )
    Override.objects.create(location="/about", priority="0.3", section="pages", page=1)
    Override.objects.create(location="/gone/for/good", changefreq="never")
    # An override of one host says so in the location's column, not a column of its own.
    Override.objects.create(location="/about", host="a-long-host-name.example.com", priority="0.4")

    page.set_viewport_size({"width": width, "height": 800})
    # Logged in through a session cookie: the login form is tested above, and hashing
    # the password twice more only slows this test down on a busy machine.
    client = Client()
    client.force_login(admin_user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": base}]
    )
    page.goto(f"{base}/admin/django_sitemapx/override/")
    page.wait_for_selector("#result_list")
    page.evaluate("localStorage.setItem('django.admin.navSidebarIsOpen', 'true')")
    page.reload()
    page.wait_for_selector("#result_list")
    assert page.is_visible("#nav-sidebar")
    page.screenshot(path=str(shots / f"override-list-sidebar-{width}.png"), full_page=True)

    # Every column, the last one included, ends inside the list's box and the window:
    # nothing is hidden behind a horizontal scroll bar.
    box = page.evaluate(
        """() => {
            const results = document.querySelector('#changelist .results');
            const cells = [...document.querySelectorAll('#result_list thead th')];
            return {
                columns: cells.length,
                last: Math.max(...cells.map(c => c.getBoundingClientRect().right)),
                box: results.getBoundingClientRect().right,
                scroll: results.scrollWidth - results.clientWidth,
                page: document.documentElement.scrollWidth,
            };
        }"""
    )
    assert box["columns"] == 8  # the checkbox and seven columns
    assert box["scroll"] <= 0 and box["last"] <= box["box"] + 1, box
    assert box["page"] <= width, box

    # The "In the sitemap" column: a cross for the excluded URL, a tick for a listed one.
    header = page.inner_text("#result_list thead th.column-listed")
    assert header.strip().lower() == "in the sitemap"
    excluded = page.locator("#result_list tr", has_text="a-very-long-article")
    assert excluded.locator("td.field-listed img").get_attribute("alt") == "False"
    listed = page.locator("#result_list tr", has_text="/about").first
    assert listed.locator("td.field-listed img").get_attribute("alt") == "True"
    one_host = page.locator("#result_list tr", has_text="a-long-host-name.example.com")
    assert one_host.locator(".field-url .host").inner_text() == ("on a-long-host-name.example.com")


@pytest.mark.django_db(transaction=True)
def test_editor_adds_rules_and_the_inspector_names_them(
    live_server: Any, browser_page: Any, shots: Path
) -> None:
    page = browser_page
    base = live_server.url
    news = CategoryFactory(name="News", slug="news")
    hello = ArticleFactory(category=news, slug="hello-world", title="Hello", updated_at=WHEN)
    old = ArticleFactory(category=news, slug="old-story", title="Old", updated_at=WHEN)
    editor = User.objects.create_user("editor", password=PASSWORD, is_staff=True)
    editor.user_permissions.set(
        Permission.objects.filter(content_type__app_label="django_sitemapx")
    )
    hello_url = f"{base}{hello.get_absolute_url()}"
    old_url = f"{base}{old.get_absolute_url()}"
    sitemap = f"{base}/sitemap-article-1.xml"

    page.goto(f"{base}/admin/login/?next=/admin/django_sitemapx/rule/add/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#rule_form")
    page.evaluate("localStorage.setItem('django.admin.navSidebarIsOpen', 'false')")
    page.reload()

    # A prefix with a * is refused, with the reason.
    page.fill("#id_pattern", "/articles/*")
    page.check("#id_exclude")
    page.click("input[name=_save]")
    assert "choose glob to use *" in page.locator(".errorlist").first.inner_text()
    # A glob excluding the old stories, in the article section.
    page.select_option("#id_matching", "glob")
    page.fill("#id_pattern", "/articles/*/old-*")
    page.select_option("#id_section", "article")
    page.fill("#id_note", "Old stories are thin")
    page.click("input[name=_addanother]")
    page.wait_for_selector(".messagelist")
    # A prefix setting the priority of every article, after it.
    page.fill("#id_pattern", "/articles/")
    page.fill("#id_position", "200")
    page.fill("#id_priority", "0.3")
    page.click("input[name=_save]")
    page.wait_for_selector("#result_list")
    listing = page.inner_text("#result_list")
    assert listing.index("/articles/*/old-*") < listing.index("/articles/\t")
    page.screenshot(path=str(shots / "rules.png"), full_page=True)

    urls = _urls(page, sitemap)
    assert old_url not in urls
    assert urls[hello_url]["priority"] == "0.3"

    # The inspector names the rule excluding a URL, and the one deciding a value.
    page.goto(f"{base}/admin/django_sitemapx/override/inspect/")
    page.fill("#id_url", old_url)
    page.click("#inspect-form input[type=submit]")
    page.wait_for_selector("#why-not")
    assert "A rule excludes this URL" in page.inner_text("#why-not")
    assert "/articles/*/old-*" in page.inner_text("#why-not")
    page.fill("#id_url", hello_url)
    page.click("#inspect-form input[type=submit]")
    page.wait_for_selector("#effective-values")
    values = page.inner_text("#effective-values")
    assert "rule /articles/" in values and "0.3" in values
    assert "ignore change frequency and priority" in page.inner_text("#hints-note")
    page.click("#effective-values a.deciding-rule")
    page.wait_for_selector("#rule_form")
    assert page.input_value("#id_pattern") == "/articles/"


@pytest.mark.django_db(transaction=True)
def test_editor_imports_overrides_from_csv_all_or_nothing(
    live_server: Any, browser_page: Any, tmp_path: Path
) -> None:
    page = browser_page
    base = live_server.url
    news = CategoryFactory(name="News", slug="news")
    hello = ArticleFactory(category=news, slug="hello-world", title="Hello", updated_at=WHEN)
    editor = User.objects.create_user("editor", password=PASSWORD, is_staff=True)
    editor.user_permissions.set(
        Permission.objects.filter(content_type__app_label="django_sitemapx")
    )
    page.goto(f"{base}/admin/login/?next=/admin/django_sitemapx/override/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_selector("#changelist")

    bad = tmp_path / "bad.csv"
    bad.write_text(f"location,priority\n{hello.get_absolute_url()},0.8\n/other/,9\n")
    page.click("#import-csv")
    page.set_input_files("#id_file", str(bad))
    page.click("#import-form input[type=submit]")
    page.wait_for_selector("#import-errors")
    assert "Line 3: priority" in page.inner_text("#import-errors")
    assert "Nothing was saved." in page.inner_text("#import-errors")

    good = tmp_path / "good.csv"
    good.write_text(f"location,priority\n{hello.get_absolute_url()},0.8\n")
    page.set_input_files("#id_file", str(good))
    page.click("#import-form input[type=submit]")
    page.wait_for_selector("#result_list")
    assert "1 row created, 0 updated." in page.inner_text(".messagelist")
    hello_url = f"{base}{hello.get_absolute_url()}"
    assert _urls(page, f"{base}/sitemap-article-1.xml")[hello_url]["priority"] == "0.8"
    with page.expect_download() as download:
        page.click("#export-csv")
    exported = Path(download.value.path()).read_text()
    assert exported.splitlines()[1].startswith("/articles/news/hello-world,false,,,0.8")
    assert exported.splitlines()[0].endswith(",note,host")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("model", ["override", "rule"])
def test_the_forms_and_lists_lead_with_lastmod_and_call_the_rest_hints(
    live_server: Any, browser_page: Any, model: str
) -> None:
    """lastmod (a date and a time) comes before change frequency and priority, which are
    presented as the hints Google and Bing say they ignore (issue 26, item 6)."""
    from django_sitemapx.models import Override, Rule

    page = browser_page
    base = live_server.url
    admin_user = User.objects.create_superuser("admin", "admin@example.com", PASSWORD)
    if model == "override":
        Override.objects.create(location="/about", priority="0.3", lastmod=WHEN)
    else:
        Rule.objects.create(pattern="/tag/", priority="0.3", lastmod=WHEN)
    client = Client()
    client.force_login(admin_user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": base}]
    )

    page.goto(f"{base}/admin/django_sitemapx/{model}/add/")
    page.wait_for_selector(f"#{model}_form")
    order = page.evaluate(
        """form => [...document.querySelectorAll(`${form} input, ${form} select`)]
            .map(el => el.id).filter(id => id)""",
        f"#{model}_form",
    )
    # The admin's split widget: a date and a time.
    assert {"id_lastmod_0", "id_lastmod_1"} <= set(order)
    assert order.index("id_lastmod_1") < order.index("id_changefreq") < order.index("id_priority")
    hints = page.locator("fieldset.module", has=page.locator("#id_priority"))
    assert "Hints most search engines ignore" in hints.locator("h2").inner_text()
    assert "Google and Bing say they ignore" in hints.inner_text()
    lastmod_help = page.locator("fieldset.module", has=page.locator("#id_lastmod_0")).inner_text()
    assert "give the time too" in lastmod_help

    page.goto(f"{base}/admin/django_sitemapx/{model}/")
    page.wait_for_selector("#result_list")
    columns = page.evaluate(
        """() => [...document.querySelectorAll('#result_list thead th')]
            .map(th => th.innerText.trim().toLowerCase())"""
    )
    lastmod = columns.index("last modified")
    assert columns.index("in the sitemap") < lastmod
    assert lastmod < columns.index("change frequency (hint)") < columns.index("priority (hint)")
