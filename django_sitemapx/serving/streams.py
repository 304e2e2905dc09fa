"""Byte streams of served documents: gzip, copies kept for the cache, lock release, ASGI.

``encode`` yields the plain or gzip variant while keeping both for the cache,
``Filling`` releases a build lock however the response ends, and
``async_stream`` lets ASGI pull a sync stream without buffering it whole.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Iterator

from asgiref.sync import sync_to_async

from ..compression import gzip_compressor


def encode(
    stream: Iterable[bytes], gz: bool, keep: Callable[[bytes, bytes], None] | None
) -> Iterator[bytes]:
    """The plain or gzip variant of ``stream``; ``keep`` gets both once it is complete.

    However it ends, ``stream`` is closed, so its source lets go of its cursor.
    """
    try:
        yield from _encode(stream, gz, keep)
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


def _encode(
    stream: Iterable[bytes], gz: bool, keep: Callable[[bytes, bytes], None] | None
) -> Iterator[bytes]:
    if keep is None and not gz:
        yield from stream
        return
    compressor = gzip_compressor()
    plain: list[bytes] = []
    packed: list[bytes] = []
    held = b""
    for chunk in stream:
        out = compressor.compress(chunk)
        if keep is not None:
            plain.append(chunk)
            packed.append(out)
        if gz:
            if out:
                yield out
        else:
            # One chunk is held back, so the document is stored before its last
            # bytes are sent: a client gone after them cannot lose the copy.
            if held:
                yield held
            held = chunk
    tail = compressor.flush()
    if keep is not None:
        packed.append(tail)
        keep(b"".join(plain), b"".join(packed))
    yield tail if gz else held


class Filling:
    """A streamed miss that releases its build lock however the response ends."""

    def __init__(self, stream: Iterator[bytes], release: Callable[[], None]) -> None:
        self._stream = stream
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> Filling:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._stream)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop streaming (client gone or response closed) and release the lock."""
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()
        if self._release is not None:
            release, self._release = self._release, None
            release()


async def async_stream(stream: Iterator[bytes]) -> AsyncIterator[bytes]:
    """``stream`` pulled from a thread, so ASGI sends each chunk as it comes."""
    pull = sync_to_async(_next_or_none, thread_sensitive=True)
    try:
        while True:
            chunk = await pull(stream)
            if chunk is None:
                return
            yield chunk
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            await sync_to_async(close, thread_sensitive=True)()


def _next_or_none(stream: Iterator[bytes]) -> bytes | None:
    return next(stream, None)
