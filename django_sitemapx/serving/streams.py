"""Byte streams of served documents: gzip, closing, ASGI.

``encode`` yields the plain or gzip variant of a document served uncached (the
cache stores both as it builds, see ``serving.cache``); ``ClosingBody`` closes
the document (and releases a build lock) however the response ends, and
``AsyncBody`` lets ASGI pull a sync stream without buffering it whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from asgiref.sync import sync_to_async

from ..compression import gzip_compressor
from ..entries import close_stream


def encode(stream: Iterable[bytes], gz: bool) -> Iterator[bytes]:
    """The plain or gzip variant of ``stream``.

    However it ends, ``stream`` is closed, so its source lets go of its cursor.
    """
    try:
        if not gz:
            yield from stream
            return
        compressor = gzip_compressor()
        for chunk in stream:
            if out := compressor.compress(chunk):
                yield out
        yield compressor.flush()
    finally:
        close_stream(stream)


class ClosingBody:
    """A response body that closes its document, then runs ``on_close``, however it ends.

    Django closes a response even when its client left before the first chunk,
    when a generator body would never have started and so never run its cleanup:
    the source's cursor and a build lock must not wait for the garbage collector.
    """

    def __init__(self, stream: Iterator[bytes], on_close: Callable[[], None]) -> None:
        self._stream = stream
        self._on_close: Callable[[], None] | None = on_close

    def __iter__(self) -> ClosingBody:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._stream)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop streaming (client gone or response closed); run ``on_close`` once."""
        close_stream(self._stream)
        if self._on_close is not None:
            on_close, self._on_close = self._on_close, None
            on_close()


class AsyncBody:
    """A sync body pulled from a thread, so ASGI sends each chunk as it comes.

    Its ``close()`` is sync, so Django's ASGI handler, which closes the response
    after sending it or after the client left, closes the body even if no chunk
    was ever pulled (an async generator's cleanup would not run then).
    """

    def __init__(self, stream: Iterator[bytes]) -> None:
        self._stream = stream
        self._pull = sync_to_async(_next_or_none, thread_sensitive=True)

    def __aiter__(self) -> AsyncBody:
        return self

    async def __anext__(self) -> bytes:
        chunk = await self._pull(self._stream)
        if chunk is None:
            await sync_to_async(self.close, thread_sensitive=True)()
            raise StopAsyncIteration
        return chunk

    def close(self) -> None:
        """Close the sync body (idempotent)."""
        close_stream(self._stream)


def _next_or_none(stream: Iterator[bytes]) -> bytes | None:
    return next(stream, None)
