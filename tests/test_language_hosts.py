"""A domain per country: alternates on the other hosts the project serves (issue 26, item 4).

Each host's sitemap is fetched through the views under its own ``Host``, parsed
and validated against the schemas; the alternates of all of them together
must be reciprocal, name only served hosts, and leave out what is excluded.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from lxml import etree

import django_sitemapx as sitemapx
from django_sitemapx.models import Override, Rule
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.factories import bulk_published_articles
from example_project.articles.models import Article
from tests.conftest import NS, content, locs, validate_sitemap
from tests.factories import CategoryFactory
from tests.support.checks import check_errors

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.i18n_urls")]

XHTML = "{http://www.w3.org/1999/xhtml}"
HOSTS = ["example.com", "example.de", "example.fr"]
LANGUAGE_HOSTS = {"en": "example.com", "de": "example.de", "fr": "example.fr"}
# Alternates of one <url>: hreflang -> href.
Links = dict[str, str]


@pytest.fixture(autouse=True)
def _three_countries():  # type: ignore[no-untyped-def]
    with override_settings(
        LANGUAGES=[("en", "English"), ("de", "German"), ("fr", "French")],
        LANGUAGE_CODE="en",
        ALLOWED_HOSTS=[*HOSTS, "example.org", "testserver"],
        SITEMAPX_HOSTS=HOSTS,
        SITEMAPX_LANGUAGE_HOSTS=LANGUAGE_HOSTS,
    ):
        yield


def _register(registry: SitemapRegistry, **options: Any) -> sitemapx.Source:
    bulk_published_articles(CategoryFactory(slug="news"), 3)
    return registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        i18n=True,
        alternates=True,
        x_default=True,
        **options,
    )


def _get(host: str, path: str) -> bytes:
    response = Client(HTTP_HOST=host).get(path)
    assert response.status_code == 200, (host, path, response.status_code)
    return content(response)


def _sitemap(host: str) -> dict[str, Links]:
    """Every <url> of ``host``'s sitemap (every page its index lists), with its alternates."""
    found: dict[str, Links] = {}
    for page in locs(validate_sitemap(_get(host, "/sitemap.xml"))):
        assert page.startswith(f"http://{host}/"), page
        root: etree._Element = validate_sitemap(_get(host, page.partition(host)[2]))
        for url in root.iterfind("sm:url", NS):
            loc = url.findtext("sm:loc", namespaces=NS)
            assert loc is not None
            found[loc] = {
                link.get("hreflang"): link.get("href") for link in url.iter(f"{XHTML}link")
            }
    return found


def _every_host(hosts: list[str] = HOSTS) -> dict[str, dict[str, Links]]:
    return {host: _sitemap(host) for host in hosts}


def _assert_reciprocal(sitemaps: dict[str, dict[str, Links]], served: list[str]) -> None:
    """Every alternate is listed by its host's sitemap and names the same set back."""
    listed: dict[str, Links] = {}
    for host, urls in sitemaps.items():
        for loc, links in urls.items():
            assert loc.startswith(f"http://{host}/"), (host, loc)
            listed[loc] = links
    for loc, links in listed.items():
        assert loc in links.values(), loc  # each version lists itself
        for hreflang, href in links.items():
            assert href.split("/")[2] in served, href
            assert href in listed, f"{loc} names {href} ({hreflang}), which no sitemap lists"
            assert listed[href] == links, f"{href} does not name {loc}'s alternates back"


def test_each_host_lists_its_language_and_names_the_others(registry: SitemapRegistry) -> None:
    _register(registry)
    sitemaps = _every_host()
    assert sorted(sitemaps["example.de"]) == [
        f"http://example.de/de/artikel/news/a{n}/" for n in (1, 2, 3)
    ]
    assert sitemaps["example.fr"]["http://example.fr/fr/articles/news/a1/"] == {
        "en": "http://example.com/en/articles/news/a1/",
        "de": "http://example.de/de/artikel/news/a1/",
        "fr": "http://example.fr/fr/articles/news/a1/",
        "x-default": "http://example.com/en/articles/news/a1/",
    }
    _assert_reciprocal(sitemaps, HOSTS)


def test_a_host_the_project_does_not_serve_is_nobodys_alternate(
    registry: SitemapRegistry,
) -> None:
    _register(registry)
    with override_settings(SITEMAPX_HOSTS=["example.com", "example.de"]):
        sitemaps = _every_host(["example.com", "example.de"])
        _assert_reciprocal(sitemaps, ["example.com", "example.de"])
        assert sitemaps["example.de"]["http://example.de/de/artikel/news/a2/"] == {
            "en": "http://example.com/en/articles/news/a2/",
            "de": "http://example.de/de/artikel/news/a2/",
            "x-default": "http://example.com/en/articles/news/a2/",
        }
        # Reached all the same (ALLOWED_HOSTS lets it in), it lists nothing of the section.
        response = Client(HTTP_HOST="example.fr").get("/sitemap-article-1.xml")
        assert response.status_code == 404


def test_a_host_no_language_is_on_does_not_serve_the_section(registry: SitemapRegistry) -> None:
    _register(registry)
    registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    with override_settings(SITEMAPX_HOSTS=[*HOSTS, "example.org"]):
        assert locs(validate_sitemap(_get("example.org", "/sitemap.xml"))) == [
            "http://example.org/sitemap-pages-1.xml"
        ]
        assert Client(HTTP_HOST="example.org").get("/sitemap-article-1.xml").status_code == 404
        assert Client(HTTP_HOST="example.de").get("/sitemap-article-1.xml").status_code == 200


@pytest.mark.parametrize(
    "how",
    [
        "rule of its host",
        "override",
        "override of its host",
        "override of its host, more than PRELOAD_LIMIT",
    ],
)
def test_a_url_excluded_on_one_host_is_no_alternate_on_the_others(
    registry: SitemapRegistry, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(registry)
    excluded = "http://example.de/de/artikel/news/a1/"
    if how == "override":
        Override.objects.create(location=excluded, exclude=True)
    elif how.startswith("override of its host"):
        if "PRELOAD_LIMIT" in how:
            monkeypatch.setattr("django_sitemapx.overrides.PRELOAD_LIMIT", 1)
        Override.objects.create(location=excluded, host="example.de", exclude=True)
        # The same path on another host's override decides nothing on example.de,
        # and another host's override of a path of example.de neither.
        Override.objects.create(location="/de/artikel/news/a2/", host="example.fr", exclude=True)
        Override.objects.create(location="/fr/articles/news/a2/", host="example.de", exclude=True)
    else:
        Rule.objects.create(
            matching="prefix", pattern="/de/artikel/news/a1/", host="example.de", exclude=True
        )
        # The same path on another host's rule decides nothing on example.de.
        Rule.objects.create(
            matching="prefix", pattern="/de/artikel/news/a2/", host="example.fr", exclude=True
        )
    sitemaps = _every_host()
    assert excluded not in sitemaps["example.de"]
    for urls in sitemaps.values():
        for links in urls.values():
            assert excluded not in links.values()
    assert "de" in sitemaps["example.fr"]["http://example.fr/fr/articles/news/a2/"]
    _assert_reciprocal(sitemaps, HOSTS)


def test_a_sections_own_language_hosts_win_over_the_setting(registry: SitemapRegistry) -> None:
    source = registry.register(
        "pages",
        sitemapx.StaticSource,
        url_names=["about"],
        i18n=True,
        alternates=True,
        language_hosts={"en": "example.com", "de": "example.de", "fr": "example.de"},
    )
    assert source.get_language_hosts()["fr"] == "example.de"
    assert _sitemap("example.de") == {
        f"http://example.de/{code}/about/": {
            "en": "http://example.com/en/about/",
            "de": "http://example.de/de/about/",
            "fr": "http://example.de/fr/about/",
        }
        for code in ("de", "fr")
    }
    assert Client(HTTP_HOST="example.fr").get("/sitemap.xml").status_code == 404
    _assert_reciprocal(
        {"example.com": _sitemap("example.com"), "example.de": _sitemap("example.de")}, HOSTS
    )


def test_language_hosts_of_an_empty_mapping_keep_every_language_on_every_host(
    registry: SitemapRegistry,
) -> None:
    _register(registry, language_hosts={})
    assert len(_sitemap("example.de")) == 9


# -- the checks ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", [["example.de"], {"de": "https://example.de"}, {"de": ""}, {"de": 1}, {1: "a.de"}]
)
def test_e501_not_a_mapping_of_languages_to_hosts(
    registry: SitemapRegistry, value: object
) -> None:
    with override_settings(SITEMAPX_LANGUAGE_HOSTS=value):
        assert check_errors() == ["E501"]


def test_e501_a_sections_own_language_hosts(registry: SitemapRegistry) -> None:
    _register(registry, language_hosts={"de": "example.de/de"})
    assert check_errors() == ["E501"]


def test_e502_a_host_the_project_does_not_serve(registry: SitemapRegistry) -> None:
    with override_settings(SITEMAPX_HOSTS=["example.com", "example.de"]):
        assert check_errors() == ["E502"]


def test_e503_a_language_without_a_host(registry: SitemapRegistry) -> None:
    _register(registry)
    with override_settings(SITEMAPX_LANGUAGE_HOSTS={"de": "example.de", "fr": "example.fr"}):
        assert check_errors() == ["E503"]


def test_the_hosts_of_every_language_pass_the_checks(registry: SitemapRegistry) -> None:
    _register(registry)
    call_command("check", stdout=io.StringIO(), stderr=io.StringIO())


def test_an_override_of_a_url_on_another_host_is_placed_on_its_page(
    registry: SitemapRegistry,
) -> None:
    """The admin places an override where its URL is listed: on the host the URL names."""
    from django_sitemapx.admin.lookup import place
    from django_sitemapx.locations import Origin

    _register(registry)
    admin_host = Origin("http", "example.de")
    english = "http://example.com/en/articles/news/a1/"
    assert place(registry, english, admin_host) == ("article", 1)
    # A path names no host: looked for on the admin's, which lists no English version.
    assert place(registry, "/en/articles/news/a1/", admin_host) == ("", None)
    # A host the project does not serve is not looked at.
    assert place(registry, english.replace(".com", ".org"), admin_host) == ("", None)


def test_without_alternates_each_host_lists_its_own_languages(registry: SitemapRegistry) -> None:
    bulk_published_articles(CategoryFactory(slug="news"), 2)
    registry.register(
        Article,
        url_name="article-detail",
        url_kwargs={"category": "category__slug", "slug": "slug"},
        i18n=True,
    )
    assert _sitemap("example.fr") == {
        f"http://example.fr/fr/articles/news/a{n}/": {} for n in (1, 2)
    }


def test_the_export_of_every_site_writes_each_hosts_own_languages(
    registry: SitemapRegistry, tmp_path: Path
) -> None:
    from django_sitemapx.export import FolderDestination, export_every_site

    _register(registry)
    exports = export_every_site(FolderDestination(tmp_path))
    assert {e.origin.host for e in exports if e.result is not None} >= set(HOSTS)
    page = validate_sitemap((tmp_path / "example.de" / "sitemap-article-1.xml").read_bytes())
    urls = {
        url.findtext("sm:loc", namespaces=NS): {
            link.get("hreflang"): link.get("href") for link in url.iter(f"{XHTML}link")
        }
        for url in page.iterfind("sm:url", NS)
    }
    assert urls["https://example.de/de/artikel/news/a1/"]["fr"] == (
        "https://example.fr/fr/articles/news/a1/"
    )
    assert all(loc.startswith("https://example.de/de/") for loc in urls)
