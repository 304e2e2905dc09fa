"""``sitemap_export`` and ``export_sitemap``: every option and error; the views' bytes."""

from __future__ import annotations

import gzip
import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client, override_settings

from django_sitemapx.destinations import MANIFEST_NAME, FolderDestination, StorageDestination
from django_sitemapx.exceptions import ExportError
from django_sitemapx.export import export_sitemap
from django_sitemapx.locations import Site
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from example_project.articles.factories import ArticleFactory
from tests.conftest import locs, validate_sitemap

# Rendering a document reads the editors' overrides from the database.
pytestmark = pytest.mark.django_db

BASE = "http://example.com"


def run(*args: str, **options: Any) -> tuple[str, str]:
    """``call_command("sitemap_export", ...)``; return (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    call_command("sitemap_export", *args, stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def exported(folder: Path) -> dict[str, bytes]:
    """Every visible file under ``folder`` (the export's own hidden files left out)."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    }


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*") if p.is_file())


def validate_all(files: dict[str, bytes]) -> None:
    for name, data in files.items():
        validate_sitemap(gzip.decompress(data) if name.endswith(".gz") else data)


def pages(section: str, count: int) -> list[str]:
    return [f"/{section}/{n}/" for n in range(1, count + 1)]


@pytest.fixture
def items(registry: SitemapRegistry) -> SitemapRegistry:
    """Two in-memory sections: ``news`` (7 URLs, 3 pages of 3) and ``docs`` (2 URLs)."""
    registry.register("news", ItemSource, items=lambda: pages("news", 7), limit=3)
    registry.register("docs", ItemSource, items=lambda: pages("docs", 2), priority=0.4)
    return registry


# -- the same bytes as the views ------------------------------------------------------


@pytest.mark.django_db
@override_settings(SITEMAPX_LIMIT=4)
@pytest.mark.parametrize("protocol", [None, "https"])
def test_every_file_is_byte_identical_to_the_view(tmp_path: Path, protocol: str | None) -> None:
    ArticleFactory.create_batch(10)
    with override_settings(SITEMAPX_PROTOCOL=protocol):
        run("--output-dir", str(tmp_path), "--base-url", BASE)
        files = exported(tmp_path)
        client = Client(HTTP_HOST="example.com")
        index = client.get("/sitemap.xml")
        assert index.status_code == 200
        served = {"sitemap.xml": b"".join(index.streaming_content)}
        for loc in locs(validate_sitemap(served["sitemap.xml"])):
            name = loc.rsplit("/", 1)[1]
            response = client.get("/" + name)
            assert response.status_code == 200
            served[name] = b"".join(response.streaming_content)
    assert files == served
    # Page numbers follow the keys, which PostgreSQL sequences do not reset between tests.
    sections = sorted(name.rsplit("-", 1)[0] for name in files if name != "sitemap.xml")
    assert set(sections) == {"sitemap-article", "sitemap-category", "sitemap-pages"}
    assert sections.count("sitemap-article") >= 3 and sections.count("sitemap-category") >= 3
    validate_all(files)
    scheme = protocol or "http"
    assert all(
        loc.startswith(f"{scheme}://example.com/")
        for data in files.values()
        for loc in locs(validate_sitemap(data))
    )


@pytest.mark.django_db
def test_export_from_code_reports_every_file_and_progress(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    seen: list[str] = []
    progress: list[tuple[int, int]] = []
    result = export_sitemap(
        FolderDestination(tmp_path),
        site=Site("https", "example.com"),
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


def test_output_dir_may_be_a_path_from_code(items: SitemapRegistry, tmp_path: Path) -> None:
    out, _ = run(output_dir=tmp_path, base_url=BASE)
    assert "sitemap.xml" in exported(tmp_path)
    assert "Wrote " in out


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


def test_dry_run_writes_nothing_and_says_what_it_would_do(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    target = tmp_path / "new" / "folder"
    out, _ = run("--output-dir", str(target), "--base-url", BASE, "--dry-run", "--gzip")
    assert not (tmp_path / "new").exists()
    assert "Would write 10 files (9 URLs, " in out
    run("--output-dir", str(tmp_path), "--base-url", BASE)
    before = exported(tmp_path)
    items.unregister("docs")
    out, _ = run("--output-dir", str(tmp_path), "--base-url", BASE, "--dry-run")
    assert "sitemap-docs-1.xml: would remove (stale)" in out
    assert exported(tmp_path) == before


def test_verbosity(items: SitemapRegistry, tmp_path: Path) -> None:
    out, _ = run("--output-dir", str(tmp_path), "--base-url", BASE, "-v", "0")
    assert out == ""
    out, _ = run("--output-dir", str(tmp_path), "--base-url", BASE)
    assert out.count("\n") == 1 and out.startswith("Wrote 5 files (9 URLs, ")
    out, _ = run("--output-dir", str(tmp_path), "--base-url", BASE, "-v", "2")
    assert "sitemap-news-1.xml: 3 URLs, " in out
    assert "sitemap.xml: 4 pages, " in out
    assert "\r" not in out


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("verbosity", "bar"), [(0, False), (1, True), (2, True)])
def test_progress_bar_only_on_a_terminal(
    items: SitemapRegistry, tmp_path: Path, verbosity: int, bar: bool
) -> None:
    out = FakeTerminal()
    call_command(
        "sitemap_export",
        output_dir=str(tmp_path),
        base_url=BASE,
        verbosity=verbosity,
        stdout=out,
    )
    assert ("\r[" in out.getvalue()) is bar
    if bar:
        assert "] 9/9 URLs" in out.getvalue()


def test_storage_alias_and_default_storage_setting(items: SitemapRegistry, tmp_path: Path) -> None:
    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "sitemaps": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "stored"), "file_permissions_mode": 0o640},
        },
    }
    with override_settings(STORAGES=storages):
        out, _ = run("--storage", "sitemaps", "--base-url", BASE)
        assert "to storage 'sitemaps' (" in out
        files = exported(tmp_path / "stored")
        assert len(files) == 5
        assert (tmp_path / "stored" / "sitemap.xml").stat().st_mode & 0o777 == 0o640
        with override_settings(SITEMAPX_EXPORT_STORAGE="sitemaps"):
            items.unregister("docs")
            run("--base-url", BASE)
        assert len(exported(tmp_path / "stored")) == 4


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


@override_settings(STORAGES=MEMORY_STORAGES)
def test_storage_that_renames_instead_of_replacing_still_gets_the_same_names(
    items: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    from django.core.files.storage import storages

    run("--storage", "plain_memory", "--base-url", BASE)
    run("--storage", "plain_memory", "--base-url", BASE)
    assert "does not overwrite files: sitemap.xml is missing while" in caplog.text
    _, names = storages["plain_memory"].listdir("")
    assert len(names) == 6 and not any("_" in name for name in names)


@pytest.fixture
def sites_framework(transactional_db: None) -> Iterator[None]:
    """``django.contrib.sites`` installed with its table, whether or not the settings have it."""
    from django.apps import apps
    from django.db import connection
    from django.test import modify_settings

    if apps.is_installed("django.contrib.sites"):
        yield
        return
    with modify_settings(INSTALLED_APPS={"append": "django.contrib.sites"}):
        from django.contrib.sites.models import Site as SitesSite

        with connection.schema_editor() as editor:
            editor.create_model(SitesSite)
        try:
            yield
        finally:
            with connection.schema_editor() as editor:
                editor.delete_model(SitesSite)


def test_site_option_takes_the_domain_from_the_sites_framework(
    items: SitemapRegistry, tmp_path: Path, sites_framework: None
) -> None:
    from django.contrib.sites.models import Site as SitesSite

    SitesSite.objects.create(pk=7, domain="shop.example", name="Shop")
    run("--output-dir", str(tmp_path / "by_id"), "--site", "7")
    with override_settings(SITE_ID=7, SITEMAPX_USE_SITES=True):
        run("--output-dir", str(tmp_path / "current"))
    with (
        override_settings(SITE_ID=7, SITEMAPX_USE_SITES=False),
        pytest.raises(CommandError, match="Give --base-url"),
    ):
        run("--output-dir", str(tmp_path / "current"))
    with pytest.raises(CommandError, match="No site with ID 8"):
        run("--output-dir", str(tmp_path), "--site", "8")
    expected = ["https://shop.example/docs/1/", "https://shop.example/docs/2/"]
    files = exported(tmp_path / "by_id")
    assert locs(validate_sitemap(files["sitemap-docs-1.xml"])) == expected
    assert exported(tmp_path / "current") == files


def test_site_option_needs_the_sites_framework(items: SitemapRegistry, tmp_path: Path) -> None:
    from django.test import modify_settings

    with (
        modify_settings(INSTALLED_APPS={"remove": "django.contrib.sites"}),
        pytest.raises(CommandError, match=re.escape("needs django.contrib.sites in")),
    ):
        run("--output-dir", str(tmp_path / "out"), "--site", "1")
    assert not (tmp_path / "out").exists()


# -- errors: a clear CommandError, and nothing written --------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--section", "nope"], "Unknown sitemap section 'nope' (known: news, docs)"),
        (["--section", "news", "--section", "x"], "Unknown sitemap section 'x'"),
        (["--base-url", "example.com"], "Malformed base URL 'example.com'"),
        (["--base-url", "ftp://example.com"], "must start with http:// or https://"),
        (["--base-url", "https://"], "must start with http:// or https://"),
        (["--base-url", "https://example.com/blog"], "has a path"),
        (["--base-url", "https://u:p@example.com"], "user name or password"),
        (["--base-url", "https://example.com:99999"], "port is not a number"),
        (["--base-url", "https://example.com/?a=1"], "query or a fragment"),
        (["--base-url", "https://exa mple.com"], "not a valid domain name"),
        (["--files-base-url", "cdn.example.com"], "Malformed files base URL"),
        (["--storage", "nope"], "No storage 'nope' in STORAGES (known: default, staticfiles)"),
        (["--storage", "default", "--output-dir", "x"], "not allowed with argument"),
        (["--site", "1", "--base-url", BASE], "not allowed with argument"),
    ],
)
def test_bad_arguments(
    items: SitemapRegistry, tmp_path: Path, args: list[str], message: str
) -> None:
    target = tmp_path / "out"
    if "--base-url" not in args and "--site" not in args:
        args = [*args, "--base-url", BASE]
    if "--storage" not in args:
        args = [*args, "--output-dir", str(target)]
    with pytest.raises(CommandError, match=re.escape(message)):
        run(*args)
    assert not target.exists()


def test_unwritable_folder(items: SitemapRegistry, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CommandError, match="exists and is not a folder"):
        run("--output-dir", str(blocker), "--base-url", BASE)
    with pytest.raises(CommandError, match=r"cannot be created: .* is not a folder"):
        run("--output-dir", str(blocker / "sub"), "--base-url", BASE)
    assert blocker.read_text() == "x"


def test_folder_that_refuses_writes(
    items: SitemapRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    def refuse(**kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    # What a read-only mount answers, which os.access() does not see (and root ignores).
    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    with pytest.raises(CommandError, match=r"Cannot write to .*: Permission denied"):
        run("--output-dir", str(tmp_path), "--base-url", BASE)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_read_only_folder(items: SitemapRegistry, tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(CommandError, match="Cannot write to"):
            run("--output-dir", str(tmp_path), "--base-url", BASE)
        with pytest.raises(CommandError, match="is not writable"):
            run("--output-dir", str(tmp_path / "sub"), "--base-url", BASE, "--dry-run")
    finally:
        tmp_path.chmod(0o700)


def test_missing_destination_and_host(items: SitemapRegistry, tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="Give --output-dir or --storage"):
        run("--base-url", BASE)
    with (
        override_settings(SITEMAPX_USE_SITES=False),
        pytest.raises(CommandError, match="Give --base-url"),
    ):
        run("--output-dir", str(tmp_path / "out"))
    with pytest.raises(CommandError, match="--output-dir is empty"):
        run("--output-dir", " ", "--base-url", BASE)
    assert list(tmp_path.iterdir()) == []


def test_empty_sitemap_writes_nothing(registry: SitemapRegistry, tmp_path: Path) -> None:
    registry.register("empty", ItemSource, items=list)
    with pytest.raises(CommandError, match="no URL yet"):
        run("--output-dir", str(tmp_path / "out"), "--base-url", BASE)
    assert not (tmp_path / "out").exists()


def test_second_export_to_the_same_folder_is_refused(
    items: SitemapRegistry, tmp_path: Path
) -> None:
    destination = FolderDestination(tmp_path)
    with destination.lock(), pytest.raises(ExportError, match="Another export"):
        export_sitemap(FolderDestination(tmp_path), site=Site("https", "example.com"))
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


def test_storage_destination_needs_lock_for_staging(tmp_path: Path) -> None:
    from django.core.files.storage import InMemoryStorage

    with pytest.raises(RuntimeError, match="outside lock"):
        StorageDestination(InMemoryStorage()).stage("sitemap.xml")
