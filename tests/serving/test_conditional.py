"""Validators computed before the body, and the page summaries they rest on."""

from __future__ import annotations

import datetime
import time

import pytest
from django.test import RequestFactory, override_settings

from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.serving.conditional import (
    Validators,
    last_modified,
    make_validators,
    not_modified,
)
from example_project.articles.models import Article
from tests.factories import ArticleFactory, DocumentFactory
from tests.testapp.models import Document


def test_validators_follow_key_summary_and_lastmods() -> None:
    base = make_validators("k", "3:x", ["2024-01-01T00:00:00+00:00"])
    assert base.last_modified == 1704067200.0
    assert make_validators("k2", "3:x", []).etag != base.etag
    assert make_validators("k", "4:x", []).etag != base.etag
    assert make_validators("k", "", [None]).last_modified is None
    assert make_validators("k", "", []).last_modified is None


def test_last_modified_is_the_greatest_lastmod_only_when_every_part_has_one() -> None:
    assert last_modified(["2024-01-01", "2024-03-01T10:00:00+01:00"]) == 1709283600.0
    # One undated part: nothing tells when it last changed.
    assert last_modified(["2024-01-01", None]) is None
    # RFC 9110 8.8.2.1: never later than the response.
    before = time.time()
    assert before <= (last_modified(["2999-01-01"]) or 0) <= time.time()


@override_settings(TIME_ZONE="America/New_York")
def test_a_naive_lastmod_is_read_in_time_zone() -> None:
    from django_sitemapx.values import lastmod_text

    text = lastmod_text(datetime.datetime(2024, 1, 1, 12))
    assert text == "2024-01-01T12:00:00-05:00"
    assert last_modified([text]) == 1704128400.0  # 17:00 UTC


def test_variants_have_different_etags() -> None:
    validators = Validators("abc", None)
    assert validators.variant_etag(False) == '"abc"'
    assert validators.variant_etag(True) == '"abc-gz"'


@pytest.mark.django_db
def test_a_page_summary_matches_the_index_summaries(registry: SitemapRegistry) -> None:
    source = registry.register(Article, section="article", limit=2, lastmod_field="updated_at")
    ArticleFactory.create_batch(5)
    summaries = source.page_summaries()
    assert summaries
    for summary in summaries:
        page = source.page(summary.number)
        assert page is not None and page.summary == summary
    assert source.page(summaries[-1].number + 1) is None


@pytest.mark.django_db
def test_page_summaries_of_sources_without_sql(registry: SitemapRegistry) -> None:
    items = registry.register("items", items=lambda: ["/a/", "/b/", "/c/"], limit=2)
    page = items.page(2)
    assert page is not None
    assert page.summary.rows == 1
    assert items.page(3) is None
    documents = registry.register(Document, lastmod=datetime.date(2024, 5, 1))
    DocumentFactory()
    page = documents.page(1)
    assert page is not None and page.summary.lastmod == "2024-05-01"


def test_not_modified_sets_the_headers() -> None:
    request = RequestFactory().get("/", headers={"if-none-match": '"abc-gz"'})
    validators = Validators("abc", 1704067200.0)
    assert not_modified(request, validators, gz=False) is None
    response = not_modified(request, validators, gz=True)
    assert response is not None and response.status_code == 304
    assert response["ETag"] == '"abc-gz"'
    assert response["Last-Modified"] == "Mon, 01 Jan 2024 00:00:00 GMT"


@override_settings(SITEMAPX_HTTP_CACHE_CONTROL=None)
def test_a_failed_if_match_is_412() -> None:
    request = RequestFactory().get("/", headers={"if-match": '"other"'})
    response = not_modified(request, Validators("abc", None), gz=False)
    assert response is not None and response.status_code == 412
    assert "Cache-Control" not in response
