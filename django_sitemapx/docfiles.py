"""One exported document written to its file, with its gzip copy, counting as it goes."""

from __future__ import annotations

import contextlib
import gzip
from pathlib import Path
from typing import IO, Any

GZIP_SUFFIX = ".gz"
# The gzip tool's default: a 50,000-URL page comes out 2% larger than at level 9
# (153 KB against 151 KB of 8.6 MB), and level 9 gets slow on less repetitive text.
GZIP_LEVEL = 6


class DocumentFile:
    """Writes one document to its staging file and, with gzip, its compressed copy.

    With no paths (a dry run) it only counts, including the compressed size.
    """

    def __init__(self, name: str, paths: list[Path], *, compress: bool, urls: bool) -> None:
        self._stack = contextlib.ExitStack()
        self._tag = b"<url>" if urls else b"<sitemap>"
        self._plain: IO[bytes] | CountingSink = CountingSink()
        self._raw_gzip: IO[bytes] | CountingSink = CountingSink()
        self._gzip: gzip.GzipFile | None = None
        if paths:
            self._plain = self._stack.enter_context(open(paths[0], "wb"))  # noqa: SIM115
            if compress:
                self._raw_gzip = self._stack.enter_context(open(paths[1], "wb"))  # noqa: SIM115
        if compress:
            # mtime=0 and the final name: the same bytes on every run, whatever the staging name.
            self._gzip = gzip.GzipFile(
                filename=name, mode="wb", fileobj=self._raw_gzip, compresslevel=GZIP_LEVEL, mtime=0
            )
        self.urls = 0
        self.size = 0
        self.gzip_size = 0

    def write(self, chunk: bytes) -> int:
        """Write a chunk; return the URLs (or index entries) it holds."""
        self._plain.write(chunk)
        if self._gzip is not None:
            self._gzip.write(chunk)
        count = chunk.count(self._tag)
        self.urls += count
        self.size += len(chunk)
        return count

    def __enter__(self) -> DocumentFile:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        try:
            if self._gzip is not None:
                self._gzip.close()
                self.gzip_size = self._raw_gzip.tell()
        finally:
            self._stack.close()


class CountingSink:
    """A write-only file that keeps only the number of bytes written."""

    def __init__(self) -> None:
        self._size = 0

    def write(self, data: bytes) -> int:
        self._size += len(data)
        return len(data)

    def flush(self) -> None:
        pass

    def tell(self) -> int:
        return self._size
