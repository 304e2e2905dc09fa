"""A URL left out of the sitemap is nobody's alternate (issue 26, item 2)."""

import pytest
from django.test import override_settings
from lxml import etree

from django_sitemapx.documents import render_page
from django_sitemapx.locations import Origin
from django_sitemapx.models import Override
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import Source
from example_project.articles.factories import bulk_published_articles
from example_project.articles.models import Article
from tests.conftest import NS, validate_sitemap
from tests.factories import CategoryFactory

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.i18n_urls")]
ORIGIN = Origin("https", "example.com")
XHTML = "{http://www.w3.org/1999/xhtml}"
EN = "https://example.com/en/articles/news/a1/"
DE = "https://example.com/de/artikel/news/a1/"


def _alternates(source: Source) -> dict[str, dict[str, str]]:
    page = source.page(1)
    assert page is not None
    stream = render_page(source, page, ORIGIN)
    assert stream is not None
    root: etree._Element = validate_sitemap(b"".join(stream))
    return {
        url.findtext("sm:loc", namespaces=NS): {
            link.get("hreflang"): link.get("href") for link in url.iter(f"{XHTML}link")
        }
        for url in root.iterfind("sm:url", NS)
    }


@pytest.fixture(autouse=True)
def _two_languages():  # type: ignore[no-untyped-def]
    with override_settings(LANGUAGES=[("en", "English"), ("de", "German")], LANGUAGE_CODE="en"):
        yield


def _register(registry: SitemapRegistry) -> Source:
    bulk_published_articles(CategoryFactory(slug="news"), 1)
    return registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        i18n=True,
        alternates=True,
        x_default=True,
    )


def test_an_excluded_language_version_is_no_alternate_of_its_siblings(
    registry: SitemapRegistry,
) -> None:
    source = _register(registry)
    Override.objects.create(location=DE, exclude=True)
    assert _alternates(source) == {EN: {"en": EN, "x-default": EN}}


def test_an_excluded_x_default_is_no_alternate_either(registry: SitemapRegistry) -> None:
    source = _register(registry)
    Override.objects.create(location=EN, exclude=True)
    assert _alternates(source) == {DE: {"de": DE}}


def test_x_default_per_item_points_to_the_items_own_default_language(
    registry: SitemapRegistry,
) -> None:
    bulk_published_articles(CategoryFactory(slug="news"), 2)
    source = registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        i18n=True,
        alternates=True,
        get_x_default_for_item=lambda row: "de" if row.slug == "a1" else None,
    )
    alternates = _alternates(source)
    assert alternates[EN]["x-default"] == DE == alternates[DE]["x-default"]
    a2 = "https://example.com/en/articles/news/a2/"
    assert "x-default" not in alternates[a2]


def test_x_default_per_item_needs_alternates(registry: SitemapRegistry) -> None:
    from django_sitemapx.exceptions import SourceConfigurationError

    with pytest.raises(SourceConfigurationError, match="alternates"):
        registry.register(
            Article,
            url_name="article-detail",
            url_kwargs={"category": "category__slug", "slug": "slug"},
            i18n=True,
            get_x_default_for_item=lambda row: "de",
        )
