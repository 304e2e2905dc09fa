"""A folder keeps the file each spliced page replaced as its spare, and splices over it.

The next splice of the page takes the spare (a rename) instead of a copy of the
page's file, and writes there the spans where the two differ (the record's
``spare``) with its new bytes: no byte copied, no extent cloned. Each run is
checked against a full export of the same data (``_Runs.check``), byte for byte.
"""

# The fixtures of test_told's runs, imported: pytest finds them here, ruff sees them redefined.
# ruff: noqa: F811

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import FileSystemStorage

from django_sitemapx.compat import tasks_module
from django_sitemapx.export import (
    FolderDestination,
    StorageDestination,
    destinations,
    export_sitemap,
    files,
    parallel,
    splice,
)
from django_sitemapx.export.destinations import (
    MANIFEST_NAME,
    SPARE_SUFFIX,
    FileRecord,
    spare_name,
)
from example_project.articles.models import Article
from tests.export.test_told import (  # noqa: F401
    ORIGIN,
    _page_of,
    _Runs,
    _save,
    commit,
    counts,
    lastmod_text,
    runs,
    splice_on,
)
from tests.support.exports import exported

pytestmark = pytest.mark.django_db


def _spares(folder: Path) -> dict[str, bytes]:
    """The spares in ``folder``, by the name of their page."""
    return {
        path.name[1 : -len(SPARE_SUFFIX)]: path.read_bytes()
        for path in folder.iterdir()
        if path.name.endswith(SPARE_SUFFIX)
    }


def _manifest(folder: Path) -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads((folder / MANIFEST_NAME).read_text())
    return manifest


def _assert_no_spare(folder: Path) -> None:
    """No spare in ``folder``, and none its manifest lists or records."""
    assert _spares(folder) == {}
    manifest = _manifest(folder)
    assert not [name for name in manifest["files"] if name.endswith(SPARE_SUFFIX)]
    assert not [record for record in manifest["documents"].values() if "spare" in record]


def _assert_no_spare_of(folder: Path, name: str) -> None:
    """No spare of page ``name`` in ``folder``, and none its manifest lists or records."""
    assert name not in _spares(folder)
    manifest = _manifest(folder)
    assert spare_name(name) not in manifest["files"]
    assert "spare" not in manifest["documents"][name]


def _page(key: int) -> str:
    return f"sitemap-a-{_page_of(key)}.xml"


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 64 bytes, not 4 KiB: a page of these runs (3 KB) then differs from its
    spare in several spans, not one span of every byte."""
    monkeypatch.setattr(files, "CLONE_ALIGNMENT", 64)


@pytest.fixture(autouse=True)
def copies_every_byte(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system that copies every byte, as ext4 (``tmp_path``'s may clone): pages
    written whole are copied as their spares."""
    monkeypatch.setattr(FolderDestination, "clones", lambda self: False)


@pytest.fixture
def took(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """Each copy made ahead, in turn: its page, and whether it is the page's spare taken."""
    found: list[tuple[str, bool]] = []
    real = destinations._copy_or_take_spare

    def recording(source: Path, target: Path, spare: Path | None) -> Any:
        copied = real(source, target, spare)
        found.append((source.name, copied[1]))
        return copied

    monkeypatch.setattr(destinations, "_copy_or_take_spare", recording)
    return found


def test_each_splice_keeps_the_file_it_replaced_and_the_next_splices_over_it(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, took: list[tuple[str, bool]]
) -> None:
    assert FolderDestination(runs.folder).keeps_spares()
    first, second = _page(50), _page(250)
    before = {name: (runs.folder / name).read_bytes() for name in (first, second)}
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    assert runs.check().spliced == 2
    # The full export kept a copy of each page as its spare: the first splice takes it.
    assert sorted(took) == [(first, True), (second, True)]
    assert {name: _spares(runs.folder)[name] for name in (first, second)} == before
    records = _manifest(runs.folder)["documents"]
    for name in (first, second):
        # One element changed: its lastmod, a span of one or two blocks.
        assert 1 <= len(records[name]["spare"].split()) <= 2
        assert spare_name(name) in _manifest(runs.folder)["files"]
    # Then each splice takes its page's spare, and leaves the file it replaced as the next.
    for turn, keys in enumerate([(90, 270), (90, 330), (10, 390)], 1):
        took.clear()
        before = {name: (runs.folder / name).read_bytes() for name in (first, second)}
        for key in keys:
            _save(commit, key, 100_000 + 10 * turn + key)
        assert runs.check().spliced == 2  # byte for byte a full export
        assert sorted(took) == [(first, True), (second, True)]
        assert {name: _spares(runs.folder)[name] for name in (first, second)} == before


def test_a_spare_that_is_open_is_not_written_over(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, took: list[tuple[str, bool]]
) -> None:
    # A reader that opened the page before it was replaced still reads the same bytes.
    name = _page(50)
    old = (runs.folder / name).read_bytes()
    with open(runs.folder / name, "rb") as reader:
        _save(commit, 50, 100_000)
        runs.check()
        _save(commit, 90, 100_001)
        took.clear()
        assert runs.check().spliced == 1
        assert took == [(name, False)]
        assert reader.read() == old
    # Copied instead, and the file it replaced kept as the next spare.
    assert name in _spares(runs.folder)
    _save(commit, 130, 100_002)
    took.clear()
    runs.check()
    assert took == [(name, True)]


@pytest.mark.parametrize(
    "how", ["missing", "longer", "the page itself", "a link to another file", "a FIFO"]
)
def test_a_spare_not_as_its_record_says_is_not_taken(
    runs: _Runs,
    commit: Callable[..., Any],
    lastmod_text: None,
    took: list[tuple[str, bool]],
    how: str,
) -> None:
    name = _page(50)
    _save(commit, 50, 100_000)
    runs.check()
    spare = runs.folder / spare_name(name)
    if how == "missing":
        spare.unlink()
    elif how == "longer":
        with open(spare, "ab") as handle:
            handle.write(b"\n")
    elif how == "the page itself":  # a link to it: writing over it would write over the page
        spare.unlink()
        os.link(runs.folder / name, spare)
    elif how == "a link to another file":  # of the same size, which must stay as it is
        other = runs.root / "other"
        other.write_bytes(spare.read_bytes())
        spare.unlink()
        spare.symlink_to(other)
    else:  # opened for reading, a FIFO would wait for a writer
        spare.unlink()
        os.mkfifo(spare)
    _save(commit, 90, 100_001)
    took.clear()
    other = (runs.root / "other").read_bytes() if how == "a link to another file" else None
    assert runs.check().spliced == 1  # byte for byte a full export
    assert took == [(name, False)]
    assert (runs.folder / spare_name(name)).stat().st_nlink == 1
    if other is not None:
        assert (runs.root / "other").read_bytes() == other


def _assert_copies_as_spares(folder: Path, names: list[str]) -> None:
    """Each page of ``names`` has a copy of its file as its spare, listed, at no span."""
    spares = _spares(folder)
    manifest = _manifest(folder)
    for name in names:
        assert spares[name] == (folder / name).read_bytes()
        assert spare_name(name) in manifest["files"]
        assert manifest["documents"][name]["spare"] == ""


def test_a_page_made_whole_and_a_full_export_keep_a_copy_as_spare(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, took: list[tuple[str, bool]]
) -> None:
    pages = sorted(name for name in exported(runs.folder) if name.startswith("sitemap-a-"))
    assert len(pages) > 2
    # The full export that made the folder: a copy of each page.
    _assert_copies_as_spares(runs.folder, pages)
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    runs.check()
    # A page whose runs move (an element longer now) is written whole: its spare is a
    # copy of it again, taken by its next splice.
    Article.objects.filter(id=50).update(slug="a50-longer-now")
    _save(commit, 50, 100_002)
    result = runs.check()
    assert result.spliced == 1
    _assert_copies_as_spares(runs.folder, [_page(50)])
    assert _manifest(runs.folder)["documents"][_page(250)]["spare"] != ""
    _save(commit, 90, 100_003)
    took.clear()
    assert runs.check().spliced == 1
    assert took == [(_page(50), True)]
    # A full export writes every page whole, each with a copy as its spare.
    export_sitemap(FolderDestination(runs.folder), origin=ORIGIN, full=True)
    _assert_copies_as_spares(runs.folder, pages)


def test_a_folder_that_clones_copies_no_page_written_whole(
    runs: _Runs,
    commit: Callable[..., Any],
    lastmod_text: None,
    took: list[tuple[str, bool]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # There the first splice's copy made ahead is a clone, which costs what a spare does.
    monkeypatch.setattr(FolderDestination, "clones", lambda self: True)
    export_sitemap(FolderDestination(runs.folder), origin=ORIGIN, full=True)
    _assert_no_spare(runs.folder)
    _save(commit, 50, 100_000)
    took.clear()
    assert runs.check().spliced == 1
    assert took == [(_page(50), False)]
    assert list(_spares(runs.folder)) == [_page(50)]  # the file it replaced, as everywhere


@pytest.mark.parametrize("clones", [True, False])
def test_whether_a_folder_clones_is_asked_of_its_file_system_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clones: bool
) -> None:
    monkeypatch.undo()  # the real ``clones``, with ``ioctl`` answering as told
    asked: list[int] = []

    def ioctl(target: int, request: int, source: int) -> int:
        asked.append(request)
        if not clones:
            raise OSError(95, "Operation not supported")
        return 0

    monkeypatch.setattr(destinations.fcntl, "ioctl", ioctl)
    folder = FolderDestination(tmp_path)
    assert folder.clones() is clones and folder.clones() is clones
    assert asked == [destinations._FICLONE]


def test_a_copy_is_synced_before_it_is_put_in_place_as_a_spare(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[str, str]] = []
    real_sync, real_replace = destinations._sync, os.replace

    def sync(path: Path) -> None:
        events.append(("sync", Path(path).name))
        real_sync(path)

    def replace(source: Any, target: Any) -> None:
        events.append(("replace", Path(source).name))
        real_replace(source, target)

    monkeypatch.setattr(destinations, "_sync", sync)
    monkeypatch.setattr(os, "replace", replace)
    export_sitemap(FolderDestination(runs.folder), origin=ORIGIN, full=True)
    copies = [name for what, name in events if what == "replace" and SPARE_SUFFIX in name]
    assert copies
    for copy in copies:
        assert events.index(("sync", copy)) < events.index(("replace", copy))


def test_a_copy_that_fails_leaves_the_page_without_a_spare(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = destinations._copy_synced
    failed: list[str] = []
    page = _page(50)

    def failing(source: Path, target: Path) -> None:
        if source.name.startswith(f".{page}."):
            failed.append(source.name)
            raise OSError("the disk is full")
        real(source, target)

    monkeypatch.setattr(destinations, "_copy_synced", failing)
    export_sitemap(FolderDestination(runs.folder), origin=ORIGIN, full=True)
    assert failed
    _assert_no_spare_of(runs.folder, _page(50))
    assert _page(250) in _spares(runs.folder)
    assert not list(runs.folder.glob(f".*{destinations.TEMP_SUFFIX}"))
    # Its next splice copies the page instead.
    monkeypatch.setattr(destinations, "_copy_synced", real)
    _save(commit, 50, 100_000)
    assert runs.check().spliced == 1


def test_a_run_that_fails_before_its_commit_leaves_no_copy_behind(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _spares(runs.folder)

    def fail(*args: Any) -> None:
        raise OSError("the disk went away")

    monkeypatch.setattr(FolderDestination, "sync", fail)
    with pytest.raises(OSError, match="went away"):
        export_sitemap(FolderDestination(runs.folder), origin=ORIGIN, full=True)
    assert not list(runs.folder.glob(f".*{destinations.TEMP_SUFFIX}"))
    assert _spares(runs.folder) == before
    monkeypatch.undo()
    # The blocks files it wrote in place make its pages whole next (test_splice.py).
    _save(commit, 50, 100_000)
    runs.check()  # byte for byte a full export


def test_a_run_that_fails_after_keeping_a_spare_leaves_none_unlisted(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in (50, 250, 450):
        _save(commit, key, 100_000 + key)
    runs.check()
    for key in (90, 290, 490):
        _save(commit, key, 200_000 + key)
    real = os.replace
    renames = [0]

    def failing(source: Any, target: Any) -> None:
        # The second page: its spare kept (linked), then the rename fails.
        if Path(target).name.startswith("sitemap-a-"):
            renames[0] += 1
            if renames[0] == 2:
                raise OSError("the disk went away")
        real(source, target)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match="went away"):
        export_sitemap(FolderDestination(runs.folder), origin=ORIGIN)
    monkeypatch.setattr(os, "replace", real)
    # Every spare on the disk is listed, for a later run to use or remove.
    listed = _manifest(runs.folder)["files"]
    assert all(spare_name(name) in listed for name in _spares(runs.folder))
    _save(commit, 130, 300_000)
    runs.check()  # byte for byte a full export
    manifest = _manifest(runs.folder)
    on_disk = {spare_name(name) for name in _spares(runs.folder)}
    assert on_disk == {name for name in manifest["files"] if name.endswith(SPARE_SUFFIX)}
    for name in _spares(runs.folder):
        assert "spare" in manifest["documents"][name]


def test_a_copys_outdated_spans_are_written_from_the_old_file_with_the_new_bytes(
    tmp_path: Path,
) -> None:
    size = 4096
    files.CLONE_ALIGNMENT = size  # restored by ``small_blocks``
    old = os.urandom(6 * size + 100)
    (tmp_path / "old").write_bytes(old)
    # The spare: the old file but at its second block and its last bytes (an older page).
    spare = bytearray(old)
    spare[size : 2 * size] = os.urandom(size)
    spare[6 * size :] = os.urandom(100)
    (tmp_path / "new").write_bytes(spare)
    middle = 3 * size + size // 2
    change = b"x" * 300
    pieces: list[bytes | tuple[int, int]] = [
        (0, middle),
        change,
        (middle + 300, len(old) - middle - 300),
    ]
    with (
        open(tmp_path / "old", "rb", buffering=0) as source,
        open(tmp_path / "new", "r+b", buffering=0) as target,
    ):
        outdated = ((size, 2 * size), (6 * size, len(old)))
        spans = files.write_spliced(source, target, pieces, copied=True, outdated=outdated)
    assert (tmp_path / "new").read_bytes() == old[:middle] + change + old[middle + 300 :]
    # Where the new file differs from the old: the block holding the change.
    assert spans == ((3 * size, 4 * size),)


def test_the_spans_of_new_bytes_are_known_only_while_every_run_keeps_its_offset(
    tmp_path: Path,
) -> None:
    size = 4096
    files.CLONE_ALIGNMENT = size  # restored by ``small_blocks``
    old = os.urandom(3 * size)
    (tmp_path / "old").write_bytes(old)

    def spans(pieces: list[bytes | tuple[int, int]], *, share: bool = True) -> Any:
        with (
            open(tmp_path / "old", "rb", buffering=0) as source,
            open(tmp_path / "new", "wb", buffering=0) as target,
        ):
            return files.write_spliced(source, target, pieces, share=share)

    # Two changes in one block, one across two: joined by the blocks holding them.
    same = [
        (0, 10),
        b"ab",
        (12, size - 12),
        b"c",
        (size + 1, size - 2),
        b"d" * 2,
        (2 * size + 1, size - 1),
    ]
    assert spans(same) == ((0, 3 * size),)
    assert spans(same, share=False) == ((0, 3 * size),)
    assert spans([(0, 10), b"a", (10, 3 * size - 10)]) is None  # a run moved
    assert spans([(0, size), b"tail"]) is None  # the file ends with new bytes


def test_a_records_spare_is_kept_in_the_manifest_and_read_only_as_spans_inside_the_file() -> None:
    record = FileRecord("d", 10_000, 3, spare=((0, 4096), (8192, 10_000)))
    assert record.as_json()["spare"] == "0-4096 8192-10000"
    assert FileRecord.from_json(record.as_json()) == record
    assert FileRecord.from_json({**record.as_json(), "spare": ""}) == FileRecord(
        "d", 10_000, 3, spare=()
    )
    for text in ["0-20000", "4096-0", "a-b", "0-4096 100-200", "0-", 7, ["0-4096"]]:
        read = FileRecord.from_json({**record.as_json(), "spare": text})
        assert read is not None and read.spare is None, text


def test_a_file_open_elsewhere_is_not_unread(tmp_path: Path) -> None:
    path = tmp_path / "page.xml"
    path.write_bytes(b"<urlset/>")
    handle = os.open(path, os.O_RDONLY)
    try:
        assert destinations._unread(handle)
        with open(path, "rb"):
            assert not destinations._unread(handle)
        assert destinations._unread(handle)
    finally:
        os.close(handle)


def test_a_storage_keeps_no_spare(tmp_path: Path) -> None:
    folder = tmp_path / "storage"
    destination = StorageDestination(FileSystemStorage(location=str(folder)))
    folder.mkdir()
    (folder / "a.xml").write_bytes(b"old")
    with destination.lock():
        staged = destination.stage("a.xml")
        staged.path.write_bytes(b"new")
        staged.new_spans = ((0, 3),)
        assert destination.commit(staged) is None
    assert [path.name for path in folder.rglob("*") if path.is_file()] == ["a.xml"]
    assert (folder / "a.xml").read_bytes() == b"new"


def test_a_page_with_a_spare_is_never_copied_whole(
    runs: _Runs,
    commit: Callable[..., Any],
    lastmod_text: None,
    took: list[tuple[str, bool]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Copied whole after one block written again: each clone adds extents, which a spare
    # (no clone) does not pay for.
    monkeypatch.setattr(splice, "COPY_AFTER_REWRITTEN", 1)
    name = _page(50)
    _save(commit, 50, 100_000)
    runs.check()
    assert took == [(name, True)]
    assert _manifest(runs.folder)["documents"][name]["rewritten"] == 1
    for turn, key in enumerate((90, 130), 1):
        took.clear()
        _save(commit, key, 100_000 + turn)
        assert runs.check().spliced == 1
        assert took == [(name, True)]
        assert _manifest(runs.folder)["documents"][name]["rewritten"] == 1 + turn
    # Without its spare the copy made ahead is a clone, so the page is copied whole, and
    # its count starts again.
    (runs.folder / spare_name(name)).unlink()
    took.clear()
    _save(commit, 170, 100_010)
    assert runs.check().spliced == 1
    assert took == [(name, False)]
    assert "rewritten" not in _manifest(runs.folder)["documents"][name]


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The pages whose spare was taken (``destinations._take_spare``), in turn."""
    found: list[str] = []
    real = destinations._take_spare

    def recording(source: Path, target: Path, spare: Path) -> Any:
        identity = real(source, target, spare)
        if identity is not None:
            found.append(source.name)
        return identity

    monkeypatch.setattr(destinations, "_take_spare", recording)
    return found


@pytest.mark.skipif(tasks_module() is None, reason="needs Django's Tasks framework")
def test_an_export_split_into_tasks_splices_over_spares_and_keeps_the_files_it_replaces(
    runs: _Runs,
    commit: Callable[..., Any],
    lastmod_text: None,
    immediate: None,
    took: list[tuple[str, bool]],
    taken: list[str],
) -> None:
    names = [_page(50), _page(250)]
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    runs.check()
    assert set(names) <= set(_spares(runs.folder))
    # Each worker takes the spares of the pages it splices, as it splices them (nothing is
    # copied ahead), and the final step keeps the files they replace as the next spares.
    before = {name: (runs.folder / name).read_bytes() for name in names}
    taken.clear()
    _save(commit, 90, 100_002)
    _save(commit, 290, 100_003)
    parallel.start_export(str(runs.folder), origin=ORIGIN, pages_per_task=1)
    assert sorted(taken) == sorted(names)
    full = runs.root / "full-tasks"
    export_sitemap(FolderDestination(full), origin=ORIGIN, full=True)
    assert exported(runs.folder) == exported(full)
    assert {name: _spares(runs.folder)[name] for name in names} == before
    manifest = _manifest(runs.folder)
    for name in names:
        assert spare_name(name) in manifest["files"] and manifest["documents"][name]["spare"]
    # One process splices over them next.
    _save(commit, 130, 100_004)
    took.clear()
    assert runs.check().spliced == 1
    assert took == [(_page(50), True)]


@pytest.mark.skipif(tasks_module() is None, reason="needs Django's Tasks framework")
def test_an_export_split_into_tasks_keeps_a_copy_of_each_page_its_workers_wrote_whole(
    runs: _Runs,
    commit: Callable[..., Any],
    lastmod_text: None,
    immediate: None,
    took: list[tuple[str, bool]],
) -> None:
    pages = sorted(name for name in exported(runs.folder) if name.startswith("sitemap-a-"))
    parallel.start_export(str(runs.folder), origin=ORIGIN, pages_per_task=1, full=True)
    # Each worker copied the pages it wrote; the final step kept the copies as spares.
    _assert_copies_as_spares(runs.folder, pages)
    assert not list(runs.folder.glob(f".*{destinations.TEMP_SUFFIX}"))
    _save(commit, 50, 100_000)
    took.clear()
    assert runs.check().spliced == 1
    assert took == [(_page(50), True)]


def test_a_folder_that_cannot_link_keeps_no_spare_and_lists_none(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _save(commit, 50, 100_000)
    runs.check()
    assert _page(50) in _spares(runs.folder)

    def no_links(source: Any, target: Any) -> None:
        raise OSError("hard links are not supported here")

    monkeypatch.setattr(os, "link", no_links)
    _save(commit, 90, 100_001)
    assert runs.check().spliced == 1  # over its spare, which then went with the old file
    _assert_no_spare_of(runs.folder, _page(50))


def test_spares_turned_off_are_neither_taken_nor_kept(
    runs: _Runs,
    commit: Callable[..., Any],
    lastmod_text: None,
    took: list[tuple[str, bool]],
    settings: Any,
) -> None:
    _save(commit, 50, 100_000)
    runs.check()
    assert _page(50) in _spares(runs.folder)
    settings.SITEMAPX_EXPORT_SPARES = False
    for turn, key in enumerate((90, 130), 1):
        took.clear()
        _save(commit, key, 100_000 + turn)
        runs.check()  # the first run after the change makes every page whole, the next splices
        assert took == ([] if turn == 1 else [(_page(50), False)])
        _assert_no_spare(runs.folder)
