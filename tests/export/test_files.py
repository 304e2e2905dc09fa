"""``DocumentFile``: one document written to its file and its ``.gz`` copy."""

from __future__ import annotations

import gzip
from pathlib import Path

from django_sitemapx.export.files import DocumentFile
from tests.support.gzip import gzip_bytes

CHUNKS = [b'<?xml version="1.0" encoding="UTF-8"?>\n', b"<urlset>", b"</urlset>\n"]
DATA = b"".join(CHUNKS)


def test_the_plain_file_and_its_gzip_copy(tmp_path: Path) -> None:
    plain, packed = tmp_path / "a.xml", tmp_path / "a.xml.gz"
    with DocumentFile([plain, packed], compress=True) as doc:
        for chunk in CHUNKS:
            doc.write(chunk)
    assert plain.read_bytes() == DATA
    # The views' own gzip bytes: no file name and no time in the header.
    assert packed.read_bytes() == gzip_bytes(DATA)
    assert gzip.decompress(packed.read_bytes()) == DATA
    assert (doc.size, doc.gzip_size) == (len(DATA), packed.stat().st_size)


def test_without_gzip_only_the_plain_file(tmp_path: Path) -> None:
    plain = tmp_path / "a.xml"
    with DocumentFile([plain], compress=False) as doc:
        for chunk in CHUNKS:
            doc.write(chunk)
    assert plain.read_bytes() == DATA
    assert (doc.size, doc.gzip_size) == (len(DATA), 0)
    assert list(tmp_path.iterdir()) == [plain]


def test_a_dry_run_writes_nothing_and_counts_both_sizes(tmp_path: Path) -> None:
    with DocumentFile([], compress=True) as doc:
        for chunk in CHUNKS:
            doc.write(chunk)
    assert (doc.size, doc.gzip_size) == (len(DATA), len(gzip_bytes(DATA)))
    assert list(tmp_path.iterdir()) == []
