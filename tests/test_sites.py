"""Several sites in one project: sections limited to sites, rows filtered per host.

Each host's index lists only its own sections, a section is 404 on a host it
does not serve, a host with no section has no index, and documents whose rows
depend on the host are cached per host.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.sites.models import Site
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import QuerySet
from django.test import Client, override_settings

import django_sitemapx as sitemapx
from django_sitemapx.exceptions import SourceConfigurationError
from django_sitemapx.export import FolderDestination, export_every_site
from django_sitemapx.generations import global_generation
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article
from tests.conftest import content, locs, validate_sitemap
from tests.factories import ArticleFactory, CategoryFactory
from tests.support.generations import tokens

pytestmark = pytest.mark.django_db


def _get(host: str, path: str) -> Any:
    return Client(HTTP_HOST=host).get(path)


def _index(host: str) -> list[str]:
    response = _get(host, "/sitemap.xml")
    assert response.status_code == 200, response.status_code
    return locs(validate_sitemap(content(response)))


def _page(host: str, path: str) -> list[str]:
    response = _get(host, path)
    assert response.status_code == 200, response.status_code
    return locs(validate_sitemap(content(response)))


class NewsArticles(sitemapx.ModelSource):
    """On other.example only the news category; on every other host, every article."""

    url_name = "article-detail"
    url_kwargs = {"category": "category__slug", "slug": "slug"}

    def get_queryset(self) -> QuerySet[Any]:
        rows = Article.objects.filter(is_published=True)
        if self.origin is not None and self.origin.host == "other.example":
            rows = rows.filter(category__slug="news")
        return rows


@pytest.fixture
def two_hosts(registry: SitemapRegistry) -> SitemapRegistry:
    """``article`` on both hosts (filtered per host), ``pages`` on example.com only,
    ``about`` on other.example only."""
    registry.register(Article, NewsArticles)
    registry.register("pages", sitemapx.StaticSource, url_names=["home"], sites=["example.com"])
    registry.register(
        "about", sitemapx.StaticSource, url_names=["about"], sites=["Other.Example."]
    )
    news, sport = CategoryFactory(slug="news"), CategoryFactory(slug="sport")
    ArticleFactory(category=news, slug="budget")
    ArticleFactory(category=sport, slug="final")
    return registry


def test_each_hosts_index_lists_only_its_own_sections(two_hosts: SitemapRegistry) -> None:
    assert _index("example.com") == [
        "http://example.com/sitemap-article-1.xml",
        "http://example.com/sitemap-pages-1.xml",
    ]
    assert _index("other.example") == [
        "http://other.example/sitemap-article-1.xml",
        "http://other.example/sitemap-about-1.xml",
    ]


def test_a_section_is_404_on_a_host_it_does_not_serve(two_hosts: SitemapRegistry) -> None:
    assert _get("other.example", "/sitemap-pages-1.xml").status_code == 404
    assert _get("example.com", "/sitemap-about-1.xml").status_code == 404
    assert _page("other.example", "/sitemap-about-1.xml") == ["http://other.example/about/"]


def test_host_matching_ignores_case_trailing_dot_and_port(two_hosts: SitemapRegistry) -> None:
    # Django refuses a Host that ALLOWED_HOSTS lacks; these spellings are allowed.
    with override_settings(ALLOWED_HOSTS=["*"]):
        assert _page("EXAMPLE.com.", "/sitemap-pages-1.xml") == ["http://example.com/"]
        # A port other than the one the server was reached on (80 here) is dropped (#14).
        assert _page("example.com:8000", "/sitemap-pages-1.xml") == ["http://example.com/"]


def test_a_host_with_no_section_has_no_index(two_hosts: SitemapRegistry) -> None:
    two_hosts.unregister(Article)
    with override_settings(ALLOWED_HOSTS=["*"]):
        assert _get("third.example", "/sitemap.xml").status_code == 404
        assert _get("third.example", "/sitemap.xml.gz").status_code == 404
    assert _get("example.com", "/sitemap.xml").status_code == 200


def test_rows_are_filtered_by_the_host_served_and_cached_per_host(
    two_hosts: SitemapRegistry,
) -> None:
    everything = [
        "http://example.com/articles/news/budget/",
        "http://example.com/articles/sport/final/",
    ]
    for _ in range(2):  # the second round comes from the cache
        assert sorted(_page("example.com", "/sitemap-article-1.xml")) == everything
        assert _page("other.example", "/sitemap-article-1.xml") == [
            "http://other.example/articles/news/budget/"
        ]
    # A saved row invalidates its page on every host.
    ArticleFactory(category=Article.objects.get(slug="budget").category, slug="more")
    assert len(_page("example.com", "/sitemap-article-1.xml")) == 3
    assert len(_page("other.example", "/sitemap-article-1.xml")) == 2


def test_index_summaries_count_the_rows_of_the_host(two_hosts: SitemapRegistry) -> None:
    sport = Article.objects.get(slug="final").category
    ArticleFactory.create_batch(3, category=sport)
    two_hosts.get("article").limit = 2
    try:
        # Each host's article pages are its own rows, cut into dense pages of 2.
        main = [loc for loc in _index("example.com") if "article" in loc]
        assert len(main) >= 3
        # other.example lists one page: that of its one news article.
        [other] = [loc for loc in _index("other.example") if "article" in loc]
        path = other.removeprefix("http://other.example")
        assert [loc.rstrip("/").rsplit("/", 1)[1] for loc in _page("other.example", path)] == [
            "budget"
        ]
        numbers = {int(loc.rsplit("-", 1)[1].removesuffix(".xml")) for loc in main}
        other_number = int(path.rsplit("-", 1)[1].removesuffix(".xml"))
        for number in numbers - {other_number}:
            if number > other_number:  # numbers the other host never had
                assert _get("other.example", f"/sitemap-article-{number}.xml").status_code == 404
    finally:
        two_hosts.get("article").limit = None


def test_an_item_source_reads_the_origin(registry: SitemapRegistry) -> None:
    class PerHost(sitemapx.ItemSource):
        def items(self) -> list[str]:
            assert self.origin is not None
            return [f"/{self.origin.host.split('.')[0]}/"]

    registry.register("per-host", PerHost)
    assert _page("example.com", "/sitemap-per-host-1.xml") == ["http://example.com/example/"]
    assert _page("other.example", "/sitemap-per-host-1.xml") == ["http://other.example/other/"]
    # The registered instance is never bound: requests share it.
    assert registry.get("per-host").origin is None


@override_settings(SITEMAPX_USE_SITES=True, SITE_ID=None)
def test_sites_framework_ids_select_sections(registry: SitemapRegistry) -> None:
    Site.objects.filter(pk=1).update(domain="example.com")
    other = Site.objects.create(domain="other.example", name="Other")
    registry.register("home", sitemapx.StaticSource, url_names=["home"], sites=[1])
    registry.register("about", sitemapx.StaticSource, url_names=["about"], sites=[other.pk])
    Site.objects.clear_cache()
    assert _index("example.com") == ["http://example.com/sitemap-home-1.xml"]
    assert _index("other.example") == ["http://other.example/sitemap-about-1.xml"]
    assert _get("other.example", "/sitemap-home-1.xml").status_code == 404


def test_site_ids_match_hosts_without_the_sites_framework_serving(
    registry: SitemapRegistry,
) -> None:
    # SITEMAPX_USE_SITES is False here: the host comes from the request, and
    # site ID 1's domain is looked up to match it.
    Site.objects.filter(pk=1).update(domain="example.com")
    registry.register("home", sitemapx.StaticSource, url_names=["home"], sites=[1])
    assert _page("example.com", "/sitemap-home-1.xml") == ["http://example.com/"]
    assert _get("other.example", "/sitemap-home-1.xml").status_code == 404


@pytest.mark.parametrize(
    ("sites", "problem"),
    [
        ("example.com", "must be a list"),
        ([], "is empty"),
        ([0], "neither a site ID nor a host name"),
        ([True], "neither a site ID nor a host name"),
        (["https://example.com"], "not a URL"),
        (["exa mple.com"], "not a valid host name"),
        ([1.5], "neither a site ID nor a host name"),
    ],
)
def test_ill_formed_sites_are_refused_at_registration(
    registry: SitemapRegistry, sites: Any, problem: str
) -> None:
    with pytest.raises(SourceConfigurationError, match=problem):
        registry.register("home", sitemapx.StaticSource, url_names=["home"], sites=sites)


# -- export ---------------------------------------------------------------------------


def test_export_of_one_site_has_only_its_sections(
    two_hosts: SitemapRegistry, tmp_path: Path
) -> None:
    call_command(
        "sitemap_export", output_dir=tmp_path, base_url="https://other.example", verbosity=0
    )
    assert sorted(p.name for p in tmp_path.glob("*.xml")) == [
        "sitemap-about-1.xml",
        "sitemap-article-1.xml",
        "sitemap.xml",
    ]
    assert locs(validate_sitemap((tmp_path / "sitemap-article-1.xml").read_bytes())) == [
        "https://other.example/articles/news/budget/"
    ]


def test_export_of_every_site_writes_per_host_folders(
    two_hosts: SitemapRegistry, tmp_path: Path
) -> None:
    Site.objects.filter(pk=1).update(domain="example.com")
    call_command(
        "sitemap_export",
        output_dir=tmp_path,
        all_sites=True,
        files_base_url="https://cdn.example/{host}",
        verbosity=0,
    )
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.xml")) == [
        "example.com/sitemap-article-1.xml",
        "example.com/sitemap-pages-1.xml",
        "example.com/sitemap.xml",
        "other.example/sitemap-about-1.xml",
        "other.example/sitemap-article-1.xml",
        "other.example/sitemap.xml",
    ]
    index = validate_sitemap((tmp_path / "other.example" / "sitemap.xml").read_bytes())
    assert locs(index) == [
        "https://cdn.example/other.example/sitemap-article-1.xml",
        "https://cdn.example/other.example/sitemap-about-1.xml",
    ]
    pages = validate_sitemap((tmp_path / "example.com" / "sitemap-pages-1.xml").read_bytes())
    assert locs(pages) == ["https://example.com/"]


def test_export_of_every_site_skips_a_site_with_no_url(
    two_hosts: SitemapRegistry, tmp_path: Path
) -> None:
    Site.objects.filter(pk=1).update(domain="empty.example")
    exports = export_every_site(FolderDestination(tmp_path))
    skipped = {e.origin.host: e.result is None for e in exports}
    # empty.example serves article (all rows) but nothing else: it has URLs.
    assert skipped == {"empty.example": False, "example.com": False, "other.example": False}
    two_hosts.unregister(Article)
    exports = export_every_site(FolderDestination(tmp_path / "again"))
    assert {e.origin.host: e.result is None for e in exports} == {
        "empty.example": True,
        "example.com": False,
        "other.example": False,
    }
    assert not (tmp_path / "again" / "empty.example").exists()


def test_export_of_every_site_needs_a_site(registry: SitemapRegistry, tmp_path: Path) -> None:
    registry.register("home", sitemapx.StaticSource, url_names=["home"])
    Site.objects.all().delete()
    with pytest.raises(CommandError, match="No site to export"):
        call_command("sitemap_export", output_dir=tmp_path, all_sites=True, verbosity=0)


def test_all_sites_excludes_base_url(two_hosts: SitemapRegistry, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="not allowed with argument"):
        call_command(
            "sitemap_export",
            "--all-sites",
            "--base-url=https://example.com",
            f"--output-dir={tmp_path}",
        )


def test_saving_a_site_invalidates_every_document(registry: SitemapRegistry) -> None:
    Site.objects.filter(pk=1).update(domain="example.com")
    registry.register("home", sitemapx.StaticSource, url_names=["home"], sites=[1])
    assert _page("example.com", "/sitemap-home-1.xml") == ["http://example.com/"]
    before = tokens([global_generation()])
    site = Site.objects.get(pk=1)
    site.domain = "moved.example"
    site.save()
    assert tokens([global_generation()]) != before
    assert _get("example.com", "/sitemap-home-1.xml").status_code == 404
    with override_settings(ALLOWED_HOSTS=["*"]):
        assert _page("moved.example", "/sitemap-home-1.xml") == ["http://moved.example/"]


def test_every_site_into_a_remote_storage_is_served_per_host(two_hosts: SitemapRegistry) -> None:
    Site.objects.filter(pk=1).update(domain="example.com")
    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "sitemaps": {"BACKEND": "tests.storages.OverwritingMemoryStorage"},
    }
    with override_settings(STORAGES=storages):
        call_command("sitemap_export", storage="sitemaps", all_sites=True, verbosity=0)
        from django.core.files.storage import storages as configured

        stored = configured["sitemaps"]
        assert sorted(stored.listdir("other.example")[1]) == [
            ".sitemapx-manifest.json",
            "sitemap-about-1.xml",
            "sitemap-article-1.xml",
            "sitemap.xml",
        ]
        with override_settings(SITEMAPX_SERVE_FROM_STORAGE="sitemaps"):
            two_hosts.unregister("about")  # only the files answer now
            assert _index("other.example") == [
                "https://other.example/sitemap-article-1.xml",
                "https://other.example/sitemap-about-1.xml",
            ]
            assert _page("other.example", "/sitemap-about-1.xml") == [
                "https://other.example/about/"
            ]
            assert _get("example.com", "/sitemap-about-1.xml").status_code == 404
            with override_settings(ALLOWED_HOSTS=["*"]):
                assert _get("third.example", "/sitemap.xml").status_code == 404


def test_every_site_refuses_a_site_whose_domain_is_no_host(
    two_hosts: SitemapRegistry, tmp_path: Path
) -> None:
    Site.objects.filter(pk=1).update(domain="example.com/shop")
    with pytest.raises(CommandError, match=r"'example\.com/shop' of django\.contrib\.sites"):
        call_command("sitemap_export", output_dir=tmp_path, all_sites=True, verbosity=0)
    assert not list(tmp_path.iterdir())
