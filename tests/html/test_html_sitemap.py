"""The sitemap for people (django_sitemapx.html): what the XML lists, a screen at a time."""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from django_sitemapx.html import PER_SCREEN
from django_sitemapx.models import Override
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from example_project.articles.factories import ArticleFactory
from example_project.articles.models import Article
from tests.conftest import content, locs, validate_sitemap

pytestmark = pytest.mark.django_db


class Outline(HTMLParser):
    """The links, headings and landmarks of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.lang = ""
        self.hrefs: list[str] = []
        self.in_list = False
        self.listed: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.tags.append(tag)
        if tag == "html":
            self.lang = values.get("lang") or ""
        if tag == "ol":
            self.in_list = True
        if tag == "a" and values.get("href"):
            self.hrefs.append(values["href"] or "")
            if self.in_list:
                self.listed.append(values["href"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "ol":
            self.in_list = False


def outline(response: Any) -> Outline:
    assert response.status_code == 200, response.status_code
    parser = Outline()
    parser.feed(response.content.decode())
    return parser


def xml_locs(path: str) -> list[str]:
    return locs(validate_sitemap(content(Client().get(path))))


def test_the_index_lists_every_page_the_xml_index_lists() -> None:
    ArticleFactory.create_batch(3)
    page = outline(Client().get("/sitemap/"))
    from_xml = [
        loc.removeprefix("http://testserver").replace("sitemap-", "", 1)
        for loc in xml_locs("/sitemap.xml")
    ]
    links = [href for href in page.hrefs if href.startswith("/sitemap/")]
    expected = [
        "/sitemap/" + "/".join(name.removesuffix(".xml").rsplit("-", 1)) + "/"
        for name in [loc.removeprefix("/") for loc in from_xml]
    ]
    assert links == expected and links


def test_a_page_lists_exactly_the_urls_of_its_xml_page_overrides_applied() -> None:
    articles = ArticleFactory.create_batch(4)
    Override.objects.create(location=articles[0].get_absolute_url(), exclude=True)
    page = outline(Client().get("/sitemap/article/1/"))
    assert page.listed == xml_locs("/sitemap-article-1.xml")
    assert len(page.listed) == 3


def test_the_html_is_read_through_the_same_cache_as_the_xml() -> None:
    ArticleFactory(slug="first")
    before = xml_locs("/sitemap-article-1.xml")  # now cached
    # A change no signal reports: the cached XML stays as it was, and so does the HTML.
    Article.objects.update(slug="renamed")
    assert xml_locs("/sitemap-article-1.xml") == before
    assert outline(Client().get("/sitemap/article/1/")).listed == before


def test_a_conditional_request_still_gets_the_whole_page() -> None:
    ArticleFactory.create_batch(2)
    etag = Client().get("/sitemap-article-1.xml").headers["ETag"]
    response = Client().get("/sitemap/article/1/", headers={"if-none-match": etag})
    assert len(outline(response).listed) == 2


def test_a_large_page_is_shown_a_screen_at_a_time(registry: SitemapRegistry) -> None:
    total = PER_SCREEN * 2 + 7
    registry.register("many", ItemSource, items=lambda: [f"/many/{n}/" for n in range(total)])
    client = Client()
    first = outline(client.get("/sitemap/many/1/"))
    screens = [first.listed]
    screens += [outline(client.get("/sitemap/many/1/", {"p": p})).listed for p in (2, 3)]
    assert [len(screen) for screen in screens] == [PER_SCREEN, PER_SCREEN, 7]
    assert [loc for screen in screens for loc in screen] == xml_locs("/sitemap-many-1.xml")
    assert "?p=2" in first.hrefs


@pytest.mark.parametrize(
    "path", ["/sitemap/nope/1/", "/sitemap/article/2/", "/sitemap/article/0/"]
)
def test_what_the_xml_does_not_serve_is_a_404(path: str) -> None:
    ArticleFactory()
    assert Client().get(path).status_code == 404


def test_the_pages_can_be_walked_by_a_screen_reader() -> None:
    ArticleFactory.create_batch(2)
    for path in ("/sitemap/", "/sitemap/article/1/"):
        page = outline(Client().get(path))
        assert page.lang == "en"
        for landmark in ("header", "main", "h1", "title"):
            assert landmark in page.tags, (path, landmark)
        assert "ul" in page.tags or "ol" in page.tags
    assert "h2" in outline(Client().get("/sitemap/")).tags


def test_the_templates_are_overridden_as_any_django_template(
    settings: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "django_sitemapx" / "html"
    folder.mkdir(parents=True)
    (folder / "page.html").write_text("{% for link in screen %}[{{ link.loc }}]{% endfor %}")
    settings.TEMPLATES = [{**settings.TEMPLATES[0], "DIRS": [tmp_path]}]
    ArticleFactory(slug="only")
    body = Client().get("/sitemap/article/1/").content.decode()
    assert body == f"[{xml_locs('/sitemap-article-1.xml')[0]}]"


def test_a_site_with_no_url_says_so(registry: SitemapRegistry) -> None:
    response = Client().get("/sitemap/")
    assert "This site lists no page yet." in response.content.decode()


@pytest.mark.parametrize(
    ("loc", "page"),
    [
        ("http://testserver/sitemap-article-2.xml", ("article", 2)),
        ("http://testserver/sitemap-article-images-3.xml.gz", ("article-images", 3)),
        ("https://cdn.example/files/sitemap-news-1.xml", ("news", 1)),
        ("https://cdn.example/files/sitemap-news-1.xml.gz", ("news", 1)),
        ("https://cdn.example/files/other.xml", None),
        ("https://cdn.example/files/sitemap-.xml", None),
        ("https://cdn.example/files/sitemap-news-x.xml", None),
    ],
)
def test_a_page_is_known_by_its_url_or_its_files_name(loc: str, page: object) -> None:
    from django_sitemapx.html import _page_of

    assert _page_of(loc) == page


@pytest.fixture
def exported(registry: SitemapRegistry, tmp_path: Path, settings: Any) -> Iterator[Path]:
    """``news`` exported (7 URLs, 3 pages of 3) and served from the files; then unregistered."""
    registry.register("news", ItemSource, items=lambda: [f"/news/{n}/" for n in range(7)], limit=3)
    settings.STORAGES = {
        **settings.STORAGES,
        "sitemaps": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    settings.SITEMAPX_SERVE_FROM_STORAGE = "sitemaps"
    call_command("sitemap_export", storage="sitemaps", base_url="https://example.com", verbosity=0)
    registry.unregister("news")  # only the files can answer now
    yield tmp_path


def test_exported_files_served_are_what_the_html_shows(exported: Path) -> None:
    index = outline(Client().get("/sitemap/"))
    assert [href for href in index.hrefs if href.startswith("/sitemap/")] == [
        "/sitemap/news/1/",
        "/sitemap/news/2/",
        "/sitemap/news/3/",
    ]
    page = outline(Client().get("/sitemap/news/2/"))
    assert page.listed == locs(validate_sitemap((exported / "sitemap-news-2.xml").read_bytes()))
    assert page.listed == [
        "https://example.com/news/3/",
        "https://example.com/news/4/",
        "https://example.com/news/5/",
    ]


def test_an_asgi_request_gets_the_same_page() -> None:
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    ArticleFactory.create_batch(2)

    async def fetch() -> Any:
        return await AsyncClient().get("/sitemap/article/1/")

    response = async_to_sync(fetch)()
    assert outline(response).listed == xml_locs("/sitemap-article-1.xml")
