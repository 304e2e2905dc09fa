"""The pages for people (admin/browse.py): a section's pages, a page's URLs, per site."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.sites.models import Site
from django.test import Client, override_settings
from django.urls import reverse

import django_sitemapx as sitemapx
from django_sitemapx.locations import Origin
from django_sitemapx.models import Override
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article
from tests.factories import ArticleFactory, CategoryFactory
from tests.support.admin import OVERVIEW, staff_client

pytestmark = pytest.mark.django_db

SECTION = "admin:django_sitemapx_browse_section"
PAGE = "admin:django_sitemapx_browse_page"


def _section(name: str = "article") -> str:
    return reverse(SECTION, kwargs={"section": name})


def _page(name: str = "article", number: int = 1) -> str:
    return reverse(PAGE, kwargs={"section": name, "number": number})


@pytest.fixture
def viewer() -> Client:
    return staff_client("view_override")


@pytest.mark.parametrize("url", [_section, _page])
def test_staff_without_the_apps_permissions_is_refused(url: object) -> None:
    ArticleFactory()
    assert staff_client().get(url()).status_code == 403  # type: ignore[operator]


def test_anonymous_is_sent_to_login() -> None:
    response = Client().get(_page())
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_section_lists_its_pages_with_counts_and_lastmods(
    viewer: Client, registry: SitemapRegistry
) -> None:
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        lastmod_field="updated_at",
        limit=2,
    )
    ArticleFactory.create_batch(5)
    response = viewer.get(_section())
    assert response.status_code == 200
    pages = response.context["pages"]
    # Dense pages of 2, in key order: 2, 2 and the last 1.
    assert [(p["number"], p["urls"]) for p in pages] == [(1, 2), (2, 2), (3, 1)]
    assert all(p["lastmod"] for p in pages)
    second = pages[1]["number"]
    assert pages[1]["browse_url"] == _page(number=second)
    assert pages[1]["document_url"] == f"/sitemap-article-{second}.xml"
    assert response.context["urls"] == 5
    html = response.content.decode()
    assert 'class="browse-page"' in html and f"/sitemap-article-{pages[-1]['number']}.xml" in html


def test_a_multilingual_section_counts_a_url_per_row_and_language(viewer: Client) -> None:
    # The example's categories are listed in the three LANGUAGES.
    CategoryFactory.create_batch(3)
    response = viewer.get(_section("category"))
    assert [p["urls"] for p in response.context["pages"]] == [9]
    assert response.context["urls"] == 9


def test_page_lists_its_urls_as_crawlers_get_them(viewer: Client) -> None:
    category = CategoryFactory(slug="news")
    kept = ArticleFactory(category=category, slug="kept")
    gone = ArticleFactory(category=category, slug="gone")
    Override.objects.create(location=kept.get_absolute_url(), priority=Decimal("0.9"))
    Override.objects.create(location=gone.get_absolute_url(), exclude=True)
    response = viewer.get(_page())
    rows = {row["loc"]: row for row in response.context["rows"]}
    assert list(rows) == ["http://testserver/articles/news/kept/"]
    assert rows["http://testserver/articles/news/kept/"]["priority"] == "0.9"
    assert response.context["total"] == 1
    inspect = rows["http://testserver/articles/news/kept/"]["inspect_url"]
    assert inspect.startswith(reverse("admin:django_sitemapx_inspect") + "?url=http")


def test_page_is_shown_a_hundred_urls_at_a_time(viewer: Client) -> None:
    category = CategoryFactory(slug="c")
    Article.objects.bulk_create(
        ArticleFactory.build(category=category, slug=f"a{n:03}", is_published=True)
        for n in range(250)
    )
    first = viewer.get(_page())
    assert len(first.context["rows"]) == 100 and first.context["total"] == 250
    assert first.context["screen_links"]["next"] == "?p=2"
    assert first.context["screen_links"]["previous"] is None
    last = viewer.get(_page(), {"p": "3"})
    assert len(last.context["rows"]) == 50
    assert last.context["screen_links"]["last"] is None
    # A screen number out of range or not a number shows the nearest screen.
    assert viewer.get(_page(), {"p": "99"}).context["screen"].number == 3
    assert viewer.get(_page(), {"p": "x"}).context["screen"].number == 1


def test_search_filters_the_urls_and_keeps_the_query_in_links(viewer: Client) -> None:
    category = CategoryFactory(slug="c")
    Article.objects.bulk_create(
        ArticleFactory.build(category=category, slug=f"a{n:03}", is_published=True)
        for n in range(150)
    )
    ArticleFactory(category=category, slug="café")
    response = viewer.get(_page(), {"q": "A1"})
    assert response.context["matching"] == 50 and response.context["total"] == 151
    assert response.context["screen_links"]["next"] is None
    response = viewer.get(_page(), {"q": "a"})
    assert response.context["screen_links"]["next"] == "?q=a&p=2"
    # Typed as people write it, found in its percent-encoded URL.
    response = viewer.get(_page(), {"q": "CAFÉ"})
    assert [row["loc"] for row in response.context["rows"]] == [
        "http://testserver/articles/c/caf%C3%A9/"
    ]
    assert "No URL of this page matches." in viewer.get(_page(), {"q": "zzz"}).content.decode()


@pytest.mark.parametrize(
    ("section", "number"), [("nope", 1), ("article", 2), ("article", 0), ("article", 10**30)]
)
def test_unknown_section_or_empty_page_is_404(viewer: Client, section: str, number: int) -> None:
    ArticleFactory()
    assert viewer.get(_page(section, number)).status_code == 404


def test_unknown_section_pages_is_404(viewer: Client) -> None:
    assert viewer.get(_section("nope")).status_code == 404


# -- several sites ---------------------------------------------------------------------


@pytest.fixture
def two_hosts(registry: SitemapRegistry) -> SitemapRegistry:
    Site.objects.filter(pk=1).update(domain="example.com")
    registry.register("home", sitemapx.StaticSource, url_names=["home"], sites=["testserver"])
    registry.register("about", sitemapx.StaticSource, url_names=["about"], sites=["other.example"])
    return registry


def test_the_admin_shows_its_own_host_and_offers_the_others(
    viewer: Client, two_hosts: SitemapRegistry
) -> None:
    response = viewer.get(reverse(OVERVIEW))
    site = response.context["site"]
    assert site.origin.host == "testserver"
    assert [o.host for o in site.choices] == ["testserver", "example.com", "other.example"]
    assert [row.section for row in response.context["rows"]] == ["home"]
    assert 'id="site-choice"' in response.content.decode()


def test_a_site_whose_domain_is_no_host_is_not_offered(
    viewer: Client, two_hosts: SitemapRegistry
) -> None:
    Site.objects.filter(pk=1).update(domain="example.com/shop")
    response = viewer.get(reverse(OVERVIEW))
    assert [o.host for o in response.context["site"].choices] == ["testserver"]


def test_another_host_shows_its_sections_with_full_document_urls(
    viewer: Client, two_hosts: SitemapRegistry
) -> None:
    response = viewer.get(reverse(OVERVIEW), {"host": "Other.Example"})
    rows = response.context["rows"]
    assert [row.section for row in rows] == ["about"]
    assert rows[0].browse_url == _section("about") + "?host=other.example"
    assert rows[0].pages[0][1] == "http://other.example/sitemap-about-1.xml"
    page = viewer.get(_page("about"), {"host": "other.example"})
    assert [row["loc"] for row in page.context["rows"]] == ["http://other.example/about/"]
    assert page.context["document_url"] == "http://other.example/sitemap-about-1.xml"


def test_a_section_not_served_on_the_host_is_404(
    viewer: Client, two_hosts: SitemapRegistry
) -> None:
    assert viewer.get(_section("about")).status_code == 404
    assert viewer.get(_page("home"), {"host": "other.example"}).status_code == 404


def test_an_unknown_host_is_404(viewer: Client, two_hosts: SitemapRegistry) -> None:
    with override_settings(ALLOWED_HOSTS=["*"]):
        assert viewer.get(reverse(OVERVIEW), {"host": "evil.example"}).status_code == 404
        assert viewer.get(_section("home"), {"host": "x" * 5000}).status_code == 404


class OwnHostSource(sitemapx.StaticSource):
    """A section serving a host of its own, as a Wagtail section serves each site's."""

    def site_hosts(self) -> list[str]:
        return [*super().site_hosts(), "Shop.Example"]

    def serves(self, origin: Origin) -> bool:
        return origin.host == "shop.example"


def test_a_host_a_section_serves_of_its_own_is_offered_and_browsed(
    viewer: Client, two_hosts: SitemapRegistry
) -> None:
    two_hosts.register("shop", OwnHostSource, url_names=["about"])
    Override.objects.create(location="/about/", host="shop.example", priority=Decimal("0.3"))
    response = viewer.get(reverse(OVERVIEW))
    hosts = [o.host for o in response.context["site"].choices]
    assert hosts == ["testserver", "example.com", "other.example", "shop.example"]
    section = viewer.get(_section("shop"), {"host": "shop.example"})
    assert section.status_code == 200
    assert section.context["pages"][0]["browse_url"] == _page("shop") + "?host=shop.example"
    page = viewer.get(_page("shop"), {"host": "shop.example"})
    assert [(row["loc"], row["priority"]) for row in page.context["rows"]] == [
        ("http://shop.example/about/", "0.3")
    ]


@pytest.mark.parametrize(
    "host", ["<script>", "a b.example", "[::1", "shop.example:99999", "\x00", "é" * 300, ""]
)
def test_a_hostile_host_is_a_404_not_an_error(
    viewer: Client, two_hosts: SitemapRegistry, host: str
) -> None:
    two_hosts.register("shop", OwnHostSource, url_names=["about"])
    for url in (reverse(OVERVIEW), _section("shop"), _page("shop")):
        response = viewer.get(url, {"host": host})
        assert response.status_code == 404, (url, host)
