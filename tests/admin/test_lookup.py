"""Finding one URL in the sitemap, by query or by scanning a section."""

from typing import Any

import pytest
from django.test import override_settings
from django.utils import translation

from django_sitemapx import ItemSource, ModelSource
from django_sitemapx.admin.lookup import (
    FILTERED_OUT,
    NOT_REGISTERED,
    TOO_LONG,
    inspected_origin,
    locate,
    place,
)
from django_sitemapx.locations import Origin
from example_project.articles.factories import ArticleFactory
from example_project.articles.models import Article
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db
ORIGIN = Origin("https", "example.com")


def _articles(registry, **options):  # type: ignore[no-untyped-def]
    return registry.register(
        Article,
        ModelSource,
        queryset=Article.objects.filter(is_published=True),
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        **options,
    )


def test_model_row_is_found_by_one_query_on_its_keyset_page(
    registry,
    django_assert_max_num_queries,  # type: ignore[no-untyped-def]
) -> None:
    source = _articles(registry, limit=2)
    articles = ArticleFactory.create_batch(5)
    source.page_summaries()
    target = articles[4]
    # The key, its page in the page table (before and after bringing that page up
    # to date), then that page's range and rows.
    with django_assert_max_num_queries(6):
        finding = locate(registry, f"https://example.com{target.get_absolute_url()}", ORIGIN)
    assert (finding.section, finding.page) == ("article", 3)
    assert finding.entry is not None and finding.entry[0].endswith(target.get_absolute_url())


def test_a_scanned_model_section_costs_one_query_per_page(
    registry,
    django_assert_max_num_queries,  # type: ignore[no-untyped-def]
) -> None:
    source = registry.register(Document, ModelSource, limit=1)
    documents = [Document.objects.create(path=f"/docs/{i}/") for i in range(3)]
    source.page_summaries()
    # The page table, then each page's range and rows: no page re-counts its rows.
    with django_assert_max_num_queries(1 + 2 * len(documents)):
        finding = locate(registry, "/docs/2/", ORIGIN)
    assert (finding.section, finding.page) == ("document", 3)


def test_unpublished_row_is_filtered_out(registry) -> None:  # type: ignore[no-untyped-def]
    _articles(registry)
    article = ArticleFactory(is_published=False)
    finding = locate(registry, article.get_absolute_url(), ORIGIN)
    assert not finding.found and finding.reason == FILTERED_OUT
    assert finding.filtered_sections == ["article"]


def test_item_and_instance_sources_are_scanned(registry) -> None:  # type: ignore[no-untyped-def]
    registry.register("pages", ItemSource, items=lambda: ["/x/", {"location": "/y/"}], limit=1)
    registry.register(Document, ModelSource)
    Document.objects.create(path="/docs/one/")
    assert place(registry, "/y", ORIGIN) == ("pages", 2)
    assert place(registry, "https://example.com/docs/one", ORIGIN) == ("document", 1)
    assert place(registry, "/docs/two/", ORIGIN) == ("", None)


def test_other_host_is_noted_and_its_path_looked_up(registry) -> None:  # type: ignore[no-untyped-def]
    registry.register("pages", ItemSource, items=lambda: ["/x/"])
    finding = locate(registry, "https://elsewhere.example/x/", ORIGIN)
    assert finding.found and finding.other_host == "elsewhere.example"


def test_a_url_to_inspect_is_on_its_own_host_when_the_project_serves_it(registry) -> None:  # type: ignore[no-untyped-def]
    registry.register("pages", ItemSource, items=lambda: ["/x/"])
    assert inspected_origin(registry, "/x/", ORIGIN) is ORIGIN
    assert inspected_origin(registry, "https://EXAMPLE.com:443/x/", ORIGIN) is ORIGIN
    # In ALLOWED_HOSTS, and a section is served there; the URL's scheme.
    other = inspected_origin(registry, "http://other.example/x/", ORIGIN)
    assert other == Origin("http", "other.example")
    assert inspected_origin(registry, "https://unknown.example/x/", ORIGIN) is None
    with override_settings(SITEMAPX_HOSTS=["unknown.example"]):
        found = inspected_origin(registry, "https://unknown.example/x/", ORIGIN)
        assert found == Origin("https", "unknown.example")
    # Allowed, not named as served, and no section is served there (its sites leave it out).
    registry.unregister("pages")
    registry.register("pages", ItemSource, items=lambda: ["/x/"], sites=["example.com"])
    with override_settings(SITEMAPX_HOSTS=["example.com"]):
        assert inspected_origin(registry, "http://other.example/x/", ORIGIN) is None


def test_not_registered_and_too_long(registry) -> None:  # type: ignore[no-untyped-def]
    registry.register("pages", ItemSource, items=lambda: ["/x/"])
    finding = locate(registry, "/unknown/", ORIGIN)
    assert finding.reason == NOT_REGISTERED and not finding.resolves
    assert locate(registry, "/" + "a" * 2040, ORIGIN).reason == TOO_LONG


def test_a_url_value_the_field_cannot_hold_is_not_an_error(registry) -> None:  # type: ignore[no-untyped-def]
    _articles(registry)
    assert locate(registry, "/articles/x/" + "é" * 10 + "/", ORIGIN).reason == NOT_REGISTERED


@pytest.mark.urls("tests.i18n_urls")
@pytest.mark.parametrize("path", ["/en/articles/c/a1/", "/de/artikel/c/a1/"])
@pytest.mark.parametrize("active", ["en", "de"])
def test_a_translated_url_is_found_whichever_language_is_active(
    registry: Any, settings: Any, path: str, active: str
) -> None:
    """The inspector runs in the editor's language; a URL names its own, by its prefix
    and its translated route, and is resolved in that one."""
    settings.LANGUAGES = [("en", "English"), ("de", "German")]
    settings.LANGUAGE_CODE = "en"
    _articles(registry, i18n=True)
    ArticleFactory(is_published=True, category__slug="c", slug="a1")
    with translation.override(active):
        finding = locate(registry, path, ORIGIN)
    assert (finding.section, finding.page) == ("article", 1), finding.reason
    assert finding.entry is not None and finding.entry[0] == "https://example.com" + path
    assert finding.resolves
