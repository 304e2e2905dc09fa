"""Byte streams: variants, closing and lock release, ASGI."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from asgiref.sync import async_to_sync, sync_to_async

from django_sitemapx.serving.streams import AsyncBody, ClosingBody, encode
from tests.support.gzip import gzip_bytes

CHUNKS = [b"<a>", b"hello", b"</a>"]


def test_plain_and_gzip_variants() -> None:
    plain = b"".join(encode(iter(CHUNKS), False))
    assert plain == b"<a>hello</a>"
    packed = b"".join(encode(iter(CHUNKS), True))
    assert packed == gzip_bytes(plain)  # the bytes of an exported .xml.gz


def _source(log: list[str]) -> Iterator[bytes]:
    try:
        yield from CHUNKS
    finally:
        log.append("source closed")


@pytest.mark.parametrize("gz", [False, True])
def test_closing_the_stream_early_closes_its_input_at_once(gz: bool) -> None:
    # The input is referenced here too, so only an explicit close() ends it now.
    log: list[str] = []
    source = _source(log)
    stream = encode(source, gz)
    assert next(stream)
    stream.close()
    assert log == ["source closed"]


def test_closing_body_runs_on_close_once_on_close_or_exhaustion() -> None:
    log: list[str] = []
    body = ClosingBody(_source(log), lambda: log.append("released"))
    assert next(body) == b"<a>"
    body.close()
    body.close()
    assert log == ["source closed", "released"]
    log.clear()
    assert b"".join(ClosingBody(_source(log), lambda: log.append("released"))) == b"<a>hello</a>"
    assert log == ["source closed", "released"]


def test_closing_body_closes_when_never_pulled() -> None:
    # A body whose document was started (its first chunk rendered) but never pulled:
    # a generator body would never run its cleanup.
    log: list[str] = []
    document = _source(log)
    assert next(document) == b"<a>"
    body = ClosingBody(encode(document, False), lambda: (document.close(), log.append("released")))
    body.close()
    assert log == ["source closed", "released"]


def test_async_body_pulls_every_chunk_and_closes() -> None:
    log: list[str] = []
    body = ClosingBody(_source(log), lambda: log.append("released"))

    async def collect() -> list[bytes]:
        return [chunk async for chunk in AsyncBody(body)]

    assert async_to_sync(collect)() == CHUNKS
    assert log == ["source closed", "released"]


def test_async_body_closes_the_source_when_the_client_leaves() -> None:
    closed: list[bool] = []

    def chunks() -> Iterator[bytes]:
        try:
            yield b"a"
            yield b"b"
        finally:
            closed.append(True)

    # Referenced here too, so only an explicit close() ends the source now.
    source = chunks()

    async def read_one() -> bytes:
        body = AsyncBody(source)
        first = await body.__anext__()
        # What Django's ASGI handler does once the client left: close the response.
        await sync_to_async(body.close)()
        return first

    assert asyncio.run(read_one()) == b"a"
    assert closed == [True]


def test_async_body_closed_before_any_pull_closes_its_source() -> None:
    log: list[str] = []
    source = _source(log)
    next(source)  # started, as a document is once its first chunk is rendered
    body = AsyncBody(source)
    asyncio.run(sync_to_async(body.close)())
    assert log == ["source closed"]
