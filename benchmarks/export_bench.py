"""Export time and memory against the view's streaming time, on the example site.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/DB \
        python benchmarks/export_bench.py --urls 1000000

Seeds the example project up to ``--urls`` article URLs (``seed_demo``; one
article in ten is unpublished), then, each in a fresh process so peak memory is
its own: streams every document through the views (Django test client, no
network), exports to a temporary folder, and exports with ``--gzip``. Prints
wall time, URLs per second, bytes and peak RSS (with the RSS right after Django
started, to show what the work itself adds).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    os.environ.setdefault("DEBUG", "False")
    import django

    django.setup()


def rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(mode: str) -> dict[str, object]:
    setup()
    from django.core.management import call_command
    from django.test import Client
    from lxml import etree

    base_rss = rss_mb()
    started = time.perf_counter()
    if mode == "view":
        client = Client(HTTP_HOST="localhost")
        index = b"".join(client.get("/sitemap.xml").streaming_content)
        total = len(index)
        urls = 0
        ns = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
        for loc in etree.fromstring(index).iterfind(".//sm:loc", ns):
            response = client.get(loc.text.split("localhost", 1)[1])
            for chunk in response.streaming_content:
                total += len(chunk)
                urls += chunk.count(b"<url>")
        files = None
        seconds = time.perf_counter() - started
    else:
        folder = tempfile.mkdtemp(prefix="sitemapx-bench-")
        try:
            call_command(
                "sitemap_export",
                output_dir=folder,
                base_url="http://localhost",
                gzip=mode == "export-gzip",
                verbosity=0,
            )
            seconds = time.perf_counter() - started
            paths = [p for p in Path(folder).iterdir() if not p.name.startswith(".")]
            total = sum(p.stat().st_size for p in paths)
            files = len(paths)
            urls = sum(p.read_bytes().count(b"<url>") for p in paths if p.name.endswith(".xml"))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return {
        "mode": mode,
        "seconds": round(seconds, 2),
        "urls": urls,
        "bytes": total,
        "files": files,
        "rss_start_mb": round(base_rss, 1),
        "rss_peak_mb": round(rss_mb(), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000, help="Article URLs wanted.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--skip-seed", action="store_true", help="Use the data already there.")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    setup()
    from django.core.management import call_command
    from django.db import connection

    if not args.skip_seed:
        call_command("migrate", verbosity=0)
        started = time.perf_counter()
        # seed_demo leaves one article in ten unpublished.
        call_command("seed_demo", count=args.urls * 10 // 9 + (args.urls * 10 % 9 > 0))
        print(f"seeded in {time.perf_counter() - started:.0f} s")
    print(f"database: {connection.vendor}; Python {sys.version.split()[0]}")
    print("| run | seconds | URLs/s | URLs | bytes | files | RSS at start | peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for mode in ("view", "export", "export-gzip"):
        output = subprocess.run(
            [sys.executable, __file__, "--child", mode],
            check=True,
            capture_output=True,
            text=True,
            timeout=3600,
        ).stdout
        row = json.loads(output.strip().splitlines()[-1])
        rate = int(row["urls"]) / float(row["seconds"]) if row["seconds"] else 0
        print(
            f"| {mode} | {row['seconds']} | {rate:,.0f} | {row['urls']:,} | {row['bytes']:,} | "
            f"{row['files'] or '-'} | {row['rss_start_mb']} MB | {row['rss_peak_mb']} MB |"
        )


if __name__ == "__main__":
    main()
