"""``manage.py sitemap_audit`` and ``audit_sitemap()`` against real views (tests/urls.py).

Each view of tests/views.py under ``/audit/`` has one of the problems Search Console
reports for a submitted URL; the audit must find each, and only those.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import override_settings
from django.utils import translation

from django_sitemapx.audit import Kind, audit_sitemap, last_report
from django_sitemapx.audit.fetch import HeadReader, header_noindex
from django_sitemapx.locations import Origin
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource, StaticSource
from tests.conftest import close_thread_connections
from tests.testapp.models import Tag

pytestmark = pytest.mark.django_db

BASE = "https://example.com"
ORIGIN = Origin("https", "example.com")
SESSIONS = "django.contrib.sessions.middleware.SessionMiddleware"
RULES = "User-agent: *\nDisallow: /audit/private/\n"


class Translated(ItemSource):
    """One page in English and German; the German one is missing."""

    i18n = True
    alternates = True
    languages = ["en", "de"]

    def items(self) -> list[str]:
        return ["page"]

    def location(self, item: Any) -> str:
        return "/audit/also-fine/" if translation.get_language() == "en" else "/audit/de/gone/"


def _register(registry: SitemapRegistry) -> SitemapRegistry:
    registry.register("good", StaticSource, url_names=["audit-fine", "audit-also-fine"])
    registry.register(
        "bad",
        StaticSource,
        url_names=[
            "audit-gone",
            "audit-moved",
            "audit-header-noindex",
            "audit-meta-noindex",
            "audit-canonical",
            "audit-private",
        ],
    )
    return registry


@pytest.fixture
def sections(registry: SitemapRegistry, settings: Any) -> SitemapRegistry:
    settings.SITEMAPX_ROBOTS_RULES = RULES
    return _register(registry)


def _kinds(report: Any) -> set[tuple[str, str]]:
    return {(finding.kind, finding.url.removeprefix(BASE)) for finding in report.findings}


def test_each_problem_is_found_on_its_url_and_nothing_else(sections: SitemapRegistry) -> None:
    report = audit_sitemap(origins=[ORIGIN])
    assert report.checked == {"good": 2, "bad": 6}
    assert _kinds(report) == {
        (Kind.STATUS, "/audit/gone/"),
        (Kind.REDIRECT, "/audit/moved/"),
        (Kind.NOINDEX, "/audit/header-noindex/"),
        (Kind.NOINDEX, "/audit/meta-noindex/"),
        (Kind.CANONICAL, "/audit/canonical/"),
        (Kind.ROBOTS, "/audit/private/page/"),
    }
    found = {finding.url.removeprefix(BASE): finding for finding in report.findings}
    assert found["/audit/gone/"].status == 404
    moved = found["/audit/moved/"]
    assert (moved.status, moved.target, moved.target_listed) == (
        301,
        f"{BASE}/audit/fine/",
        True,
    )
    assert found["/audit/header-noindex/"].detail == "X-Robots-Tag"
    assert found["/audit/meta-noindex/"].detail == '<meta name="robots">'
    canonical = found["/audit/canonical/"]
    assert (canonical.target, canonical.target_listed) == (f"{BASE}/audit/fine/", True)
    assert "User-agent: Googlebot" in found["/audit/private/page/"].detail
    assert report.by_section() == {
        "good": {},
        "bad": {"status": 1, "redirect": 1, "noindex": 2, "canonical": 1, "robots": 1},
    }


def test_a_redirect_or_canonical_to_an_unlisted_url_says_so(registry: SitemapRegistry) -> None:
    registry.register("bad", StaticSource, url_names=["audit-moved", "audit-canonical"])
    report = audit_sitemap(origins=[ORIGIN])
    assert {(f.kind, f.target_listed) for f in report.findings} == {
        (Kind.REDIRECT, False),
        (Kind.CANONICAL, False),
    }


def test_the_robots_txt_template_is_read_as_the_site_serves_it(
    registry: SitemapRegistry, settings: Any, tmp_path: Any
) -> None:
    (tmp_path / "django_sitemapx").mkdir()
    (tmp_path / "django_sitemapx" / "robots.txt").write_text(
        "User-agent: Googlebot\nDisallow: /audit/\n\nUser-agent: *\nDisallow:\n"
    )
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path]}]
    registry.register("good", StaticSource, url_names=["audit-fine"])
    assert _kinds(audit_sitemap(origins=[ORIGIN])) == {(Kind.ROBOTS, "/audit/fine/")}
    assert audit_sitemap(origins=[ORIGIN], robots_token="Bingbot").ok


def test_a_url_in_two_sections_is_reported_in_the_second(sections: SitemapRegistry) -> None:
    sections.register("again", StaticSource, url_names=["audit-fine"])
    report = audit_sitemap(origins=[ORIGIN], sections=["good", "again"])
    (duplicate,) = [f for f in report.findings if f.kind == Kind.DUPLICATE]
    assert (duplicate.section, duplicate.url, duplicate.detail) == (
        "again",
        f"{BASE}/audit/fine/",
        "good",
    )
    assert report.checked == {"good": 2}  # a URL is asked for once


def test_an_image_section_beside_the_pages_is_no_duplicate(sections: SitemapRegistry) -> None:
    sections.register(
        "images",
        StaticSource,
        url_names=["audit-fine"],
        images=lambda item: ["https://example.com/media/fine.png"],
    )
    report = audit_sitemap(origins=[ORIGIN], sections=["good", "images"])
    assert report.ok and report.checked == {"good": 2}


def test_an_alternate_that_fails_is_reported_on_each_url_naming_it(
    registry: SitemapRegistry,
) -> None:
    registry.register("translated", Translated)
    report = audit_sitemap(origins=[ORIGIN])
    # The German page's own failure is its status, not an alternate of itself.
    assert sorted(_kinds(report)) == [
        (Kind.ALTERNATE, "/audit/also-fine/"),
        (Kind.STATUS, "/audit/de/gone/"),
    ]
    alternate = next(f for f in report.findings if f.url == f"{BASE}/audit/also-fine/")
    assert (alternate.status, alternate.target, alternate.detail) == (
        404,
        f"{BASE}/audit/de/gone/",
        "hreflang=de",
    )


def test_a_section_and_a_sample_limit_the_urls_asked_for(sections: SitemapRegistry) -> None:
    assert audit_sitemap(origins=[ORIGIN], sections=["good"]).ok
    first = audit_sitemap(origins=[ORIGIN], sample=3, seed=7)
    again = audit_sitemap(origins=[ORIGIN], sample=3, seed=7)
    assert sum(first.checked.values()) == 3
    assert first.findings == again.findings and first.checked == again.checked
    with pytest.raises(ValueError, match="nope"):
        audit_sitemap(origins=[ORIGIN], sections=["nope"])


def test_the_requests_are_a_crawlers_for_the_urls_host(
    registry: SitemapRegistry, settings: Any
) -> None:
    seen: list[tuple[str, str, bool]] = []

    class Recording(StaticSource):
        pass

    from django.core.signals import request_started

    def record(sender: Any, environ: dict[str, Any], **kwargs: Any) -> None:
        seen.append((environ["HTTP_HOST"], environ["HTTP_USER_AGENT"], environ["wsgi.url_scheme"]))

    registry.register("good", Recording, url_names=["audit-fine"])
    settings.SITEMAPX_HOSTS = ["example.com", "other.example"]
    request_started.connect(record)
    try:
        report = audit_sitemap()
    finally:
        request_started.disconnect(record)
    assert report.hosts == ["example.com", "other.example"]
    assert report.checked == {"good": 2}
    hosts = {host for host, _agent, _scheme in seen}
    assert hosts == {"example.com", "other.example"}
    assert all("Googlebot" in agent and scheme == "https" for _host, agent, scheme in seen)


def test_a_streamed_page_is_read_too(registry: SitemapRegistry) -> None:
    registry.register("streamed", StaticSource, url_names=["audit-streamed", "audit-fine"])
    report = audit_sitemap(origins=[ORIGIN])
    assert _kinds(report) == {(Kind.NOINDEX, "/audit/streamed/")}


def test_nothing_a_view_writes_is_kept(registry: SitemapRegistry) -> None:
    registry.register("counted", StaticSource, url_names=["audit-counted"])
    assert audit_sitemap(origins=[ORIGIN]).ok
    assert not Tag.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_and_a_rate_find_the_same(
    sections: SitemapRegistry,
) -> None:
    sections.register("counted", StaticSource, url_names=["audit-counted"])
    one = audit_sitemap(origins=[ORIGIN])
    # A worker thread's close_all() leaves its connection to an in-memory SQLite test
    # database open (Django keeps such databases alive): close it for real, or Python
    # 3.13 reports it unclosed when it is collected.
    with mock.patch.object(connections, "close_all", close_thread_connections):
        several = audit_sitemap(origins=[ORIGIN], concurrency=3, rate=1000)
    assert sorted(map(repr, one.findings)) == sorted(map(repr, several.findings))
    assert not Tag.objects.exists()


# -- the command ------------------------------------------------------------------------


def _run(*args: str) -> tuple[str, CommandError | None]:
    out = io.StringIO()
    try:
        call_command("sitemap_audit", "--base-url", BASE, *args, stdout=out, stderr=io.StringIO())
    except CommandError as error:
        return out.getvalue(), error
    return out.getvalue(), None


def test_the_command_exits_non_zero_with_a_text_report(sections: SitemapRegistry) -> None:
    out, error = _run()
    assert error is not None and error.returncode == 1
    assert "6 problems" in str(error)
    assert "bad: 6 URLs checked, 6 problems" in out
    assert f"redirect: {BASE}/audit/moved/ redirects (301) to {BASE}/audit/fine/ (listed)" in out
    assert "8 URLs checked on example.com: 6 problems." in out


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_is_shown_on_a_terminal_only(sections: SitemapRegistry) -> None:
    terminal, piped = Terminal(), io.StringIO()
    for stderr in (terminal, piped):
        call_command(
            "sitemap_audit",
            "--base-url",
            BASE,
            "--section",
            "good",
            stdout=io.StringIO(),
            stderr=stderr,
        )
    assert "\rChecked 2 of 2 URLs" in terminal.getvalue()
    assert piped.getvalue() == ""


def test_the_example_sites_model_sections_are_audited(registry: SitemapRegistry) -> None:
    from example_project.articles.factories import ArticleFactory
    from example_project.articles.sitemapx import ArticleSitemap

    registry.register("article", ArticleSitemap)
    ArticleFactory.create_batch(3)
    report = audit_sitemap(origins=[ORIGIN])
    assert report.checked == {"article": 3} and report.ok


def test_language_versions_answer_where_locale_middleware_serves_them(
    settings: Any,
) -> None:
    # The example's sections (the default registry): its pages exist in three
    # languages, served under i18n_patterns, which need LocaleMiddleware.
    report = audit_sitemap(origins=[ORIGIN], sections=["pages"])
    assert {(f.kind, f.url.removeprefix(BASE)) for f in report.findings} >= {
        (Kind.STATUS, "/de/about/"),
        (Kind.ALTERNATE, "/about/"),
    }
    middleware = list(settings.MIDDLEWARE)
    middleware.insert(middleware.index(SESSIONS) + 1, "django.middleware.locale.LocaleMiddleware")
    settings.MIDDLEWARE = middleware
    with translation.override("en"):
        report = audit_sitemap(origins=[ORIGIN], sections=["pages"])
        # The requests for /de/ and /fr/ left this thread's language alone.
        assert translation.get_language() == "en"
    assert report.ok and report.checked == {"pages": 6}


def test_a_clean_sitemap_exits_zero(sections: SitemapRegistry) -> None:
    out, error = _run("--section", "good")
    assert error is None
    assert "no problem." in out


def test_json_and_csv_reports(sections: SitemapRegistry) -> None:
    out, _error = _run("--format", "json")
    data = json.loads(out)
    assert data["checked"] == {"good": 2, "bad": 6}
    assert {f["kind"] for f in data["findings"]} == {
        "status",
        "redirect",
        "noindex",
        "canonical",
        "robots",
    }
    out, _error = _run("--format", "csv", "--section", "bad")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 6
    gone = next(row for row in rows if row["kind"] == "status")
    assert (gone["url"], gone["status"], gone["target_listed"]) == (
        f"{BASE}/audit/gone/",
        "404",
        "",
    )


def test_the_command_keeps_the_report_for_the_overview(sections: SitemapRegistry) -> None:
    _run("--section", "bad")
    report = last_report()
    assert report is not None and report.by_section()["bad"]["noindex"] == 2
    _run("--section", "good", "--no-store")
    assert last_report() == report


@override_settings(SITEMAPX_HOSTS=[])
def test_no_host_and_bad_options_are_command_errors(sections: SitemapRegistry) -> None:
    with pytest.raises(CommandError, match="No host to audit"):
        call_command("sitemap_audit", stdout=io.StringIO())
    for args in (["--section", "nope"], ["--base-url", "example.com/x"]):
        with pytest.raises(CommandError):
            call_command("sitemap_audit", *args, stdout=io.StringIO())
    with pytest.raises(CommandError):
        call_command("sitemap_audit", "--concurrency", "0", stdout=io.StringIO())


# -- what is read of a response ---------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "noindex"),
    [
        ("noindex", True),
        ("NoIndex", True),
        ("none", True),
        ("nofollow, noindex", True),
        ("googlebot: noindex", True),
        ("nofollow", False),
        ("unavailable_after: 25 Jun 2030 15:00:00 PST", False),
        ("", False),
    ],
)
def test_x_robots_tag_values(value: str, noindex: bool) -> None:
    assert header_noindex(value) is noindex


def test_the_head_reader_takes_the_first_canonical_and_robots_meta_only() -> None:
    reader = HeadReader()
    reader.feed(
        '<html><head><meta name="description" content="noindex">'
        '<link rel="alternate canonical" href="/a">'
        '<link rel="canonical" href="/b"/><META NAME="GoogleBot" CONTENT="NONE"></head>'
        "<body><p>rel=canonical noindex</p></body></html>"
    )
    assert (reader.canonical, reader.noindex) == ("/a", "googlebot")


# -- the task ---------------------------------------------------------------------------


def test_the_task_keeps_its_report(sections: SitemapRegistry, settings: Any) -> None:
    from django_sitemapx.compat import require_tasks_module

    module = require_tasks_module().__name__
    settings.TASKS = {"default": {"BACKEND": f"{module}.backends.immediate.ImmediateBackend"}}
    settings.SITEMAPX_HOSTS = ["example.com"]
    from django_sitemapx.audit.tasks import audit_sitemap_task

    result = audit_sitemap_task.enqueue(sections=["bad"])
    assert result.return_value["problems"] == 6
    report = last_report()
    assert report is not None and report.checked == {"bad": 6}


# -- the admin's overview ---------------------------------------------------------------


def test_the_overview_shows_the_last_report_by_section(sections: SitemapRegistry) -> None:
    from django.urls import reverse

    from tests.support.admin import OVERVIEW, staff_client

    editor = staff_client("view_override")
    before = editor.get(reverse(OVERVIEW))
    assert "No audit kept" in before.content.decode()
    assert all(row.audit is None for row in before.context["rows"])
    _run("--section", "bad")
    response = editor.get(reverse(OVERVIEW))
    rows = {row.section: row for row in response.context["rows"]}
    assert rows["good"].audit is None
    assert rows["bad"].audited == 6
    assert [(str(label), count) for label, count in rows["bad"].audit] == [
        ("answers an error", 1),
        ("redirects", 1),
        ("marked noindex", 2),
        ("names another canonical URL", 1),
        ("blocked by robots.txt", 1),
    ]
    body = response.content.decode()
    assert "found 6 problems" in body and "2 \u00d7 marked noindex" in body
