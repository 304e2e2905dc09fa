"""The index of a large model section: after one change, after a cache flush, after a recount.

    python benchmarks/index_bench.py --database-url postgres://postgres@127.0.0.1:5432/bench \\
        --cache-url rediscache://127.0.0.1:6379/1 --rows 10000000 \\
        --output benchmarks/results/index-10m.json
    python benchmarks/index_bench.py --docs benchmarks/results/index-100k.json \\
        benchmarks/results/index-10m.json     # writes its section of docs/performance.md

Seeds the example's articles (``data.ensure``: one ``INSERT ... SELECT``; a no-op when
the database already holds that many) and requests ``/bench/sitemap.xml`` (the
``article`` section alone) through Django's test client, as a crawler would, in
each state:

- ``unchanged``: the index document served from the cache;
- ``after one change``: one article saved through the ORM (its page marked changed at
  commit, its generations replaced), then the index: its page counted again;
- ``after a cache flush``: ``cache.clear()``, then the index: the page table is read,
  nothing is counted again (the marks are in the database);
- ``after invalidate("article")``: every page marked changed, then the index: every
  page counted again (one grouped pass on PostgreSQL), the recount a flush cost before.

Each state is timed, best of ``--repeat``, with its queries and cache round trips
(calls on the cache backend). Ratios are against ``unchanged`` in the same run; the
``--docs`` table sets two runs (two sizes) side by side, with the ratio of the larger
to the smaller for each state. One process, sequential; on a shared machine the
milliseconds are noisy: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_CALLS = ("get", "get_many", "set", "set_many", "add", "delete", "delete_many", "touch", "incr")
_STATES = [
    ("unchanged", "index, nothing changed (served from the cache)"),
    ("one_change", "index after one saved row"),
    ("flush", "index after a cache flush"),
    ("recount", 'index after invalidate("article") (every page counted)'),
]


class _Counting:
    """Counts the outermost calls on the cache backend's class while on."""

    def __init__(self) -> None:
        from django.core.cache import caches

        self.calls = 0
        self.on = False
        self.inside = False
        backend = type(caches["default"])
        for name in _CALLS:
            setattr(backend, name, self._wrap(getattr(backend, name)))

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            if not self.on or self.inside:
                return original(*args, **kwargs)
            self.calls += 1
            self.inside = True
            try:
                return original(*args, **kwargs)
            finally:
                self.inside = False

        return counted


def measure(repeat: int) -> dict[str, Any]:
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    import django_sitemapx as sitemapx
    from django_sitemapx.models import PageState
    from example_project.articles.models import Article

    client = Client(HTTP_HOST="127.0.0.1")
    counting = _Counting()

    def index() -> None:
        response = client.get("/bench/sitemap.xml")
        assert response.status_code == 200, response.status_code
        b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]

    start = time.perf_counter()
    index()  # lays the section out if needed, and counts what is stale
    result: dict[str, Any] = {"first_index_s": time.perf_counter() - start}
    result["pages"] = PageState.objects.filter(section="article").count()
    middle = Article.objects.filter(is_published=True).order_by("pk").values_list("pk", flat=True)
    article = Article.objects.get(pk=middle[Article.objects.count() // 2])

    preparations: dict[str, Callable[[], None]] = {
        "unchanged": lambda: None,
        "one_change": article.save,
        "flush": cache.clear,
        "recount": lambda: sitemapx.invalidate("article"),
    }
    for key, prepare in preparations.items():
        best: tuple[float, int, int] | None = None
        for _ in range(repeat):
            index()  # the state before: the index stored
            prepare()
            counting.calls = 0
            with CaptureQueriesContext(connection) as queries:
                counting.on = True
                start = time.perf_counter()
                index()
                seconds = time.perf_counter() - start
                counting.on = False
            found = (seconds, len(queries.captured_queries), counting.calls)
            if best is None or found < best:
                best = found
        assert best is not None
        result[key] = {"s": best[0], "queries": best[1], "cache_calls": best[2]}
    return result


INTRO = """\
## The index at scale (`benchmarks/index_bench.py`)

The index of one model section (`/bench/sitemap.xml`, the `article` section alone) at two
sizes, through Django's test client with the cache on (PostgreSQL and Redis, as a
production site runs), best of 7 (`--repeat 7`), with the SQL queries and the calls on
the cache backend of that one request. The machine (2 cores) ran other jobs at a load
average of 11 to 13: the milliseconds are noisy (an earlier pair of runs gave 1.25 and
0.93 for the two ratios that matter, after one saved row and after a flush); the query and
call counts are exact, and the same at both sizes.

Which pages changed since they were counted is kept in the page table (each committed
save marks its page, `invalidate()` its pages), with a cache as without one: the index
reads the page table (one query, one row a page), counts again only the marked pages (one
aggregate for one page; one grouped pass for many) and stores their summaries in one
`UPDATE`; it reads no page's cache generation. A cache flush loses only documents:
no page is counted again. `invalidate("article")` marks every page: the recount a flush
cost before (one grouped `width_bucket` pass over the section's rows on PostgreSQL; a
sequential scan of all 10,000,000 rows, 1.7 s at a load of 7, 3.8 s here: not under 1 s,
which only avoiding it achieves). After one saved row, most of the time is the changed
page's aggregate over its 49,000 rows and the `UPDATE` storing it, at either size.
Reproduce: `python benchmarks/index_bench.py --database-url ... --cache-url ... --rows N
--repeat 7 --output FILE` for each size (the 10,000,000 rows take about 5 minutes to seed),
then `--docs FILE FILE` writes this section.
"""


def write_table(paths: list[Path]) -> str:
    """Two runs side by side, the larger's time ÷ the smaller's for each state (Markdown)."""
    runs = sorted((json.loads(path.read_text()) for path in paths), key=lambda r: r["rows"])
    lines = [
        "| state | "
        + " | ".join(f"{r['rows']:,} rows, {r['result']['pages']} pages" for r in runs)
        + (f" | {runs[-1]['rows']:,} ÷ {runs[0]['rows']:,}" if len(runs) > 1 else "")
        + " |",
        "|---|" + "---|" * (len(runs) + (len(runs) > 1)),
    ]
    for key, label in _STATES:
        cells = [
            f"{r['result'][key]['s'] * 1000:,.1f} ms, {r['result'][key]['queries']} queries, "
            f"{r['result'][key]['cache_calls']} cache calls"
            for r in runs
        ]
        if len(runs) > 1:
            cells.append(f"{runs[-1]['result'][key]['s'] / runs[0]['result'][key]['s']:.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    loads = "; ".join(
        f"{r['rows']:,} rows: load average {r['load_average'][0]:.1f} at the end" for r in runs
    )
    lines += ["", f"{runs[0]['database']} with {runs[0]['cache']}; {loads}."]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--docs"]:
        from benchmarks.docs import replace_section

        table = write_table([Path(arg) for arg in argv[1:]])
        replace_section(ROOT / "docs" / "performance.md", "index", INTRO + "\n" + table)
        print(table)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--cache-url", default="locmemcache://")
    parser.add_argument("--rows", type=int, default=100_000, help="Articles.")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args(argv)

    os.environ["BENCH_DATABASE_URL"] = args.database_url
    os.environ["BENCH_CACHE_URL"] = args.cache_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from benchmarks import data

    data.ensure(args.rows)
    result = measure(args.repeat)
    for key, label in _STATES:
        state = result[key]
        print(
            f"{label}: {state['s'] * 1000:,.1f} ms ({state['s'] / result['unchanged']['s']:.1f}x "
            f"unchanged), {state['queries']} queries, {state['cache_calls']} cache calls"
        )
    report = {
        "database": connection.vendor,
        "cache": settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1],
        "rows": args.rows,
        "result": result,
        "load_average": os.getloadavg(),
    }
    print(f"{result['pages']} pages; load average {report['load_average'][0]:.1f}")
    if args.output:
        args.output.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
