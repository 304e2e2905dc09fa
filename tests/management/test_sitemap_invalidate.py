"""The ``sitemap_invalidate`` management command."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F
from django.test import Client, override_settings

from django_sitemapx.generations import global_generation, page_generation
from django_sitemapx.models import PageState
from example_project.articles.models import Article
from tests.conftest import content, locs, validate_sitemap
from tests.factories import ArticleFactory
from tests.support.generations import tokens

pytestmark = pytest.mark.django_db


def _run(*args: str, verbosity: int = 1) -> str:
    out = StringIO()
    call_command("sitemap_invalidate", *args, stdout=out, verbosity=verbosity)
    return out.getvalue()


def test_without_arguments_everything_is_invalidated() -> None:
    before = tokens([global_generation()])
    assert _run() == "Invalidated every sitemap document.\n"
    assert tokens([global_generation()]) != before


def test_sections_and_a_page() -> None:
    assert _run("article", "category") == "Invalidated sections article, category.\n"
    before = tokens([page_generation("article", 2)])
    assert _run("article", "--page", "2") == "Invalidated page 2 of article.\n"
    assert tokens([page_generation("article", 2)]) != before
    assert _run("article", verbosity=0) == ""


def test_mistakes_are_command_errors() -> None:
    with pytest.raises(CommandError, match="Unknown sitemap section"):
        _run("nope")
    with pytest.raises(CommandError, match="--page"):
        _run("--page", "1")
    with pytest.raises(CommandError, match="--page"):
        _run("article", "category", "--page", "1")
    with pytest.raises(CommandError, match="--page"):
        _run("article", "--page", "0")


@override_settings(
    CACHES={
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        "broken": {"BACKEND": "tests.support.caches.BrokenCache"},
    },
    SITEMAPX_CACHE_ALIAS="broken",
)
def test_an_unreachable_cache_is_a_command_error() -> None:
    with pytest.raises(CommandError, match="could not be reached"):
        _run()


@override_settings(SITEMAPX_CACHE_ALIAS=None)
def test_without_a_cache_the_command_marks_the_pages(client: Client) -> None:
    ArticleFactory()
    first = content(client.get("/sitemap-article-1.xml"))
    Article.objects.update(slug="bulk-renamed")  # no signal
    assert _run("article") == "Invalidated sections article.\n"
    page = content(client.get("/sitemap-article-1.xml"))
    assert page != first
    assert PageState.objects.filter(section="article").exclude(counted=F("changes")).count() == 0


def test_bulk_changes_show_after_the_command(client: Client) -> None:
    ArticleFactory()
    first = content(client.get("/sitemap-article-1.xml"))
    Article.objects.update(slug="bulk-renamed")  # no signal
    assert content(client.get("/sitemap-article-1.xml")) == first
    _run("article", verbosity=0)
    assert any(
        "/bulk-renamed/" in loc
        for loc in locs(validate_sitemap(content(client.get("/sitemap-article-1.xml"))))
    )


def test_seed_demo_invalidates_after_its_bulk_inserts(client: Client) -> None:
    call_command("seed_demo", count=5, verbosity=0)
    before = locs(validate_sitemap(content(client.get("/sitemap-article-1.xml"))))
    call_command("seed_demo", count=15, verbosity=0)
    after = locs(validate_sitemap(content(client.get("/sitemap-article-1.xml"))))
    assert len(before) == 5 and len(after) == 14  # every tenth is unpublished
