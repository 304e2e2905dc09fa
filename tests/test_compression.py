"""The one gzip encoding: decompresses to the input, with a header that never varies."""

import gzip
import struct
import time
import zlib

import pytest

from django_sitemapx.compression import GZIP_LEVEL, gzip_compressor
from tests.support.gzip import gzip_bytes

DOCUMENT = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n'
    b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
    + b"".join(b"<url><loc>https://example.com/a/%d/</loc></url>\n" % i for i in range(2000))
    + b"</urlset>\n"
)

FNAME = 0x08  # gzip header flag: an original file name follows the header


@pytest.mark.parametrize("data", [b"", b"x", DOCUMENT, bytes(range(256)) * 100])
def test_gzip_bytes_decompress_to_the_input(data: bytes) -> None:
    packed = gzip_bytes(data)
    assert gzip.decompress(packed) == data
    assert zlib.decompress(packed, wbits=31) == data


def test_header_has_mtime_zero_and_no_file_name() -> None:
    packed = gzip_bytes(DOCUMENT)
    magic, method, flags, mtime = struct.unpack("<2sBBI", packed[:8])
    assert magic == b"\x1f\x8b" and method == 8  # gzip, deflate
    assert mtime == 0
    assert not flags & FNAME
    assert flags == 0  # no name, no comment, no extra field, no header CRC
    assert len(packed) < len(DOCUMENT) // 10


def test_same_input_gives_the_same_bytes_from_two_compressors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = gzip_bytes(DOCUMENT)
    # Later, as another process would: the header takes no time from the clock
    # (without this, two calls in the same second would agree even with an mtime).
    monkeypatch.setattr(time, "time", lambda: 2_000_000_000.0)
    assert gzip_bytes(DOCUMENT) == first
    # A streaming compressor fed in chunks (as the views and the export feed it)
    # gives the same bytes too.
    compressor = gzip_compressor()
    size = len(DOCUMENT) // 7
    streamed = b"".join(
        compressor.compress(DOCUMENT[start : start + size])
        for start in range(0, len(DOCUMENT), size)
    )
    assert streamed + compressor.flush() == first


def test_level_is_the_gzip_tools_default() -> None:
    # The deflate stream is the one gzip -6 (and Python's gzip at level 6) writes;
    # only the header differs (mtime 0, no name).
    assert GZIP_LEVEL == 6
    packed = gzip_bytes(DOCUMENT)
    reference = gzip.compress(DOCUMENT, compresslevel=6, mtime=0)
    assert packed[10:] == reference[10:]
