"""The removed-pages section (issue 26): URLs that left the sitemap, for a while."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from django_sitemapx.documents import render_page
from django_sitemapx.locations import Origin
from django_sitemapx.models import Override, RemovedUrl, Rule
from django_sitemapx.registry import default_registry
from django_sitemapx.removed import RemovedSource
from example_project.articles.models import Article
from tests.conftest import NS, content, locs, validate_sitemap
from tests.factories import ArticleFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def section() -> Iterator[RemovedSource]:
    source = default_registry.register("removed", RemovedSource, days=30, limit=3)
    assert isinstance(source, RemovedSource)
    try:
        yield source
    finally:
        default_registry.unregister("removed")


def _url(article: Article, host: str = "example.com") -> str:
    return f"https://{host}/articles/{article.category.slug}/{article.slug}/"


def _recorded() -> list[str]:
    return sorted(RemovedUrl.objects.values_list("url", flat=True))


def _listed(source: RemovedSource, host: str = "example.com") -> dict[str, str]:
    bound = source.for_origin(Origin("https", host))
    page = bound.page(1)
    if page is None:
        return {}
    stream = render_page(bound, page, Origin("https", host))
    assert stream is not None
    root = validate_sitemap(b"".join(stream))
    return {
        url.findtext("sm:loc", namespaces=NS): url.findtext("sm:lastmod", namespaces=NS)
        for url in root.iterfind("sm:url", NS)
    }


def test_a_deleted_row_is_listed_per_host_with_its_removal_as_lastmod(
    section: RemovedSource, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)
    with django_capture_on_commit_callbacks(execute=True):
        article.delete()
    assert _recorded() == sorted([_url(article), _url(article, "other.example")])
    listed = _listed(section)
    assert list(listed) == [_url(article)]
    removed_at = RemovedUrl.objects.get(url=_url(article)).removed_at
    assert listed[_url(article)] == removed_at.isoformat(timespec="seconds")


def test_an_unpublished_row_is_listed_until_it_comes_back(
    section: RemovedSource, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)
    with django_capture_on_commit_callbacks(execute=True):
        article.is_published = False
        article.save()
    assert _url(article) in _recorded()
    with django_capture_on_commit_callbacks(execute=True):
        article.is_published = True
        article.save()
    assert _recorded() == []


def test_a_url_never_listed_is_never_recorded(
    section: RemovedSource, django_capture_on_commit_callbacks: Any
) -> None:
    hidden = ArticleFactory(is_published=False)
    excluded = ArticleFactory(is_published=True)
    ruled = ArticleFactory(is_published=True, slug="ruled-out")
    Override.objects.create(location=_url(excluded), exclude=True)
    Rule.objects.create(matching="glob", pattern="/*/ruled-out/", exclude=True)
    with django_capture_on_commit_callbacks(execute=True):
        hidden.delete()
        excluded.delete()
        ruled.delete()
    assert _recorded() == []


def test_an_override_excluding_a_listed_url_records_it_and_its_deletion_forgets_it(
    section: RemovedSource, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)
    with django_capture_on_commit_callbacks(execute=True):
        override = Override.objects.create(location=_url(article), exclude=True)
    assert _url(article) in _recorded()
    with django_capture_on_commit_callbacks(execute=True):
        override.delete()
    assert _recorded() == []


def test_entries_drop_out_after_the_days_and_the_document_expires_with_the_oldest(
    section: RemovedSource,
) -> None:
    now = timezone.now()
    for days, name in ((40, "old"), (29, "recent")):
        RemovedUrl.objects.create(
            url=f"https://example.com/{name}/",
            url_hash=name,
            host="example.com",
            removed_at=now - datetime.timedelta(days=days),
        )
    assert list(_listed(section)) == ["https://example.com/recent/"]
    expires = section.expires()
    assert expires is not None and expires - now.timestamp() <= 24 * 3600 + 5


def test_the_section_is_bounded_most_recent_kept(
    section: RemovedSource, django_capture_on_commit_callbacks: Any
) -> None:
    articles = ArticleFactory.create_batch(3, is_published=True)
    for article in articles:
        with django_capture_on_commit_callbacks(execute=True):
            article.delete()
    # limit=3 per host: the oldest of example.com and other.example were pruned.
    assert RemovedUrl.objects.filter(host="example.com").count() == 3
    assert len(_listed(section)) == 3


def test_without_the_section_nothing_is_recorded(
    django_capture_on_commit_callbacks: Any,
) -> None:
    article = ArticleFactory(is_published=True)
    with django_capture_on_commit_callbacks(execute=True):
        article.delete()
    assert not RemovedUrl.objects.exists()


def test_the_section_is_served_and_in_the_index(
    section: RemovedSource, client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    article = ArticleFactory(is_published=True)
    with django_capture_on_commit_callbacks(execute=True):
        article.delete()
    host = {"HTTP_HOST": "example.com"}
    index = locs(validate_sitemap(content(client.get("/sitemap.xml", **host))))
    assert any(loc.endswith("/sitemap-removed-1.xml") for loc in index)
    listed = locs(validate_sitemap(content(client.get("/sitemap-removed-1.xml", **host))))
    assert listed == [_url(article)]
