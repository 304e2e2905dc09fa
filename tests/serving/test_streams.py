"""Byte streams: variants, the kept copy, and lock release."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Iterator

import pytest
from asgiref.sync import async_to_sync

from django_sitemapx.compression import gzip_bytes
from django_sitemapx.serving.streams import Filling, async_stream, encode

CHUNKS = [b"<a>", b"hello", b"</a>"]


def test_plain_and_gzip_variants_and_the_kept_copy() -> None:
    kept: list[tuple[bytes, bytes]] = []
    plain = b"".join(encode(iter(CHUNKS), False, lambda p, z: kept.append((p, z))))
    assert plain == b"<a>hello</a>"
    assert kept[0][0] == plain and gzip.decompress(kept[0][1]) == plain
    packed = b"".join(encode(iter(CHUNKS), True, None))
    assert packed == kept[0][1]  # streamed or kept, the same bytes
    assert packed == gzip_bytes(plain)  # and those of an exported .xml.gz


def test_the_copy_is_kept_before_the_last_plain_chunk_is_sent() -> None:
    kept: list[bytes] = []
    stream = encode(iter(CHUNKS), False, lambda p, z: kept.append(p))
    assert [next(stream), next(stream)] == [b"<a>", b"hello"]
    assert not kept
    assert next(stream) == b"</a>"
    assert kept == [b"<a>hello</a>"]


def test_nothing_is_kept_when_the_stream_is_closed_early() -> None:
    kept: list[bytes] = []
    stream = encode(iter(CHUNKS), False, lambda p, z: kept.append(p))
    next(stream)
    stream.close()
    assert kept == []


def _source(log: list[str]) -> Iterator[bytes]:
    try:
        yield from CHUNKS
    finally:
        log.append("source closed")


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("keeps", [False, True])
def test_closing_the_stream_early_closes_its_input_at_once(gz: bool, keeps: bool) -> None:
    # The input is referenced here too, so only an explicit close() ends it now.
    log: list[str] = []
    source = _source(log)
    kept: list[bytes] = []
    stream = encode(source, gz, (lambda p, z: kept.append(p)) if keeps else None)
    assert next(stream)
    stream.close()
    assert log == ["source closed"]
    assert kept == []


def test_filling_releases_once_on_close_or_exhaustion() -> None:
    log: list[str] = []
    filling = Filling(_source(log), lambda: log.append("released"))
    assert next(filling) == b"<a>"
    filling.close()
    filling.close()
    assert log == ["source closed", "released"]
    log.clear()
    assert b"".join(Filling(_source(log), lambda: log.append("released"))) == b"<a>hello</a>"
    assert log == ["source closed", "released"]


def test_filling_releases_when_never_started() -> None:
    log: list[str] = []
    Filling(_source(log), lambda: log.append("released")).close()
    assert log == ["released"]


def test_async_stream_pulls_every_chunk_and_closes() -> None:
    log: list[str] = []
    filling = Filling(_source(log), lambda: log.append("released"))

    async def collect() -> list[bytes]:
        return [chunk async for chunk in async_stream(filling)]

    assert async_to_sync(collect)() == CHUNKS
    assert "released" in log


def test_async_stream_closes_the_source_when_the_client_leaves() -> None:
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
        stream = async_stream(source)
        first = await stream.__anext__()
        await stream.aclose()
        return first

    assert asyncio.run(read_one()) == b"a"
    assert closed == [True]
