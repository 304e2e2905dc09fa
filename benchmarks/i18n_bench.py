"""Multilingual sitemaps: django-sitemapx against django.contrib.sitemaps, same rows, same run.

    python benchmarks/i18n_bench.py                      # 200,000 published articles x 5 languages
    python benchmarks/i18n_bench.py --rows 20000 --contrib-pages 2
    python benchmarks/i18n_bench.py --memory-rows 1000000 --skip-contrib

A model section in five languages (``i18n_patterns``), ``alternates`` and
``x_default`` on: one ``<url>`` per (article, language) with six
``<xhtml:link>`` each. Contrib serves the same rows with ``i18n = True,
alternates = True, x_default = True`` and a ``select_related`` queryset. Each
variant runs cold (no cache) in a fresh process through Django's WSGI handler
(``worker.Client``): the index, then every page it lists. Contrib re-reads
and re-materialises every (item, language) pair for each page it serves, so
a full contrib pass over 1,000,000 URLs takes minutes: ``--contrib-pages K``
times its first K pages and its last one and extrapolates its total from their
mean cost per URL (said so in the output). Memory is the process's peak RSS;
``--memory-rows`` adds a django-sitemapx pass over that many rows to show it
stays flat. Timings on a shared machine are noisy: compare ratios from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LANGUAGES = 5


def _published_to_total(published: int) -> int:
    # benchmarks.data leaves every tenth row unpublished.
    return published + published // 9


def run_worker(args: list[str], database_url: str, timeout: float) -> list[dict[str, Any]]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "benchmarks.i18n_settings",
        "BENCH_DATABASE_URL": database_url,
    }
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.i18n_bench", "worker", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"worker {args} failed:\n{done.stderr[-3000:]}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def worker(argv: list[str]) -> int:
    import django

    django.setup()
    from django.db import connection

    from benchmarks.worker import Client, QueryCounter, peak_rss_mb, reset_peak_rss

    if argv[0] == "prepare":
        from benchmarks.data import ensure

        start = time.perf_counter()
        ensure(int(argv[1]))
        print(json.dumps({"prepared": int(argv[1]), "seconds": time.perf_counter() - start}))
        return 0
    variant, pages_wanted = argv[0], int(argv[1])
    counter = QueryCounter()
    with connection.execute_wrapper(counter):
        client = Client(counter)
        connection.ensure_connection()
        client.get("http://127.0.0.1/benchmark-warm-up/")
        base_rss = peak_rss_mb()
        reset_peak_rss()
        prefix = "/contrib" if variant == "contrib" else ""
        start = time.perf_counter()
        index = client.get(f"http://127.0.0.1{prefix}/sitemap.xml", keep=True)
        assert index.status == 200 and index.body is not None, index.status
        import re

        locs = [
            loc.decode().replace("&amp;", "&")
            for loc in re.findall(rb"<loc>([^<]*)</loc>", index.body)
            if b"multilingual" in loc
        ]
        chosen = locs if pages_wanted <= 0 else [*locs[:pages_wanted], locs[-1]]
        chosen = list(dict.fromkeys(chosen))
        documents = [client.get(loc) for loc in chosen]
        seconds = time.perf_counter() - start
    bad = [d.path for d in documents if d.status != 200]
    urls = sum(d.urls for d in documents)
    print(
        json.dumps(
            {
                "variant": variant,
                "pages_listed": len(locs),
                "pages_timed": len(documents),
                "urls_timed": urls,
                "seconds": seconds,
                "index_seconds": index.seconds,
                "bytes": sum(d.size for d in documents),
                "largest_page_bytes": max(d.size for d in documents),
                "queries": counter.count,
                "peak_rss_mb": peak_rss_mb(),
                "start_rss_mb": base_rss,
                "failed": bad,
            }
        ),
        flush=True,
    )
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000, help="Published articles.")
    parser.add_argument("--contrib-pages", type=int, default=2, help="0: every contrib page.")
    parser.add_argument("--skip-contrib", action="store_true")
    parser.add_argument("--memory-rows", type=int, default=0, help="Extra sitemapx-only pass.")
    parser.add_argument("--database-url", help="Default: a SQLite file in a temporary folder.")
    parser.add_argument("--timeout", type=float, default=3_000)
    parser.add_argument(
        "--write-docs",
        action="store_true",
        help="Write the figures as the multilingual section of docs/performance.md.",
    )
    options = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="sitemapx-i18n-"))
    database_url = options.database_url or f"sqlite:///{workdir / 'bench.sqlite3'}"

    def measure(rows: int, variant: str, pages: int) -> dict[str, Any]:
        run_worker(["prepare", str(_published_to_total(rows))], database_url, options.timeout)
        [result] = run_worker([variant, str(pages)], database_url, options.timeout)
        result["rows"] = rows
        # Printed at once: a slow contrib pass cut short leaves the other figures.
        print(json.dumps(result), flush=True)
        return result

    results = [measure(options.rows, "sitemapx", 0)]
    if not options.skip_contrib:
        results.append(measure(options.rows, "contrib", options.contrib_pages))
    if options.memory_rows:
        results.append(measure(options.memory_rows, "sitemapx", 0))
    for result in results:
        rate = result["urls_timed"] / result["seconds"]
        result["urls_per_second"] = rate
        print(
            f"{result['variant']:9} rows={result['rows']:>9,} pages={result['pages_timed']}"
            f"/{result['pages_listed']} urls={result['urls_timed']:>9,} "
            f"seconds={result['seconds']:8.1f} urls/s={rate:>9,.0f} "
            f"peak RSS={result['peak_rss_mb']:.0f} MB largest page="
            f"{result['largest_page_bytes'] / 1e6:.1f} MB failed={result['failed']}"
        )
    if not options.skip_contrib:
        ours, contrib = results[0], results[1]
        partial = contrib["pages_timed"] < contrib["pages_listed"]
        ratio = ours["urls_per_second"] / contrib["urls_per_second"]
        print(
            f"URLs/s, sitemapx / contrib (i18n, alternates, x_default, cold): {ratio:.1f}x"
            + (" (contrib extrapolated from the pages timed)" if partial else "")
        )
    print(json.dumps(results, indent=1), file=sys.stderr)
    if options.write_docs:
        from benchmarks.docs import replace_section

        replace_section(ROOT / "docs" / "performance.md", "i18n", _markdown(results))
    return 0


def _markdown(results: list[dict[str, Any]]) -> str:
    load = os.getloadavg()[0]
    lines = [
        "## Multilingual sections",
        "",
        "Written by `python benchmarks/i18n_bench.py --write-docs` (not by `run.py`). A "
        f"`ModelSource` over published articles in {LANGUAGES} languages (`i18n_patterns`), "
        "`alternates` and `x_default` on: one `<url>` per (article, language), six "
        "`<xhtml:link>` each. Contrib: `i18n = True, alternates = True, x_default = True`, "
        '`select_related("category")`. Cold (no cache), SQLite, one fresh process per variant, '
        f"the index then the pages. Load average at the end: {load:.1f} on a shared machine: "
        "the absolute figures are noisy, the ratio less so.",
        "",
        "| variant | rows | URLs timed | pages timed / listed | seconds | URLs/s | peak RSS (MB) "
        "| largest page (MB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['variant']} | {r['rows']:,} | {r['urls_timed']:,} | {r['pages_timed']} / "
            f"{r['pages_listed']} | {r['seconds']:.1f} | {r['urls_per_second']:,.0f} | "
            f"{r['peak_rss_mb']:.0f} | {r['largest_page_bytes'] / 1e6:.1f} |"
        )
    ours = [r for r in results if r["variant"] == "sitemapx"]
    contrib = [r for r in results if r["variant"] == "contrib"]
    if ours and contrib:
        ratio = ours[0]["urls_per_second"] / contrib[0]["urls_per_second"]
        partial = contrib[0]["pages_timed"] < contrib[0]["pages_listed"]
        lines += [
            "",
            f"**URLs/s, django-sitemapx ÷ contrib: {ratio:.1f}x** (target >= 20x: "
            + ("met" if ratio >= 20 else "not met")
            + ")"
            + (
                f"; contrib timed on {contrib[0]['pages_timed']} of its "
                f"{contrib[0]['pages_listed']} pages (its first and last), its total "
                "extrapolated from their cost per URL."
                if partial
                else "."
            ),
        ]
    if len(ours) > 1:
        small, large = ours[0], ours[-1]
        lines += [
            "",
            f"Memory is flat: {large['peak_rss_mb']:.0f} MB peak for {large['urls_timed']:,} "
            f"URLs ({large['rows']:,} rows), against {small['peak_rss_mb']:.0f} MB for "
            f"{small['urls_timed']:,} ({small['rows']:,} rows); each process starts at about "
            f"{large['start_rss_mb']:.0f} MB.",
        ]
    lines += [
        "",
        "What limits each side: contrib builds the list of every (item, language) pair and a "
        "model instance per row for each page it serves, then calls `reverse()` under "
        "`translation.override` once per URL and once more per alternate (six times per "
        "`<url>` here). django-sitemapx reads a page's key range once, reverses the URL once "
        "per language and fills each language's template for a whole chunk of rows; its "
        "pages are smaller (sized so that the largest possible `<url>` fits, see "
        "[page sizes](reference/sources.md#page-sizes-no-url-is-ever-cut)), so it serves "
        "more documents for the same URLs.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        sys.exit(worker(sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
