"""``DocumentFile``: one document written to its file and its ``.gz`` copy; and
``write_spliced``: a new file from runs of an old one and new bytes."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from django_sitemapx.export import files
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


# Changes to an old file of up to three blocks and a half: (where, how many old bytes they
# replace, the new bytes), at most four.
_CHANGES = st.lists(
    st.tuples(
        st.integers(0, 3 * files.CLONE_ALIGNMENT + 2048),
        st.integers(0, 600),
        st.binary(max_size=600) | st.sampled_from([b"", b"same"]),
    ),
    max_size=4,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    size=st.integers(0, 3 * files.CLONE_ALIGNMENT + 2048),
    changes=_CHANGES,
    same_length=st.booleans(),
    share=st.booleans(),
)
def test_spliced_bytes_are_the_old_ones_with_the_changes_however_written(
    size: int,
    changes: list[tuple[int, int, bytes]],
    same_length: bool,
    share: bool,
) -> None:
    # Copied whole and written over (every run at its own offset), or run by run.
    old = bytes((index * 7 + 3) % 251 for index in range(size))
    pieces: list[bytes | tuple[int, int]] = []
    expected = bytearray()
    cursor = 0
    for where, replaced, new in sorted(changes):
        start = max(where, cursor)
        if start > size:
            break
        replaced = min(replaced, size - start)
        if same_length:
            new = (new * (replaced // max(len(new), 1) + 1))[:replaced] if new else b"z" * replaced
        pieces += [(cursor, start - cursor), new]
        expected += old[cursor:start] + new
        cursor = start + replaced
    if cursor < size or not pieces:
        pieces.append((cursor, size - cursor))
    expected += old[cursor:]
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "old").write_bytes(old)
        with (
            open(Path(folder) / "old", "rb", buffering=0) as source,
            open(Path(folder) / "new", "wb", buffering=0) as target,
        ):
            files.write_spliced(source, target, pieces, share=share)
            assert target.tell() == len(expected)
        assert (Path(folder) / "new").read_bytes() == bytes(expected)
