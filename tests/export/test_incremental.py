"""An incremental export: only what changed is made and written, and the files are
byte for byte those of a full export of the same data."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches as django_caches
from django.test import override_settings

import django_sitemapx as sitemapx
from django_sitemapx.export import ExportResult, FolderDestination, export_sitemap
from django_sitemapx.export.destinations import (
    BLOCKS_SUFFIX,
    LOCK_NAME,
    MANIFEST_NAME,
    SPARE_SUFFIX,
    blocks_digest,
    blocks_name,
    spans_from_text,
)
from django_sitemapx.locations import Origin
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource, ModelSource
from tests.support.exports import exported, pages, validate_all
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

ORIGIN = Origin("http", "example.com")


class _DatedPathSource(ModelSource):
    fields = ("path",)
    lastmod_field = "published_on"

    def location(self, row: Any) -> str:
        return str(row.path)


@pytest.fixture(params=["cached", "uncached", "per-process"])
def cache_mode(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """With a cache every process shares (files), without one, and local memory.

    What changed is marked in the page table in each case, so pages are proven the
    same way in all three, a local-memory cache (each process's own) included.
    """
    caches = {
        # A location of its own: local-memory caches of one location share their entries.
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "sitemapx-export-per-process",
        },
        "shared": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "cache"),
        },
    }
    alias = {"cached": "shared", "uncached": None, "per-process": "default"}[request.param]
    with override_settings(CACHES=caches, SITEMAPX_CACHE_ALIAS=alias):
        yield request.param
        django_caches["default"].clear()


class Exports:
    """One destination exported again and again, each time checked against a full export."""

    def __init__(self, root: Path, gzip: bool) -> None:
        self.root = root
        self.folder = root / "incremental"
        self.gzip = gzip
        self.runs = 0

    def export(self, *, full: bool = False, folder: Path | None = None) -> ExportResult:
        destination = FolderDestination(folder or self.folder)
        return export_sitemap(destination, origin=ORIGIN, gzip=self.gzip, full=full)

    def check(self) -> ExportResult:
        """Export incrementally, then in full to a new folder: the two trees are the same."""
        result = self.export()
        self.runs += 1
        reference = self.root / f"full-{self.runs}"
        self.export(full=True, folder=reference)
        assert exported(self.folder) == exported(reference)
        validate_all(exported(self.folder))
        # Nothing left over: no staging file, and the manifest lists exactly the files,
        # with the blocks file of each page made in blocks (SITEMAPX_EXPORT_SPLICE).
        blocks = sorted(
            str(p.relative_to(self.folder))
            for p in self.folder.rglob(f".*{BLOCKS_SUFFIX}")
            if p.is_file()
        )
        # And the spare of a page spliced or written whole, if the folder keeps one.
        spares = sorted(
            str(p.relative_to(self.folder))
            for p in self.folder.rglob(f".*{SPARE_SUFFIX}")
            if p.is_file()
        )
        others = sorted(
            p.name
            for p in self.folder.rglob(".*")
            if not p.name.endswith((BLOCKS_SUFFIX, SPARE_SUFFIX))
        )
        assert others == [LOCK_NAME, MANIFEST_NAME]
        manifest = json.loads((self.folder / MANIFEST_NAME).read_bytes())
        assert sorted(manifest["files"]) == sorted([*exported(self.folder), *blocks, *spares])
        for spare in spares:
            _assert_spare_holds_its_page(self.folder, spare, manifest)
        assert sorted(manifest["documents"]) == sorted(exported(self.folder))
        named = {
            blocks_name(name): record["blocks"]
            for name, record in manifest["documents"].items()
            if "blocks" in record
        }
        assert sorted(named) == blocks
        for name, digest in named.items():
            assert blocks_digest((self.folder / name).read_bytes()) == digest
        return result


def _assert_spare_holds_its_page(folder: Path, spare: str, manifest: dict[str, Any]) -> None:
    """The spare ``spare`` holds its page's bytes but at the spans its record names."""
    path = folder / spare
    page = str(path.with_name(path.name[1 : -len(SPARE_SUFFIX)]).relative_to(folder))
    data, held = path.read_bytes(), (folder / page).read_bytes()
    spans = spans_from_text(manifest["documents"][page].get("spare"), len(held))
    assert spans is not None and len(data) == len(held)
    position = 0
    for first, end in [*spans, (len(held), len(held))]:
        assert data[position:first] == held[position:first]
        position = end


def _written(result: ExportResult) -> set[str]:
    return {exported.name for exported in result.files}


def _page_of(key: int) -> str:
    found = sitemapx.default_registry.get("d").page_table().page_of(key)
    return f"sitemap-d-{found}.xml"


@pytest.mark.parametrize("gzip", [False, True])
def test_incremental_export_is_byte_identical_to_a_full_one(
    registry: SitemapRegistry,
    tmp_path: Path,
    cache_mode: str,
    gzip: bool,
    django_capture_on_commit_callbacks: Callable[..., Any],
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=4)
    registry.register("static", ItemSource, items=lambda: pages("static", 5), limit=2)
    day = datetime.date(2024, 1, 1)
    with django_capture_on_commit_callbacks(execute=True):
        for key in range(10, 310, 10):  # 30 rows: 8 pages of 4 (the last of 2)
            Document.objects.create(id=key, path=f"/d/{key}/", published_on=day)
    exports = Exports(tmp_path, gzip)
    per_page = 2 if gzip else 1

    first = exports.check()
    assert first.proven == 0 and first.unchanged == []
    model_pages = len(sitemapx.default_registry.get("d").page_summaries())
    assert model_pages == 8

    # Nothing changed: no page of the model section is made; nothing is written.
    again = exports.check()
    assert again.files == [] and again.removed == []
    assert again.proven == model_pages

    # A cache flush: the marks of what changed are in the database, so every page is
    # still proven and nothing is made again.
    django_caches["default"].clear()
    if cache_mode == "cached":
        django_caches["shared"].clear()
    flushed = exports.check()
    assert flushed.files == [] and flushed.proven == model_pages

    # One save: its page, and the index (its lastmod moved); every other page proven.
    with django_capture_on_commit_callbacks(execute=True):
        saved = Document.objects.get(id=50)
        saved.path, saved.published_on = "/d/50-renamed/", datetime.date(2025, 3, 1)
        saved.save()
    result = exports.check()
    page = _page_of(50)
    assert {name.removesuffix(".gz") for name in _written(result)} == {page, "sitemap.xml"}
    assert len(result.files) == 2 * per_page
    assert result.proven == model_pages - 1

    # A delete.
    with django_capture_on_commit_callbacks(execute=True):
        page = _page_of(120)
        Document.objects.get(id=120).delete()
    result = exports.check()
    assert page in {name.removesuffix(".gz") for name in _written(result)}
    assert result.proven == model_pages - 1

    # Rows inserted into a full page: it splits into a new page.
    with django_capture_on_commit_callbacks(execute=True):
        for key in (61, 62, 63):
            Document.objects.create(id=key, path=f"/d/{key}/", published_on=day)
    result = exports.check()
    assert len(sitemapx.default_registry.get("d").page_summaries()) == model_pages + 1
    assert result.proven >= model_pages - 2

    # Rows deleted until a page merges with its neighbour.
    with django_capture_on_commit_callbacks(execute=True):
        for key in (200, 210, 220):
            Document.objects.filter(id=key).delete()
    result = exports.check()
    assert result.proven >= model_pages - 3

    # A bulk change the signals do not see, announced by invalidate().
    with django_capture_on_commit_callbacks(execute=True):
        Document.objects.filter(id__gte=250).update(published_on=datetime.date(2025, 5, 5))
        sitemapx.invalidate("d")
    result = exports.check()
    assert result.proven == 0
    assert any(b"2025-05-05" in data for data in exported(exports.folder).values())

    # A section added, then removed: its files come, then go.
    registry.register("extra", ItemSource, items=lambda: pages("extra", 3))
    result = exports.check()
    assert {name.removesuffix(".gz") for name in _written(result)} == {
        "sitemap-extra-1.xml",
        "sitemap.xml",
    }
    registry.unregister("extra")
    result = exports.check()
    assert {name.removesuffix(".gz") for name in result.removed} == {"sitemap-extra-1.xml"}
    assert not any(name.startswith("sitemap-extra") for name in exported(exports.folder))

    # A setting that changes every page: nothing is proven, every page is written.
    with override_settings(SITEMAPX_PROTOCOL="https"):
        result = exports.check()
        assert result.proven == 0 and result.unchanged == []
        assert all(
            b"https://example.com/" in data
            for name, data in exported(exports.folder).items()
            if not name.endswith(".gz")
        )
    # And back.
    result = exports.check()
    assert result.proven == 0 and result.unchanged == []


def test_a_file_changed_at_the_destination_is_written_again(
    registry: SitemapRegistry, tmp_path: Path, cache_mode: str
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=4)
    for key in range(1, 10):
        Document.objects.create(id=key, path=f"/d/{key}/")
    exports = Exports(tmp_path, gzip=False)
    exports.check()
    (exports.folder / "sitemap-d-1.xml").write_bytes(b"truncated")
    (exports.folder / "sitemap-d-2.xml").unlink()
    result = exports.check()
    assert _written(result) == {"sitemap-d-1.xml", "sitemap-d-2.xml"}


def test_a_manifest_that_proves_nothing_makes_every_page(
    registry: SitemapRegistry, tmp_path: Path, cache_mode: str
) -> None:
    # A manifest of an older version (or damaged): nothing is taken as proven; files whose
    # bytes are the same are still not written again.
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=4)
    for key in range(1, 10):
        Document.objects.create(id=key, path=f"/d/{key}/")
    exports = Exports(tmp_path, gzip=False)
    exports.check()
    manifest = exports.folder / MANIFEST_NAME
    files = json.loads(manifest.read_bytes())["files"]
    manifest.write_text(json.dumps({"format": 1, "files": files}))
    result = exports.check()
    assert result.proven == 0 and len(result.files) == len(files)
    manifest.write_text("{not json")
    result = exports.check()
    assert result.proven == 0


def test_full_rewrites_every_file(registry: SitemapRegistry, tmp_path: Path) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=4)
    for key in range(1, 10):
        Document.objects.create(id=key, path=f"/d/{key}/")
    exports = Exports(tmp_path, gzip=False)
    exports.check()
    result = exports.export(full=True)
    assert result.proven == 0 and result.unchanged == []
    assert _written(result) == set(exported(exports.folder))
