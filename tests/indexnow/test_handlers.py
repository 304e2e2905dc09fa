"""Changes become submissions: saved, moved and deleted rows, overrides, after commit only."""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import override_settings

from django_sitemapx import indexnow
from django_sitemapx.models import Override, PendingUrl
from example_project.articles.models import Article
from tests.factories import ArticleFactory, CategoryFactory
from tests.support.endpoint import Endpoint, unused_port_url

pytestmark = pytest.mark.django_db

IMMEDIATE = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}


@pytest.fixture(autouse=True)
def _immediate_tasks(settings: Any) -> None:
    """The framework's immediate backend, on Django 6 or the backport."""
    from django_sitemapx.compat import require_tasks_module

    module = require_tasks_module().__name__
    settings.TASKS = {"default": {"BACKEND": f"{module}.backends.immediate.ImmediateBackend"}}


def article_urls(
    article: Article, hosts: tuple[str, ...] = ("example.com", "other.example")
) -> list[list[str]]:
    path = f"/articles/{article.category.slug}/{article.slug}/"
    return [[f"https://{host}{path}"] for host in hosts]


def test_a_saved_row_is_submitted_for_every_served_host_after_commit(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    category = CategoryFactory()
    with django_capture_on_commit_callbacks(execute=True):
        article = ArticleFactory(is_published=True, category=category)
        assert endpoint.received == []  # nothing before the commit

    # ALLOWED_HOSTS serves example.com and other.example (testserver, 127.0.0.1
    # and localhost are no public hosts): one POST per host, each with its host.
    assert [r.json["host"] for r in endpoint.received] == ["example.com", "other.example"]
    assert endpoint.url_lists == article_urls(article)
    assert not PendingUrl.objects.exists()


def test_a_moved_row_submits_its_old_and_new_url(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)
    old = article_urls(article, ("example.com",))[0][0]

    with django_capture_on_commit_callbacks(execute=True):
        article.slug = "renamed"
        article.save()

    assert endpoint.url_lists[0] == [
        old,
        "https://example.com/articles/" + article.category.slug + "/renamed/",
    ]


def test_a_deleted_row_submits_its_url(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)
    expected = article_urls(article)

    with django_capture_on_commit_callbacks(execute=True):
        article.delete()

    assert endpoint.url_lists == expected


def test_an_unpublished_row_that_stays_unlisted_submits_nothing(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    category = CategoryFactory()
    with django_capture_on_commit_callbacks(execute=True):
        ArticleFactory(is_published=False, category=category)

    assert endpoint.received == []


def test_unpublishing_submits_the_url_that_went_away(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)

    with django_capture_on_commit_callbacks(execute=True):
        article.is_published = False
        article.save()

    assert endpoint.url_lists == article_urls(article)


def test_a_rolled_back_change_submits_nothing(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        try:
            with transaction.atomic():
                ArticleFactory(is_published=True)
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass

    assert endpoint.received == []
    assert not PendingUrl.objects.exists()


def test_a_section_of_its_own_model_is_submitted_too(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        category = CategoryFactory()

    assert endpoint.url_lists[0] == [f"https://example.com/articles/{category.slug}/"]


def test_a_failing_endpoint_never_fails_the_save(
    settings: Any,
    endpoint: Endpoint,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.SITEMAPX_INDEXNOW_ENDPOINT = unused_port_url()
    monkeypatch.setattr(indexnow, "RETRIES", 1)

    category = CategoryFactory()
    with django_capture_on_commit_callbacks(execute=True):
        article = ArticleFactory(is_published=True, category=category)

    assert Article.objects.filter(pk=article.pk).exists()
    assert PendingUrl.objects.count() == 2  # kept for the next run


def test_a_task_backend_that_cannot_enqueue_leaves_the_urls_pending(
    settings: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any, caplog: Any
) -> None:
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = "missing"

    category = CategoryFactory()
    with (
        caplog.at_level(logging.ERROR, "django_sitemapx.indexnow"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        ArticleFactory(is_published=True, category=category)

    assert PendingUrl.objects.count() == 2
    assert "could not be enqueued" in caplog.text
    assert endpoint.received == []


def test_a_failing_location_never_fails_the_save(
    registry: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any, caplog: Any
) -> None:
    def location(row: Any) -> str:
        raise ZeroDivisionError("a bug in the project's location()")

    registry.register(Article, location=location, fields=["slug"])
    article = ArticleFactory(is_published=True)

    with (
        caplog.at_level(logging.ERROR),
        django_capture_on_commit_callbacks(execute=True),
    ):
        article.title = "changed"
        article.save()

    assert Article.objects.get(pk=article.pk).title == "changed"
    assert "could not be read" in caplog.text


def test_an_override_change_submits_its_page(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location="https://example.com/about", priority="0.9")

    # The override's key drops the slash; the page's URL has it (APPEND_SLASH).
    assert endpoint.url_lists == [["https://example.com/about/"], ["https://other.example/about/"]]


def test_an_override_of_one_host_is_announced_on_that_host_only(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        on_other = Override.objects.create(location="/about", host="other.example", priority="0.9")
    assert endpoint.url_lists == [["https://other.example/about/"]]
    # The one of every host is announced where no host has its own: not other.example.
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location="/about", changefreq="daily")
    assert endpoint.url_lists[1:] == [["https://example.com/about/"]]
    # Deleting the host's own: the one of every host applies there now, a change.
    with django_capture_on_commit_callbacks(execute=True):
        on_other.delete()
    assert endpoint.url_lists[2:] == [["https://other.example/about/"]]
    # An override of one host showing what the host-less one shows changes nothing.
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location="/about", host="other.example", changefreq="daily")
    assert len(endpoint.url_lists) == 3


def test_a_url_excluded_on_its_host_is_not_announced_there(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)
    Override.objects.create(
        location=article.get_absolute_url(), host="other.example", exclude=True
    )
    with django_capture_on_commit_callbacks(execute=True):
        article.title = "changed"
        article.updated_at = article.updated_at.replace(year=2020)
        article.save()
    assert endpoint.url_lists == article_urls(article, ("example.com",))


@pytest.mark.parametrize(
    ("key", "url"),
    [
        ("/about", "https://example.com/about/"),  # the key drops the slash; the page has it
        ("/about/", "https://example.com/about/"),
        ("https://other.example/about", "https://example.com/about/"),
    ],
)
def test_an_override_is_announced_as_its_section_lists_it(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, key: str, url: str
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location=key, exclude=True)

    assert endpoint.url_lists[0] == [url]


def test_with_indexnow_off_a_save_costs_no_query_more() -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    article = ArticleFactory(is_published=True)
    with CaptureQueriesContext(connection) as queries:
        article.title = "changed"
        article.save(update_fields=["title"])
    # The UPDATE, and the sitemap's own lookups of the row's page (sources/layout):
    # nothing of IndexNow's.
    sql = [query["sql"].lower() for query in queries.captured_queries]
    assert sql[0].startswith("update")
    assert all("pagestate" in statement for statement in sql[1:])
    assert not any("pendingurl" in statement for statement in sql)


def test_cron_mode_queues_then_the_command_submits(
    settings: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = None
    category = CategoryFactory()
    with django_capture_on_commit_callbacks(execute=True):
        article = ArticleFactory(is_published=True, category=category)
    assert endpoint.received == []

    dry = io.StringIO()
    call_command("sitemap_indexnow", "--dry-run", "--verbosity", "3", stdout=dry)

    assert endpoint.received == []
    assert "Would submit 2 URLs in 2 batches" in dry.getvalue()
    assert article_urls(article)[0][0] in dry.getvalue()

    out = io.StringIO()
    call_command("sitemap_indexnow", stdout=out)

    assert endpoint.url_lists == article_urls(article)
    assert "Submitted 2 URLs in 2 batches; 0 refused and given up; 0 pending." in out.getvalue()


def test_the_command_queues_given_urls(settings: Any, endpoint: Endpoint) -> None:
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = None

    call_command("sitemap_indexnow", "--url", "https://example.com/about/", stdout=io.StringIO())

    assert endpoint.url_lists == [["https://example.com/about/"]]


def test_the_command_fails_when_urls_stay_pending(
    settings: Any, endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.management.base import CommandError

    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = None
    monkeypatch.setattr(indexnow, "RETRIES", 0)
    endpoint.answer(503)

    with pytest.raises(CommandError, match="stays pending"):
        call_command("sitemap_indexnow", "--url", "https://example.com/a/", stdout=io.StringIO())
    assert PendingUrl.objects.count() == 1


@override_settings(SITEMAPX_INDEXNOW_KEY=None)
def test_the_command_refuses_to_run_while_indexnow_is_off() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="SITEMAPX_INDEXNOW_KEY"):
        call_command("sitemap_indexnow", stdout=io.StringIO())


# -- the key file ------------------------------------------------------------------------


def test_the_key_file_is_served_at_the_root(client: Any, endpoint: Endpoint) -> None:
    from tests.support.endpoint import KEY

    response = client.get(f"/{KEY}.txt", HTTP_HOST="example.com")

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == KEY


def test_no_key_file_while_indexnow_is_off(client: Any) -> None:
    assert client.get("/0123abcd-test-key.txt").status_code == 404


@override_settings(ROOT_URLCONF="tests.urls_indexnow")
def test_other_txt_paths_reach_the_projects_own_patterns(client: Any, endpoint: Endpoint) -> None:
    from tests.support.endpoint import KEY

    assert client.get(f"/{KEY}.txt", HTTP_HOST="example.com").content.decode() == KEY
    assert (
        client.get("/another-key-like-name.txt").content.decode() == "note another-key-like-name"
    )
    assert client.get("/short.txt").content.decode() == "note short"


SERVED = ["example.com", "EXAMPLE.COM", "example.com.", "Other.Example", "example.com:443"]
# Hosts Django accepts (ALLOWED_HOSTS) that IndexNow submits no URL for.
NOT_SERVED = ["testserver", "localhost", "127.0.0.1", "localhost:443"]


@pytest.mark.parametrize("host", SERVED)
def test_the_key_file_answers_on_every_served_host(
    client: Any, endpoint: Endpoint, host: str
) -> None:
    from tests.support.endpoint import KEY

    response = client.get(f"/{KEY}.txt", HTTP_HOST=host, secure=True)

    assert (response.status_code, response.content.decode()) == (200, KEY)


@pytest.mark.parametrize("host", NOT_SERVED)
def test_the_key_file_is_404_on_a_host_indexnow_does_not_submit_for(
    client: Any, endpoint: Endpoint, host: str
) -> None:
    from tests.support.endpoint import KEY

    response = client.get(f"/{KEY}.txt", HTTP_HOST=host, secure=True)

    assert response.status_code == 404
    assert KEY not in response.content.decode()


@override_settings(SITEMAPX_HOSTS=["www.example.com"], ALLOWED_HOSTS=["*"])
@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("www.example.com", 200),
        ("WWW.example.com", 200),
        ("example.com", 404),
        ("evil.example", 404),
        ("www.example.com.evil.example", 404),
    ],
)
def test_with_sitemapx_hosts_the_key_file_answers_only_there(
    client: Any, endpoint: Endpoint, host: str, status: int
) -> None:
    from tests.support.endpoint import KEY

    assert client.get(f"/{KEY}.txt", HTTP_HOST=host).status_code == status


@override_settings(SITEMAPX_USE_SITES=True, SITE_ID=1, ALLOWED_HOSTS=["*"])
@pytest.mark.parametrize(("host", "status"), [("example.com", 200), ("evil.example", 404)])
def test_with_the_sites_framework_the_key_file_answers_only_on_a_sites_domain(
    client: Any, endpoint: Endpoint, host: str, status: int
) -> None:
    from django.contrib.sites.models import Site

    from tests.support.endpoint import KEY

    Site.objects.filter(pk=1).update(domain="example.com")
    Site.objects.clear_cache()

    assert client.get(f"/{KEY}.txt", HTTP_HOST=host).status_code == status


# -- the task on a real queue: django-tasks' database backend ------------------------------


# Real commits: the worker closes a connection left outside autocommit, as a
# test's wrapping transaction would be.
@pytest.mark.django_db(transaction=True)
def test_the_task_runs_on_the_database_backend_worker(settings: Any, endpoint: Endpoint) -> None:
    pytest.importorskip("django_tasks_db")
    from django_tasks_db.models import DBTaskResult

    settings.TASKS = {"db": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = "db"

    with override_settings(SITEMAPX_INDEXNOW_KEY=None):
        category = CategoryFactory()
    article = ArticleFactory(is_published=True, category=category)  # commits: queued, enqueued

    assert endpoint.received == []  # queued, not run
    assert PendingUrl.objects.count() == 2
    assert DBTaskResult.objects.count() == 1

    call_command("db_worker", "--batch", "--no-startup-delay", "--backend", "db", verbosity=0)

    assert endpoint.url_lists == article_urls(article)
    assert not PendingUrl.objects.exists()
    result = DBTaskResult.objects.get()
    assert result.status == "SUCCESSFUL"
    assert result.return_value == {
        "batches": 2,
        "submitted": 2,
        "rejected": 0,
        "unavailable": 0,
        "pending": 0,
    }


def test_a_section_limited_to_some_sites_is_submitted_only_for_them(
    registry: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        sites=["other.example"],
    )
    category = CategoryFactory()

    with django_capture_on_commit_callbacks(execute=True):
        article = ArticleFactory(is_published=True, category=category)

    assert endpoint.url_lists == article_urls(article, ("other.example",))


# -- what a save queues, and what it costs ----------------------------------------------


def _save_queries(article: Article, capture: Any, **save: Any) -> int:
    """The queries of one save of ``article``, its commit callbacks included."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries, capture(execute=True):
        article.save(**save)
    return len(queries.captured_queries)


def test_a_save_that_changes_no_entry_queues_nothing(
    settings: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = None  # cron: what is queued stays
    article = ArticleFactory(is_published=True)
    for n in range(20):
        article.title = f"title {n}"  # no section reads it; updated_at is not saved
        with django_capture_on_commit_callbacks(execute=True):
            article.save(update_fields=["title"])

    assert not PendingUrl.objects.exists()


def test_a_url_saved_many_times_is_pending_once(
    settings: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = None
    article = ArticleFactory(is_published=True, slug="a")
    for n in range(20):
        article.slug = "ab"[n % 2]  # moves each time: the old and the new URL are queued
        with django_capture_on_commit_callbacks(execute=True):
            article.save(update_fields=["slug"])

    prefix = f"/articles/{article.category.slug}/"
    assert sorted(PendingUrl.objects.values_list("url", flat=True)) == [
        f"https://{host}{prefix}{slug}/"
        for host in ("example.com", "other.example")
        for slug in "ab"
    ]


# The queries IndexNow adds to one save of an article, its commit callbacks
# included (ALLOWED_HOSTS serves two hosts; Article is in three sections, two of
# which filter their rows per host): a savepoint's two statements and one read per
# section and host group (5), before the save and after the commit. When no entry
# changes, nothing is queued: no INSERT, no task. (The whole save: 7 queries off,
# 19 on; 34 on main before #28, which queued and, with the immediate backend,
# submitted the URLs every time.)
INDEXNOW_SAVE_QUERIES = 2 + 5 + 5


def test_the_queries_of_a_save_that_changes_no_entry(
    settings: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)
    counts = []
    for n in range(5):
        article.title = f"title {n}"
        counts.append(
            _save_queries(article, django_capture_on_commit_callbacks, update_fields=["title"])
        )
    settings.SITEMAPX_INDEXNOW_KEY = None
    off = _save_queries(article, django_capture_on_commit_callbacks, update_fields=["title"])

    assert counts == [off + INDEXNOW_SAVE_QUERIES] * 5
    assert endpoint.received == []


def test_a_url_a_rule_excludes_is_never_announced(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    from django_sitemapx.models import Rule

    article = ArticleFactory(is_published=True)
    Rule.objects.create(matching="glob", pattern=f"/*/{article.slug}/", exclude=True)
    with django_capture_on_commit_callbacks(execute=True):
        article.is_published = False
        article.save()
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location=article_urls(article)[0][0], exclude=True)
    assert endpoint.received == []
