"""What a spliced page's file costs on a file system that shares blocks, turn after turn.

    python benchmarks/reflink_clones.py --folder /mnt/xfs [--files 184] [--turns 8] \\
        [--output benchmarks/results/reflink-clones.json]

No database and no Django project: the file system's part of a spread run of
``export_incremental.py`` alone. ``--files`` files of ``--size`` bytes (184 of
8 MiB: the 10,000,000 rows' pages), each written whole and synced; then, each
turn, ``--blocks`` 4 KiB blocks of each file at new random places are changed,
as 1,000 rows saved at new places change about 5.4 ``<url>`` elements a page
(one or two 4 KiB blocks each), and each file is replaced by a new one (its
staging file synced on 16 threads, then renamed over it; then ``--settle`` seconds,
1 by default, after ``os.sync()``), in one of four ways:

- ``chain``: what an export does without a spare (``files.write_spliced`` over a copy
  made ahead). The new file is the old one cloned whole (``files.copy_range``, the
  export's own copy: ``os.copy_file_range``) and the changed blocks written over it.
- ``base``: the new file is a clone of the file as first written (kept beside it,
  never changed), and every block changed since then is written over it.
- ``keep``: ``chain``, the old file kept one turn longer (a hard link) before it goes.
- ``spare``: what a folder export does with spares. The old file is kept as the
  page's spare (a hard link made before the rename), and the next turn's new file is
  that spare, not a clone: the blocks changed the turn before (read from the current
  file) and this turn's written over it. The first turn has no spare yet and clones,
  as ``chain``.

Prints, per way and turn, the milliseconds of the clones, the writes, the syncs and
the renames, and the extents of one file (``os.stat`` cannot tell them: ``filefrag``
when it is there). On a file system that shares no blocks (ext4, tmpfs), a clone is a
copy, and ``shares_blocks`` says false. Sends nothing anywhere; writes only inside
a new folder in ``--folder``, removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from django_sitemapx.export.files import copy_range  # noqa: E402

BLOCK = 4096
WAYS = ("chain", "base", "keep", "spare")
# As ``FolderDestination``'s syncs: 16 threads taking files from one queue.
SYNC_THREADS = 16


def _clone(source: Path, target: IO[bytes], size: int) -> None:
    """``source``'s ``size`` bytes to ``target``, copied as the export copies a page's runs."""
    with open(source, "rb", buffering=0) as handle:
        copy_range(handle, target, 0, size)


def _extents(path: Path) -> int | None:
    if shutil.which("filefrag") is None:
        return None
    done = subprocess.run(["filefrag", str(path)], capture_output=True, text=True)
    if done.returncode:
        return None
    # "name: 109 extents found"
    return int(done.stdout.rsplit(":", 1)[1].split()[0])


def _shares_blocks(folder: Path) -> bool:
    """Whether a clone in ``folder`` shares its blocks: the free space does not fall by it
    (other writers on the same file system can blur this)."""
    first, second = folder / "probe-1", folder / "probe-2"
    with open(first, "wb", buffering=0) as source:
        source.write(os.urandom(64 * BLOCK) * 64)  # 16 MiB
        os.fsync(source.fileno())
    before = shutil.disk_usage(folder).free
    with open(second, "wb", buffering=0) as target:
        _clone(first, target, first.stat().st_size)
        os.fsync(target.fileno())
    shared = before - shutil.disk_usage(folder).free < first.stat().st_size // 2
    first.unlink()
    second.unlink()
    return shared


def run_way(
    way: str,
    folder: Path,
    files: int,
    size: int,
    blocks: int,
    turns: int,
    seed: int,
    settle: float = 1.0,
) -> list[dict[str, Any]]:
    """The turns of one way in ``folder`` (empty before, emptied after): their milliseconds.

    After each turn, ``settle`` seconds for the file system's own work (``os.sync()``
    first, when not 0).
    """
    pick = random.Random(seed)
    content = os.urandom(size)
    # New bytes for the changed blocks, made once: not the random generator's time.
    fresh = [os.urandom(BLOCK) for _ in range(64)]
    paths = [folder / f"page-{number}.xml" for number in range(files)]
    for path in paths:
        with open(path, "wb", buffering=0) as written:
            written.write(content)
            os.fsync(written.fileno())
        if way == "base":
            with open(path.with_suffix(".base"), "wb", buffering=0) as base:
                _clone(path, base, size)
                os.fsync(base.fileno())
    changed: list[list[int]] = [[] for _ in paths]
    # ``spare``: the blocks each file's last turn changed, where its spare differs from it.
    last: list[list[int]] = [[] for _ in paths]
    rows = []
    for turn in range(1, turns + 1):
        clones = writes = 0.0
        # Every staging file open until it is synced and renamed (closed then, or on an error).
        with contextlib.ExitStack() as opened:
            staged: list[tuple[IO[bytes], Path]] = []
            for number, path in enumerate(paths):
                new = [pick.randrange(size // BLOCK) * BLOCK for _ in range(blocks)]
                changed[number] += new
                source, over = (
                    (path.with_suffix(".base"), changed[number]) if way == "base" else (path, new)
                )
                staging = path.with_suffix(".staged")
                spare = path.with_suffix(".spare")
                started = time.perf_counter()
                if way == "spare" and turn > 1:
                    os.replace(spare, staging)
                    handle = opened.enter_context(open(staging, "r+b", buffering=0))
                    cloned = time.perf_counter()
                    with open(path, "rb", buffering=0) as current:
                        for offset in last[number]:
                            block = os.pread(current.fileno(), BLOCK, offset)
                            os.pwrite(handle.fileno(), block, offset)
                else:
                    handle = opened.enter_context(open(staging, "wb", buffering=0))
                    _clone(source, handle, size)
                    cloned = time.perf_counter()
                for offset in over:
                    os.pwrite(handle.fileno(), pick.choice(fresh), offset)
                last[number] = new
                writes += time.perf_counter() - cloned
                clones += cloned - started
                staged.append((handle, staging))
            started = time.perf_counter()
            with ThreadPoolExecutor(SYNC_THREADS) as pool:
                list(pool.map(os.fsync, [file.fileno() for file, _ in staged]))
            synced = time.perf_counter()
            for (staged_file, staging), path in zip(staged, paths, strict=True):
                staged_file.close()
                if way in {"keep", "spare"}:
                    kept = path.with_suffix(".kept" if way == "keep" else ".spare")
                    kept.unlink(missing_ok=True)
                    os.link(path, kept)
                os.replace(staging, path)
            renamed = time.perf_counter()
        row: dict[str, Any] = {
            "way": way,
            "turn": turn,
            "clones_ms": round(clones * 1000),
            "writes_ms": round(writes * 1000),
            "syncs_ms": round((synced - started) * 1000),
            "renames_ms": round((renamed - synced) * 1000),
            "extents_of_one_file": _extents(paths[0]),
        }
        row["total_ms"] = sum(
            row[name] for name in ("clones_ms", "writes_ms", "syncs_ms", "renames_ms")
        )
        print(json.dumps(row), flush=True)
        rows.append(row)
        # The file system's work after the renames (freeing the old files) is not the next turn's.
        if settle:
            os.sync()
            time.sleep(settle)
    for path in list(folder.iterdir()):
        path.unlink()
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--files", type=int, default=184)
    parser.add_argument("--size", type=int, default=8 << 20, help="bytes a file (8 MiB)")
    parser.add_argument("--blocks", type=int, default=6, help="4 KiB blocks changed a file a turn")
    parser.add_argument("--turns", type=int, default=8)
    parser.add_argument("--ways", default=",".join(WAYS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--settle", type=float, default=1.0, help="seconds after each turn (0: none, no sync)"
    )
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)
    ways = args.ways.split(",")
    if unknown := set(ways) - set(WAYS):
        parser.error(f"unknown ways: {', '.join(sorted(unknown))} (known: {', '.join(WAYS)})")
    if args.files < 1 or args.turns < 1 or args.blocks < 0 or args.size < BLOCK or args.settle < 0:
        parser.error(
            "--files and --turns must be at least 1, --blocks and --settle at least 0, "
            "--size at least 4096"
        )
    args.size -= args.size % BLOCK
    folder = Path(tempfile.mkdtemp(prefix="reflink-clones-", dir=args.folder))
    try:
        shares = _shares_blocks(folder)
        print(json.dumps({"folder": str(args.folder), "shares_blocks": shares}), flush=True)
        rows = []
        for way in ways:
            rows += run_way(
                way, folder, args.files, args.size, args.blocks, args.turns, args.seed, args.settle
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.output:
        settings = {name: getattr(args, name) for name in ("files", "size", "blocks", "turns")}
        result = {**settings, "shares_blocks": shares, "turns_measured": rows}
        args.output.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
