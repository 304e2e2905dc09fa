"""An export killed halfway leaves the previous export intact and readable."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ROOT, locs, validate_sitemap


def export(folder: Path, count: int, *extra: str) -> subprocess.Popen[bytes]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    command = [sys.executable, "-m", "tests.export_child", str(folder), str(folder.parent / "m")]
    return subprocess.Popen([*command, str(count), *extra], cwd=ROOT, env=env)


def visible(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if not p.name.startswith(".")}


def test_killed_export_leaves_the_previous_one_intact(tmp_path: Path) -> None:
    folder = tmp_path / "sitemaps"
    assert export(folder, 300).wait(timeout=60) == 0
    previous = visible(folder)
    assert len(previous) == 8  # index + 3 pages, each with its .gz

    # In full: pages 1 and 2 are the same bytes, which an incremental run would not stage.
    child = export(folder, 450, "--hang", "--full")
    marker = tmp_path / "m"
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, "the export ended before reaching page 3"
            assert time.monotonic() < deadline, "the export never reached page 3"
            time.sleep(0.05)
        staged = sorted(p.name for p in folder.glob(".*.sitemapx-tmp"))
        # Halfway for real: pages 1 and 2 (and their .gz) are written, not yet in place.
        assert [name.split(".xml")[0] for name in staged] == [
            ".sitemap-news-1",
            ".sitemap-news-1",
            ".sitemap-news-2",
            ".sitemap-news-2",
        ]
        assert visible(folder) == previous
    finally:
        child.kill()
        child.wait(timeout=30)

    assert visible(folder) == previous
    for name, data in previous.items():
        root = validate_sitemap(gzip.decompress(data) if name.endswith(".gz") else data)
        assert locs(root)
    # The next export cleans what the killed one left and completes.
    assert export(folder, 450).wait(timeout=60) == 0
    assert not list(folder.glob(".*.sitemapx-tmp"))
    files = visible(folder)
    assert len(files) == 12
    assert len(locs(validate_sitemap(files["sitemap.xml"]))) == 5
    assert locs(validate_sitemap(files["sitemap-news-5.xml"]))[-1] == (
        "https://example.com/news/450/"
    )
