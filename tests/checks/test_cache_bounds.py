"""The checks of the cache's bounds: E015-E018, E710, W004 and W005, through ``check``."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from django_sitemapx.registry import SitemapRegistry
from example_project.articles.factories import ArticleFactory
from example_project.articles.models import Article
from tests.support.checks import ID, check_errors, check_warnings


@pytest.mark.parametrize(
    ("setting", "value", "number"),
    [
        ("SITEMAPX_CACHE_PART_BYTES", -1, "E015"),
        ("SITEMAPX_CACHE_PART_BYTES", "1MB", "E015"),
        ("SITEMAPX_CACHE_BUILDS", -1, "E016"),
        ("SITEMAPX_CACHE_BUILDS", 2.5, "E016"),
        ("SITEMAPX_CACHE_BUILD_WAIT", -1, "E017"),
        ("SITEMAPX_CACHE_BUILD_WAIT", "5", "E017"),
        ("SITEMAPX_WILDCARD_HOSTS", None, "E018"),
        ("SITEMAPX_CACHE_STORE_THREAD", "yes", "E710"),
        ("SITEMAPX_CACHE_STORE_THREAD", 1, "E710"),
    ],
)
def test_e015_to_e018_and_e710_bad_values(setting: str, value: object, number: str) -> None:
    with override_settings(**{setting: value}):
        assert check_errors() == [number]


def test_good_values_pass() -> None:
    with override_settings(
        SITEMAPX_CACHE_PART_BYTES=0,
        SITEMAPX_CACHE_BUILDS=0,
        SITEMAPX_CACHE_BUILD_WAIT=0,
        SITEMAPX_WILDCARD_HOSTS=0,
        SITEMAPX_CACHE_STORE_THREAD=False,
    ):
        assert check_warnings() == []


def test_w004_a_wildcard_without_sitemapx_hosts() -> None:
    with override_settings(ALLOWED_HOSTS=["*"]):
        stderr = io.StringIO()
        call_command("check", stdout=io.StringIO(), stderr=stderr)
        assert ID.findall(stderr.getvalue()) == ["W004"]
        assert "first 10 such host names" in stderr.getvalue()
    with override_settings(ALLOWED_HOSTS=["*"], SITEMAPX_HOSTS=["example.com"]):
        assert check_warnings() == []


def _database_check() -> str:
    stderr = io.StringIO()
    call_command("check", databases=["default"], stdout=io.StringIO(), stderr=stderr)
    return stderr.getvalue()


@pytest.mark.django_db
def test_w005_the_default_max_entries_cannot_hold_the_sitemap(registry: SitemapRegistry) -> None:
    from example_project.articles.sitemapx import ArticleSitemap

    registry.register("article", ArticleSitemap, limit=10)
    category = ArticleFactory().category
    now = timezone.now()
    Article.objects.bulk_create(  # made directly: factory-boy's build costs 0.3 to 0.6 ms a row
        Article(category=category, slug=f"a-{n}", title="Bulk", updated_at=now, is_published=True)
        for n in range(1_999)
    )
    locmem = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    with override_settings(CACHES=locmem):
        assert check_warnings() == []  # without --database, no query
        output = _database_check()
        assert ID.findall(output) == ["W005"]
        assert "at most 300 entries" in output
        # Per host (example.com and other.example): a document and a generation a
        # page, and the index; then 1 section generation, 2 others and 4 build slots.
        assert "2,000 rows (200 pages on 2 hosts) needs 809" in output
        assert "MAX_ENTRIES'] to at least 1,618" in output
    locmem["default"]["OPTIONS"] = {"MAX_ENTRIES": 1_618}  # type: ignore[assignment]
    with override_settings(CACHES=locmem):
        assert ID.findall(_database_check()) == []


@pytest.mark.django_db
def test_w005_memcached_given_values_over_its_item_limit() -> None:
    memcached = {
        "default": {
            "BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache",
            "LOCATION": "127.0.0.1:11211",
        }
    }
    with override_settings(CACHES=memcached, SITEMAPX_CACHE_PART_BYTES=0):
        output = _database_check()
        assert ID.findall(output) == ["W005"]
        assert "1,048,576 bytes" in output
    with override_settings(CACHES=memcached):
        assert ID.findall(_database_check()) == []
