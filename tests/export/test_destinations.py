"""Export destinations: a folder or any Django storage, each file put in place in one step."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import InMemoryStorage, storages
from django.test import override_settings

from django_sitemapx.exceptions import ExportError
from django_sitemapx.export.destinations import (
    _SYNC_THREADS,
    LOCK_NAME,
    MANIFEST_NAME,
    FolderDestination,
    StagedFile,
    StorageDestination,
    storage_destination,
)
from django_sitemapx.registry import SitemapRegistry
from tests.support.exports import BASE, exported, register_items, run

# Rendering a document reads the editors' overrides from the database.
pytestmark = pytest.mark.django_db

MEMORY_STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "plain_memory": {"BACKEND": "django.core.files.storage.InMemoryStorage"},
}


@pytest.fixture
def items(registry: SitemapRegistry) -> SitemapRegistry:
    """Two in-memory sections: ``news`` (7 URLs, 3 pages of 3) and ``docs`` (2 URLs)."""
    return register_items(registry)


@override_settings(STORAGES=MEMORY_STORAGES)
def test_storage_that_renames_instead_of_replacing_still_gets_the_same_names(
    items: SitemapRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    run("--storage", "plain_memory", "--base-url", BASE)
    run("--storage", "plain_memory", "--base-url", BASE, "--full")
    assert "does not overwrite files: sitemap.xml is missing while" in caplog.text
    _, names = storages["plain_memory"].listdir("")
    assert len(names) == 6 and not any("_" in name for name in names)


def test_storage_destination_needs_lock_for_staging(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="outside lock"):
        StorageDestination(InMemoryStorage()).stage("sitemap.xml")


def test_a_folder_stages_next_to_the_target_and_commits_in_one_step(tmp_path: Path) -> None:
    destination = FolderDestination(tmp_path / "out", permissions=0o640)
    destination.validate(dry_run=False)
    with destination.lock():
        staged = destination.stage("maps/sitemap.xml")
        assert staged.path.parent == tmp_path / "out" / "maps"
        assert staged.path.name.startswith(".sitemap.xml.")
        staged.path.write_bytes(b"<new/>")
        assert not destination.exists("maps/sitemap.xml")
        destination.commit(staged)
    assert destination.read_bytes("maps/sitemap.xml") == b"<new/>"
    assert (tmp_path / "out" / "maps" / "sitemap.xml").stat().st_mode & 0o777 == 0o640
    assert not staged.path.exists()
    assert (tmp_path / "out" / LOCK_NAME).exists()


def test_a_folder_copies_files_ahead_each_taken_once_the_others_removed_with_the_lock(
    tmp_path: Path,
) -> None:
    destination = FolderDestination(tmp_path, permissions=0o640)
    destination.validate(dry_run=False)
    old = os.urandom(100_000)
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "a.xml").write_bytes(old)
    (tmp_path / "b.xml").write_bytes(b"<b/>")
    with destination.lock():
        destination.copy_soon(["maps/a.xml", "b.xml", "missing.xml"])
        copy = destination.take_copy("maps/a.xml")
        assert copy is not None and copy.name == "maps/a.xml"
        assert copy.path.parent == tmp_path / "maps" and copy.path.name.startswith(".a.xml.")
        assert copy.path.read_bytes() == old
        status = (tmp_path / "maps" / "a.xml").stat()
        assert copy.copy_of == (status.st_dev, status.st_ino)
        # Taken once; one that could not be made is none, and leaves no file.
        assert destination.take_copy("maps/a.xml") is None
        assert destination.take_copy("missing.xml") is None
        assert destination.take_copy("never-asked.xml") is None
        with open(copy.path, "r+b") as handle:
            handle.write(b"<new/>")
        destination.commit(copy)
    # The copy of b.xml, never taken, went with the lock.
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([LOCK_NAME, "maps", "b.xml"])
    assert sorted(path.name for path in (tmp_path / "maps").iterdir()) == ["a.xml"]
    assert (tmp_path / "maps" / "a.xml").read_bytes() == b"<new/>" + old[6:]
    assert (tmp_path / "maps" / "a.xml").stat().st_mode & 0o777 == 0o640
    # A storage copies nothing ahead.
    storage = StorageDestination(InMemoryStorage())
    storage.copy_soon(["b.xml"])
    assert storage.take_copy("b.xml") is None


def test_a_folder_puts_a_blocks_file_aside_over_its_old_bytes_cut_to_length(
    tmp_path: Path,
) -> None:
    destination = FolderDestination(tmp_path / "out", permissions=0o640)
    destination.validate(dry_run=False)
    with destination.lock():
        assert destination.put_aside("maps/.page.xml.sitemapx-blocks", b"0123456789") is None
        target = tmp_path / "out" / "maps" / ".page.xml.sitemapx-blocks"
        inode = target.stat().st_ino
        # The storage's file_permissions_mode, as the pages committed beside it.
        assert target.stat().st_mode & 0o777 == 0o640
        destination.put_aside("maps/.page.xml.sitemapx-blocks", b"abcd")
        assert target.read_bytes() == b"abcd"
        destination.put_aside("maps/.page.xml.sitemapx-blocks", b"ABCDEFGH")
        assert target.read_bytes() == b"ABCDEFGH"
        # The same file, written over: no staging file, no rename.
        assert target.stat().st_ino == inode
        assert sorted(path.name for path in target.parent.iterdir()) == [target.name]


def test_a_folder_makes_a_files_folders_only_when_they_are_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    destination = FolderDestination(tmp_path / "out")
    destination.validate(dry_run=False)
    made: list[Path] = []
    real = Path.mkdir

    def recording(self: Path, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", recording)
    with destination.lock():
        made.clear()
        first = destination.stage("a/b/sitemap.xml")
        destination.put_aside("c/.sitemap.xml.sitemapx-blocks", b"blocks")
        # ``mkdir(parents=True)`` calls itself for the folders above.
        assert set(made) == {tmp_path / "out" / name for name in ("a/b", "a", "c")}
        assert first.path.parent == tmp_path / "out" / "a" / "b"
        assert (tmp_path / "out" / "c" / ".sitemap.xml.sitemapx-blocks").read_bytes() == b"blocks"
        # In folders that exist: no mkdir (and no stat of the folder) per file.
        made.clear()
        second = destination.stage("a/b/sitemap-2.xml")
        destination.put_aside("c/.sitemap.xml.sitemapx-blocks", b"again")
        destination.put_aside(".sitemap.xml.sitemapx-blocks", b"top")
        assert made == []
        assert second.path.exists() and second.path != first.path
        # A folder removed meanwhile is made again.
        first.discard()
        second.discard()
        for path in (tmp_path / "out" / "a" / "b", tmp_path / "out" / "a"):
            path.rmdir()
        third = destination.stage("a/b/sitemap.xml")
        assert set(made) == {tmp_path / "out" / "a/b", tmp_path / "out" / "a"}
        assert third.path.exists()
        third.discard()


def test_a_folder_reads_a_file_whole_whatever_its_size_says(tmp_path: Path) -> None:
    destination = FolderDestination(tmp_path)
    for size in (0, 1, 4096, 3_000_000):
        data = os.urandom(size)
        (tmp_path / "file").write_bytes(data)
        assert destination.read_bytes("file") == data
    assert destination.read_bytes("missing") is None
    # A file whose size says less than it holds is read to its end.
    status = Path("/proc/self/status")
    if not status.exists():
        pytest.skip("no /proc")
    assert status.stat().st_size == 0
    assert b"Pid:" in (FolderDestination("/proc/self").read_bytes("status") or b"")


def test_a_folder_export_syncs_every_file_before_it_puts_the_first_in_place(
    items: SitemapRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fsync() calls go out together (the file system journals them at once), and a
    # crash before the last one leaves the previous export whole, as one by one.
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("sync")
        real_fsync(fd)

    def replace(source: Any, target: Any) -> None:
        events.append("replace")
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    run("--output-dir", str(tmp_path / "out"), "--base-url", BASE)
    files = len(exported(tmp_path / "out"))
    assert files == 5
    # The manifest first (naming every file that may exist), the documents, the manifest;
    # the documents' syncs start before the first manifest is written, and all end
    # before the first document is put in place.
    manifest = ["sync", "replace"]
    body, last = events[:-2], events[-2:]
    assert last == manifest and body[-files:] == ["replace"] * files
    assert sorted(body[:-files]) == ["replace", *["sync"] * (files + 1)]
    assert body[:-files].index("replace") > 0  # the manifest synced before it is in place


def _staged_files(destination: FolderDestination, count: int) -> list[StagedFile]:
    staged = [destination.stage(f"maps/page-{number}.xml") for number in range(count)]
    for number, file in enumerate(staged):
        file.path.write_bytes(b"page %d" % number)
    return staged


def test_a_folder_syncs_its_files_on_a_few_threads_each_taking_file_after_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thread's every return from a system call waits for the interpreter's lock,
    # against the export's thread: 16 threads, each syncing file after file from one
    # queue, not a thread for every fsync() in flight (docs/performance.md, "The syncs'
    # threads take turns with the export's").
    destination = FolderDestination(tmp_path)
    synced: list[tuple[str, int]] = []
    flying = [0, 0]  # in flight now, most at once
    lock = threading.Lock()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        with lock:
            flying[0] += 1
            flying[1] = max(flying)
        time.sleep(0.02)  # long enough for the threads' syncs to overlap
        real_fsync(fd)
        with lock:
            flying[0] -= 1
            synced.append((threading.current_thread().name, os.fstat(fd).st_ino))

    monkeypatch.setattr(os, "fsync", fsync)
    with destination.lock():
        staged = _staged_files(destination, 60)
        destination.sync_soon(staged)
        destination.sync(staged)
    assert sorted(inode for _name, inode in synced) == sorted(
        file.path.stat().st_ino for file in staged
    )
    threads = {name for name, _inode in synced}
    assert 1 < flying[1] <= _SYNC_THREADS == 16 and len(threads) <= _SYNC_THREADS
    assert all(name.startswith("sitemapx-sync") for name in threads)
    assert all(file.synced for file in staged)
    assert not [t for t in threading.enumerate() if t.name.startswith("sitemapx-sync")]


def test_a_folder_sync_that_fails_raises_and_leaves_no_sync_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    destination = FolderDestination(tmp_path)
    real_fsync = os.fsync
    calls = [0]

    def fsync(fd: int) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with destination.lock():
        staged = _staged_files(destination, 40)
        destination.sync_soon(staged)
        with pytest.raises(OSError, match="Input/output error"):
            destination.sync(staged)
        assert not any(file.synced for file in staged)
        assert not [t for t in threading.enumerate() if t.name.startswith("sitemapx-sync")]
        # What no thread had taken when the run failed is not synced later.
        done = calls[0]
        time.sleep(0.05)
        assert calls[0] == done <= len(staged)


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="no posix_fadvise here")
def test_the_files_replaced_are_dropped_from_the_cache_while_the_syncs_are_waited_for(
    items: SitemapRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file replaced is freed with its cached pages by the rename: each is dropped once
    # the file replacing it is synced, before the first rename, not by the renames.
    out = tmp_path / "out"
    run("--output-dir", str(out), "--base-url", BASE)
    before = {path.name: path.stat().st_ino for path in out.iterdir() if path.is_file()}
    events: list[tuple[str, int]] = []
    real_fsync, real_replace, real_fadvise = os.fsync, os.replace, os.posix_fadvise

    def fsync(fd: int) -> None:
        real_fsync(fd)
        events.append(("sync", os.fstat(fd).st_ino))

    def fadvise(fd: int, offset: int, length: int, advice: int) -> None:
        assert (offset, length, advice) == (0, 0, os.POSIX_FADV_DONTNEED)
        events.append(("drop", os.fstat(fd).st_ino))
        real_fadvise(fd, offset, length, advice)

    def replace(source: Any, target: Any) -> None:
        events.append(("replace", Path(source).stat().st_ino))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "posix_fadvise", fadvise)
    monkeypatch.setattr(os, "replace", replace)
    run("--output-dir", str(out), "--base-url", BASE, "--full")
    after = {path.name: path.stat().st_ino for path in out.iterdir() if path.is_file()}
    documents = [name for name in after if name.endswith(".xml")]
    assert len(documents) == 5
    dropped = [inode for kind, inode in events if kind == "drop"]
    # Every document's old file, the manifest's excepted (written and synced alone).
    assert sorted(dropped) == sorted(before[name] for name in documents)
    first = next(
        position
        for position, (kind, inode) in enumerate(events)
        if kind == "replace" and inode in {after[name] for name in documents}
    )
    assert all(kind != "drop" for kind, _inode in events[first:])
    # Each dropped after the file replacing it was synced.
    for name in documents:
        assert events.index(("sync", after[name])) < events.index(("drop", before[name]))


def test_leftover_staging_files_are_cleaned_next_to_the_documents(tmp_path: Path) -> None:
    destination = FolderDestination(tmp_path)
    with destination.lock():
        left = destination.stage("maps/sitemap.xml")
        kept = tmp_path / "maps" / ".keep-me"
        kept.write_text("not ours")
        destination.clean_leftovers(["maps/sitemap.xml"])
    assert not left.path.exists()
    assert kept.exists()


def test_a_damaged_manifest_reads_as_no_previous_export(tmp_path: Path) -> None:
    destination = FolderDestination(tmp_path)
    assert destination.read_manifest() == {}
    for damaged in (b"not json", b'{"files": ["a"]}', b"[]"):
        (tmp_path / MANIFEST_NAME).write_bytes(damaged)
        assert destination.read_manifest() == {}
    with destination.lock():
        destination.write_manifest({"sitemap.xml": "", "sitemap-news-1.xml": "news"})
    assert destination.read_manifest() == {"sitemap.xml": "", "sitemap-news-1.xml": "news"}


@override_settings(STORAGES=MEMORY_STORAGES)
def test_a_storage_alias_becomes_a_folder_or_a_storage_destination() -> None:
    with pytest.raises(ExportError, match="No storage 'nope' in STORAGES"):
        storage_destination("nope")
    folder = storage_destination("default")  # a FileSystemStorage: os.replace in its folder
    assert isinstance(folder, FolderDestination)
    assert folder.root == Path(storages["default"].path(""))
    assert isinstance(storage_destination("plain_memory"), StorageDestination)


def test_a_storage_export_removes_staging_folders_killed_exports_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=30)  # a PID no process has any more (a killed export's)
    dead = tmp_path / f"sitemapx-export-{gone.pid}-abc123"
    old = tmp_path / "sitemapx-export-q1w2e3r4"  # no PID in the name, two days old
    running = tmp_path / f"sitemapx-export-{os.getpid()}-zzz"  # an export still running
    unrelated = tmp_path / "other-folder"
    for folder in (dead, old, running, unrelated):
        folder.mkdir()
        (folder / "sitemap.xml.sitemapx-tmp").write_bytes(b"<half")
    two_days_ago = time.time() - 2 * 86_400
    os.utime(old, (two_days_ago, two_days_ago))

    destination = StorageDestination(InMemoryStorage())
    with destination.lock():
        staging = destination.stage("sitemap.xml").path.parent
        assert staging.name.startswith(f"sitemapx-export-{os.getpid()}-")
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [running.name, unrelated.name, staging.name]
        )
    assert not staging.exists()
    assert running.exists() and unrelated.exists()
