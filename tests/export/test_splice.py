"""Spliced pages: an incremental run remakes only the blocks of rows that changed.

Each run is checked against a full export of the same data (byte for byte),
and counts the pages it spliced (``ExportResult.spliced``, ``splice.splice``).
Spliced pages are opt-in (``SITEMAPX_EXPORT_SPLICE``): every test here turns
them on but those of the setting off.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

import django_sitemapx as sitemapx
from django_sitemapx import export
from django_sitemapx.compat import tasks_module
from django_sitemapx.export import FolderDestination, export_sitemap, files, parallel, splice
from django_sitemapx.export.destinations import (
    BLOCKS_SUFFIX,
    MANIFEST_NAME,
    Blocks,
    FileRecord,
    StorageDestination,
    blocks_digest,
    blocks_name,
)
from django_sitemapx.locations import Origin
from django_sitemapx.models import ChangedKey, PageState
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from django_sitemapx.sources.changes import prune_changes
from tests.export.test_incremental import Exports, _DatedPathSource
from tests.support.exports import exported, pages, run
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

ORIGIN = Origin("http", "example.com")
DAY = datetime.date(2024, 1, 1)


@pytest.fixture(autouse=True)
def splice_on(settings: Any) -> None:
    settings.SITEMAPX_EXPORT_SPLICE = True


@pytest.fixture
def spliced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Blocks of 4 rows; the numbers of the pages ``splice.splice`` spliced, in order."""
    monkeypatch.setattr(splice, "BLOCK_ROWS", 4)
    calls: list[int] = []
    real = splice.splice

    def counting(source: Any, number: int, *args: Any, **kwargs: Any) -> Any:
        made = real(source, number, *args, **kwargs)
        if made is not None:
            calls.append(number)
        return made

    monkeypatch.setattr(splice, "splice", counting)
    return calls


@pytest.fixture
def commit(django_capture_on_commit_callbacks: Callable[..., Any]) -> Callable[..., Any]:
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _documents(commit: Callable[..., Any], keys: range) -> None:
    with commit():
        for key in keys:
            Document.objects.create(id=key, path=f"/d/{key}/", published_on=DAY)


def _exported(registry: SitemapRegistry, commit: Callable[..., Any], tmp_path: Path) -> Exports:
    """Section "d" of 40 documents in pages of 20, exported once (a full export to check)."""
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=20)
    _documents(commit, range(10, 410, 10))
    exports = Exports(tmp_path, gzip=False)
    exports.check()
    return exports


def _save(commit: Callable[..., Any], key: int, path: str | None = None) -> None:
    with commit():
        document = Document.objects.get(id=key)
        document.path = path or f"/d/{key}/edited/"
        document.save()


def _blocks(folder: Path, name: str) -> dict[str, Any]:
    """A page's blocks as the file beside it keeps them (its digest in the manifest), as lists."""
    manifest = json.loads((folder / MANIFEST_NAME).read_bytes())
    record = FileRecord.from_json(manifest["documents"][name])
    assert record is not None and record.blocks is not None
    data = (folder / blocks_name(name)).read_bytes()
    assert blocks_digest(data) == record.blocks
    blocks = Blocks.from_bytes(data)
    assert blocks is not None and blocks.holds(record.size, record.urls)
    return {
        "starts": blocks.starts,
        "sizes": blocks.sizes,
        "urls": blocks.urls,
        "digests": blocks.digests,
    }


def _page_of(key: int) -> int:
    found = sitemapx.default_registry.get("d").page_table().page_of(key)
    assert found is not None
    return found


def test_saves_deletes_and_inserts_are_spliced_byte_for_byte(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=20)
    registry.register("static", ItemSource, items=lambda: pages("static", 3), limit=2)
    _documents(commit, range(10, 610, 10))  # 60 rows: 3 pages of 20, 5 blocks each
    exports = Exports(tmp_path, gzip=False)
    first = exports.check()
    assert first.spliced == 0
    name = f"sitemap-d-{_page_of(250)}.xml"
    before = _blocks(exports.folder, name)
    assert len(before["starts"]) == 5
    assert len(before["sizes"]) == 7  # the opening tag, 5 blocks, the closing tag

    # A save changing the URL's length: one block of one page made again.
    _save(commit, 250, "/d/250/a-much-longer-path-than-before/")
    result = exports.check()
    assert result.spliced == 1 and spliced == [_page_of(250)]
    assert {exported.name for exported in result.files} == {name}  # the index is the same
    after = _blocks(exports.folder, name)
    changed = [
        index
        for index, (old, new) in enumerate(zip(before["digests"], after["digests"], strict=True))
        if old != new
    ]
    assert len(changed) == 1
    assert after["sizes"][changed[0]] > before["sizes"][changed[0]]

    # A delete: the block loses a row.
    with commit():
        Document.objects.filter(id=260).delete()
    assert exports.check().spliced == 1
    # An insert inside a block (the page has room again: no split).
    with commit():
        Document.objects.create(id=255, path="/d/255/", published_on=DAY)
    assert exports.check().spliced == 1
    # Two saves in two pages, and a block of the first page and of the last.
    _save(commit, 10)
    _save(commit, 600)
    assert exports.check().spliced == 2
    # Nothing changed: every page proven, none spliced.
    unchanged = exports.check()
    assert unchanged.spliced == 0 and unchanged.proven == 3


def test_a_sections_page_format_is_read_once_for_all_its_pages(
    registry: SitemapRegistry,
    tmp_path: Path,
    spliced: list[int],
    commit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Its longest location is found by reversing the URL pattern: not once per page.
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=20)
    _documents(commit, range(10, 610, 10))
    exports = Exports(tmp_path, gzip=False)
    exports.check()
    read: list[str] = []
    real = splice.PageFormat.of.__func__  # type: ignore[attr-defined]

    def counting(cls: type[splice.PageFormat], source: Any) -> splice.PageFormat:
        read.append(source.section)
        made: splice.PageFormat = real(cls, source)
        return made

    monkeypatch.setattr(splice.PageFormat, "of", classmethod(counting))
    for key in (10, 250, 600):
        _save(commit, key)
    result = exports.export()
    assert result.spliced == 3 and len(spliced) == 3
    assert read == ["d"]
    assert exports.check().spliced == 0


def test_a_block_gaining_rows_is_cut_again_and_one_losing_them_all_goes(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=40)
    _documents(commit, range(100, 2100, 100))  # 20 rows, one page (room for 40), 5 blocks
    exports = Exports(tmp_path, gzip=False)
    exports.check()
    name = "sitemap-d-1.xml"
    assert len(_blocks(exports.folder, name)["starts"]) == 5
    # Nine rows inside the second block (keys 500 to 800): it is cut in blocks of 4 again.
    _documents(commit, range(510, 600, 10))
    assert exports.check().spliced == 1
    blocks = _blocks(exports.folder, name)
    assert len(blocks["starts"]) == 8
    assert max(blocks["urls"]) == 4
    # Every row of the first block deleted: its range goes to the next block.
    with commit():
        Document.objects.filter(id__in=[100, 200, 300, 400]).delete()
    assert exports.check().spliced == 1
    blocks = _blocks(exports.folder, name)
    assert blocks["starts"][0] == "" and 0 not in blocks["sizes"][1:-1]


def test_a_split_or_merge_a_setting_and_invalidate_make_the_page_whole(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=10)
    _documents(commit, range(10, 210, 10))  # 20 rows: 2 full pages of 10
    exports = Exports(tmp_path, gzip=False)
    exports.check()
    # A row more in the full first page: it splits; its range moved, nothing is spliced.
    _documents(commit, range(15, 16))
    result = exports.check()
    assert result.spliced == 0 and spliced == []
    # Rows deleted until a page merges.
    with commit():
        Document.objects.filter(id__in=[20, 30, 40, 50, 60, 70]).delete()
    assert exports.check().spliced == 0
    # A save, now with a setting every page depends on changed: made whole.
    _save(commit, 150)
    with override_settings(SITEMAPX_XML_STYLESHEET="/sitemap.xsl"):
        assert exports.check().spliced == 0
    _save(commit, 160)
    assert exports.check().spliced == 0  # the setting went back: every page changed again
    # invalidate(section) says nothing of which rows: made whole, and so after a save too.
    _save(commit, 170)
    sitemapx.invalidate("d")
    assert exports.check().spliced == 0
    _save(commit, 180)
    assert exports.check().spliced == 1


def test_a_pruned_log_or_a_bulk_change_without_a_key_makes_the_page_whole(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    exports = _exported(registry, commit, tmp_path)
    _save(commit, 50)
    assert prune_changes(datetime.timedelta(0)) > 0
    assert exports.check().spliced == 0
    # A bulk update marks its page with no key (invalidate(section, page)): whole.
    Document.objects.filter(id=60).update(path="/d/60/bulk/")
    _save(commit, 70)
    sitemapx.invalidate("d", _page_of(60))
    assert exports.check().spliced == 0
    # The log now read from the pruned mark on: spliced again.
    _save(commit, 80)
    assert exports.check().spliced == 1
    assert ChangedKey.objects.filter(section="", key__isnull=False).count() == 1


def test_sections_added_removed_and_exported_apart(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    exports = _exported(registry, commit, tmp_path)
    # A section added or removed changes the configuration every page stands on: whole.
    registry.register("static", ItemSource, items=lambda: pages("static", 3), limit=2)
    _save(commit, 30)
    assert exports.check().spliced == 0
    _save(commit, 35 + 5)
    assert exports.check().spliced == 1
    registry.unregister("static")
    _save(commit, 50)
    assert exports.check().spliced == 0
    _save(commit, 60)
    assert exports.check().spliced == 1
    # Section "d" left out twice while its rows change: its own cursor stays where it was.
    registry.register("static", ItemSource, items=lambda: pages("static", 3), limit=2)
    destination = FolderDestination(exports.folder)
    exports.check()
    _save(commit, 20, "/d/20/first/")  # block 1 of page 1
    export_sitemap(destination, origin=ORIGIN, sections=["static"])
    _save(commit, 110, "/d/110/second/")  # block 3
    export_sitemap(destination, origin=ORIGIN, sections=["static"])
    # Page 1 of "d": the blocks of both saves again, the first one read from d's own cursor.
    assert exports.check().spliced == 1


def test_gzip_and_storages(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=20)
    _documents(commit, range(10, 410, 10))
    # With gzip copies the pages are made the usual way, and stay byte-identical.
    exports = Exports(tmp_path, gzip=True)
    exports.check()
    _save(commit, 30)
    assert exports.check().spliced == 0
    # A storage: the old file's ranges are read and written.
    from django.core.files.storage import InMemoryStorage

    storage = InMemoryStorage()
    destination = StorageDestination(storage)
    export_sitemap(destination, origin=ORIGIN)
    _save(commit, 40)
    result = export_sitemap(destination, origin=ORIGIN)
    assert result.spliced == 1
    full = tmp_path / "full-storage"
    export_sitemap(FolderDestination(full), origin=ORIGIN, full=True)
    for name, data in exported(full).items():
        with storage.open(name, "rb") as handle:
            assert handle.read() == data, name


@pytest.mark.skipif(tasks_module() is None, reason="needs Django's Tasks framework")
def test_tasks_splice_too(
    registry: SitemapRegistry,
    tmp_path: Path,
    spliced: list[int],
    commit: Callable[..., Any],
    immediate: None,
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=20)
    _documents(commit, range(10, 810, 10))  # 4 pages
    folder = tmp_path / "out"
    parallel.start_export(str(folder), origin=ORIGIN, pages_per_task=1)

    def full(number: int) -> dict[str, bytes]:
        reference = tmp_path / f"full-{number}"
        export_sitemap(FolderDestination(reference), origin=ORIGIN, full=True)
        return exported(reference)

    assert exported(folder) == full(1)
    _save(commit, 30, "/d/30/longer-now/")
    with commit():
        Document.objects.filter(id=500).delete()
    parallel.start_export(str(folder), origin=ORIGIN, pages_per_task=1)
    assert sorted(spliced) == sorted({_page_of(30), _page_of(490)})
    assert exported(folder) == full(2)
    # The command, split into tasks.
    _save(commit, 700)
    run("--tasks", "--wait", "--output-dir", str(folder), "--base-url", "http://example.com")
    assert len(spliced) == 3
    assert exported(folder) == full(3)


def test_a_page_with_an_entry_left_out_is_not_spliced(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=20)
    _documents(commit, range(10, 410, 10))
    _save(commit, 30, "/d/\x01/")  # left out: a character XML cannot hold
    exports = Exports(tmp_path, gzip=False)
    exports.check()
    manifest = json.loads((exports.folder / MANIFEST_NAME).read_bytes())
    assert "blocks" not in manifest["documents"][f"sitemap-d-{_page_of(30)}.xml"]
    assert "blocks" in manifest["documents"][f"sitemap-d-{_page_of(390)}.xml"]
    _save(commit, 50)
    _save(commit, 390)
    assert exports.check().spliced == 1
    assert spliced == [_page_of(390)]


def test_blocks_that_do_not_add_up_are_not_trusted() -> None:
    blocks = Blocks.of(
        "b", ["", "00000000000000000010"], [5, 10, 20, 3], [0, 2, 4, 0], [b"a" * 16] * 4
    )
    assert blocks is not None and blocks.holds(38, 6)
    assert not blocks.holds(39, 6) and not blocks.holds(38, 7)
    assert blocks.sizes == [5, 10, 20, 3] and blocks.urls == [0, 2, 4, 0]
    assert blocks.digests == [b"a" * 16] * 4 and blocks.lastmods is None
    assert Blocks.from_bytes(blocks.to_bytes()) == blocks
    # A size that is not a whole 64-bit integer, a negative count, a digest cut short.
    assert not dataclasses.replace(blocks, sizes_data=blocks.sizes_data[:-1]).holds(38, 6)
    negative = Blocks.of("b", ["", "1"], [5, 10, 20, 3], [0, -2, 8, 0], [b"a" * 16] * 4)
    assert negative is not None and not negative.holds(38, 6)
    assert not dataclasses.replace(blocks, digests_data=b"a" * 63).holds(38, 6)
    assert Blocks.of("b", ["a,b"], [1, 1, 1], [0, 1, 0], [b"a" * 16] * 3) is None
    assert Blocks.of("b", [""], [1, 2**63, 1], [0, 1, 0], [b"a" * 16] * 3) is None
    dated = Blocks.of("b", ["", "2"], [1, 1, 1, 1], [0, 1, 1, 0], [b"d" * 16] * 4, 3, ["x", None])
    assert dated is not None and Blocks.from_bytes(dated.to_bytes()) == dated
    assert dated.lastmods == ["x", None] and dated.changes == 3
    # Not a blocks file of this format: the JSON of earlier versions, bytes cut short or added.
    data = blocks.to_bytes()
    old = b'{"base":"b","starts":",00000000000000000010","sizes":"5,10,20,3","urls":"0,2,4,0"}'
    for other in (b"not json", old, data[:-1], data + b"x", data[:10], b""):
        assert Blocks.from_bytes(other) is None


def test_a_blocks_file_not_the_one_recorded_makes_the_page_whole(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    exports = _exported(registry, commit, tmp_path)
    name = f"sitemap-d-{_page_of(50)}.xml"
    side = exports.folder / blocks_name(name)
    # Damaged, or left by a run killed between the page and it: its digest differs.
    side.write_bytes(side.read_bytes() + b" ")
    _save(commit, 50)
    assert exports.check().spliced == 0
    _save(commit, 60)
    assert exports.check().spliced == 1
    # Gone: whole again, and written again.
    side.unlink()
    _save(commit, 70)
    assert exports.check().spliced == 0 and side.exists()


def test_a_blocks_file_of_an_earlier_format_makes_the_page_whole_once(
    registry: SitemapRegistry, tmp_path: Path, spliced: list[int], commit: Callable[..., Any]
) -> None:
    exports = _exported(registry, commit, tmp_path)
    name = f"sitemap-d-{_page_of(50)}.xml"
    side = exports.folder / blocks_name(name)
    blocks = Blocks.from_bytes(side.read_bytes())
    assert blocks is not None
    # The JSON an earlier version wrote, with its digest in the manifest: read, and not trusted.
    old = {
        "base": blocks.base,
        "starts": blocks.starts_text,
        "sizes": ",".join(map(str, blocks.sizes)),
        "urls": ",".join(map(str, blocks.urls)),
        "digests": blocks.digests_data.hex(),
        "changes": blocks.changes,
    }
    data = json.dumps(old, separators=(",", ":")).encode()
    side.write_bytes(data)
    manifest_path = exports.folder / MANIFEST_NAME
    manifest = json.loads(manifest_path.read_bytes())
    manifest["documents"][name]["blocks"] = blocks_digest(data)
    manifest_path.write_bytes(json.dumps(manifest).encode())
    _save(commit, 50)
    assert exports.check().spliced == 0
    assert Blocks.from_bytes(side.read_bytes()) is not None
    _save(commit, 60)
    assert exports.check().spliced == 1


def test_syncs_start_before_the_manifest_is_written_and_end_before_the_first_rename(
    registry: SitemapRegistry,
    tmp_path: Path,
    spliced: list[int],
    commit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    # Spliced over copies of the pages' files, not over spares (test_spares.py).
    settings.SITEMAPX_EXPORT_SPARES = False
    exports = _exported(registry, commit, tmp_path)
    _save(commit, 50)
    _save(commit, 390)
    events: list[str] = []
    soon: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    real_soon, real_stage = FolderDestination.sync_soon, FolderDestination.stage

    def fsync(fd: int) -> None:
        real_fsync(fd)
        events.append("sync")

    def replace(source: Any, target: Any) -> None:
        events.append("replace")
        real_replace(source, target)

    def sync_soon(destination: FolderDestination, staged: Any) -> None:
        soon.extend(file.name for file in staged)
        events.append("soon")
        real_soon(destination, staged)

    def stage(destination: FolderDestination, name: str) -> Any:
        if name != MANIFEST_NAME:
            events.append("stage")
        return real_stage(destination, name)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(FolderDestination, "sync_soon", sync_soon)
    monkeypatch.setattr(FolderDestination, "stage", stage)
    result = exports.export()
    # Not as each page is made: every file's sync starts once all are staged, before
    # the manifest naming them is written (its rename the first). A sync may end while
    # the next ones are started.
    assert result.spliced == 2 and sorted(soon) == sorted(file.name for file in result.files)
    staged = events.count("stage")
    assert staged >= len(soon) and events[:staged] == ["stage"] * staged
    assert events[staged] == "soon" and events.count("soon") == 1
    events = [event for event in events if event not in ("soon", "stage")]
    # Every page and the index durable before the first is put in place (the files'
    # syncs may end before or after the manifest naming every file is written), then
    # the manifest again.
    files = len(result.files)
    body, last = events[:-2], events[-2:]
    replaced = [position for position, event in enumerate(body) if event == "replace"]
    assert last == ["sync", "replace"] and len(replaced) == files + 1
    assert body.count("sync") == files + 1 and body[replaced[1] :] == ["replace"] * files
    # The syncing threads stop with the run.
    assert not [t for t in threading.enumerate() if t.name.startswith("sitemapx-sync")]
    monkeypatch.undo()
    assert exports.check().spliced == 0


def test_kept_blocks_are_bounded_and_taken_once_for_the_record_they_were_checked_against() -> None:
    blocks = Blocks.of("b", ["", "1"], [1, 2, 3, 1], [0, 1, 1, 0], [b"a" * 16] * 4)
    assert blocks is not None and blocks.holds(7, 2)  # its lists parsed

    def record(digest: str, size: int = 7) -> FileRecord:
        return FileRecord("sha", size, 2, blocks=digest)

    kept = export.KeptBlocks(limit=8)
    kept.keep("one.xml", record("d1"), blocks)
    kept.keep("two.xml", record("d2"), blocks)
    kept.keep("four.xml", record("d4"), blocks)  # past the bound (4 segments each): read again
    assert kept.count == 8
    assert kept.take("four.xml", record("d4")) is None
    assert kept.take("one.xml", record("other")) is None  # another file now: read it
    assert kept.take("one.xml", record("d1")) is None  # and no longer kept
    kept.keep("four.xml", record("d4"), blocks)
    assert kept.take("four.xml", record("d4", size=8)) is None  # another size: not checked
    taken = kept.take("two.xml", record("d2"))
    assert taken is not None and taken == blocks and kept.count == 0
    # Kept as the file holds them: the lists are parsed again when asked for.
    assert "starts" in blocks.__dict__ and "starts" not in taken.__dict__
    assert taken.starts == blocks.starts


def test_a_folder_writes_blocks_files_in_place_and_a_failed_run_costs_a_whole_page(
    registry: SitemapRegistry,
    tmp_path: Path,
    spliced: list[int],
    commit: Callable[..., Any],
    settings: Any,
) -> None:
    # Spliced over copies of the pages' files, not over spares (test_spares.py).
    settings.SITEMAPX_EXPORT_SPARES = False
    exports = _exported(registry, commit, tmp_path)
    name = f"sitemap-d-{_page_of(50)}.xml"
    side = exports.folder / blocks_name(name)
    before = side.read_bytes()
    visible = exported(exports.folder)
    staged: list[str] = []
    real_stage = FolderDestination.stage

    def stage(destination: FolderDestination, file_name: str) -> Any:
        staged.append(file_name)
        return real_stage(destination, file_name)

    def fail(*args: Any) -> None:
        raise OSError("disk full")

    _save(commit, 50)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FolderDestination, "stage", stage)
        # A run that fails once its pages are staged: readers still see the previous export.
        patch.setattr(FolderDestination, "sync", fail)
        with pytest.raises(OSError, match="disk full"):
            exports.export()
    assert exported(exports.folder) == visible
    assert not list(exports.folder.glob(".*.sitemapx-tmp"))
    # The page's sync started as it was staged; its thread stopped with the run.
    assert not [t for t in threading.enumerate() if t.name.startswith("sitemapx-sync")]
    # Its blocks file was written in place, not staged: newer than the manifest's record.
    assert name in staged and not any(n.endswith(BLOCKS_SUFFIX) for n in staged)
    assert side.read_bytes() != before
    # So the next run makes that page whole (byte for byte, as ``check`` compares), once.
    assert exports.check().spliced == 0
    _save(commit, 60)
    assert exports.check().spliced == 1


def test_off_saves_log_nothing_and_exports_record_no_blocks(
    registry: SitemapRegistry,
    tmp_path: Path,
    spliced: list[int],
    commit: Callable[..., Any],
    settings: Any,
) -> None:
    exports = _exported(registry, commit, tmp_path)
    assert list(exports.folder.glob(f".*{BLOCKS_SUFFIX}"))
    settings.SITEMAPX_EXPORT_SPLICE = False
    logged = ChangedKey.objects.count()
    with CaptureQueriesContext(connection) as off:
        _save(commit, 50)
    assert ChangedKey.objects.count() == logged
    settings.SITEMAPX_EXPORT_SPLICE = True
    with CaptureQueriesContext(connection) as on:
        _save(commit, 60)
    assert ChangedKey.objects.count() == logged + 1
    # The same save costs one INSERT more with the log on, nothing else.
    extra = [query["sql"] for query in on.captured_queries[len(off.captured_queries) :]]
    assert len(on.captured_queries) == len(off.captured_queries) + 1, extra
    settings.SITEMAPX_EXPORT_SPLICE = False
    # Off: pages made the usual way; the blocks files go, the manifest names none,
    # and no cursor of the log: the manifest an export without spliced pages writes.
    result = exports.check()
    assert result.spliced == 0 and spliced == []
    assert not list(exports.folder.glob(f".*{BLOCKS_SUFFIX}"))
    manifest = json.loads((exports.folder / MANIFEST_NAME).read_bytes())
    assert "changes" not in manifest
    assert not any("blocks" in record for record in manifest["documents"].values())
    _save(commit, 70)
    with CaptureQueriesContext(connection) as export_queries:
        assert exports.export().spliced == 0
    assert not any("changedkey" in query["sql"] for query in export_queries.captured_queries)
    full = exports.export(full=True, folder=tmp_path / "again")
    assert full.spliced == 0 and not list((tmp_path / "again").glob(".*" + BLOCKS_SUFFIX))


def test_saves_while_off_are_not_missed_once_on_again(
    registry: SitemapRegistry,
    tmp_path: Path,
    spliced: list[int],
    commit: Callable[..., Any],
    settings: Any,
) -> None:
    exports = _exported(registry, commit, tmp_path)
    # A process with the log off saves a row; then one with it on, a row of the same page.
    settings.SITEMAPX_EXPORT_SPLICE = False
    _save(commit, 50, "/d/50/saved-while-off/")
    settings.SITEMAPX_EXPORT_SPLICE = True
    _save(commit, 140)
    assert _page_of(50) == _page_of(140)
    # The page was marked once more than the log says: made whole, byte for byte.
    assert exports.check().spliced == 0
    _save(commit, 150)
    assert exports.check().spliced == 1


def test_the_command_prints_the_spliced_count(
    registry: SitemapRegistry,
    tmp_path: Path,
    spliced: list[int],
    commit: Callable[..., Any],
    settings: Any,
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=20)
    _documents(commit, range(10, 410, 10))
    arguments = ("--output-dir", str(tmp_path), "--base-url", "http://example.com")
    out, _ = run(*arguments)
    assert "; 0 spliced; " in out
    _save(commit, 50)
    _save(commit, 390)
    out, _ = run(*arguments)
    assert f"Wrote {len(spliced)} files " in out and "; 2 spliced; " in out
    settings.SITEMAPX_EXPORT_SPLICE = False
    out, _ = run(*arguments)
    assert "spliced" not in out


def test_pages_made_in_blocks_record_their_size_and_refill(
    registry: SitemapRegistry, tmp_path: Path, commit: Callable[..., Any]
) -> None:
    registry.register(Document, source_class=_DatedPathSource, section="d", limit=200)
    _documents(commit, range(1, 251))  # pages of up to 196 rows: 1 to 196, then the rest
    destination = FolderDestination(tmp_path / "out")
    export_sitemap(destination, origin=ORIGIN)
    states = PageState.objects.filter(section="d").order_by("number")
    sizes = {name: len(data) for name, data in exported(tmp_path / "out").items()}
    # Each page's size as built, measured, as a page served by ModelSource.page() records it.
    assert [(state.bytes, state.measured) for state in states] == [
        (sizes[f"sitemap-d-{state.number}.xml"], True) for state in states
    ]
    # Page 1 holds 100 rows and page 2 the rest, their sizes estimates of pages full
    # by size (cut so when their rows were longer), not measured since: page 1, built
    # nearly empty, takes rows from the page after it.
    codec = registry.get("d").page_table().codec
    states.filter(number=2).update(first=codec.encode(101), rows=150, measured=False)
    states.filter(number=1).update(rows=100, bytes=30_000_000, measured=False)
    result = export_sitemap(destination, origin=ORIGIN, full=True)
    assert result.spliced == 0
    # Written from the ranges as read: every row once.
    files = exported(tmp_path / "out")
    assert sum(data.count(b"<url>") for name, data in files.items() if "-d-" in name) == 250
    assert PageState.objects.get(section="d", number=2).first > codec.encode(101)


def test_a_spliced_pages_digests_joined_make_the_same_blocks_as_listed() -> None:
    # A spliced page hands its segments' digests over joined, as its blocks file keeps
    # them: the same blocks and file digest as the list, an emptied block dropped too.
    from types import SimpleNamespace

    from django_sitemapx.sources.pages import State

    state = State(1, "", 2, None, "x", changes=2)
    where = splice.PageRange("", "", "base", state)
    stats = SimpleNamespace(skipped=0)
    blocks: Any = SimpleNamespace(
        head=b"<urlset>", tail=b"</urlset>", writer=SimpleNamespace(stats=stats), told=True
    )
    datas = [b"<url>a</url>", b"", b"<url>c</url>"]
    digests = [splice.digest(data) for data in datas]
    columns = (["", "5", "9"], [len(data) for data in datas], [1, 0, 1])
    lastmods: list[str | None] = ["2024-01-01T00:00:00+00:00", None, None]
    listed = splice._made(blocks, where, *columns, digests, lastmods)
    joined = splice._made(blocks, where, *columns, b"".join(digests), lastmods)
    assert joined == listed
    assert listed.blocks is not None and listed.blocks.starts == ["", "9"]
    assert listed.digest == splice.file_digest(
        [splice.digest(blocks.head), digests[0], digests[2], splice.digest(blocks.tail)]
    )


def test_a_page_file_is_copied_whole_after_enough_blocks_are_written_again(
    registry: SitemapRegistry,
    tmp_path: Path,
    spliced: list[int],
    commit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    settings: Any,
) -> None:
    # Spliced over copies of the pages' files, not over spares (test_spares.py).
    settings.SITEMAPX_EXPORT_SPARES = False
    # Each block written again is an extent of its own where the file system shares the
    # old file's bytes (XFS, Btrfs), and a clone costs per extent: past a count, the
    # page's next splice copies every byte, and the count starts again.
    monkeypatch.setattr(splice, "COPY_AFTER_REWRITTEN", 2)
    shared: list[bool] = []
    real = files.write_spliced

    def recording(
        source: Any, target: Any, pieces: Any, *, share: bool = True, **kwargs: Any
    ) -> None:
        shared.append(share)
        real(source, target, pieces, share=share, **kwargs)

    monkeypatch.setattr(files, "write_spliced", recording)
    exports = _exported(registry, commit, tmp_path)
    number = _page_of(50)
    name = f"sitemap-d-{number}.xml"
    # Staggered by page: 2 or 3 here.
    threshold = 2 + number * 37 % 2
    assert splice.copies_whole(number, threshold) and not splice.copies_whole(
        number, threshold - 1
    )

    def rewritten() -> int:
        manifest = json.loads((exports.folder / MANIFEST_NAME).read_bytes())
        record = FileRecord.from_json(manifest["documents"][name])
        assert record is not None
        return record.rewritten

    counts = []
    for time in range(4):
        # Two blocks of the page each run: rows 50 and 110 (blocks of 4 rows).
        _save(commit, 50, f"/d/50/run-{time}/")
        _save(commit, 110, f"/d/110/run-{time}/")
        assert exports.check().spliced == 1
        counts.append(rewritten())
    # Copied whole once the count reaches the page's threshold, then counted again.
    expected = {2: ([2, 0, 2, 0], [True, False, True, False])}
    expected[3] = ([2, 4, 0, 2], [True, True, False, True])
    assert (counts, shared) == expected[threshold]


def test_a_records_count_of_blocks_written_again_is_kept_in_the_manifest() -> None:
    record = FileRecord("ab" * 32, 10, 1, "proof", "cd" * 32, 7)
    assert record.as_json()["rewritten"] == 7
    assert FileRecord.from_json(record.as_json()) == record
    # None yet: the key is left out, as in the manifests of earlier versions.
    plain = dataclasses.replace(record, rewritten=0)
    assert "rewritten" not in plain.as_json()
    for bad in (-3, "7", None, 2.5):
        assert FileRecord.from_json({**record.as_json(), "rewritten": bad}) == plain
