"""Peak RSS and CPU of one export process, with spliced pages on or off, or another checkout.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/DB \\
        python benchmarks/export_memory.py --rows 10000000 --splice on \\
        [--code /path/to/another/checkout]

The data set and settings of ``export_incremental.py`` (the articles section alone,
no cache). Each step runs in a fresh process: the section's layout (counted once if
the page table does not hold it), a full export to a new folder, ``--changes`` rows
(1,000) saved through the ORM spread evenly over the table (every page changes), and
an incremental export into the same folder (``--full-only``: the first two). ``--splice`` sets
``SITEMAPX_EXPORT_SPLICE`` in every step; ``--code`` puts another checkout first on
the path (``git archive main | tar -x -C /tmp/main``, to compare with main). Prints
one JSON line per step: seconds, the process's peak RSS and CPU seconds, and its
PostgreSQL backend's CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.export_steps import EXPORT, SAVE, run_step  # noqa: E402

BASE_URL = "http://localhost"

_SETUP = """
import django, json, os, resource
django.setup()
from django.conf import settings
settings.SITEMAPX_EXPORT_SPLICE = {splice}
import django_sitemapx
code = os.path.dirname(os.path.dirname(django_sitemapx.__file__))
"""

_DONE = """
out['code'] = code
out['rss_mb'] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
out['cpu_seconds'] = round(sum(os.times()[:2]), 2)
print(json.dumps(out))
"""

LAYOUT = """
from benchmarks import data
out = {{'rebuilt': data.ensure({rows})}}
from django_sitemapx import default_registry
from django_sitemapx.documents import listed_pages
from django_sitemapx.export import origin_from_url
pages = listed_pages(default_registry, origin_from_url({base!r}))
out['pages'] = len(pages)
"""


def _run(code: str, splice: bool, checkout: Path | None) -> dict[str, Any]:
    """Run ``code`` in a fresh Django process; it sets ``out``, printed with its costs."""
    path = [str(checkout)] if checkout else []
    path += [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, path)),
        "DJANGO_SETTINGS_MODULE": "benchmarks.export_settings",
        "DEBUG": "False",
    }
    script = _SETUP.format(splice=splice) + code + _DONE
    started = time.perf_counter()
    # ``python -c`` puts its working folder first on the path: the checkout's.
    result = run_step(script, checkout or ROOT, env)
    result["seconds"] = round(time.perf_counter() - started, 2)
    result["load_average"] = round(os.getloadavg()[0], 2)
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--changes", type=int, default=1_000)
    parser.add_argument("--splice", choices=["on", "off"], default="on")
    parser.add_argument("--code", type=Path, help="another checkout to run instead")
    parser.add_argument("--full-only", action="store_true", help="the layout and full run only")
    args = parser.parse_args(argv)
    if "BENCH_DATABASE_URL" not in os.environ:
        parser.error("set BENCH_DATABASE_URL (PostgreSQL)")
    splice = args.splice == "on"
    folder = Path(tempfile.mkdtemp(prefix="sitemapx-export-memory-"))
    steps = [
        ("layout", LAYOUT.format(rows=args.rows, base=BASE_URL)),
        ("full", EXPORT.format(folder=str(folder), base=BASE_URL, full=True)),
        ("saved", SAVE.format(rows=args.rows, changes=args.changes, spread=True, turn=0)),
        ("incremental", EXPORT.format(folder=str(folder), base=BASE_URL, full=False)),
    ]
    if args.full_only:
        steps = steps[:2]
    try:
        for name, code in steps:
            row = {"step": name, "rows": args.rows, "splice": args.splice}
            row.update(_run(code, splice, args.code))
            print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
