"""``export_sitemap``: the views' bytes, atomic replacement, stale files, counts."""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.sites.models import Site
from django.test import Client, modify_settings, override_settings

from django_sitemapx.exceptions import ExportError, InvalidURL
from django_sitemapx.export import (
    export_every_site,
    export_sitemap,
    origin_from_sites_framework,
    origin_from_url,
)
from django_sitemapx.export.destinations import MANIFEST_NAME, FolderDestination
from django_sitemapx.locations import Origin
from django_sitemapx.models import Override
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from example_project.articles.factories import ArticleFactory, CategoryFactory
from example_project.articles.models import Category
from tests.conftest import content, locs, validate_sitemap
from tests.support.exports import (
    BASE,
    document,
    exported,
    hidden,
    pages,
    register_items,
    run,
    validate_all,
)

# Rendering a document reads the editors' overrides from the database.
pytestmark = pytest.mark.django_db


@pytest.fixture
def items(registry: SitemapRegistry) -> SitemapRegistry:
    """Two in-memory sections: ``news`` (7 URLs, 3 pages of 3) and ``docs`` (2 URLs)."""
    return register_items(registry)


# -- the same bytes as the views ------------------------------------------------------


@override_settings(SITEMAPX_LIMIT=4)
@pytest.mark.parametrize("gzip_copies", [False, True])
@pytest.mark.parametrize("protocol", [None, "https"])
def test_every_file_is_byte_identical_to_the_view(
    tmp_path: Path, protocol: str | None, gzip_copies: bool
) -> None:
    # With --gzip the index lists the .xml.gz pages, as the views' index does with
    # SITEMAPX_INDEX_LINKS_GZIP, and every .xml.gz (index and pages) is the views' own.
    ArticleFactory.create_batch(10)
    with override_settings(SITEMAPX_PROTOCOL=protocol, SITEMAPX_INDEX_LINKS_GZIP=gzip_copies):
        run("--output-dir", str(tmp_path), "--base-url", BASE, *["--gzip"] * gzip_copies)
        files = exported(tmp_path)
        client = Client(HTTP_HOST="example.com")
        index = client.get("/sitemap.xml")
        assert index.status_code == 200
        served = {"sitemap.xml": content(index)}
        names = [loc.rsplit("/", 1)[1] for loc in locs(validate_sitemap(served["sitemap.xml"]))]
        if gzip_copies:
            assert all(name.endswith(".xml.gz") for name in names)
            names = ["sitemap.xml.gz", *names, *(name.removesuffix(".gz") for name in names)]
        for name in names:
            response = client.get("/" + name)
            assert response.status_code == 200
            served[name] = content(response)
    assert files == served
    # Page numbers follow the keys, which PostgreSQL sequences do not reset between tests.
    sections = sorted(
        name.rsplit("-", 1)[0] for name in files if name.endswith(".xml") and name != "sitemap.xml"
    )
    assert set(sections) == {"sitemap-article", "sitemap-category", "sitemap-pages"}
    assert sections.count("sitemap-article") >= 3 and sections.count("sitemap-category") >= 3
    assert len(files) == (len(sections) + 1) * (2 if gzip_copies else 1)
    validate_all(files)
    scheme = protocol or "http"
    assert all(
        loc.startswith(f"{scheme}://example.com/")
        for name, data in files.items()
        for loc in locs(validate_sitemap(document(name, data)))
    )


def test_export_from_code_reports_every_file_and_progress(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    seen: list[str] = []
    progress: list[tuple[int, int]] = []
    result = export_sitemap(
        FolderDestination(tmp_path),
        origin=Origin("https", "example.com"),
        on_file=lambda f: seen.append(f.name),
        on_progress=lambda done, total: progress.append((done, total)),
    )
    names = ["sitemap-news-1.xml", "sitemap-news-2.xml", "sitemap-news-3.xml"]
    assert seen == [*names, "sitemap-docs-1.xml", "sitemap.xml"]
    assert progress == [(3, 9), (6, 9), (7, 9), (9, 9)]
    assert result.urls == 9
    assert result.bytes == sum(len(d) for d in exported(tmp_path).values())
    assert [(f.name, f.urls) for f in result.files][-1] == ("sitemap.xml", 4)
    assert not result.dry_run and result.removed == [] and result.missing == []
    validate_all(exported(tmp_path))


def test_url_counts_are_the_urls_written(registry: SitemapRegistry, tmp_path: Path) -> None:
    # Counted by the writer, not in the bytes: "<url>" in a query string, skipped
    # entries and an excluded URL count for what they are in the document.
    registry.register(
        "search",
        ItemSource,
        items=lambda: [
            "/search/?q=<url>",
            "/search/?q=<url></url><url>&page=2",
            "/search/?q=&lt;url&gt;",
            "https://other.example/<url>/",
            "/excluded/",
            "/plain/<url>/",
            "/bad\x01/<url>",
            "/last/",
        ],
        limit=3,
    )
    Override.objects.create(location="/excluded/", exclude=True)
    progress: list[int] = []
    result = export_sitemap(
        FolderDestination(tmp_path),
        origin=Origin("https", "example.com"),
        gzip=True,
        on_progress=lambda done, total: progress.append(done),
    )
    files = exported(tmp_path)
    written = {name: len(validate_sitemap(document(name, data))) for name, data in files.items()}
    assert {f.name: f.urls for f in result.files} == written
    assert written == {
        "sitemap-search-1.xml": 3,
        "sitemap-search-1.xml.gz": 3,
        "sitemap-search-2.xml": 1,
        "sitemap-search-2.xml.gz": 1,
        "sitemap-search-3.xml": 1,
        "sitemap-search-3.xml.gz": 1,
        "sitemap.xml": 3,
        "sitemap.xml.gz": 3,
    }
    assert result.urls == 5 and progress[-1] == 5


def test_progress_expects_a_url_per_row_and_language(
    registry: SitemapRegistry, tmp_path: Path
) -> None:
    # Three categories in the three LANGUAGES: 9 <url>, two rows (6 URLs) a page.
    registry.register(
        Category, url_name="category-detail", url_kwargs={"category": "slug"}, i18n=True, limit=6
    )
    CategoryFactory.create_batch(3)
    progress: list[tuple[int, int]] = []
    result = export_sitemap(
        FolderDestination(tmp_path),
        origin=Origin("https", "example.com"),
        on_progress=lambda done, total: progress.append((done, total)),
    )
    assert progress == [(6, 9), (9, 9)]
    assert result.urls == 9


# -- options -------------------------------------------------------------------------


def test_gzip_writes_compressed_copies_and_the_index_points_at_them(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    out, _ = run("--output-dir", str(tmp_path), "--base-url", BASE, "--gzip")
    files = exported(tmp_path)
    plain = sorted(n for n in files if n.endswith(".xml"))
    assert sorted(n for n in files if n.endswith(".gz")) == [n + ".gz" for n in plain]
    for name in plain:
        assert gzip.decompress(files[name + ".gz"]) == files[name]
    validate_all(files)
    assert locs(validate_sitemap(files["sitemap.xml"])) == [
        f"{BASE}/sitemap-news-1.xml.gz",
        f"{BASE}/sitemap-news-2.xml.gz",
        f"{BASE}/sitemap-news-3.xml.gz",
        f"{BASE}/sitemap-docs-1.xml.gz",
    ]
    assert "Wrote 10 files (9 URLs, " in out
    # Reproducible: no timestamp or staging name in the gzip header.
    run("--output-dir", str(tmp_path), "--base-url", BASE, "--gzip")
    assert exported(tmp_path) == files


def test_files_base_url_moves_only_the_index_locs(items: SitemapRegistry, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    cdn = tmp_path / "cdn"
    run("--output-dir", str(plain), "--base-url", "https://example.com")
    run(
        "--output-dir",
        str(cdn),
        "--base-url",
        "https://example.com",
        "--files-base-url",
        "https://cdn.example.net/maps/",
    )
    before, after = exported(plain), exported(cdn)
    assert {n: d for n, d in after.items() if n != "sitemap.xml"} == {
        n: d for n, d in before.items() if n != "sitemap.xml"
    }
    assert locs(validate_sitemap(after["sitemap.xml"]))[0] == (
        "https://cdn.example.net/maps/sitemap-news-1.xml"
    )
    assert locs(validate_sitemap(after["sitemap-docs-1.xml"]))[0] == "https://example.com/docs/1/"


def test_section_option_writes_only_those_pages_and_the_whole_index(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    items.register("blog", ItemSource, items=lambda: pages("blog", 1))
    _, err = run("--output-dir", str(tmp_path), "--base-url", BASE, "--section", "docs")
    files = exported(tmp_path)
    assert set(files) == {"sitemap.xml", "sitemap-docs-1.xml"}
    assert len(locs(validate_sitemap(files["sitemap.xml"]))) == 5
    assert "the index lists sitemap-news-1.xml, which" in err
    assert "sitemap-blog-1.xml" in err
    _, err = run(
        "--output-dir", str(tmp_path), "--base-url", BASE, "--section", "news", "--section", "blog"
    )
    assert err == ""
    assert len(exported(tmp_path)) == 6
    validate_all(exported(tmp_path))


def test_stale_pages_are_removed_only_in_the_exported_sections(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    run("--output-dir", str(tmp_path), "--base-url", BASE, "--gzip")
    (tmp_path / "robots.txt").write_text("not ours")
    items.unregister("news")
    items.register("news", ItemSource, items=lambda: pages("news", 4), limit=3)
    out, _ = run("--output-dir", str(tmp_path), "--base-url", BASE, "--section", "news", "-v", "2")
    assert "sitemap-news-3.xml: removed (stale)" in out
    assert "sitemap-news-3.xml.gz: removed (stale)" in out
    # The index and news pages lost their .gz copies; docs, not exported, kept its own.
    assert sorted(exported(tmp_path)) == [
        "robots.txt",
        "sitemap-docs-1.xml",
        "sitemap-docs-1.xml.gz",
        "sitemap-news-1.xml",
        "sitemap-news-2.xml",
        "sitemap.xml",
    ]


def test_a_section_that_left_the_registry_is_removed(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    run("--output-dir", str(tmp_path), "--base-url", BASE)
    items.unregister("docs")
    out, _ = run("--output-dir", str(tmp_path), "--base-url", BASE)
    assert "removed 1 stale files" in out
    assert "sitemap-docs-1.xml" not in exported(tmp_path)
    assert MANIFEST_NAME in hidden(tmp_path)


MEMORY_STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "remote": {"BACKEND": "tests.storages.OverwritingMemoryStorage"},
    "plain_memory": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
}


@override_settings(STORAGES=MEMORY_STORAGES)
def test_storage_without_local_path_gets_whole_uploads(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    from django.core.files.storage import storages

    run("--output-dir", str(tmp_path), "--base-url", BASE, "--gzip")
    run("--storage", "remote", "--base-url", BASE, "--gzip")
    items.unregister("docs")
    run("--storage", "remote", "--base-url", BASE, "--gzip")
    remote = storages["remote"]
    _, names = remote.listdir("")
    assert sorted(names) == sorted(
        [MANIFEST_NAME, *(n for n in exported(tmp_path) if "docs" not in n)]
    )
    for name in names:
        if name != MANIFEST_NAME and name != "sitemap.xml" and not name.endswith("xml.gz"):
            with remote.open(name, "rb") as handle:
                assert handle.read() == (tmp_path / name).read_bytes()


# -- file names: the paths the views serve the documents at --------------------------


@pytest.fixture
def news(registry: SitemapRegistry) -> SitemapRegistry:
    registry.register("news", ItemSource, items=lambda: ["/a/", "/b/", "/c/"], limit=2)
    return registry


@override_settings(ROOT_URLCONF="tests.layout_urls")
def test_a_url_prefix_becomes_a_folder(news: SitemapRegistry, tmp_path: Path) -> None:
    run("--output-dir", str(tmp_path), "--base-url", "https://example.com")
    client = Client(HTTP_HOST="example.com")
    names = ["maps/sitemap.xml", "maps/sitemap-news-1.xml", "maps/sitemap-news-2.xml"]
    for name in names:
        served = content(client.get("/" + name, secure=True))
        assert (tmp_path / name).read_bytes() == served
    assert locs(validate_sitemap((tmp_path / names[0]).read_bytes())) == [
        "https://example.com/maps/sitemap-news-1.xml",
        "https://example.com/maps/sitemap-news-2.xml",
    ]


@override_settings(ROOT_URLCONF="tests.bare_urls")
def test_without_the_views_the_default_names_are_used(
    news: SitemapRegistry, tmp_path: Path
) -> None:
    run("--output-dir", str(tmp_path), "--base-url", "https://example.com")
    assert sorted(p.name for p in tmp_path.glob("*.xml")) == [
        "sitemap-news-1.xml",
        "sitemap-news-2.xml",
        "sitemap.xml",
    ]
    assert locs(validate_sitemap((tmp_path / "sitemap.xml").read_bytes()))[1] == (
        "https://example.com/sitemap-news-2.xml"
    )


# -- origins: a malformed URL or an unknown site is an ExportError ------------------


def test_origin_from_url_says_what_is_malformed_as_an_export_error() -> None:
    assert origin_from_url("http://Example.COM:8000") == Origin("http", "example.com:8000")
    with pytest.raises(ExportError, match=re.escape("Malformed base URL 'example.com'")) as caught:
        origin_from_url("example.com")
    assert isinstance(caught.value.__cause__, InvalidURL)
    with pytest.raises(ExportError, match="has a path"):
        origin_from_url("https://example.com/blog/")


def test_origin_from_sites_framework() -> None:
    Site.objects.filter(pk=1).update(domain="Sites.Example")
    Site.objects.create(pk=7, domain="seven.example", name="seven")
    assert origin_from_sites_framework() == Origin("https", "sites.example")
    assert origin_from_sites_framework(7) == Origin("https", "seven.example")
    assert origin_from_sites_framework(1).site_id == 1
    with override_settings(SITEMAPX_PROTOCOL="http"):
        assert origin_from_sites_framework(7) == Origin("http", "seven.example")
    with pytest.raises(ExportError, match="No site with ID 8"):
        origin_from_sites_framework(8)
    Site.objects.filter(pk=7).update(domain="seven.example/shop")
    with pytest.raises(
        ExportError, match=re.escape("'seven.example/shop' of django.contrib.sites site 7")
    ):
        origin_from_sites_framework(7)


def test_origin_from_sites_framework_needs_the_app() -> None:
    with (
        modify_settings(INSTALLED_APPS={"remove": "django.contrib.sites"}),
        pytest.raises(ExportError, match=r"needs django\.contrib\.sites"),
    ):
        origin_from_sites_framework()


def test_a_malformed_files_base_url_is_an_export_error(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    with pytest.raises(
        ExportError, match=re.escape("Malformed files base URL 'cdn.example.net/maps'")
    ):
        export_sitemap(
            FolderDestination(tmp_path),
            origin=Origin("https", "example.com"),
            files_base_url="cdn.example.net/maps",
        )
    assert exported(tmp_path) == {}


def test_every_site_refuses_a_site_whose_domain_is_no_host(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    Site.objects.filter(pk=1).update(domain="example.com/shop")
    with pytest.raises(
        ExportError, match=re.escape("'example.com/shop' of django.contrib.sites site 1")
    ):
        export_every_site(FolderDestination(tmp_path), registry=items)
    assert exported(tmp_path) == {}


# -- failures: the previous export stays intact -------------------------------------


def test_second_export_to_the_same_folder_is_refused(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    destination = FolderDestination(tmp_path)
    with destination.lock(), pytest.raises(ExportError, match="Another export"):
        export_sitemap(FolderDestination(tmp_path), origin=Origin("https", "example.com"))
    assert exported(tmp_path) == {}


def test_a_failing_export_leaves_the_previous_one_intact(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    run("--output-dir", str(tmp_path), "--base-url", BASE, "--gzip")
    before = exported(tmp_path)

    class Broken(ItemSource):
        def location(self, item: Any) -> str:
            if item.endswith("/5/"):
                raise RuntimeError("database went away")
            return str(item)

    items.unregister("news")
    items.register("news", Broken, items=lambda: pages("news", 8), limit=3)
    with pytest.raises(RuntimeError, match="database went away"):
        run("--output-dir", str(tmp_path), "--base-url", BASE, "--gzip")
    assert exported(tmp_path) == before
    assert hidden(tmp_path) == [".sitemapx-export.lock", MANIFEST_NAME]


def test_more_pages_than_one_index_lists_are_exported_in_index_files(
    items: SitemapRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("django_sitemapx.documents.INDEX_CAPACITY", 3)
    result = export_sitemap(FolderDestination(tmp_path), origin=Origin("https", "example.com"))
    files = exported(tmp_path)
    validate_all(files)
    assert [(f.name, f.urls) for f in result.files][-2:] == [
        ("sitemap.xml", 3),
        ("sitemap-index-2.xml", 1),
    ]
    indexed = locs(validate_sitemap(files["sitemap.xml"]))
    indexed += locs(validate_sitemap(files["sitemap-index-2.xml"]))
    assert [loc.rsplit("/", 1)[1] for loc in indexed] == [
        "sitemap-news-1.xml",
        "sitemap-news-2.xml",
        "sitemap-news-3.xml",
        "sitemap-docs-1.xml",
    ]
    monkeypatch.setattr("django_sitemapx.documents.INDEX_CAPACITY", 50_000)
    again = export_sitemap(FolderDestination(tmp_path), origin=Origin("https", "example.com"))
    assert again.removed == ["sitemap-index-2.xml"]
