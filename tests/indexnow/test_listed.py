"""IndexNow announces only URLs the sitemap lists, or listed until the change (#28).

A URL never listed (an override prepared for an unpublished article, an excluded
URL that was never in the sitemap) is never sent; one that just left (unpublished,
deleted, excluded) is. Each case runs against the recording endpoint on 127.0.0.1.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from django_sitemapx.models import Override, PendingUrl
from example_project.articles.models import Article
from tests.factories import ArticleFactory, CategoryFactory
from tests.support.admin import CHANGELIST, staff_client
from tests.support.endpoint import Endpoint

pytestmark = pytest.mark.django_db

HOSTS = ("example.com", "other.example")


@pytest.fixture(autouse=True)
def _cron(settings: Any) -> None:
    """Queued URLs stay pending: the tests read what was queued."""
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = None


def queued() -> list[str]:
    return sorted(PendingUrl.objects.values_list("url", flat=True))


def on_every_host(path: str) -> list[str]:
    return sorted(f"https://{host}{path}" for host in HOSTS)


def path_of(article: Article) -> str:
    return f"/articles/{article.category.slug}/{article.slug}/"


@pytest.fixture
def published(django_capture_on_commit_callbacks: Any) -> Article:
    article = ArticleFactory(is_published=True, category=CategoryFactory(), slug="listed")
    PendingUrl.objects.all().delete()
    return article


@pytest.fixture
def unpublished() -> Article:
    article = ArticleFactory(is_published=False, category=CategoryFactory(), slug="draft")
    PendingUrl.objects.all().delete()
    return article


def change(capture: Any, action: Any) -> list[str]:
    """What ``action`` queued, once its transaction committed."""
    PendingUrl.objects.all().delete()
    with capture(execute=True):
        action()
    return queued()


# -- overrides: never a URL the sitemap did not list --------------------------------------

NEVER_LISTED = ["/internal/layoffs-2025/", "/nowhere", "/articles/no-such/row/"]


@pytest.mark.parametrize("path", NEVER_LISTED)
@pytest.mark.parametrize(
    "values", [{"exclude": True}, {"priority": Decimal("0.9")}, {"lastmod": "2025-01-01T00:00Z"}]
)
def test_an_override_of_a_url_no_section_lists_is_not_announced(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, path: str, values: Any
) -> None:
    def create() -> None:
        Override.objects.create(location=path, **values)

    assert change(django_capture_on_commit_callbacks, create) == []


@pytest.mark.parametrize("values", [{"exclude": True}, {"priority": Decimal("0.9")}])
def test_an_override_prepared_for_an_unpublished_article_is_not_announced(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, unpublished: Article, values: Any
) -> None:
    def create() -> None:
        Override.objects.create(location=path_of(unpublished), **values)

    assert change(django_capture_on_commit_callbacks, create) == []


def test_excluding_a_listed_url_announces_that_it_left(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, published: Article
) -> None:
    def exclude() -> None:
        Override.objects.create(location=path_of(published), exclude=True)

    assert change(django_capture_on_commit_callbacks, exclude) == on_every_host(path_of(published))


def test_an_excluded_url_stays_unannounced_whatever_else_changes(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, published: Article
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        override = Override.objects.create(location=path_of(published), exclude=True)

    def edit() -> None:
        override.priority = Decimal("0.3")
        override.changefreq = "daily"
        override.note = "still out"
        override.save()

    assert change(django_capture_on_commit_callbacks, edit) == []
    assert change(django_capture_on_commit_callbacks, published.save) == []  # the row: same

    def move() -> None:  # the row moves from one excluded URL to a listed one
        published.slug = "moved"
        published.save()

    assert change(django_capture_on_commit_callbacks, move) == on_every_host(path_of(published))


def test_including_an_excluded_url_again_announces_it(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, published: Article
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        override = Override.objects.create(location=path_of(published), exclude=True)

    assert change(django_capture_on_commit_callbacks, override.delete) == on_every_host(
        path_of(published)
    )


def test_a_note_alone_announces_nothing(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, published: Article
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        override = Override.objects.create(location=path_of(published), priority=Decimal("0.2"))

    def note() -> None:
        override.note = "why"
        override.save()

    assert change(django_capture_on_commit_callbacks, note) == []

    def priority() -> None:
        override.priority = Decimal("0.8")
        override.save()

    assert change(django_capture_on_commit_callbacks, priority) == on_every_host(
        path_of(published)
    )


def test_a_moved_override_announces_only_what_a_section_lists(
    endpoint: Endpoint,
    django_capture_on_commit_callbacks: Any,
    published: Article,
    unpublished: Article,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        override = Override.objects.create(location=path_of(unpublished), exclude=True)

    def move() -> None:
        override.location = path_of(published)
        override.save()

    # The draft's URL was never listed; the published one was, and is excluded now.
    assert change(django_capture_on_commit_callbacks, move) == on_every_host(path_of(published))


def test_an_override_of_a_section_limited_to_one_site_is_announced_there_only(
    registry: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        sites=["other.example"],
    )
    article = ArticleFactory(is_published=True)

    def exclude() -> None:
        Override.objects.create(location=path_of(article), exclude=True)

    assert change(django_capture_on_commit_callbacks, exclude) == [
        f"https://other.example{path_of(article)}"
    ]


def test_a_static_page_is_found_by_its_entries(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    def exclude() -> None:
        Override.objects.create(location="/about", exclude=True)

    assert change(django_capture_on_commit_callbacks, exclude) == on_every_host("/about/")


# -- rows: an excluded URL is never announced ---------------------------------------------


def test_publishing_an_article_whose_url_is_excluded_announces_nothing(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, unpublished: Article
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        Override.objects.create(location=path_of(unpublished), exclude=True)

    def publish() -> None:
        unpublished.is_published = True
        unpublished.save()

    assert change(django_capture_on_commit_callbacks, publish) == []
    assert change(django_capture_on_commit_callbacks, unpublished.delete) == []


@pytest.mark.parametrize("leaves", ["unpublished", "deleted"])
def test_a_listed_row_that_leaves_is_announced(
    endpoint: Endpoint, django_capture_on_commit_callbacks: Any, published: Article, leaves: str
) -> None:
    path = path_of(published)

    def leave() -> None:
        if leaves == "deleted":
            published.delete()
        else:
            published.is_published = False
            published.save()

    assert change(django_capture_on_commit_callbacks, leave) == on_every_host(path)


# -- the admin's bulk actions --------------------------------------------------------------


def _action(client: Client, action: str, rows: list[Override]) -> None:
    data = {"action": action, "_selected_action": [str(row.pk) for row in rows]}
    assert client.post(reverse(CHANGELIST), data, follow=True).status_code == 200


def test_bulk_actions_announce_only_listed_urls(
    endpoint: Endpoint,
    django_capture_on_commit_callbacks: Any,
    published: Article,
    unpublished: Article,
) -> None:
    editor = staff_client("view_override", "add_override", "change_override", "delete_override")
    with django_capture_on_commit_callbacks(execute=True):
        listed = Override.objects.create(location=path_of(published), priority=Decimal("0.5"))
        draft = Override.objects.create(location=path_of(unpublished), priority=Decimal("0.5"))
        secret = Override.objects.create(location="/internal/layoffs-2025/", changefreq="daily")
    rows = [listed, draft, secret]

    def exclude() -> None:
        _action(editor, "exclude_urls", rows)

    assert change(django_capture_on_commit_callbacks, exclude) == on_every_host(path_of(published))

    def exclude_again() -> None:  # already excluded: nothing changes
        _action(editor, "exclude_urls", rows)

    assert change(django_capture_on_commit_callbacks, exclude_again) == []

    def include() -> None:
        _action(editor, "include_urls", rows)

    assert change(django_capture_on_commit_callbacks, include) == on_every_host(path_of(published))

    def place_again() -> None:
        _action(editor, "place_again", rows)

    assert change(django_capture_on_commit_callbacks, place_again) == []


@pytest.mark.urls("tests.i18n_urls")
@pytest.mark.parametrize(
    ("path", "announced"),
    [
        ("/de/artikel/c/listed/", True),
        ("/en/articles/c/listed/", True),
        ("/de/artikel/c/x/", False),
    ],
)
def test_an_override_of_another_language_version_is_announced_if_listed(
    registry: Any,
    settings: Any,
    endpoint: Endpoint,
    django_capture_on_commit_callbacks: Any,
    path: str,
    announced: bool,
) -> None:
    settings.LANGUAGES = [("en", "English"), ("de", "German")]
    settings.LANGUAGE_CODE = "en"
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        i18n=True,
    )
    ArticleFactory(is_published=True, category=CategoryFactory(slug="c"), slug="listed")

    def exclude() -> None:
        Override.objects.create(location=path, exclude=True)

    expected = on_every_host(path) if announced else []
    assert change(django_capture_on_commit_callbacks, exclude) == expected


@pytest.mark.urls("tests.i18n_urls")
def test_with_a_host_per_language_each_host_announces_its_own_languages_only(
    registry: Any, settings: Any, endpoint: Endpoint, django_capture_on_commit_callbacks: Any
) -> None:
    """A domain per country: a saved row's version on each host, never another
    language's path on a host that does not list it (issue 26)."""
    settings.LANGUAGES = [("en", "English"), ("de", "German")]
    settings.LANGUAGE_CODE = "en"
    settings.SITEMAPX_HOSTS = list(HOSTS)
    settings.SITEMAPX_LANGUAGE_HOSTS = {"en": "example.com", "de": "other.example"}
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        i18n=True,
        alternates=True,
    )
    category = CategoryFactory(slug="c")

    def publish() -> None:
        ArticleFactory(is_published=True, category=category, slug="listed")

    assert change(django_capture_on_commit_callbacks, publish) == [
        "https://example.com/en/articles/c/listed/",
        "https://other.example/de/artikel/c/listed/",
    ]

    def exclude() -> None:
        Override.objects.create(location="/de/artikel/c/listed/", exclude=True)

    assert change(django_capture_on_commit_callbacks, exclude) == [
        "https://other.example/de/artikel/c/listed/"
    ]
