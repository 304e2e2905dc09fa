"""The example project: seeding is idempotent and its sitemap validates end to end."""

from collections.abc import Iterator

import pytest
from django.core.management import call_command
from django.test import Client, override_settings
from django.utils import translation

from example_project import settings as example_settings
from example_project.articles.models import Article, ArticleImage, ArticleVideo, Author
from tests.conftest import EXAMPLE_SECTIONS, NS, content, locs, validate_sitemap

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _default_language() -> Iterator[None]:
    # LocaleMiddleware activates each request's language in this thread and
    # leaves it active: later tests must reverse in the default language.
    yield
    translation.deactivate()


def test_seed_demo_is_idempotent_and_every_tenth_is_unpublished() -> None:
    call_command("seed_demo", count=120, verbosity=0)
    call_command("seed_demo", count=120, verbosity=0)
    assert Article.objects.count() == 120
    assert Article.objects.filter(is_published=False).count() == 12
    call_command("seed_demo", count=150, verbosity=0)
    assert Article.objects.count() == 150
    images = ArticleImage.objects.count()
    assert images == sum(n % 4 for n in range(1, 151))
    assert ArticleVideo.objects.count() == 6
    Article.objects.filter(slug="demo-article-7").delete()
    call_command("seed_demo", count=150, verbosity=0)
    assert Article.objects.filter(slug="demo-article-7").exists()
    assert Article.objects.count() == 150
    assert ArticleImage.objects.count() == images
    assert Author.objects.count() == 15
    call_command("seed_demo", count=150, authors=20, verbosity=0)
    assert Author.objects.count() == 20


XHTML_LINK = "{http://www.w3.org/1999/xhtml}link"


@override_settings(MIDDLEWARE=example_settings.MIDDLEWARE)
def test_seeded_site_serves_a_valid_sitemap_whose_urls_resolve() -> None:
    call_command("seed_demo", count=40, verbosity=0)
    client = Client(HTTP_HOST="127.0.0.1:8000")
    index = validate_sitemap(content(client.get("/sitemap.xml")))
    urls = []
    by_section: dict[str, list[str]] = {}
    roots = []
    for loc in locs(index):
        root = validate_sitemap(content(client.get(loc)))
        roots.append(root)
        section = loc.rsplit("/sitemap-", 1)[1].rsplit("-", 1)[0]
        sample = by_section.setdefault(section, [])
        sample += locs(root)
        urls += locs(root)
    # 36 published articles of 40 (one language); 5 categories and 2 pages in 3
    # languages; 4 authors (UUID keys); the articles with images (n % 4 != 0); the
    # 36 newest published are news; one in 25 has a video.
    assert {section: len(found) for section, found in by_section.items()} == {
        "article": 36,
        "category": 3 * 5,
        "author": 4,
        "pages": 3 * 2,
        "article-images": 28,
        "news": 36,
        "videos": 1,
    }
    assert all("/authors/" in url for url in by_section["author"])
    assert any(root.nsmap.get("image") for root in roots)
    assert any(root.nsmap.get("news") for root in roots)
    assert any(root.nsmap.get("video") for root in roots)
    for url in [url for found in by_section.values() for url in found[:5]]:
        assert client.get(url).status_code == 200, url


# The test client sets SERVER_PORT to 80 on every request, and a sitemap keeps
# only the port the request reached (#14): X-Forwarded-Port says it is 8000.
@override_settings(MIDDLEWARE=example_settings.MIDDLEWARE, USE_X_FORWARDED_PORT=True)
def test_translated_pages_list_their_language_versions_and_each_answers_in_its_language() -> None:
    # A port the request did not reach the server on is left out of <loc>s (#14).
    client = Client(HTTP_HOST="127.0.0.1:8000")
    root = validate_sitemap(content(client.get("/sitemap-pages-1.xml")))
    assert root.nsmap["xhtml"] == "http://www.w3.org/1999/xhtml"
    about = {
        url.findtext("sm:loc", namespaces=NS): {
            link.get("hreflang"): link.get("href") for link in url.iter(XHTML_LINK)
        }
        for url in root.iterfind("sm:url", NS)
    }
    versions = {
        "en": "http://127.0.0.1/about/",
        "de": "http://127.0.0.1/de/about/",
        "fr": "http://127.0.0.1/fr/about/",
        "x-default": "http://127.0.0.1/about/",
    }
    for language in ("en", "de", "fr"):
        assert about[versions[language]] == versions  # reciprocal, itself included
        response = client.get(versions[language])
        assert response.status_code == 200
        assert response.headers["Content-Language"] == language


def test_seed_demo_refuses_a_negative_count() -> None:
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="zero or more"):
        call_command("seed_demo", count=-1, verbosity=0)


def test_the_example_serves_two_hosts_with_different_sections() -> None:
    from django_sitemapx.documents import listed_pages
    from django_sitemapx.locations import Origin
    from django_sitemapx.registry import SitemapRegistry
    from example_project.articles.sitemapx import register_sections

    call_command("seed_demo", count=40, verbosity=0)
    registry = SitemapRegistry()
    register_sections(registry, main_hosts=["localhost"], news_host="news.localhost")

    def sections(host: str) -> list[str]:
        return [page.section for page in listed_pages(registry, Origin("http", host))]

    assert sections("localhost") == EXAMPLE_SECTIONS
    # The news section follows the article section: the news category's on the news host.
    assert sections("news.localhost") == ["article", "news", "news-front"]
    news = listed_pages(registry, Origin("http", "news.localhost"))[0].summary.rows
    everything = listed_pages(registry, Origin("http", "localhost"))[0].summary.rows
    assert news == Article.objects.filter(is_published=True, category__slug="news").count()
    assert 0 < news < everything == 36
    for section in registry.sections:
        registry.unregister(section)


def test_the_example_project_settings_name_the_two_hosts() -> None:
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='example_project.settings';"
            "django.setup(); from django_sitemapx import default_registry as r;"
            "from django_sitemapx.locations import Origin as O;"
            "print([s.section for s in r.for_origin(O('http', 'news.localhost'))],"
            "[s.section for s in r.for_origin(O('http', 'localhost:8000'))])",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
    )
    assert result.stdout.strip() == (
        "['article', 'news', 'news-front'] "
        "['article', 'category', 'author', 'pages', 'article-images', 'news', 'videos']"
    )
