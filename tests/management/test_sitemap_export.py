"""``manage.py sitemap_export``: its options, its output, and a clear ``CommandError``."""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from tests.conftest import locs, validate_sitemap
from tests.support.exports import BASE, exported, register_items, run

# Rendering a document reads the editors' overrides from the database.
pytestmark = pytest.mark.django_db


@pytest.fixture
def items(registry: SitemapRegistry) -> SitemapRegistry:
    """Two in-memory sections: ``news`` (7 URLs, 3 pages of 3) and ``docs`` (2 URLs)."""
    return register_items(registry)


def test_output_dir_may_be_a_path_from_code(items: SitemapRegistry, tmp_path: Path) -> None:
    out, _ = run(output_dir=tmp_path, base_url=BASE)
    assert "sitemap.xml" in exported(tmp_path)
    assert "Wrote " in out


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
    # Nothing changed since the first run: every file is left as it is.
    assert out.count("\n") == 1 and out.startswith("Wrote 0 files (0 URLs, 0 bytes) to ")
    assert "; 5 unchanged; removed 0 stale files." in out
    out, _ = run("--output-dir", str(tmp_path), "--base-url", BASE, "-v", "2", "--full")
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
        assert "] 4/4 pages, 9/9 URLs" in out.getvalue()


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


def test_files_base_url_defaults_to_the_setting(items: SitemapRegistry, tmp_path: Path) -> None:
    with override_settings(SITEMAPX_FILES_BASE_URL="https://cdn.example.net/maps"):
        run(output_dir=tmp_path, base_url=BASE)
        index = validate_sitemap(exported(tmp_path)["sitemap.xml"])
        assert {loc.rsplit("/", 1)[0] for loc in locs(index)} == {"https://cdn.example.net/maps"}

        run(output_dir=tmp_path, base_url=BASE, files_base_url=BASE)  # the option wins
        index = validate_sitemap(exported(tmp_path)["sitemap.xml"])
        assert {loc.rsplit("/", 1)[0] for loc in locs(index)} == {BASE}


def test_progress_line_says_pages_urls_rate_and_time_left() -> None:
    from django_sitemapx.management.commands.sitemap_export import progress_line

    line = progress_line(1_200, 2_000, 60_000_000, 100_000_000, 150.0)
    assert line == (
        "[##################............] 1,200/2,000 pages, 60,000,000/100,000,000 URLs, "
        "400,000 URLs/s, 1m40s left"
    )
    assert progress_line(0, 10, 0, 500, 0.0).endswith("0/10 pages, 0/500 URLs")
