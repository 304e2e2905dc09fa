"""One exported document written to its file and, with gzip, to its ``.gz`` copy."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from ..compression import gzip_compressor

# Byte ranges of a file, (first, end) in order: where two versions of a page differ.
Spans = tuple[tuple[int, int], ...]


class DocumentFile:
    """Writes one document to its staging file and, with gzip, its compressed copy.

    The compressed copy is what the views serve as ``.xml.gz`` (see
    ``compression``). With no paths (a dry run) it only counts bytes,
    including the compressed size.
    """

    def __init__(self, paths: list[Path], *, compress: bool) -> None:
        self._stack = contextlib.ExitStack()
        self._plain: IO[bytes] | None = None
        self._packed: IO[bytes] | None = None
        if paths:
            self._plain = self._stack.enter_context(open(paths[0], "wb"))  # noqa: SIM115
            if compress:
                self._packed = self._stack.enter_context(open(paths[1], "wb"))  # noqa: SIM115
        self._compressor = gzip_compressor() if compress else None
        self.size = 0
        self.gzip_size = 0
        self._digest = hashlib.sha256()
        self._gzip_digest = hashlib.sha256()

    def write(self, chunk: bytes) -> None:
        """Write a chunk of the document."""
        if self._plain is not None:
            self._plain.write(chunk)
        self.size += len(chunk)
        self._digest.update(chunk)
        if self._compressor is not None:
            self._write_packed(self._compressor.compress(chunk))

    def _write_packed(self, data: bytes) -> None:
        if self._packed is not None:
            self._packed.write(data)
        self.gzip_size += len(data)
        self._gzip_digest.update(data)

    @property
    def digest(self) -> str:
        """The SHA-256 of the document's bytes (once written)."""
        return self._digest.hexdigest()

    @property
    def gzip_digest(self) -> str:
        """The SHA-256 of the compressed copy's bytes (once written)."""
        return self._gzip_digest.hexdigest()

    def __enter__(self) -> DocumentFile:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        try:
            if self._compressor is not None:
                self._write_packed(self._compressor.flush())
        finally:
            self._stack.close()


# A copy_file_range() refused by the file system (EXDEV, ENOSYS, EINVAL...): read and write.
_COPY_BY_KERNEL = hasattr(os, "copy_file_range")
_COPY_BUFFER = 1 << 20


def copy_range(
    source: IO[bytes], target: IO[bytes], offset: int, length: int, *, share: bool = True
) -> None:
    """Append ``length`` bytes of ``source`` from ``offset`` to ``target``, at its position.

    Between two local files, the kernel copies them (``os.copy_file_range``,
    no copy through this process, and a reflink where the file system shares
    blocks); otherwise, or when not to ``share`` them, they are read and
    written. ``target`` is unbuffered. Raises ``OSError`` if ``source`` ends first.
    """
    global _COPY_BY_KERNEL
    if share and _COPY_BY_KERNEL and length:
        try:
            source_fd, target_fd = source.fileno(), target.fileno()
        except (AttributeError, OSError, ValueError):
            source_fd = target_fd = -1
        if source_fd >= 0:
            try:
                while length:
                    copied = os.copy_file_range(source_fd, target_fd, length, offset)
                    if not copied:
                        raise OSError(f"{source.name}: {length} bytes missing at {offset}")
                    offset += copied
                    length -= copied
                return
            except OSError as error:
                if error.errno not in {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP}:
                    raise
                _COPY_BY_KERNEL = False
    source.seek(offset)
    while length:
        data = source.read(min(length, _COPY_BUFFER))
        if not data:
            raise OSError(f"{getattr(source, 'name', 'a file')}: {length} bytes missing")
        target.write(data)
        length -= len(data)


# File systems that share blocks between files (XFS with reflink, btrfs) clone a
# copied run of whole blocks instead of copying it, when it sits at the same
# offset within a block in both files: the block size they share in, or a multiple.
CLONE_ALIGNMENT = 4096


def write_spliced(
    source: IO[bytes],
    target: IO[bytes],
    pieces: Iterable[bytes | tuple[int, int]],
    *,
    share: bool = True,
    copied: bool = False,
    outdated: Spans = (),
) -> Spans | None:
    """Append ``pieces`` to ``target``: new bytes, or (offset, length) runs of ``source``.

    A run that lands in ``target`` at the same offset within a
    ``CLONE_ALIGNMENT`` block as in ``source`` (a page whose changed blocks
    kept their length: every run after them) is copied in whole aligned
    blocks (``copy_range``, which such a file system clones), and the
    partial blocks at its ends are read and written with the new bytes next
    to them. Any other run is copied as it is. The bytes are the same either
    way; on a file system without shared blocks it costs the same. Not to
    ``share``, every run is read and written: a new file whose bytes are
    its own, in as few extents as the file system makes.

    When every run keeps its offset and the last one ends ``source`` (the
    changed blocks kept their lengths, as a changed ``<lastmod>`` keeps it),
    ``source`` is copied whole and the new bytes written over it, each in the
    whole ``CLONE_ALIGNMENT`` blocks holding it (``_write_over``).

    ``copied``: ``target`` holds a copy of ``source`` already, made ahead
    (``Destination.copy_soon``), for the new bytes to be written over; when
    they cannot be (their runs move, or not to ``share``), it is emptied first.
    ``outdated``: spans at which that copy holds other bytes (a spare's), written
    from ``source`` with the new ones.

    Returns the spans (whole ``CLONE_ALIGNMENT`` blocks) outside which the new
    file holds ``source``'s bytes, when every run keeps its offset; else None.
    """
    pieces = list(pieces)
    if share:
        spans = _write_over(source, target, pieces, copied=copied, outdated=outdated)
        if spans is not None:
            return spans
    if copied:
        target.seek(0)
        target.truncate()
    pending = bytearray()
    position = target.tell()  # where ``pending`` starts in ``target``
    for piece in pieces:
        if isinstance(piece, bytes):
            pending += piece
            continue
        offset, length = piece
        if not length:
            continue
        if not share:
            _flush(target, pending)
            copy_range(source, target, offset, length, share=False)
            continue
        head = -offset % CLONE_ALIGNMENT
        end = (offset + length) // CLONE_ALIGNMENT * CLONE_ALIGNMENT
        aligned = (offset - position - len(pending)) % CLONE_ALIGNMENT == 0
        if not aligned or end <= offset + head:
            position += _flush(target, pending)
            copy_range(source, target, offset, length)
            position += length
            continue
        pending += read_at(source, offset, head)
        position += _flush(target, pending)
        copy_range(source, target, offset + head, end - offset - head)
        position += end - offset - head
        pending += read_at(source, end, offset + length - end)
    _flush(target, pending)
    if share:
        return None
    try:
        size = os.fstat(source.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        return None
    found = _new_bytes(pieces, size)
    return None if found is None else tuple((first, end) for first, end, _ in found)


# The new bytes of a file, by the whole ``CLONE_ALIGNMENT`` blocks holding them:
# (first, end, [(offset, bytes)]).
_NewBytes = list[tuple[int, int, list[tuple[int, bytes]]]]


def _new_bytes(pieces: list[bytes | tuple[int, int]], size: int) -> _NewBytes | None:
    """The new bytes of ``pieces`` by the blocks holding them, when every run of the old
    file (``size`` bytes) keeps its offset and the last one ends it; else None."""
    if not pieces or isinstance(pieces[-1], bytes):
        return None
    spans: _NewBytes = []
    position = 0
    for piece in pieces:
        if not isinstance(piece, bytes):
            offset, length = piece
            if offset != position:
                return None
            position += length
            continue
        if not piece:
            continue
        first = position // CLONE_ALIGNMENT * CLONE_ALIGNMENT
        end = min(-(-(position + len(piece)) // CLONE_ALIGNMENT) * CLONE_ALIGNMENT, size)
        if spans and first <= spans[-1][1]:
            start, last_end, written = spans[-1]
            written.append((position, piece))
            spans[-1] = (start, max(last_end, end), written)
        else:
            spans.append((first, end, [(position, piece)]))
        position += len(piece)
    return spans if position == size else None


def _write_over(
    source: IO[bytes],
    target: IO[bytes],
    pieces: list[bytes | tuple[int, int]],
    *,
    copied: bool = False,
    outdated: Spans = (),
) -> Spans | None:
    """Write ``pieces`` as ``source`` copied whole, then their new bytes over it.

    None, writing nothing, unless ``target`` is empty (or, ``copied``, a
    copy of ``source`` at its start, but at the ``outdated`` spans) and every
    run of ``source`` lands at its own offset, the last one ending ``source``. One
    copy (one clone where the file system shares blocks) instead of one a
    run: on XFS with reflinks the clones of a 1,000-rows spread run cost
    per call more than per byte. The new bytes are written in whole aligned
    blocks, their other bytes read from ``source``: a partial block written
    over a shared one is read from the disk first (the new file's cache
    holds none of it), a whole one is not (docs/performance.md, "Pages
    cloned whole, their changed blocks written over them"). A copy's
    ``outdated`` spans are written from ``source`` with them. Returns the spans
    of the new bytes.
    """
    if not hasattr(os, "pwrite"):  # pragma: no cover - Windows
        return None
    try:
        handle = target.fileno()
        size = os.fstat(source.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        return None
    if target.tell():
        return None
    spans = _new_bytes(pieces, size)
    if spans is None:
        return None
    if not copied:
        copy_range(source, target, 0, size)
    for first, end, written in _with_outdated(spans, outdated if copied else (), size):
        block = bytearray(read_at(source, first, end - first))
        for offset, data in written:
            block[offset - first : offset - first + len(data)] = data
        os.pwrite(handle, block, first)
    target.seek(size)
    return tuple((first, end) for first, end, _ in spans)


def _with_outdated(spans: _NewBytes, outdated: Spans, size: int) -> _NewBytes:
    """``spans`` and the ``outdated`` ones (no new bytes), in order, those that meet joined."""
    if not outdated:
        return spans
    added: _NewBytes = [(first, min(end, size), []) for first, end in outdated]
    every = sorted([*spans, *added], key=lambda span: span[0])
    joined: _NewBytes = []
    for first, end, written in every:
        if joined and first <= joined[-1][1]:
            start, last_end, before = joined[-1]
            joined[-1] = (start, max(last_end, end), [*before, *written])
        else:
            joined.append((first, end, list(written)))
    return joined


def _flush(target: IO[bytes], pending: bytearray) -> int:
    """Write ``pending`` to ``target`` and empty it; how many bytes it held."""
    size = len(pending)
    if size:
        target.write(pending)
        pending.clear()
    return size


def identity(handle: IO[bytes]) -> tuple[int, int] | None:
    """The (device, inode) of an open file; None when it has none (a storage's file)."""
    try:
        status = os.fstat(handle.fileno())
    except (AttributeError, OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def read_at(source: IO[bytes], offset: int, length: int) -> bytes:
    """``length`` bytes of ``source`` from ``offset``; ``OSError`` if it ends first."""
    if not length:
        return b""
    try:
        data = os.pread(source.fileno(), length, offset)
    except (AttributeError, OSError, ValueError):
        source.seek(offset)
        data = source.read(length)
    if len(data) != length:
        raise OSError(f"{getattr(source, 'name', 'a file')}: {length} bytes missing at {offset}")
    return data
