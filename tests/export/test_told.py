"""Changed pages told, not counted: an incremental run sums up only the blocks that changed.

With ``SITEMAPX_EXPORT_SPLICE`` on, an incremental export tells the page table
the summary of each changed page from its blocks (``splice.settle``) instead
of counting the page again. Each run here is checked against a full export of
the same data made after every page was counted again (byte for byte), and
no page may be counted during the incremental run itself.
"""

from __future__ import annotations

import datetime
import gc
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.db.models import F
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from django_sitemapx import ModelSource, export
from django_sitemapx.compat import tasks_module
from django_sitemapx.export import (
    ExportResult,
    FolderDestination,
    export_sitemap,
    files,
    parallel,
    splice,
)
from django_sitemapx.export.destinations import BLOCKS_SUFFIX, SPARE_SUFFIX, TEMP_SUFFIX
from django_sitemapx.locations import Origin
from django_sitemapx.models import PageState
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources.lastmods import formats_lastmod_in_sql
from django_sitemapx.sources.pages import PageTable
from django_sitemapx.sources.summaries import Bounds, summarize, summarize_ranges
from example_project.articles.models import Article, Category
from tests.support.exports import DatedArticleSource, exported, validate_all
from tests.testapp.models import Document

pytestmark = pytest.mark.django_db

ORIGIN = Origin("http", "example.com")
START = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)


class _UndatedSource(ModelSource):
    """No lastmod column: a page's summary is its row count."""

    fields = ("path",)
    lastmod_field = None

    def location(self, row: Any) -> str:
        return str(row.path)


@pytest.fixture(autouse=True)
def splice_on(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.SITEMAPX_EXPORT_SPLICE = True
    monkeypatch.setattr(splice, "BLOCK_ROWS", 4)


def _lastmod_text() -> bool:
    """Whether the database writes ``DatedArticleSource``'s lastmod as W3C text (not MariaDB)."""
    return formats_lastmod_in_sql(Article._meta.get_field("updated_at"), "default")


@pytest.fixture
def lastmod_text() -> None:
    """Skip a test of pages told from a lastmod column where the database writes no text.

    Such a page is counted instead: ``test_without_lastmod_text_changed_pages_are_counted``.
    """
    if not _lastmod_text():
        pytest.skip("the database writes no W3C text of a lastmod: changed pages are counted")


@pytest.fixture
def commit(django_capture_on_commit_callbacks: Callable[..., Any]) -> Callable[..., Any]:
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pages the page table counts (``PageTable._count``), as it counts them."""
    counted: list[int] = []
    real = PageTable._count

    def counting(table: PageTable, states: Any, stale: Any) -> None:
        counted.extend(state.number for state in stale)
        real(table, states, stale)

    monkeypatch.setattr(PageTable, "_count", counting)
    return counted


class _Runs:
    """Incremental exports to one folder, each compared with a full export of every page
    counted again."""

    def __init__(self, root: Path, counts: list[int]) -> None:
        self.root = root
        self.folder = root / "incremental"
        self.counts = counts
        self.runs = 0

    def check(self) -> ExportResult:
        self.counts.clear()
        with CaptureQueriesContext(connection) as queries:
            result = export_sitemap(FolderDestination(self.folder), origin=ORIGIN)
        counted = list(self.counts)
        self.runs += 1
        told = _summaries()
        # Every page counted again from its rows: the reference for what the run told.
        PageState.objects.update(counted=None)
        reference = self.root / f"full-{self.runs}"
        export_sitemap(FolderDestination(reference), origin=ORIGIN, full=True)
        assert _summaries() == told
        assert exported(self.folder) == exported(reference)
        validate_all(exported(self.folder))
        result.counted = counted  # type: ignore[attr-defined]
        # The run's queries of the rows (not of the page table, the log or the export's own).
        table = Article._meta.db_table
        rows = [query["sql"] for query in queries.captured_queries if table in query["sql"]]
        result.row_queries = rows  # type: ignore[attr-defined]
        return result


def _summaries() -> list[tuple[Any, ...]]:
    return list(
        PageState.objects.order_by("section", "number").values_list(
            "section", "number", "first", "rows", "lastmod", "undated"
        )
    )


def _articles(commit: Callable[..., Any], keys: range) -> None:
    category = Category.objects.get_or_create(slug="c", defaults={"name": "C"})[0]
    with commit():
        for key in keys:
            Article.objects.create(
                id=key,
                category=category,
                slug=f"a{key}",
                title="t",
                updated_at=START + datetime.timedelta(minutes=key),
                is_published=True,
            )


def _save(commit: Callable[..., Any], key: int, minutes: int) -> None:
    with commit():
        article = Article.objects.get(id=key)
        article.updated_at = START + datetime.timedelta(minutes=minutes)
        article.save()


def _page_of(key: int) -> int:
    from django_sitemapx import default_registry

    found = default_registry.get("a").page_table().page_of(key)
    assert found is not None
    return found


@pytest.fixture
def runs(
    registry: SitemapRegistry, tmp_path: Path, commit: Callable[..., Any], counts: list[int]
) -> Iterator[_Runs]:
    """Section "a": 60 articles in pages of 20 (5 blocks of 4 each), exported once."""
    registry.register(Article, source_class=DatedArticleSource, section="a", limit=20)
    _articles(commit, range(10, 610, 10))
    found = _Runs(tmp_path, counts)
    first = found.check()
    assert first.told == 0
    yield found


def test_saves_deletes_and_inserts_are_told_without_counting(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None
) -> None:
    # A newer lastmod in one page, an older one in another (its greatest lastmod goes down).
    _save(commit, 250, 100_000)
    _save(commit, 600, 1)
    result = runs.check()
    assert result.told == 2 and result.counted == []  # type: ignore[attr-defined]
    assert result.spliced == 2
    # A delete, and an insert inside a page with room (no split).
    with commit():
        Article.objects.filter(id=260).delete()
    _articles(commit, range(255, 256))
    result = runs.check()
    assert result.told == 1 and result.counted == []  # type: ignore[attr-defined]
    # A row leaving the section (unpublished rows are listed here too: deleted instead).
    with commit():
        Article.objects.filter(id__in=[10, 20]).delete()
    result = runs.check()
    assert result.told == 1 and result.counted == []  # type: ignore[attr-defined]
    # Nothing changed: nothing told, nothing counted.
    result = runs.check()
    assert result.told == 0 and result.proven == 3


def test_a_page_that_must_split_or_merge_is_counted(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None
) -> None:
    # The first page full, then one row more: told, it would break the rule; counted, it splits.
    page = _page_of(15)
    _articles(commit, range(11, 12))
    result = runs.check()
    assert result.told == 0 and page in result.counted  # type: ignore[attr-defined]
    assert PageState.objects.filter(section="a").count() == 4
    # A save elsewhere is told as before.
    _save(commit, 590, 200_000)
    result = runs.check()
    assert result.told == 1 and result.counted == []  # type: ignore[attr-defined]
    # Rows deleted until a page in the middle is under half: counted, and merged.
    page = _page_of(250)
    with commit():
        Article.objects.filter(id__in=range(210, 360, 10)).delete()
    result = runs.check()
    assert result.told == 0 and page in result.counted  # type: ignore[attr-defined]
    assert not PageState.objects.filter(section="a", number=page).exists()


def test_a_setting_every_page_depends_on_is_not_told(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None
) -> None:
    _save(commit, 250, 100_000)
    with override_settings(SITEMAPX_XML_STYLESHEET="/sitemap.xsl"):
        result = runs.check()
        # The blocks stand on the old configuration: the page is counted and made whole.
        assert result.told == 0 and result.spliced == 0
        assert result.counted == [_page_of(250)]  # type: ignore[attr-defined]
        _save(commit, 260, 100_001)
        assert runs.check().told == 1


def test_without_lastmod_text_changed_pages_are_counted(
    runs: _Runs, commit: Callable[..., Any]
) -> None:
    # Where the database writes no W3C text of a lastmod (MariaDB), the greatest lastmod of
    # the rows read cannot be told from their texts: a changed page is counted, as without
    # spliced pages, and spliced all the same. Elsewhere it is told.
    _save(commit, 250, 100_000)
    _save(commit, 600, 1)
    result = runs.check()
    pages = sorted({_page_of(250), _page_of(600)})
    if _lastmod_text():
        assert result.told == 2 and result.counted == []  # type: ignore[attr-defined]
    else:
        assert result.told == 0 and sorted(result.counted) == pages  # type: ignore[attr-defined]
    assert result.spliced == 2


def test_a_change_the_log_does_not_name_is_counted(
    runs: _Runs, commit: Callable[..., Any], settings: Any
) -> None:
    # Saved with the log off (another process): the page's marks outnumber its log rows.
    settings.SITEMAPX_EXPORT_SPLICE = False
    _save(commit, 250, 100_000)
    settings.SITEMAPX_EXPORT_SPLICE = True
    result = runs.check()
    assert result.told == 0 and result.counted == [_page_of(250)]  # type: ignore[attr-defined]
    # A bulk update the page table is told of without a key.
    Article.objects.filter(id=310).update(updated_at=F("updated_at"))
    from django_sitemapx import invalidate

    invalidate("a", _page_of(310))
    result = runs.check()
    assert result.told == 0 and result.counted == [_page_of(310)]  # type: ignore[attr-defined]


def test_a_section_with_no_lastmod_column_is_told_its_row_counts(
    registry: SitemapRegistry, tmp_path: Path, commit: Callable[..., Any], counts: list[int]
) -> None:
    registry.register(Document, source_class=_UndatedSource, section="d", limit=20)
    with commit():
        for key in range(10, 410, 10):
            Document.objects.create(id=key, path=f"/d/{key}/")
    runs = _Runs(tmp_path, counts)
    runs.check()
    with commit():
        Document.objects.filter(id__in=[50, 60]).delete()
        Document.objects.create(id=55, path="/d/55/")
    result = runs.check()
    assert result.told == 1 and result.counted == []  # type: ignore[attr-defined]


def test_summarize_ranges_is_summarize_of_each_range(commit: Callable[..., Any]) -> None:
    _articles(commit, range(10, 310, 10))
    source = DatedArticleSource(model=Article, section="a")
    ranges = [Bounds(None, 40), Bounds(100, 130), Bounds(200, 201), Bounds(250, 260)]
    ranges += [Bounds(280, None)]
    assert summarize_ranges(source, ranges) == [summarize(source, bounds) for bounds in ranges]
    assert summarize_ranges(source, [Bounds(1000, 2000)]) == [(0, None, 0)]


def _one_change(old: bytes, new: bytes) -> list[bytes | tuple[int, int]]:
    """``old``'s 300 bytes at 2.5 aligned blocks replaced by ``new``, as ``write_spliced``'s
    pieces: the runs of ``old`` around them keep their offsets when ``new`` is 300 bytes."""
    middle = 2 * files.CLONE_ALIGNMENT + files.CLONE_ALIGNMENT // 2
    return [(0, middle), new, (middle + 300, len(old) - middle - 300)]


def _spliced(folder: Path, pieces: list[bytes | tuple[int, int]], *, share: bool = True) -> bytes:
    """``files.write_spliced`` from ``folder``'s file "old" to a new file "new": its bytes."""
    with (
        open(folder / "old", "rb", buffering=0) as source,
        open(folder / "new", "wb", buffering=0) as target,
    ):
        files.write_spliced(source, target, pieces, share=share)
    return (folder / "new").read_bytes()


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The (offset, length) runs ``files.copy_range`` copies, as it copies them."""
    found: list[tuple[int, int]] = []
    real = files.copy_range

    def recording(source: Any, target: Any, offset: int, length: int, **kwargs: Any) -> None:
        found.append((offset, length))
        real(source, target, offset, length, **kwargs)

    monkeypatch.setattr(files, "copy_range", recording)
    return found


def test_runs_at_the_same_offset_are_copied_in_whole_aligned_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copied: list[tuple[int, int]]
) -> None:
    size = files.CLONE_ALIGNMENT
    old = os.urandom(5 * size + 100)
    written: list[tuple[int, int]] = []
    real_pwrite = os.pwrite

    def recording_pwrite(handle: int, data: Any, offset: int) -> int:
        written.append((offset, len(data)))
        return real_pwrite(handle, data, offset)

    monkeypatch.setattr(os, "pwrite", recording_pwrite)
    (tmp_path / "old").write_bytes(old)
    # A changed run of the same length at 2.5 blocks: every run keeps its offset, so the
    # old file is copied whole and the block holding the change written over it, whole.
    change = b"x" * 300
    middle = 2 * size + size // 2
    expected = old[:middle] + change + old[middle + 300 :]
    assert _spliced(tmp_path, _one_change(old, change)) == expected
    assert copied == [(0, len(old))]
    assert written == [(2 * size, size)]
    # New bytes at the end (the file's length may change): the runs are copied, each in
    # whole aligned blocks, the partial blocks at their ends read and written.
    copied.clear()
    expected = old[: 2 * size + 100] + change
    assert _spliced(tmp_path, [(0, 2 * size + 100), change]) == expected
    assert copied == [(0, 2 * size)]
    # A run moved by a longer change is copied as it is: same bytes.
    copied.clear()
    expected = old[:middle] + change + b"y" + old[middle + 300 :]
    assert _spliced(tmp_path, _one_change(old, change + b"y")) == expected
    assert copied == [(0, 2 * size), (middle + 300, len(old) - middle - 300)]


def test_runs_not_to_share_are_read_and_written_not_copied_by_the_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A page copied whole (``splice.copies_whole``) shares no extent with the old file:
    # copy_file_range() would clone its aligned runs on XFS or Btrfs.
    size = files.CLONE_ALIGNMENT
    old = os.urandom(5 * size + 100)
    (tmp_path / "old").write_bytes(old)

    def refuse(*args: Any) -> int:
        raise AssertionError("copy_file_range() called")

    monkeypatch.setattr(os, "copy_file_range", refuse, raising=False)
    change = b"x" * 300
    middle = 2 * size + size // 2
    pieces = _one_change(old, change)
    assert _spliced(tmp_path, pieces, share=False) == old[:middle] + change + old[middle + 300 :]
    if hasattr(os, "copy_file_range") and files._COPY_BY_KERNEL:
        # The same pieces shared: the kernel copies (the check above can fail).
        with pytest.raises(AssertionError, match="copy_file_range"):
            _spliced(tmp_path, pieces)


def test_pieces_are_written_over_a_copy_made_ahead_or_it_is_emptied_first(
    tmp_path: Path, copied: list[tuple[int, int]]
) -> None:
    size = files.CLONE_ALIGNMENT
    old = os.urandom(5 * size + 100)
    (tmp_path / "old").write_bytes(old)
    change = b"x" * 300
    middle = 2 * size + size // 2

    def over_a_copy(pieces: list[bytes | tuple[int, int]]) -> bytes:
        (tmp_path / "new").write_bytes(old)
        with (
            open(tmp_path / "old", "rb", buffering=0) as source,
            open(tmp_path / "new", "r+b", buffering=0) as target,
        ):
            files.write_spliced(source, target, pieces, copied=True)
        return (tmp_path / "new").read_bytes()

    # Every run at its own offset: only the block holding the change is written, nothing copied.
    assert over_a_copy(_one_change(old, change)) == old[:middle] + change + old[middle + 300 :]
    assert copied == []
    # Runs that move, and a shorter file: the copy is emptied, the runs copied as usual.
    longer = old[:middle] + change + b"y" + old[middle + 300 :]
    assert over_a_copy(_one_change(old, change + b"y")) == longer
    assert copied == [(0, 2 * size), (middle + 300, len(old) - middle - 300)]
    assert over_a_copy([(0, size), change]) == old[:size] + change


@pytest.fixture
def whole(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many changed blocks each spliced page wrote whole (``BlockWriter.blocks``)."""
    found: list[int] = []
    real = splice.BlockWriter.blocks

    def counting(writer: splice.BlockWriter, ranges: list[tuple[str, str]]) -> Any:
        found.append(len(ranges))
        return real(writer, ranges)

    monkeypatch.setattr(splice.BlockWriter, "blocks", counting)
    return found


def test_saves_rewrite_only_their_rows_elements_in_place(
    runs: _Runs, commit: Callable[..., Any], whole: list[int]
) -> None:
    # Two saves with newer lastmods in one block, one in another page: written in place.
    _save(commit, 250, 100_000)
    _save(commit, 260, 100_001)
    _save(commit, 500, 100_002)
    result = runs.check()
    assert result.spliced == 2 and whole == []
    # A lastmod going down in the row that held its block's greatest: in place too, the
    # block's greatest read with its keys.
    _save(commit, 250, 3)
    result = runs.check()
    assert result.spliced == 1 and whole == []
    # A row gone from a block, one more in another: not the same rows, both written whole.
    whole.clear()
    with commit():
        Article.objects.filter(id=270).delete()
    _articles(commit, range(215, 216))
    result = runs.check()
    assert result.spliced == 1 and whole == [2]
    # A save and a delete in one block: whole; a save alone in another block of the page: in place.
    whole.clear()
    _save(commit, 330, 100_003)
    _save(commit, 210, 100_004)
    with commit():
        Article.objects.filter(id=340).delete()
    result = runs.check()
    assert result.spliced == 1 and whole == [1]


@pytest.fixture
def both_ways(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[bool]:
    """Each page ``splice.splice`` splices, spliced again the general way into a file of
    its own (``splice._same_layout`` turned off): the same ``Made`` and the same bytes.
    Whether each page's blocks kept their layout (``_made_on_old_layout`` made them), in order."""
    real = splice.splice
    layouts: list[bool] = []

    def twice(
        source: Any,
        number: int,
        origin: Any,
        where: Any,
        before: Any,
        keys: Any,
        old: Any,
        target: Any,
        *args: Any,
    ) -> Any:
        start = target.tell()
        target.seek(0)
        shadow_path = tmp_path / f"shadow-{len(layouts)}"
        shadow_path.write_bytes(target.read())
        target.seek(start)
        with monkeypatch.context() as inner:
            inner.setattr(splice, "_same_layout", lambda *given: False)
            with open(shadow_path, "r+b", buffering=0) as shadow:
                expected = real(source, number, origin, where, before, keys, old, shadow, *args)
        on_old_layout = splice._made_on_old_layout
        taken: list[bool] = []

        def recording(*given: Any) -> Any:
            taken.append(True)
            return on_old_layout(*given)

        with monkeypatch.context() as inner:
            inner.setattr(splice, "_made_on_old_layout", recording)
            made = real(source, number, origin, where, before, keys, old, target, *args)
        layouts.append(bool(taken))
        assert made == expected
        target.seek(0)
        assert target.read() == shadow_path.read_bytes()
        return made

    monkeypatch.setattr(splice, "splice", twice)
    return layouts


def test_blocks_kept_in_place_are_made_from_the_old_blocks_file_as_the_general_way(
    runs: _Runs, commit: Callable[..., Any], both_ways: list[bool], lastmod_text: None
) -> None:
    # New lastmods in two blocks of one page and one of another: every block keeps its
    # start, length and rows, so the new blocks are the old file's fields but the changed
    # blocks' digests and lastmods; spliced again the general way, the same bytes.
    _save(commit, 250, 100_000)
    _save(commit, 330, 100_001)
    _save(commit, 500, 100_002)
    assert runs.check().spliced == 2 and both_ways == [True, True]
    # A lastmod going down in the row holding its block's greatest; the same lastmod again.
    both_ways.clear()
    _save(commit, 250, 3)
    _save(commit, 500, 100_002)
    assert runs.check().spliced == 2 and both_ways == [True, True]
    # A row gone from a block: that page's layout changes, the other's does not.
    both_ways.clear()
    with commit():
        Article.objects.filter(id=270).delete()
    _save(commit, 510, 100_003)
    assert runs.check().spliced == 2 and sorted(both_ways) == [False, True]


def test_elements_written_in_place_are_the_only_new_bytes_of_their_page(
    runs: _Runs, commit: Callable[..., Any], whole: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A save whose element keeps its length (a new lastmod): the page's new bytes are that
    # element alone, at its offset, not its block's; every other byte a run of the old file.
    given: list[list[bytes | tuple[int, int]]] = []
    real = files.write_spliced

    def recording(source: Any, target: Any, pieces: Any, **kwargs: Any) -> None:
        given.append(list(pieces))
        real(source, target, pieces, **kwargs)

    monkeypatch.setattr(files, "write_spliced", recording)
    name = f"sitemap-a-{_page_of(250)}.xml"
    old = (runs.folder / name).read_bytes()
    _save(commit, 250, 100_000)
    _save(commit, 260, 100_001)
    assert runs.check().spliced == 1 and whole == []
    new = (runs.folder / name).read_bytes()
    [pieces] = given
    elements = [piece for piece in pieces if isinstance(piece, bytes)]
    assert len(elements) == 2 and len(new) == len(old)
    position = 0
    for piece in pieces:
        if isinstance(piece, bytes):
            assert new[position : position + len(piece)] == piece
            assert new[position - 5 : position] == b"<url>" and piece.endswith(b"</url>\n")
            position += len(piece)
        else:
            assert piece[0] == position  # every run keeps its offset
            position += piece[1]
    assert position == len(new)
    for key, piece in zip((250, 260), elements, strict=True):
        assert f"/a/a{key}/</loc>".encode() in piece
    # Saved again with the same lastmod, a row's element is the same bytes: none are new.
    given.clear()
    _save(commit, 250, 100_000)
    assert runs.check().spliced == 1
    assert [piece for piece in given[0] if isinstance(piece, bytes)] == []


def test_the_changed_rows_of_every_page_written_in_place_are_read_at_once(
    runs: _Runs, commit: Callable[..., Any], whole: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    real = splice.BlockWriter.elements_of

    def counting(writer: splice.BlockWriter, keys: list[str]) -> Any:
        reads.append(len(keys))
        return real(writer, keys)

    monkeypatch.setattr(splice.BlockWriter, "elements_of", counting)
    # Three pages, each with a save in place: one query for their three rows, not three.
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    _save(commit, 450, 100_002)
    result = runs.check()
    assert result.spliced == 3 and whole == [] and reads == [3]


def test_the_changed_blocks_keys_are_read_once_for_telling_and_writing_in_place(
    runs: _Runs, commit: Callable[..., Any], whole: list[int], lastmod_text: None
) -> None:
    # Three pages, each with a save in place: one query reads their changed blocks' keys
    # and lastmods (telling the pages' summaries), one their changed rows; none per page.
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    _save(commit, 450, 100_002)
    result = runs.check()
    assert result.spliced == 3 and result.told == 3 and whole == []
    assert len(result.row_queries) == 2, result.row_queries  # type: ignore[attr-defined]


def test_the_changed_blocks_of_each_told_page_are_read_ahead(
    runs: _Runs, commit: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, lastmod_text: None
) -> None:
    # Into the page cache at once, as the pages are told, before any is spliced: not one
    # by one as each page reads them (an earlier splice's file shares them, uncached).
    # A folder keeping no spares: a page with one is never copied whole (test_spares).
    monkeypatch.setattr(FolderDestination, "keeps_spares", lambda destination: False)
    asked: dict[str, list[tuple[int, int]]] = {}
    real = FolderDestination.read_soon

    def recording(destination: FolderDestination, name: str, ranges: Any) -> None:
        asked[name] = list(ranges)
        real(destination, name, ranges)

    monkeypatch.setattr(FolderDestination, "read_soon", recording)
    names = {f"sitemap-a-{_page_of(key)}.xml": key for key in (50, 250)}
    old = {name: (runs.folder / name).read_bytes() for name in names}
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    result = runs.check()
    assert result.told == 2 and result.spliced == 2
    assert sorted(asked) == sorted(names)
    for name, key in names.items():
        # One range: the saved row's block, its elements whole (one "<url>" to the next).
        [(offset, length)] = asked[name]
        assert offset < old[name].index(f"/a/a{key}/</loc>".encode()) < offset + length
        assert old[name][offset : offset + 5] == b"<url>"
        assert old[name][offset + length :].startswith((b"<url>", b"</urlset>"))
    # A page to be copied whole (``splice.copies_whole``) is read whole.
    monkeypatch.setattr(splice, "COPY_AFTER_REWRITTEN", 1)
    asked.clear()
    name = f"sitemap-a-{_page_of(50)}.xml"
    size = (runs.folder / name).stat().st_size
    _save(commit, 50, 100_002)
    assert runs.check().spliced == 1
    assert asked == {name: [(0, size)]}
    # A file that is not there is no error: the read is advice.
    FolderDestination(runs.root / "none").read_soon("sitemap-a-1.xml", [(0, 100)])


@pytest.fixture
def copies_asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files each export asks to copy ahead (``FolderDestination.copy_soon``), in turn."""
    asked: list[str] = []
    real = FolderDestination.copy_soon

    def recording(destination: FolderDestination, names: Any, spares: Any = None) -> None:
        asked.extend(names)
        real(destination, names, spares)

    monkeypatch.setattr(FolderDestination, "copy_soon", recording)
    return asked


def test_the_told_pages_are_spliced_over_copies_of_their_files_made_ahead(
    runs: _Runs,
    commit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    lastmod_text: None,
    copies_asked: list[str],
) -> None:
    # Copied once the lock is held, on another thread, while the pages are made: the
    # changed elements are then written over each copy.
    taken: dict[str, bool] = {}
    real_take = FolderDestination.take_copy

    def take_copy(destination: FolderDestination, name: str) -> Any:
        copy = real_take(destination, name)
        if destination.root == runs.folder:  # not the full export it is compared with
            taken[name] = copy is not None
        return copy

    monkeypatch.setattr(FolderDestination, "take_copy", take_copy)
    kernel: list[int] = []
    real_copy = files.copy_range

    def copy_range(source: Any, target: Any, offset: int, length: int, **kwargs: Any) -> None:
        if Path(target.name).parent == runs.folder:
            kernel.append(length)
        real_copy(source, target, offset, length, **kwargs)

    monkeypatch.setattr(files, "copy_range", copy_range)
    names = sorted(f"sitemap-a-{_page_of(key)}.xml" for key in (50, 250))
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    result = runs.check()  # byte-identical to a full export
    assert result.told == 2 and result.spliced == 2
    assert sorted(copies_asked) == names and taken == dict.fromkeys(names, True)
    # No run copied on the export's thread: the copies were the only copies.
    assert kernel == []
    assert not [path for path in runs.folder.iterdir() if path.name.endswith(TEMP_SUFFIX)]

    # A copy that is not of the file spliced (replaced since, in another process): emptied,
    # and the page spliced as without one.
    def of_another_file(destination: FolderDestination, name: str) -> Any:
        copy = real_take(destination, name)
        if copy is not None:
            copy.copy_of = (0, 0)
        return copy

    monkeypatch.setattr(FolderDestination, "take_copy", of_another_file)
    _save(commit, 50, 100_002)
    result = runs.check()
    assert result.spliced == 1 and kernel != []


def test_an_export_failing_while_it_splices_leaves_no_copy_and_no_copier_behind(
    runs: _Runs,
    commit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    lastmod_text: None,
    copies_asked: list[str],
) -> None:
    def files() -> dict[str, bytes]:
        # A page's blocks file is written in place, checked by its digest on every read;
        # a spare the run took is gone with it (its page is copied next time).
        paths = runs.folder.iterdir()
        return {
            path.name: path.read_bytes()
            for path in paths
            if not path.name.endswith((BLOCKS_SUFFIX, SPARE_SUFFIX))
        }

    before = files()
    real = splice.splice
    calls = [0]

    def failing(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 2:
            raise RuntimeError("the database went away")
        return real(*args, **kwargs)

    monkeypatch.setattr(splice, "splice", failing)
    for key in (50, 250, 450):
        _save(commit, key, 100_000 + key)
    with pytest.raises(RuntimeError, match="went away"):
        export_sitemap(FolderDestination(runs.folder), origin=ORIGIN)
    # Three pages copied ahead, one spliced, then the failure: nothing in place, no copy left.
    assert len(copies_asked) == 3 and calls[0] == 2
    assert files() == before
    assert not [t for t in threading.enumerate() if t.name.startswith("sitemapx-copy")]
    monkeypatch.setattr(splice, "splice", real)
    # The next run completes: the page spliced before the failure wrote its blocks file
    # over the one its record names, so that page is made whole, the other two spliced.
    assert runs.check().spliced == 2


def test_a_page_saved_after_it_was_told_has_its_blocks_read_again(
    runs: _Runs, commit: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, lastmod_text: None
) -> None:
    real = export.tell_changed_pages

    def then_saved(*args: Any, **kwargs: Any) -> int:
        told = real(*args, **kwargs)
        # The page's greatest lastmod now, saved after its blocks' keys were read.
        _save(commit, 250, 200_000)
        return told

    _save(commit, 250, 100_000)
    monkeypatch.setattr(export, "tell_changed_pages", then_saved)
    assert runs.check().spliced == 1
    monkeypatch.setattr(export, "tell_changed_pages", real)
    # Another block of the page saved: the page is told from the block's lastmod as kept.
    _save(commit, 330, 100_001)
    result = runs.check()
    assert result.told == 1 and result.counted == []  # type: ignore[attr-defined]


def test_pages_counted_since_they_changed_have_their_blocks_read_with_the_others(
    runs: _Runs,
    commit: Callable[..., Any],
    whole: list[int],
    lastmod_text: None,
    copies_asked: list[str],
) -> None:
    # A request serving the sitemap counts the changed pages before the export runs, or
    # an export to another folder tells them: this export has nothing to tell, yet
    # reads the changed blocks of every page at once, ahead, and splices over copies.
    from django_sitemapx import default_registry

    other = runs.root / "other"
    export_sitemap(FolderDestination(other), origin=ORIGIN)
    names = sorted(f"sitemap-a-{_page_of(key)}.xml" for key in (50, 250, 450))
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    default_registry.get("a").page_table().states()  # counted, as a request counts them
    _save(commit, 450, 100_002)
    result = runs.check()
    # The third page told; the two counted read with it: one query for their blocks'
    # keys, one for their rows, none per page.
    assert result.told == 1 and result.spliced == 3 and whole == []
    assert result.counted == []  # type: ignore[attr-defined]
    assert len(result.row_queries) == 2, result.row_queries  # type: ignore[attr-defined]
    assert sorted(copies_asked) == names
    # The other folder: every page told already, by the export above.
    copies_asked.clear()
    with CaptureQueriesContext(connection) as queries:
        result = export_sitemap(FolderDestination(other), origin=ORIGIN)
    rows = [query for query in queries.captured_queries if Article._meta.db_table in query["sql"]]
    assert result.told == 0 and result.spliced == 3 and whole == []
    assert len(rows) == 2 and sorted(copies_asked) == names
    assert exported(other) == exported(runs.folder)


@pytest.mark.parametrize("limit", [0, 50_000])
def test_a_told_page_reads_its_blocks_file_once_while_they_are_kept(
    runs: _Runs,
    commit: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    lastmod_text: None,
    limit: int,
) -> None:
    _save(commit, 50, 100_000)
    _save(commit, 450, 100_002)
    read: list[str] = []
    real_read = FolderDestination.read_bytes

    def read_bytes(destination: FolderDestination, name: str) -> bytes | None:
        read.append(name)
        return real_read(destination, name)

    monkeypatch.setattr(FolderDestination, "read_bytes", read_bytes)
    monkeypatch.setattr(export, "_KEPT_BLOCKS", limit)
    result = runs.check()
    assert result.spliced == 2 and result.told == 2
    sides = [name for name in read if name.endswith(BLOCKS_SUFFIX)]
    # Read to tell the page, then to splice it: again only past the bound.
    assert len(set(sides)) == 2 and len(sides) == (2 if limit else 4)


@pytest.mark.skipif(tasks_module() is None, reason="needs Django's Tasks framework")
def test_an_export_split_into_tasks_tells_its_changed_pages_too(
    registry: SitemapRegistry,
    tmp_path: Path,
    commit: Callable[..., Any],
    counts: list[int],
    immediate: None,
    lastmod_text: None,
) -> None:
    registry.register(Article, source_class=DatedArticleSource, section="a", limit=20)
    _articles(commit, range(10, 610, 10))
    folder = tmp_path / "out"
    parallel.start_export(str(folder), origin=ORIGIN, pages_per_task=1)
    _save(commit, 250, 100_000)
    with commit():
        Article.objects.filter(id=450).delete()
    counts.clear()
    parallel.start_export(str(folder), origin=ORIGIN, pages_per_task=1)
    # Told from their blocks before the pages were planned, as in one process: none counted.
    assert counts == []
    told = _summaries()
    PageState.objects.update(counted=None)
    export_sitemap(FolderDestination(tmp_path / "full"), origin=ORIGIN, full=True)
    assert _summaries() == told
    assert exported(folder) == exported(tmp_path / "full")


@pytest.mark.parametrize("bound", [1, 2_000])
def test_changed_blocks_are_counted_as_found_and_summed_up_past_the_bound(
    runs: _Runs,
    commit: Callable[..., Any],
    whole: list[int],
    monkeypatch: pytest.MonkeyPatch,
    lastmod_text: None,
    bound: int,
) -> None:
    # One query sent per changed block as the pages are planned; past the bound of
    # blocks whose keys are kept, the others are summed up (one grouped query) and
    # their pages read their keys again as they are spliced. Told either way.
    monkeypatch.setattr(splice, "_RANGES_PER_QUERY", 1)
    monkeypatch.setattr(splice, "_BLOCKS_READ_AT_ONCE", bound)
    _save(commit, 50, 100_000)
    _save(commit, 250, 100_001)
    _save(commit, 450, 100_002)
    result = runs.check()
    assert result.spliced == 3 and result.told == 3 and whole == []
    assert result.counted == []  # type: ignore[attr-defined]


def test_an_export_keeps_the_objects_before_it_from_the_collector_and_gives_them_back(
    runs: _Runs, commit: Callable[..., Any], lastmod_text: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The collector's full passes during an export skip every object made before it.
    frozen: list[int] = []
    real = files.write_spliced

    def recording(*args: Any, **kwargs: Any) -> Any:
        frozen.append(gc.get_freeze_count())
        return real(*args, **kwargs)

    monkeypatch.setattr(files, "write_spliced", recording)
    # No more than the interpreter keeps frozen itself (CPython 3.12: a few hundred).
    assert gc.get_freeze_count() <= export._FROZEN_AT_START
    _save(commit, 50, 100_000)
    assert runs.check().spliced == 1
    assert frozen and frozen[0] > 1000
    # Given back: a process that goes on collects them.
    assert gc.get_freeze_count() <= export._FROZEN_AT_START
    # A process that froze its objects itself keeps them frozen.
    gc.freeze()
    try:
        _save(commit, 90, 100_001)
        frozen.clear()
        assert runs.check().spliced == 1
        assert frozen[0] > 1000 and gc.get_freeze_count() > 1000
    finally:
        gc.unfreeze()
