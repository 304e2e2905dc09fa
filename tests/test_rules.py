"""Rules: URL patterns that exclude URLs or set their values (issue 26)."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from lxml import etree

from django_sitemapx import ItemSource, ModelSource, conf
from django_sitemapx.documents import listed_pages, render_page
from django_sitemapx.generations import global_generation, index_generation, section_generation
from django_sitemapx.locations import Origin
from django_sitemapx.models import Override, Rule
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.rules import GLOB, PREFIX, glob_matches, pattern_text
from django_sitemapx.sources import Source
from example_project.articles.models import Article
from tests.conftest import NS, content, locs, validate_sitemap
from tests.factories import ArticleFactory
from tests.support.cost import LIMIT, growth
from tests.support.generations import changed_generations

ORIGIN = Origin("https", "example.com")
LASTMOD = datetime.datetime(2024, 5, 1, 8, tzinfo=datetime.UTC)


def _urls(source: Source, origin: Origin = ORIGIN) -> dict[str, dict[str, str]]:
    page = source.page(1)
    assert page is not None
    stream = render_page(source, page, origin)
    if stream is None:
        return {}
    root: etree._Element = validate_sitemap(b"".join(stream))
    return {
        url.findtext("sm:loc", namespaces=NS): {
            child.tag.split("}")[1]: child.text for child in url if not child.tag.endswith("loc")
        }
        for url in root.iterfind("sm:url", NS)
    }


def _pages(registry: SitemapRegistry, name: str = "pages", **options: Any) -> Source:
    paths = ["/", "/tag/", "/tag/python/", "/tagline/", "/search?q=a", "/products/shoe/reviews/"]
    return registry.register(name, ItemSource, items=lambda: paths, priority=0.5, **options)


# -- matching ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("/products/*/reviews/", "/products/shoe/reviews/", True),
        ("/products/*/reviews/", "/products/a/b/reviews/", True),
        ("/products/*/reviews/", "/products/reviews/", False),
        ("/search?*", "/search?q=a", True),
        ("/search?*", "/searches", False),
        ("*.pdf", "/files/a.pdf", True),
        ("/a*b*c", "/abc", True),
        ("/a*b*c", "/acb", False),
        ("/a*a", "/a", False),
        ("/exact/", "/exact/", True),
        ("/exact/", "/exact/x", False),
        ("/x/**", "/x/y/z", True),
    ],
)
def test_a_glob_star_is_any_run_of_characters_and_the_rest_is_literal(
    pattern: str, path: str, matches: bool
) -> None:
    assert glob_matches(pattern, path) is matches


@pytest.mark.parametrize("pattern", ["/*a*a*a*a*a*b", "/*" + "a*" * 20 + "b", "/*/*/*/*/*x"])
def test_a_glob_costs_at_most_linear_in_the_url(pattern: str) -> None:
    # A backtracking translation (fnmatch's .*) of these is polynomial on runs of "a" or "/".
    for unit in ("a", "/", "a/"):
        short, long = "/" + unit * 120, "/" + unit * 120 * 16
        assert growth(lambda path: glob_matches(pattern, path), short, long) < LIMIT


@pytest.mark.parametrize(
    ("matching", "pattern", "stored"),
    [
        (PREFIX, " /tag/ ", "/tag/"),
        (PREFIX, "/café/", "/caf%C3%A9/"),
        (GLOB, "/a b/*", "/a%20b/*"),
    ],
)
def test_a_pattern_is_stored_as_the_sitemap_writes_urls(
    matching: str, pattern: str, stored: str
) -> None:
    assert pattern_text(matching, pattern) == stored


@pytest.mark.parametrize(
    ("matching", "pattern"),
    [(PREFIX, "tag/"), (PREFIX, "/a*"), (GLOB, "/a#b"), (PREFIX, "/a\x00"), (GLOB, "https://x/")],
)
def test_a_pattern_that_cannot_match_a_url_is_refused(matching: str, pattern: str) -> None:
    with pytest.raises(ValueError):
        pattern_text(matching, pattern)


@pytest.mark.django_db
def test_the_model_validates_pattern_host_and_lastmod() -> None:
    rule = Rule(
        pattern="tag/",
        host="exa mple.com",
        exclude=True,
        lastmod=datetime.datetime(2999, 1, 1, tzinfo=datetime.UTC),
    )
    with pytest.raises(ValidationError) as raised:
        rule.full_clean()
    assert set(raised.value.message_dict) == {"pattern", "host", "lastmod"}
    rule = Rule(pattern="/tag/", host="Example.COM.", exclude=True)
    rule.full_clean()
    assert rule.host == "example.com"


@pytest.mark.django_db
def test_a_rule_that_changes_nothing_is_refused() -> None:
    with pytest.raises(ValidationError):
        Rule(pattern="/tag/").full_clean()


# -- applied to documents -----------------------------------------------------------


@pytest.mark.django_db
def test_a_prefix_rule_excludes_what_starts_with_it(registry: SitemapRegistry) -> None:
    source = _pages(registry)
    Rule.objects.create(pattern="/tag/", exclude=True)
    assert sorted(_urls(source)) == [
        "https://example.com/",
        "https://example.com/products/shoe/reviews/",
        "https://example.com/search?q=a",
        "https://example.com/tagline/",
    ]


@pytest.mark.django_db
def test_rules_set_values_the_first_by_position_deciding_each(registry: SitemapRegistry) -> None:
    source = _pages(registry)
    Rule.objects.create(matching=GLOB, pattern="/products/*", priority=Decimal("0.9"), position=2)
    Rule.objects.create(
        matching=GLOB, pattern="/*/reviews/", priority=Decimal("0.2"), changefreq="daily"
    )
    Rule.objects.create(pattern="/search?", lastmod=LASTMOD)
    urls = _urls(source)
    assert urls["https://example.com/products/shoe/reviews/"] == {
        "changefreq": "daily",
        "priority": "0.9",
    }
    assert urls["https://example.com/search?q=a"] == {
        "lastmod": "2024-05-01T08:00:00+00:00",
        "priority": "0.5",
    }
    assert urls["https://example.com/tag/"] == {"priority": "0.5"}


@pytest.mark.django_db
def test_an_override_wins_over_the_rules(registry: SitemapRegistry) -> None:
    source = _pages(registry)
    Rule.objects.create(pattern="/tag/", exclude=True, changefreq="never")
    Rule.objects.create(pattern="/", priority=Decimal("0.1"), position=200)
    # An override of a URL decides whether it is listed, and its values come first.
    Override.objects.create(location="/tag/python/", priority=Decimal("0.8"))
    urls = _urls(source)
    assert urls["https://example.com/tag/python/"] == {"changefreq": "never", "priority": "0.8"}
    assert "https://example.com/tag/" not in urls
    assert urls["https://example.com/"] == {"priority": "0.1"}


@pytest.mark.django_db
def test_a_rule_applies_on_its_host_and_in_its_section_only(registry: SitemapRegistry) -> None:
    pages = _pages(registry)
    other = _pages(registry, "other")
    Rule.objects.create(pattern="/tag/", exclude=True, host="example.com", section="pages")
    assert len(_urls(pages)) == 4
    assert len(_urls(other)) == 6
    assert len(_urls(pages, Origin("https", "example.org"))) == 6


@pytest.mark.django_db
def test_rules_are_read_once_per_document_however_many_chunks(
    registry: SitemapRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(conf, "CHUNK_SIZE", 10)
    ArticleFactory.create_batch(35)
    source = registry.register(Article, ModelSource)
    for number in range(50):
        Rule.objects.create(matching=GLOB, pattern=f"/nothing/{number}/*", exclude=True)
    Rule.objects.create(matching=GLOB, pattern="/articles/*", priority=Decimal("0.3"))
    page = source.page(1)
    assert page is not None
    with CaptureQueriesContext(connection) as queries:
        stream = render_page(source, page, ORIGIN)
        assert stream is not None
        root = validate_sitemap(b"".join(stream))
    rule_queries = [q for q in queries if Rule._meta.db_table in q["sql"]]
    assert len(rule_queries) == 1
    assert len(locs(root)) == 35
    assert {url.findtext("sm:priority", namespaces=NS) for url in root.iterfind("sm:url", NS)} == {
        "0.3"
    }


@pytest.mark.django_db
def test_a_rule_lastmod_raises_the_index_of_its_section(registry: SitemapRegistry) -> None:
    _pages(registry)
    _pages(registry, "other")
    Rule.objects.create(pattern="/tag/", lastmod=LASTMOD, section="other")
    lastmods = {
        listed.section: listed.summary.lastmod for listed in listed_pages(registry, ORIGIN)
    }
    assert lastmods == {"pages": None, "other": "2024-05-01T08:00:00+00:00"}


# -- a change invalidates ----------------------------------------------------------


@pytest.mark.django_db
def test_a_rule_of_every_section_invalidates_everything(
    django_capture_on_commit_callbacks: Any,
) -> None:
    def create() -> None:
        with django_capture_on_commit_callbacks(execute=True):
            Rule.objects.create(pattern="/tag/", exclude=True)

    assert changed_generations(create) == [global_generation()]


@pytest.mark.django_db
def test_a_rule_moved_to_another_section_invalidates_the_one_it_left(
    django_capture_on_commit_callbacks: Any,
) -> None:
    rule = Rule.objects.create(pattern="/a/", exclude=True, section="article")
    rule = Rule.objects.get(pk=rule.pk)

    def move() -> None:
        rule.section = "document"
        with django_capture_on_commit_callbacks(execute=True):
            rule.save()

    # The section it left ("document" is outside what changed_generations looks at).
    assert changed_generations(move) == [index_generation(), section_generation("article")]


@pytest.mark.django_db
def test_a_rule_change_reaches_the_served_documents(
    client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    ArticleFactory.create_batch(2)
    assert len(locs(validate_sitemap(content(client.get("/sitemap-article-1.xml"))))) == 2
    with django_capture_on_commit_callbacks(execute=True):
        Rule.objects.create(pattern="/", exclude=True, section="article")
    assert client.get("/sitemap-article-1.xml").status_code == 404


@pytest.mark.parametrize(
    ("start", "may"),
    [
        ("https://example.com/articles/", False),
        ("https://example.com/tag/", True),
        ("https://example.com/ta", True),
        ("https://example.com", True),
        ("https://exam", True),
    ],
)
def test_a_chunk_is_ruled_out_by_its_first_literal(start: str, may: bool) -> None:
    from django_sitemapx.rules import CompiledRule, RuleSet

    rules = RuleSet([CompiledRule(1, GLOB, "/tag/*/x", (True, None, None, None))])
    assert rules.may_match_start(start) is may
