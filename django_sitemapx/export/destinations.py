"""Where an export writes: a local folder or any Django storage, atomically per file.

Every document is first written in full to a staging file; ``commit`` then puts
it in place in one step (``os.replace`` in a folder, one upload to a storage,
which S3, GCS and Azure make visible only once complete). Until ``commit`` the
destination is untouched, so readers keep seeing the previous export.

A folder keeps the file a spliced page replaced as that page's spare (``spare_name``):
the next splice of the page writes over the spare, taken once no process has it open,
instead of copying the page's file (``FolderDestination.copy_soon``).
"""

from __future__ import annotations

import array
import contextlib
import functools
import hashlib
import json
import logging
import os
import secrets
import shutil
import stat
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import IO

from django.core.files import File
from django.core.files.storage import (
    FileSystemStorage,
    InvalidStorageError,
    Storage,
    storages,
)

from ..exceptions import ExportError
from .files import Spans, copy_range, identity

logger = logging.getLogger("django_sitemapx")

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock
    fcntl = None  # type: ignore[assignment]

# Lists the files the last export wrote, so the next one removes only its own stale files.
MANIFEST_NAME = ".sitemapx-manifest.json"
# A page made in blocks has its blocks (``Blocks``) in a file beside it (``blocks_name``).
BLOCKS_SUFFIX = ".sitemapx-blocks"
# And a spliced page in a folder its previous file, as its spare (``spare_name``).
SPARE_SUFFIX = ".sitemapx-spare"
LOCK_NAME = ".sitemapx-export.lock"
TEMP_SUFFIX = ".sitemapx-tmp"
# An export split into tasks, to a storage: each worker uploads the pages it made
# under "<folder>/.sitemapx-staging/<run>/", and the final step copies them in place.
SHARED_STAGING = ".sitemapx-staging"
# A storage export stages in "<temp dir>/sitemapx-export-<pid>-<random>".
STAGING_PREFIX = "sitemapx-export-"
# A staging folder this old is stale even if a process with its PID runs
# (the PID may have been reused, or belong to another container).
STALE_STAGING_SECONDS = 24 * 3600


def remove_stale_staging(temp: Path) -> list[Path]:
    """Remove the staging folders killed storage exports left in ``temp``; return them.

    A folder is stale when the process named in it is gone, or when it is older
    than ``STALE_STAGING_SECONDS`` (also the rule for a folder with no PID in
    its name, as versions before 0.1 made). A running export's folder stays.
    """
    removed = []
    for path in temp.glob(f"{STAGING_PREFIX}*"):
        try:
            age = time.time() - path.lstat().st_mtime
        except OSError:
            continue
        if not path.is_dir() or path.is_symlink():
            continue
        pid_text = path.name[len(STAGING_PREFIX) :].partition("-")[0]
        alive = pid_text.isdigit() and _running(int(pid_text))
        if alive and age < STALE_STAGING_SECONDS:
            continue
        if not pid_text.isdigit() and age < STALE_STAGING_SECONDS:
            continue
        shutil.rmtree(path, ignore_errors=True)
        logger.info("Removed %s, left by an export that did not finish.", path)
        removed.append(path)
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process, or unknowable: keep it until it is old
    return True


def blocks_name(name: str) -> str:
    """The file beside page ``name`` that holds its blocks: hidden, as the manifest is."""
    folder, _, base = name.rpartition("/")
    return f"{folder}/.{base}{BLOCKS_SUFFIX}" if folder else f".{base}{BLOCKS_SUFFIX}"


def spare_name(name: str) -> str:
    """The file beside page ``name`` that holds its spare: hidden, as its blocks file is.

    A page's spare is the file its last splice replaced, kept for the next splice to
    write over: its bytes are the page's but at the spans its record keeps
    (``FileRecord.spare``).
    """
    folder, _, base = name.rpartition("/")
    return f"{folder}/.{base}{SPARE_SUFFIX}" if folder else f".{base}{SPARE_SUFFIX}"


def side_file(name: str) -> bool:
    """Whether ``name`` is a file an export keeps beside a page (its blocks, its spare)."""
    return name.endswith((BLOCKS_SUFFIX, SPARE_SUFFIX))


def blocks_digest(data: bytes) -> str:
    """The digest of a blocks file, as the page's ``FileRecord.blocks`` keeps it."""
    return hashlib.sha256(data).hexdigest()[:32]


class StagedFile:
    """A document being written under a temporary path, to be committed as ``name``."""

    def __init__(self, name: str, path: Path, *, synced: bool = False) -> None:
        self.name = name
        self.path = path
        # Its bytes are on disk already (a worker synced it), or need not be (a page's
        # blocks, checked by their digest): commit need not wait for that.
        self.synced = synced
        # A copy of the file it is to replace (``Destination.copy_soon``): that file's
        # (device, inode), which a page spliced over the copy checks it is splicing,
        # and, a spare taken, where it holds other bytes (the previous file's).
        self.copy_of: tuple[int, int] | None = None
        self.outdated_spans: Spans | None = None
        # Where its bytes differ from those of the file it replaces, when only there:
        # committed, that file is kept as its spare (``Destination.commit``).
        self.new_spans: Spans | None = None
        # A copy of it is being made, to be kept as its spare once it is committed
        # (``Destination.spare_soon``).
        self.spare_copy = False

    def discard(self) -> None:
        """Remove the staging file (after a failure or once committed by copying)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class SharedStagedFile(StagedFile):
    """A staging file a worker uploaded to a storage as ``shared``, to commit as ``name``.

    Its ``path`` is unused (there is no local copy): the storage holds it.
    """

    def __init__(self, name: str, shared: str, storage: Storage) -> None:
        super().__init__(name, Path(shared))
        self.shared = shared
        self.storage = storage

    def discard(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.storage.delete(self.shared)


class Destination:
    """Base of export destinations; names are ``/``-separated and relative to its root."""

    description = ""

    def validate(self, *, dry_run: bool) -> None:
        """Raise ``ExportError`` if the export cannot write here; never writes when ``dry_run``."""

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Held for a whole export; refuses a second export to the same place."""
        yield

    def clean_leftovers(self, names: list[str]) -> None:
        """Remove staging files a killed export left behind next to ``names``."""

    def stage(self, name: str) -> StagedFile:
        """A new staging file for the document ``name``."""
        raise NotImplementedError

    def subfolder(self, name: str) -> Destination:
        """The destination of the folder ``name`` inside this one (one site's files)."""
        raise NotImplementedError

    def commit(self, staged: StagedFile) -> Spans | None:
        """Put a complete staging file in place under its name, in one step.

        Returns the spans at which the page's spare (``spare_name``) holds other
        bytes than the file now in place, when it keeps one; else None. A
        destination may keep the file replaced, when ``staged.new_spans`` says
        where the two differ (those spans), or the copy :meth:`spare_soon` made
        (no span); a spare that holds neither is removed then.
        """
        raise NotImplementedError

    def sync(self, staged: Sequence[StagedFile]) -> None:
        """Make complete staging files durable ahead of their :meth:`commit` (optional)."""

    def read_soon(self, name: str, ranges: Sequence[tuple[int, int]]) -> None:
        """Start reading these ``(offset, length)`` ranges of file ``name`` (optional).

        Called by an export for the bytes of each page it will splice, as soon
        as it knows them, so that the disk reads them all at once, not one
        after the other as each page is made.
        """

    def copy_soon(self, names: Sequence[str], spares: Mapping[str, Spans] | None = None) -> None:
        """Start copying each file of ``names`` to a staging file of its own (optional).

        Called by an export, under its lock, with the pages it will splice over
        a copy of their file (``files.write_spliced``), so that the copies are
        made on another thread while its own makes the pages: each is taken
        with :meth:`take_copy`, and those not taken are removed with the lock.
        ``spares``: the pages whose spare holds their file's bytes but at those
        spans (their records' ``spare``); the spare is taken instead of a copy
        where it can be.
        """

    def spare_soon(self, staged: StagedFile) -> None:
        """Start copying the complete staging file of a page, to keep as its spare (optional).

        Called by an export for each page it wrote whole, so that the page's
        next splice has a spare to write over, not a copy of the whole file to
        make. The copy is made on another thread and made durable before
        :meth:`commit` puts it in place; one not committed is removed with the
        lock. Sets ``staged.spare_copy`` when it started one.
        """

    def take_spare(self, name: str, spans: Spans) -> StagedFile | None:
        """The spare of page ``name`` as its staging file, taken now (no copy made ahead).

        As :meth:`copy_soon` takes it: ``spans`` are where it holds other bytes
        (the page's record's ``spare``), its ``outdated_spans``. None when there
        is no spare it can take (then nothing changed). The caller commits or
        discards it.
        """
        return None

    def take_copy(self, name: str) -> StagedFile | None:
        """The staging copy of file ``name`` :meth:`copy_soon` started, once made.

        Its ``copy_of`` is the copied file's identity, and its ``outdated_spans``
        the spans at which it holds other bytes when it is the file's spare
        (else None). None when none was started, or it failed. The caller
        commits or discards it.
        """
        return None

    def sync_soon(self, staged: Sequence[StagedFile]) -> None:
        """Start making complete staging files durable, for :meth:`sync` to wait for (optional).

        Called by an export with every file it staged, before it writes the
        manifest naming them, so that the file system writes them meanwhile.
        """

    def put_aside(self, name: str, data: bytes) -> StagedFile | None:
        """Write ``data`` as ``name``, a file only exports read (a page's blocks).

        Its digest in the manifest says whether it holds what a page was made
        from: a file a crash or a failed export left short or newer than the
        manifest's record is not used, and its page is made whole. Here it is
        staged and not synced: the returned file is to be committed with the
        pages. A folder writes it in place (None).
        """
        staged = self.stage(name)
        staged.synced = True
        try:
            staged.path.write_bytes(data)
        except BaseException:
            staged.discard()
            raise
        return staged

    @contextlib.contextmanager
    def workspace(self) -> Iterator[None]:
        """Held while a worker of an export split into tasks stages files (no lock)."""
        yield

    def share(self, staged: StagedFile, run: str) -> str:
        """Make a complete staging file reachable by the process that publishes run ``run``.

        Returns what :meth:`shared` needs to find it again (a worker's result
        stores it in the database).
        """
        raise NotImplementedError

    def shared(self, name: str, shared: str) -> StagedFile:
        """The staging file :meth:`share` returned ``shared`` for, to commit as ``name``."""
        raise NotImplementedError

    def share_spare(self, staged: StagedFile) -> str | None:
        """The copy :meth:`spare_soon` started of ``staged``, once made, for :meth:`shared_spare`.

        None when there is none (then the page keeps no spare).
        """
        return None

    def shared_spare(self, staged: StagedFile, shared: str) -> None:
        """Keep the copy :meth:`share_spare` returned ``shared`` for as the spare of
        ``staged`` once it is committed (a shared staging file: ``shared``)."""

    def exists(self, name: str) -> bool:
        raise NotImplementedError

    def delete(self, name: str) -> None:
        raise NotImplementedError

    def read_bytes(self, name: str) -> bytes | None:
        raise NotImplementedError

    def size(self, name: str) -> int | None:
        """The size of file ``name`` in bytes; None when it is missing or unknowable."""
        raise NotImplementedError

    def read_manifest(self) -> dict[str, str]:
        """File name to section (``""`` for the index) of the previous export."""
        return self.read_state().files

    def read_state(self) -> ManifestState:
        """The previous export's manifest, read once: its files, records and cursors."""
        data = self.read_bytes(MANIFEST_NAME)
        if data is None:
            return ManifestState({}, {}, {})
        try:
            manifest = json.loads(data)
            files = manifest["files"]
            if not isinstance(files, dict):
                return ManifestState({}, {}, {})
            found = {str(name): str(section) for name, section in files.items()}
        except (ValueError, KeyError, TypeError):
            return ManifestState({}, {}, {})
        records = {}
        documents = manifest.get("documents")
        for name, fields in (documents if isinstance(documents, dict) else {}).items():
            record = FileRecord.from_json(fields)
            # A record of a file the manifest does not list proves nothing.
            if record is not None and name in found:
                records[str(name)] = record
        cursors = manifest.get("changes")
        changes = {
            str(section): cursor
            for section, cursor in (cursors if isinstance(cursors, dict) else {}).items()
            if type(cursor) is int and section
        }
        return ManifestState(found, records, changes)

    @contextlib.contextmanager
    def open_file(self, name: str) -> Iterator[IO[bytes]]:
        """File ``name`` opened for reading (ranges of it are copied into a spliced page)."""
        raise NotImplementedError
        yield  # pragma: no cover

    def write_manifest(
        self,
        files: dict[str, str],
        records: dict[str, FileRecord] | None = None,
        changes: dict[str, int] | None = None,
    ) -> None:
        """Record the files of this export (and what each holds) in one atomic write.

        ``changes`` is, per section, where the log of changed rows ended when
        its files were made (``sources.changes.change_cursor``): the next export
        reads the log from there.
        """
        manifest: dict[str, object] = {"format": 2, "files": dict(sorted(files.items()))}
        if changes:
            manifest["changes"] = dict(sorted(changes.items()))
        manifest["documents"] = {
            name: record.as_json()
            for name, record in sorted((records or {}).items())
            if name in files
        }
        staged = self.stage(MANIFEST_NAME)
        staged.path.write_bytes(json.dumps(manifest, indent=1).encode())
        self.commit(staged)


@dataclass(frozen=True)
class ManifestState:
    """A manifest as read: file name to section, what each holds, each section's cursor."""

    files: dict[str, str]
    records: dict[str, FileRecord]
    changes: dict[str, int]


@dataclass(frozen=True)
class FileRecord:
    """What one exported file holds, as the manifest records it.

    ``digest`` is the SHA-256 of its bytes and ``size`` their count: a file of
    that size at the destination is taken to hold them. ``proof`` says what
    they were made from (the export's configuration and the page's state in
    the page table, see ``Source.page_proofs``); None when nothing could
    prove it, and the page is made again on the next run.
    """

    digest: str
    size: int
    urls: int
    proof: str | None = None
    # A page made in blocks (``export.splice``): the digest of the file beside it
    # that holds them (``blocks_name``), read only when the page is spliced.
    blocks: str | None = None
    # A spliced page: its blocks written again since the file was last written whole
    # (``splice.copies_whole``).
    rewritten: int = 0
    # A page whose spare (``spare_name``) a folder keeps: the spans at which the spare
    # holds other bytes than the file (the previous file's).
    spare: Spans | None = None

    def as_json(self) -> dict[str, object]:
        fields: dict[str, object] = {
            "sha256": self.digest,
            "bytes": self.size,
            "urls": self.urls,
            "proof": self.proof,
        }
        if self.blocks is not None:
            fields["blocks"] = self.blocks
        if self.rewritten:
            fields["rewritten"] = self.rewritten
        if self.spare is not None:
            fields["spare"] = spans_text(self.spare)
        return fields

    @classmethod
    def from_json(cls, fields: object) -> FileRecord | None:
        if not isinstance(fields, dict):
            return None
        digest, size, urls = fields.get("sha256"), fields.get("bytes"), fields.get("urls")
        proof = fields.get("proof")
        if not isinstance(digest, str) or not isinstance(size, int) or not isinstance(urls, int):
            return None
        blocks, rewritten = fields.get("blocks"), fields.get("rewritten")
        return cls(
            digest,
            size,
            urls,
            proof if isinstance(proof, str) else None,
            blocks if isinstance(blocks, str) else None,
            rewritten if isinstance(rewritten, int) and rewritten > 0 else 0,
            spans_from_text(fields.get("spare"), size),
        )


def spans_text(spans: Spans) -> str:
    """``spans`` as a manifest keeps them: "first-end", space-separated."""
    return " ".join(f"{first}-{end}" for first, end in spans)


def spans_from_text(text: object, size: int) -> Spans | None:
    """The spans ``text`` names (``spans_text``), each inside a file of ``size`` bytes and
    after the one before; None when it holds anything else."""
    if not isinstance(text, str):
        return None
    spans = []
    position = 0
    for part in text.split():
        first, _, end = part.partition("-")
        if not (first.isdigit() and end.isdigit()):
            return None
        span = (int(first), int(end))
        if not position <= span[0] < span[1] <= size:
            return None
        spans.append(span)
        position = span[1]
    return tuple(spans)


@dataclass(frozen=True)
class Blocks:
    """The segments of a page made in blocks of rows, as the file beside it keeps them.

    Segment 0 is the opening tag, the last the closing tag, and each one
    between is the ``<url>`` elements of the rows of one key range: block *i*
    holds the keys from ``starts[i]`` below ``starts[i + 1]`` (the last one up
    to the page's end), encoded as the page table encodes keys (``""``: no
    lower bound). ``sizes``, ``urls`` and ``digests`` (SHA-256 cut to 128
    bits, raw) are per segment; ``base`` is a digest of what the blocks stand
    on (the export's configuration, the section, the page's key range): a
    page whose ``base`` differs is made whole. ``changes`` is the page's count
    of changes in the page table when it was made (``ChangeLog.marks``).
    ``lastmods_text`` holds each block's greatest lastmod, as the database
    wrote it (``""``: none), when the rows tell the page's summary
    (``summaries.told_by_rows``); else None.

    Kept in a file beside the page (``blocks_name``), written with the page
    and read only when it is spliced: an export holds the blocks of one page
    at a time. The file is binary (``to_bytes``): the sizes and counts as
    64-bit integers and the digests as raw bytes, which an incremental
    export reads back without parsing them (docs/performance.md, "Incremental
    export"); a file in any other format (the JSON of earlier versions) holds
    no blocks, and its page is made whole once.
    """

    base: str
    starts_text: str
    sizes_data: bytes
    urls_data: bytes
    digests_data: bytes
    changes: int = 0
    lastmods_text: str | None = None

    @classmethod
    def of(
        cls,
        base: str,
        starts: Sequence[str],
        sizes: Sequence[int],
        urls: Sequence[int],
        digests: Sequence[bytes],
        changes: int = 0,
        lastmods: Sequence[str | None] | None = None,
    ) -> Blocks | None:
        """The blocks of these lists; None when they cannot be kept (a key holding a comma,
        a size or count out of a 64-bit integer's range)."""
        starts_text = ",".join(starts)
        # A comma in a key adds one to the count of the commas that join them.
        if starts_text.count(",") != max(len(starts) - 1, 0):
            return None
        try:
            sizes_data, urls_data = _int64_bytes(sizes), _int64_bytes(urls)
        except OverflowError:
            return None
        lastmods_text = _lastmods_text(lastmods)
        return cls(
            base, starts_text, sizes_data, urls_data, b"".join(digests), changes, lastmods_text
        )

    def on_same_layout(
        self,
        base: str,
        digests_data: bytes,
        changes: int = 0,
        lastmods: Sequence[str | None] | None = None,
    ) -> Blocks:
        """These blocks' starts, sizes and counts, as the file holds them, with other
        digests (joined) and lastmods: a page whose blocks all kept their places."""
        return Blocks(
            base,
            self.starts_text,
            self.sizes_data,
            self.urls_data,
            digests_data,
            changes,
            _lastmods_text(lastmods),
        )

    @functools.cached_property
    def starts(self) -> list[str]:
        return self.starts_text.split(",")

    @functools.cached_property
    def sizes(self) -> list[int]:
        return _int64_list(self.sizes_data)

    @functools.cached_property
    def urls(self) -> list[int]:
        return _int64_list(self.urls_data)

    @functools.cached_property
    def lastmods(self) -> list[str | None] | None:
        """Each block's greatest lastmod text (None: no row has one); None when not kept."""
        if self.lastmods_text is None:
            return None
        return [text or None for text in self.lastmods_text.split(",")]

    @functools.cached_property
    def digests(self) -> list[bytes]:
        data = self.digests_data
        return [
            data[start : start + _DIGEST_BYTES] for start in range(0, len(data), _DIGEST_BYTES)
        ]

    def digests_of(self, start: int, end: int) -> bytes:
        """The digests of segments ``start`` to ``end`` (excluded), joined: not cut apart."""
        return self.digests_data[_DIGEST_BYTES * start : _DIGEST_BYTES * end]

    def holds(self, size: int, urls: int) -> bool:
        """Whether these blocks are well formed and add up to a file of ``size`` and ``urls``."""
        try:
            sizes, counts = self.sizes, self.urls
        except ValueError:
            return False
        # The digests are not cut up here: telling a page's summary needs none of them.
        return (
            len(self.starts) + 2 == len(sizes) == len(counts)
            and len(self.digests_data) == _DIGEST_BYTES * len(sizes)
            and min(sizes) >= 0
            and min(counts) >= 0
            and sum(sizes) == size
            and sum(counts) == urls
            and (self.lastmods is None or len(self.lastmods) == len(self.starts))
        )

    def to_bytes(self) -> bytes:
        """The blocks file's bytes: a header, then each field's bytes in turn."""
        base = self.base.encode()
        starts = self.starts_text.encode()
        lastmods = b"" if self.lastmods_text is None else self.lastmods_text.encode()
        header = _BLOCKS_HEADER.pack(
            _BLOCKS_MAGIC,
            self.changes,
            len(base),
            len(starts),
            -1 if self.lastmods_text is None else len(lastmods),
            len(self.sizes_data),
            len(self.urls_data),
            len(self.digests_data),
        )
        parts = (header, base, starts, lastmods, self.sizes_data, self.urls_data)
        return b"".join((*parts, self.digests_data))

    @classmethod
    def from_bytes(cls, data: bytes) -> Blocks | None:
        """The blocks a blocks file holds; None when it holds none (or is of another format)."""
        if len(data) < _BLOCKS_HEADER.size or not data.startswith(_BLOCKS_MAGIC):
            return None
        _magic, changes, *lengths = _BLOCKS_HEADER.unpack_from(data)
        has_lastmods = lengths[2] >= 0
        lengths[2] = max(lengths[2], 0)
        if min(lengths) < 0 or _BLOCKS_HEADER.size + sum(lengths) != len(data):
            return None
        fields, offset = [], _BLOCKS_HEADER.size
        for length in lengths:
            fields.append(data[offset : offset + length])
            offset += length
        base, starts, lastmods, sizes, counts, digests = fields
        if len(sizes) % 8 or len(counts) % 8:
            return None
        try:
            texts = base.decode(), starts.decode(), lastmods.decode()
        except UnicodeDecodeError:
            return None
        lastmods_text = texts[2] if has_lastmods else None
        return cls(texts[0], texts[1], sizes, counts, digests, changes, lastmods_text)


# A blocks file starts with this: a file that does not is of another format (the
# JSON of earlier versions), and holds no blocks.
_BLOCKS_MAGIC = b"sitemapx-blocks/2\n"
# The magic, the changes, then the byte lengths of the base, the starts, the
# lastmods (-1: none kept), the sizes, the counts and the digests.
_BLOCKS_HEADER = struct.Struct(f"<{len(_BLOCKS_MAGIC)}sq6q")
# A segment's digest: SHA-256, cut to 128 bits.
_DIGEST_BYTES = 16


def _lastmods_text(lastmods: Sequence[str | None] | None) -> str | None:
    """The lastmods as ``Blocks.lastmods_text`` keeps them; None when not kept (or a
    lastmod holds a comma)."""
    if lastmods is None:
        return None
    text = ",".join([lastmod or "" for lastmod in lastmods])
    return text if text.count(",") == max(len(lastmods) - 1, 0) else None


def _int64_bytes(values: Sequence[int]) -> bytes:
    """``values`` as little-endian 64-bit integers; ``OverflowError`` if one does not fit."""
    found = array.array("q", values)
    if sys.byteorder != "little":  # pragma: no cover - no big-endian machine runs the tests
        found.byteswap()
    return found.tobytes()


def _int64_list(data: bytes) -> list[int]:
    """The integers ``_int64_bytes`` wrote; ``ValueError`` if ``data`` cannot hold them."""
    if len(data) % 8:
        raise ValueError("not a whole number of 64-bit integers")
    found = array.array("q")
    found.frombytes(data)
    if sys.byteorder != "little":  # pragma: no cover
        found.byteswap()
    return found.tolist()


class FolderDestination(Destination):
    """A local folder; staging files sit next to their targets, then ``os.replace``."""

    def __init__(self, root: str | os.PathLike[str], *, permissions: int | None = None) -> None:
        self.root = Path(root)
        self.permissions = permissions
        self.description = str(self.root)
        # Syncs started ahead of ``sync`` (``sync_soon``): the paths, the queues their
        # threads take them from, and the threads' work, each until its queue is empty.
        self._syncing: set[Path] = set()
        self._queues: list[SimpleQueue[tuple[Path, Path]]] = []
        self._drains: list[Future[None]] = []
        self._pool: ThreadPoolExecutor | None = None
        # Copies started ahead of ``take_copy`` (``copy_soon``), by name: the staging
        # file, the copied file's identity once made and whether the copy is the spare
        # taken (at the spans given with it); on the copier's one thread.
        self._copies: dict[str, tuple[StagedFile, Future[_Copied], Spans]] = {}
        # Copies of pages written whole, made on a thread of their own (``spare_soon``),
        # by page: the copy, and its making (None: made already, shared by a worker).
        self._spare_copies: dict[str, tuple[StagedFile, Future[None] | None]] = {}
        self._spare_copier: ThreadPoolExecutor | None = None
        self._copier: ThreadPoolExecutor | None = None
        # Whether this folder's file system tells whether a file is open (``_unread``),
        # which writing over a spare needs; None until asked.
        self._leases: bool | None = None
        # Whether it clones a file (shares its blocks) rather than copy it; None until asked.
        self._clones: bool | None = None

    def subfolder(self, name: str) -> Destination:
        return FolderDestination(self.root / name, permissions=self.permissions)

    def validate(self, *, dry_run: bool) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise ExportError(f"{self.root} exists and is not a folder.")
        existing = self.root
        while not existing.exists():
            existing = existing.parent
        if not existing.is_dir():
            raise ExportError(f"{self.root} cannot be created: {existing} is not a folder.")
        if dry_run:
            if not os.access(existing, os.W_OK | os.X_OK):
                raise ExportError(f"{existing} is not writable.")
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            # A real write is the only sure test (read-only mounts, root in a container).
            with tempfile.TemporaryFile(dir=self.root):
                pass
        except OSError as error:
            raise ExportError(f"Cannot write to {self.root}: {error.strerror or error}.") from None

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        if fcntl is None:  # pragma: no cover - Windows: no lock, the same end
            try:
                yield
            finally:
                self._stop_syncing()
                self._stop_copying()
            return
        with open(self.root / LOCK_NAME, "a+b") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ExportError(f"Another export to {self.root} is running.") from None
            try:
                yield
            finally:
                self._stop_syncing()
                self._stop_copying()
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def clean_leftovers(self, names: list[str]) -> None:
        # Only called under the lock, so no other export owns these files.
        folders = {(self.root / name).parent for name in [*names, MANIFEST_NAME]}
        for folder in folders:
            if folder.is_dir():
                for path in folder.glob(f".*{TEMP_SUFFIX}"):
                    path.unlink(missing_ok=True)

    def stage(self, name: str) -> StagedFile:
        staged = self._staging_file(name)
        # Created like any new file (0o666 less the umask), so a web server can read it;
        # tempfile would make it private (0o600).
        os.close(_create(staged.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        return staged

    def _staging_file(self, name: str) -> StagedFile:
        """A staging file for ``name``, not created yet: a new name beside it, hidden."""
        target = self.root / name
        return StagedFile(
            name, target.with_name(f".{target.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
        )

    def copy_soon(self, names: Sequence[str], spares: Mapping[str, Spans] | None = None) -> None:
        # One thread: on XFS or Btrfs each copy is a clone, whose cost is the kernel's
        # work on the file's extents, one file after another; the export's thread goes on
        # making the pages meanwhile (docs/performance.md, "Copies made ahead"). A spare
        # taken instead is a rename: no byte copied, no extent mapped.
        spares = spares if spares is not None and self.keeps_spares() else {}
        for name in names:
            if name in self._copies:
                continue
            if self._copier is None:
                self._copier = ThreadPoolExecutor(1, thread_name_prefix="sitemapx-copy")
            staged = self._staging_file(name)
            source = self.root / name
            spans = spares.get(name)
            spare = None if spans is None else self.root / spare_name(name)
            made = self._copier.submit(_copy_or_take_spare, source, staged.path, spare)
            self._copies[name] = (staged, made, spans or ())

    def spare_soon(self, staged: StagedFile) -> None:
        # On a thread of its own, at the lowest priority: the copies are for the next
        # run, the export's own thread and the database's come first. Each copy is synced
        # there too, so that a spare recorded is a spare on disk, whatever crashes after.
        # Where the file system clones, the first splice's copy made ahead is a clone,
        # which costs about what taking a spare does: a copy would only cost the export
        # that makes it (docs/performance.md, "A seventeenth machine").
        if staged.name in self._spare_copies or not self.keeps_spares() or self.clones():
            return
        if self._spare_copier is None:
            self._spare_copier = ThreadPoolExecutor(
                1, thread_name_prefix="sitemapx-spare", initializer=_yield_the_cores
            )
        copy = self._staging_file(spare_name(staged.name))
        made = self._spare_copier.submit(_copy_synced, staged.path, copy.path)
        self._spare_copies[staged.name] = (copy, made)
        staged.spare_copy = True

    def take_copy(self, name: str) -> StagedFile | None:
        started = self._copies.pop(name, None)
        if started is None:
            return None
        staged, made, spans = started
        try:
            staged.copy_of, took_spare = made.result()
        except OSError:
            logger.info("Cannot copy %s ahead; it is written as usual.", name, exc_info=True)
        else:
            staged.outdated_spans = spans if took_spare else None
        if staged.copy_of is None:  # failed, or of a file with no identity to check
            staged.discard()
            return None
        return staged

    def take_spare(self, name: str, spans: Spans) -> StagedFile | None:
        # A rename and a few checks: cheap enough on the export's own thread (a worker of
        # an export split into tasks, which copies nothing ahead).
        if not self.keeps_spares():
            return None
        staged = self._staging_file(name)
        staged.copy_of = _take_spare(self.root / name, staged.path, self.root / spare_name(name))
        if staged.copy_of is None:
            return None
        staged.outdated_spans = spans
        return staged

    def keeps_spares(self) -> bool:
        """Whether this folder keeps spares: its file system says whether a file is open.

        A spare is the file a page replaced, which a reader that opened it
        before may still be reading; it is written over only once nobody has
        it open, which Linux tells by granting a write lease (``fcntl``'s
        ``F_SETLEASE``). Elsewhere (other systems, file systems without leases,
        NFS) no spare is kept, and each splice copies the page's file.
        """
        if self._leases is None:
            self._leases = False
            if _SETLEASE is not None and self.root.is_dir():
                with tempfile.NamedTemporaryFile(
                    dir=self.root, prefix=".", suffix=TEMP_SUFFIX
                ) as probe:
                    self._leases = _unread(probe.fileno())
        return self._leases

    def clones(self) -> bool:
        """Whether this folder's file system copies a file by sharing its blocks (a clone).

        XFS with reflink and Btrfs do (``ioctl(FICLONE)``, tried once on two
        temporary files); ext4 and most others copy every byte.
        """
        if self._clones is None:
            self._clones = False
            if _FICLONE is not None and self.root.is_dir():
                with (
                    tempfile.TemporaryFile(dir=self.root) as source,
                    tempfile.TemporaryFile(dir=self.root) as target,
                ):
                    source.write(b"\n")
                    source.flush()
                    try:
                        fcntl.ioctl(target.fileno(), _FICLONE, source.fileno())
                        self._clones = True
                    except OSError:
                        pass
        return self._clones

    def _stop_copying(self) -> None:
        """Stop the copies not started yet, wait for the others, and remove those not taken."""
        copier, self._copier = self._copier, None
        if copier is not None:
            copier.shutdown(wait=True, cancel_futures=True)
        for staged, _made, _spans in self._copies.values():
            staged.discard()
        self._copies.clear()
        spare_copier, self._spare_copier = self._spare_copier, None
        if spare_copier is not None:
            spare_copier.shutdown(wait=True, cancel_futures=True)
        for copy, _copying in self._spare_copies.values():
            copy.discard()
        self._spare_copies.clear()

    def sync(self, staged: Sequence[StagedFile]) -> None:
        # At once, not one by one: the file system writes its journal for several
        # fsync() calls together (XFS: a quarter of the time for 185 pages). Those
        # started already (``sync_soon``) are waited for.
        waiting = [file for file in staged if not file.synced]
        try:
            if len(waiting) > 1 or self._syncing:
                self._queue_syncs(waiting)
                for future in self._drains:
                    future.result()
                for file in waiting:
                    file.synced = True
        finally:
            self._stop_syncing()

    def read_soon(self, name: str, ranges: Sequence[tuple[int, int]]) -> None:
        # posix_fadvise(2)'s WILLNEED starts reading the ranges into the page cache and
        # returns. A page file of an earlier splice shares its unchanged bytes, which its
        # own cache never held: without this, a spread run read its 1,000 changed blocks
        # from the disk one by one, 160 to 410 ms on XFS (docs/performance.md, "Saves at
        # new rows each run").
        if _WILLNEED is None:  # pragma: no cover - no posix_fadvise (macOS, Windows)
            return
        try:
            handle = os.open(self.root / name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return
        try:
            for offset, length in ranges:
                os.posix_fadvise(handle, offset, length, _WILLNEED)
        except OSError:  # pragma: no cover - a hint the file system may refuse
            pass
        finally:
            os.close(handle)

    def sync_soon(self, staged: Sequence[StagedFile]) -> None:
        # While the manifest is written: its fsync() and theirs share the journal's writes.
        self._queue_syncs(staged)

    def _queue_syncs(self, staged: Sequence[StagedFile]) -> None:
        """Start syncing those of ``staged`` not synced or started yet, for ``sync``.

        Every file is queued before a thread starts, and each thread takes file after
        file: one task a thread, not one a file (docs/performance.md, "The syncs'
        threads take turns with the export's").
        """
        waiting = [file for file in staged if not file.synced and file.path not in self._syncing]
        if not waiting:
            return
        work: SimpleQueue[tuple[Path, Path]] = SimpleQueue()
        for file in waiting:
            work.put((file.path, self.root / file.name))
            self._syncing.add(file.path)
        self._queues.append(work)
        pool = self._sync_pool()
        threads = min(_SYNC_THREADS, len(waiting))
        self._drains += [pool.submit(_sync_queued, work) for _ in range(threads)]

    def _sync_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(_SYNC_THREADS, thread_name_prefix="sitemapx-sync")
        return self._pool

    def _stop_syncing(self) -> None:
        """Wait for the syncs in flight (of files a failed run may have removed) and stop."""
        pool, self._pool = self._pool, None
        # What no thread has taken yet is not synced: a failed run's files go.
        for work in self._queues:
            with contextlib.suppress(Empty):
                while True:
                    work.get_nowait()
        self._syncing.clear()
        self._queues.clear()
        self._drains.clear()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def put_aside(self, name: str, data: bytes) -> StagedFile | None:
        # In place, without a staging file and a rename per changed page: its digest,
        # checked on every read, makes one a failed run wrote halfway harmless. Over
        # its old bytes, then cut to length, not emptied first: a page's blocks file
        # keeps its length from run to run, and freeing its blocks to allocate them
        # again cost five times the write (docs/performance.md, "Incremental export").
        handle = _create(self.root / name, os.O_WRONLY | os.O_CREAT)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(handle, view) :]
            os.ftruncate(handle, len(data))
            if self.permissions is not None:
                os.fchmod(handle, self.permissions)
        finally:
            os.close(handle)
        return None

    def commit(self, staged: StagedFile) -> Spans | None:
        if not staged.synced:
            _sync(staged.path)
        if self.permissions is not None:
            os.chmod(staged.path, self.permissions)
        target = self.root / staged.name
        spare = self.root / spare_name(staged.name)
        kept: Spans | None = None
        copy = self._spare_copy(staged.name)
        if staged.new_spans is not None:
            # Linked before the rename, not after: the name always holds a whole file.
            spare.unlink(missing_ok=True)
            if self.keeps_spares():
                try:
                    os.link(target, spare)
                    kept = staged.new_spans
                except OSError:  # nothing replaced yet, or a file system without links
                    pass
        elif copy is not None:
            if self.permissions is not None:
                os.chmod(copy.path, self.permissions)
            os.replace(copy.path, spare)
            kept = ()
        elif staged.spare_copy:  # its copy failed: the spare it had holds another file
            spare.unlink(missing_ok=True)
        os.replace(staged.path, target)
        return kept

    def _spare_copy(self, name: str) -> StagedFile | None:
        """The copy of page ``name`` ``spare_soon`` started, once made; None when none was
        started, or it failed (then it is removed)."""
        found = self._spare_copies.pop(name, None)
        if found is None:
            return None
        copy, made = found
        try:
            if made is not None:
                made.result()
        except OSError:
            logger.info("Cannot copy %s as its spare.", name, exc_info=True)
            copy.discard()
            return None
        return copy

    def share(self, staged: StagedFile, run: str) -> str:
        # Every worker writes to the same folder: the staging file is there already.
        # Synced here, by the workers at once, not one by one in the final step.
        _sync(staged.path)
        return staged.path.name

    def shared(self, name: str, shared: str) -> StagedFile:
        path = (self.root / name).with_name(Path(shared).name)
        return StagedFile(name, path, synced=True)

    def share_spare(self, staged: StagedFile) -> str | None:
        copy = self._spare_copy(staged.name)
        return None if copy is None else copy.path.name

    def shared_spare(self, staged: StagedFile, shared: str) -> None:
        path = (self.root / staged.name).with_name(Path(shared).name)
        self._spare_copies[staged.name] = (StagedFile(spare_name(staged.name), path), None)
        staged.spare_copy = True

    @contextlib.contextmanager
    def workspace(self) -> Iterator[None]:
        # A worker's copies not shared (its part failed) go with it.
        try:
            yield
        finally:
            self._stop_copying()

    def exists(self, name: str) -> bool:
        return (self.root / name).is_file()

    def delete(self, name: str) -> None:
        (self.root / name).unlink(missing_ok=True)

    def size(self, name: str) -> int | None:
        try:
            return (self.root / name).stat().st_size
        except OSError:
            return None

    def read_bytes(self, name: str) -> bytes | None:
        # Read by its descriptor: a file object's opening and reading make three system
        # calls more (``fstat``, ``ioctl``, ``lseek``), for each page's blocks file.
        try:
            handle = os.open(self.root / name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return None
        try:
            size = os.fstat(handle).st_size
            parts = [os.read(handle, size + 1)]
            # Short of what was asked: the file's end. Else it grew since: read on.
            if len(parts[0]) > size:
                while parts[-1]:
                    parts.append(os.read(handle, _READ_MORE))
        finally:
            os.close(handle)
        return b"".join(parts)

    @contextlib.contextmanager
    def open_file(self, name: str) -> Iterator[IO[bytes]]:
        with open(self.root / name, "rb", buffering=0) as handle:
            yield handle


# fsync() calls in flight at once (``FolderDestination.sync``). Each thread's return
# from a system call waits for the interpreter's lock, against the others and the
# export's own thread: 32 kept the export's thread waiting, and their syncs queued in
# the file system anyway (docs/performance.md, "The syncs' threads take turns with the
# export's").
_SYNC_THREADS = 16
# What a read asks for past a file's size, until its end.
_READ_MORE = 1 << 20


def _create(path: Path, flags: int) -> int:
    """``os.open(path, flags, 0o666)``, its folders made first if they are missing.

    Opened first, the folders made only when that fails: two system calls a
    file fewer than making them each time (``mkdir``, then ``stat`` when it
    exists), for a file in a folder that exists, which is every page of an
    export after the first (docs/performance.md, "Incremental export").
    """
    try:
        return os.open(path, flags, 0o666)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, flags, 0o666)


def _yield_the_cores() -> None:
    """Lower the priority of the calling thread (Linux: a thread is a task of its own)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def _copy_synced(source: Path, target: Path) -> None:
    """Copy ``source`` to the new file ``target`` (``_copy_file``), and sync the copy."""
    _copy_file(source, target)
    _sync(target)


def _copy_file(source: Path, target: Path) -> tuple[int, int] | None:
    """Copy ``source`` to the new file ``target`` (``files.copy_range``); ``source``'s
    identity (``files.identity``), as copied."""
    with open(source, "rb", buffering=0) as old:
        size = os.fstat(old.fileno()).st_size
        with open(_create(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb", buffering=0) as new:
            copy_range(old, new, 0, size)
        return identity(old)


# What a copy made ahead gives: the copied file's identity, and whether the copy is its
# spare (which holds other bytes at the spans its record names).
_Copied = tuple[tuple[int, int] | None, bool]


def _copy_or_take_spare(source: Path, target: Path, spare: Path | None) -> _Copied:
    """``spare`` moved to ``target`` if it can be written over there, else ``source``
    copied to it (``_copy_file``); ``source``'s identity, and which it was.

    A spare is taken once it cannot be opened by its name any more (renamed to
    ``target``), if it is a regular file of its own (not a link to another
    file, which would be written over), of ``source``'s size, that no
    process has open (``_unread``): a reader of the page it was may still be
    reading it, and would see the bytes written over it. Else it is removed.
    """
    if spare is not None:
        taken = _take_spare(source, target, spare)
        if taken is not None:
            return taken, True
    return _copy_file(source, target), False


def _take_spare(source: Path, target: Path, spare: Path) -> tuple[int, int] | None:
    """``spare`` moved to ``target`` to be written over as ``source``'s copy: ``source``'s
    identity; None, ``spare`` removed, when it cannot be (``_copy_or_take_spare``)."""
    try:
        os.rename(spare, target)
    except FileNotFoundError:
        return None
    try:
        page = os.stat(source)
    except OSError:
        page = None
    if page is not None and _own_unread(target, page):
        return page.st_dev, page.st_ino
    target.unlink()
    return None


def _own_unread(path: Path, page: os.stat_result) -> bool:
    """Whether ``path`` is a regular file of its own, of ``page``'s size and not that
    file, which no process has open (``_copy_or_take_spare``)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        handle = os.open(path, flags)  # a symbolic link or a FIFO: refused, not waited for
    except OSError:
        return False
    try:
        found = os.fstat(handle)
        own = stat.S_ISREG(found.st_mode) and found.st_nlink == 1
        other = (found.st_dev, found.st_ino) != (page.st_dev, page.st_ino)
        return own and other and found.st_size == page.st_size and _unread(handle)
    finally:
        os.close(handle)


# fcntl(2)'s F_SETLEASE (Linux): a write lease is granted only on a file no other open
# file description refers to.
_SETLEASE: int | None = getattr(fcntl, "F_SETLEASE", None) if fcntl is not None else None
# ioctl(2)'s FICLONE (Linux, linux/fs.h): the target file shares all the source's blocks.
_FICLONE: int | None = 0x40049409 if fcntl is not None and sys.platform == "linux" else None


def _unread(handle: int) -> bool:
    """Whether nothing but ``handle`` has the file open: no descriptor, no mapping.

    A write lease, taken and given back at once: the kernel grants it only then
    (Linux). False where leases are refused (not the file's owner, NFS, leases off).
    """
    if _SETLEASE is None or fcntl is None:  # pragma: no cover - not Linux
        return False
    try:
        fcntl.fcntl(handle, _SETLEASE, fcntl.F_WRLCK)
    except OSError:
        return False
    fcntl.fcntl(handle, _SETLEASE, fcntl.F_UNLCK)
    return True


def _sync(path: Path) -> None:
    # os.open(), not open(): each call a sync thread makes gives the interpreter's lock
    # back and waits for it again, against 31 other threads and the export's own, and a
    # file object's opening makes four (docs/performance.md, "Incremental export").
    handle = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _sync_queued(work: SimpleQueue[tuple[Path, Path]]) -> None:
    """Sync staging files taken from ``work`` (``_sync_ahead``) until it is empty."""
    while True:
        try:
            path, replaced = work.get_nowait()
        except Empty:
            return
        _sync_ahead(path, replaced)


def _sync_ahead(path: Path, replaced: Path) -> None:
    """Sync the staging file ``path``, then drop the cached pages of the file it replaces.

    Renamed over, a file is freed with its cached pages: for a page just made
    whole (8 MB, cached as written), about 0.1 ms on the export's thread, one
    rename after another. Dropped here instead, while the other files' syncs
    are waited for, the renames find nothing to drop (docs/performance.md,
    "Incremental export"); a reader of the old file until then reads it from
    the disk. Its pages are clean (every page is synced before it is put in
    place), so none is written out for it.
    """
    _sync(path)
    if _DROP is None:  # pragma: no cover - no posix_fadvise (macOS, Windows)
        return
    try:
        handle = os.open(replaced, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # nothing to replace yet
        return
    try:
        os.posix_fadvise(handle, 0, 0, _DROP)
    except OSError:  # pragma: no cover - a hint the file system may refuse
        pass
    finally:
        os.close(handle)


# posix_fadvise()'s advice to drop a file's clean cached pages, where there is one.
_DROP: int | None = getattr(os, "POSIX_FADV_DONTNEED", None)
# And its advice to read a file's range into the cache soon (``read_soon``).
_WILLNEED: int | None = getattr(os, "POSIX_FADV_WILLNEED", None)


class StorageDestination(Destination):
    """Any Django storage: documents are staged on local disk, then uploaded whole."""

    def __init__(self, storage: Storage, *, alias: str = "", folder: str = "") -> None:
        self.storage = storage
        self.alias = alias
        # Names are relative to this folder of the storage ("" for its root).
        self.folder = folder.strip("/")
        where = f"storage {alias!r}" if alias else repr(storage)
        self.description = f"{where}, folder {self.folder}" if self.folder else where
        self._staging: Path | None = None

    def subfolder(self, name: str) -> Destination:
        return StorageDestination(self.storage, alias=self.alias, folder=self._name(name))

    def _name(self, name: str) -> str:
        return f"{self.folder}/{name}" if self.folder else name

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        # A storage has no lock: an export split into tasks takes a row in the
        # database (``parallel``), and two plain exports to one storage must not overlap.
        with self.workspace():
            yield

    @contextlib.contextmanager
    def workspace(self) -> Iterator[None]:
        temp = Path(tempfile.gettempdir())
        remove_stale_staging(temp)
        self._staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=temp))
        try:
            yield
        finally:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    def stage(self, name: str) -> StagedFile:
        if self._staging is None:
            raise RuntimeError("StorageDestination.stage() outside lock()")
        fd, path = tempfile.mkstemp(dir=self._staging, suffix=TEMP_SUFFIX)
        os.close(fd)
        return StagedFile(name, Path(path))

    def share(self, staged: StagedFile, run: str) -> str:
        shared = f"{SHARED_STAGING}/{run}/{staged.name}"
        with open(staged.path, "rb") as handle:
            self._save(self._name(shared), handle)
        staged.discard()
        return shared

    def shared(self, name: str, shared: str) -> StagedFile:
        return SharedStagedFile(name, self._name(shared), self.storage)

    def clean_leftovers(self, names: list[str]) -> None:
        # Called under the export's lock (for a split export, its row in the
        # database): the shared staging files there are of runs dropped or killed.
        self._remove_tree(self._name(SHARED_STAGING))

    def _remove_tree(self, folder: str) -> None:
        try:
            folders, files = self.storage.listdir(folder)
        except (OSError, NotImplementedError):
            return
        except Exception:  # each backend raises its client's errors
            logger.info("Cannot list %s; its leftovers stay.", folder, exc_info=True)
            return
        for name in files:
            self.storage.delete(f"{folder}/{name}")
        for name in folders:
            self._remove_tree(f"{folder}/{name}")

    def commit(self, staged: StagedFile) -> Spans | None:
        name = self._name(staged.name)
        if isinstance(staged, SharedStagedFile):
            # Django's storage API has no copy: read back what the worker uploaded.
            with self.storage.open(staged.shared, "rb") as handle:
                self._save(name, handle)
        else:
            with open(staged.path, "rb") as handle:
                self._save(name, handle)
        staged.discard()
        return None

    def _save(self, name: str, handle: IO[bytes]) -> None:
        """Save ``handle``'s bytes as ``name``, replacing the file in one upload."""
        if self.storage.exists(name) and self.storage.get_available_name(name) != name:
            # This storage saves under a new name rather than replace: remove the old
            # file first, so the name is briefly missing (S3 and GCS overwrite by default).
            logger.warning(
                "%s does not overwrite files: %s is missing while it is replaced; enable "
                "overwriting (file_overwrite / allow_overwrite, depending on the backend).",
                self.description,
                name,
            )
            self.storage.delete(name)
        saved = self.storage.save(name, File(handle, name=name))
        if saved != name:
            self.storage.delete(saved)
            raise ExportError(
                f"{self.description} saved {name} as {saved}; enable overwriting "
                "(file_overwrite / allow_overwrite, depending on the backend)."
            )

    def exists(self, name: str) -> bool:
        return self.storage.exists(self._name(name))

    def delete(self, name: str) -> None:
        self.storage.delete(self._name(name))

    def size(self, name: str) -> int | None:
        try:
            return self.storage.size(self._name(name))
        except (OSError, NotImplementedError):
            return None
        except Exception:  # each backend raises its client's errors (S3: ClientError)
            logger.info("Cannot read the size of %s; it is written again.", name, exc_info=True)
            return None

    @contextlib.contextmanager
    def open_file(self, name: str) -> Iterator[IO[bytes]]:
        with self.storage.open(self._name(name), "rb") as handle:
            yield handle

    def read_bytes(self, name: str) -> bytes | None:
        name = self._name(name)
        if not self.storage.exists(name):
            return None
        with self.storage.open(name, "rb") as handle:
            data = handle.read()
        return data if isinstance(data, bytes) else str(data).encode()


def storage_destination(alias: str) -> Destination:
    """The destination for a ``STORAGES`` alias; a local file system storage becomes a folder.

    A ``FileSystemStorage`` is written by ``os.replace``, which is atomic; any
    other storage by one upload per file.
    """
    try:
        storage = storages[alias]
    except InvalidStorageError:
        known = ", ".join(sorted(storages.backends)) or "none"
        raise ExportError(f"No storage {alias!r} in STORAGES (known: {known}).") from None
    if not isinstance(storage, FileSystemStorage):
        return StorageDestination(storage, alias=alias)
    root = storage.path("")
    permissions = getattr(storage, "file_permissions_mode", None)
    destination = FolderDestination(root, permissions=permissions)
    destination.description = f"storage {alias!r} ({root})"
    return destination
