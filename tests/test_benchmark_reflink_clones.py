"""The file-system benchmark of spliced pages: every way runs its turns and leaves nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.reflink_clones import WAYS, main


def test_each_way_times_each_turn_and_removes_its_files(tmp_path: Path) -> None:
    output = tmp_path / "result.json"
    folder = tmp_path / "work"
    folder.mkdir()
    arguments = ["--folder", str(folder), "--files", "3", "--turns", "2", "--size", "65536"]
    arguments += ["--settle", "0"]
    assert main([*arguments, "--output", str(output)]) == 0
    result = json.loads(output.read_text())
    assert [(row["way"], row["turn"]) for row in result["turns_measured"]] == [
        (way, turn) for way in WAYS for turn in (1, 2)
    ]
    for row in result["turns_measured"]:
        parts = ("clones_ms", "writes_ms", "syncs_ms", "renames_ms")
        assert row["total_ms"] == sum(row[name] for name in parts)
    assert isinstance(result["shares_blocks"], bool)
    assert list(folder.iterdir()) == []


def test_an_unknown_way_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--folder", str(tmp_path), "--ways", "chain,copy"])
    assert "unknown ways: copy" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
