"""Turning benchmark results into a console table, Markdown, ratios, a plot and the docs page."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

LABELS = {
    "sitemapx-cached": "django-sitemapx, cold, cache on (headline)",
    "sitemapx-flushed": "django-sitemapx, after a cache flush",
    "sitemapx": "django-sitemapx, cold (streamed, no cache)",
    "sitemapx-warm": "django-sitemapx, warm (cache)",
    "contrib": "contrib.sitemaps",
    "contrib-cache-cold": "contrib + cache_page, cold",
    "contrib-cache-warm": "contrib + cache_page, warm",
    "reference-values": "reference: values_list loop",
    "reference-cursor": "reference: raw cursor",
    "export": "sitemap_export",
}
COLUMNS = [
    "N",
    "database",
    "variant",
    "URLs",
    "seconds",
    "URLs/s",
    "first byte (ms)",
    "peak RSS (MB)",
    "queries",
    "queries/page",
    "last/first",
    "status",
]


def _number(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def rows(results: Iterable[dict[str, Any]]) -> list[list[str]]:
    """One table row per result, in run order."""
    table = []
    for r in results:
        first_byte = r.get("first_byte_seconds")
        per_page = r.get("queries_per_page") or []
        table.append(
            [
                f"{r['n']:,}",
                r["database"],
                LABELS.get(r["variant"], r["variant"]),
                _number(r.get("urls")),
                _number(r.get("seconds"), 3),
                _number(r.get("urls_per_second")),
                _number(first_byte * 1000 if first_byte is not None else None, 1),
                _number(r.get("peak_rss_mb"), 1),
                _number(r.get("queries")),
                "-"
                if not per_page
                else " to ".join(str(q) for q in sorted({per_page[0], per_page[-1]})),
                _number(r.get("last_first_ratio"), 2),
                r["status"],
            ]
        )
    return table


def text_table(results: list[dict[str, Any]]) -> str:
    """A fixed-width table for the terminal."""
    table = [COLUMNS, *rows(results)]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in table
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def markdown_table(results: list[dict[str, Any]]) -> str:
    """The same table in Markdown."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows(results)]
    return "\n".join(lines)


def _find(
    results: list[dict[str, Any]], variant: str, database: str, n: int
) -> dict[str, Any] | None:
    for r in results:
        if (r["variant"], r["database"], r["n"]) == (variant, database, n) and r["status"] == "ok":
            return r
    return None


def ratios(results: list[dict[str, Any]], http: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets, each a ratio from this run, with whether it is met."""
    out: list[dict[str, Any]] = []
    sizes = sorted({r["n"] for r in results})
    if not sizes:
        return out
    largest, smallest = sizes[-1], sizes[0]
    for database in sorted({r["database"] for r in results}):
        ours = _find(results, "sitemapx", database, largest)
        contrib = _find(results, "contrib", database, largest)
        cursor = _find(results, "reference-cursor", database, largest)
        small = _find(results, "sitemapx", database, smallest)

        def add(
            name: str, value: float | None, target: str, met: bool | None, database: str = database
        ) -> None:
            out.append(
                {
                    "database": database,
                    "n": largest,
                    "ratio": name,
                    "value": value,
                    "target": target,
                    "met": met,
                }
            )

        cached = _find(results, "sitemapx-cached", database, largest)
        flushed = _find(results, "sitemapx-flushed", database, largest)
        if cached and contrib:
            value = cached["urls_per_second"] / contrib["urls_per_second"]
            add("URLs/s, sitemapx cold with the cache on ÷ contrib", value, ">= 40", value >= 40)
        if cached and cursor:
            value = cursor["urls_per_second"] / cached["urls_per_second"]
            add(
                "URLs/s, raw cursor ÷ sitemapx cold with the cache on",
                value,
                "<= 1.5",
                value <= 1.5,
            )
        if flushed and contrib:
            value = flushed["urls_per_second"] / contrib["urls_per_second"]
            add("URLs/s, sitemapx after a flush ÷ contrib", value, ">= 30", value >= 30)
        if ours and contrib:
            value = ours["urls_per_second"] / contrib["urls_per_second"]
            add("URLs/s, sitemapx streamed ÷ contrib", value, ">= 40", value >= 40)
        if ours and cursor:
            value = cursor["urls_per_second"] / ours["urls_per_second"]
            add("URLs/s, raw cursor ÷ sitemapx streamed", value, "<= 1.5", value <= 1.5)
        sitemapx_pages = [r for r in (cached, ours) if r and r.get("documents")]
        if sitemapx_pages and contrib and contrib.get("documents"):
            value = sitemapx_pages[0]["documents"] / contrib["documents"]
            add("documents fetched, sitemapx ÷ contrib", value, "<= 1.1", value <= 1.1)
        if ours:
            add(
                "peak RSS of sitemapx (MB)",
                ours["peak_rss_mb"],
                "< 100",
                ours["peak_rss_mb"] < 100,
            )
        if ours and small and smallest != largest:
            value = ours["peak_rss_mb"] - small["peak_rss_mb"]
            add(f"peak RSS, N={largest:,} minus N={smallest:,} (MB)", value, "<= 10", value <= 10)
        if ours and ours.get("last_first_ratio") is not None:
            value = ours["last_first_ratio"]
            add("last page ÷ first page cost", value, "<= 1.2", value <= 1.2)
        pages = {
            tuple(r["queries_per_page"])
            for r in results
            if r["variant"] == "sitemapx" and r["database"] == database and r["status"] == "ok"
        }
        if pages:
            most = max(max(p) for p in pages if p)
            add(
                "most queries per page, any N",
                most,
                "constant",
                len({max(p) for p in pages if p}) == 1,
            )
        export = _find(results, "export", database, largest)
        if export:
            value = export["peak_rss_mb"]
            add("peak RSS of sitemap_export (MB)", value, "< 100", value < 100)
        warm = _find(results, "sitemapx-warm", database, largest)
        if warm and "conditional" in warm["extra"]:
            conditional = warm["extra"]["conditional"]
            add(
                "conditional request: status",
                conditional["status"],
                "304",
                conditional["status"] == 304,
            )
            add(
                "conditional request: queries",
                conditional["queries"],
                "0",
                conditional["queries"] == 0,
            )
    for h in http:
        if h.get("database") and h.get("page_rps") and h.get("trivial_rps"):
            value = h["trivial_rps"] / h["page_rps"]
            out.append(
                {
                    "database": h["database"],
                    "n": h["n"],
                    "ratio": "HTTP req/s, trivial view ÷ sitemap page",
                    "value": value,
                    "target": "<= 1.2 (cached page)",
                    "met": value <= 1.2 if h.get("cached") else None,
                }
            )
    return out


NOT_MEASURED = "not measured (--quick)"


def ratios_markdown(items: list[dict[str, Any]], measured: bool = True) -> str:
    """The targets with their verdicts; ``measured=False`` (a ``--quick`` smoke run, too
    small and too short to measure) gives none, rather than a "no" that reads as a failure."""
    lines = ["| database | N | ratio | value | target | met |", "|---|---|---|---|---|---|"]
    for item in items:
        value = item["value"]
        shown = f"{value:,.2f}" if isinstance(value, float) else str(value)
        if measured:
            met = {True: "yes", False: "**no**", None: "n/a"}[item["met"]]
        else:
            met = NOT_MEASURED
        lines.append(
            f"| {item['database']} | {item['n']:,} | {item['ratio']} | {shown} "
            f"| {item['target']} | {met} |"
        )
    return "\n".join(lines)


def http_markdown(http: list[dict[str, Any]]) -> str:
    lines = [
        "| database | N | target | requests | req/s | p50 (ms) | p99 (ms) | status |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for h in http:
        for run in h.get("runs", []):
            lines.append(
                f"| {h['database']} | {h['n']:,} | {run['label']} "
                f"| {_number(run.get('requests'))} | "
                f"{_number(run.get('rps'), 1)} | {_number(run.get('p50_ms'), 1)} | "
                f"{_number(run.get('p99_ms'), 1)} | {run.get('status', 'ok')} |"
            )
        if not h.get("runs"):
            lines.append(f"| {h['database']} | {h['n']:,} | - | - | - | - | - | {h['status']} |")
    return "\n".join(lines)


def plot(results: list[dict[str, Any]], path: Path) -> bool:
    """URLs/s and peak RSS against N, one row of charts per database; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    databases = [d for d in ("sqlite", "postgresql") if any(r["database"] == d for r in results)]
    if not databases:
        return False
    variants = [v for v in LABELS if any(r["variant"] == v for r in results)]
    colors = plt.get_cmap("tab10")
    figure, axes = plt.subplots(
        len(databases), 2, figsize=(13, 4.2 * len(databases) + 1.2), squeeze=False
    )
    for (speed, memory), database in zip(axes, databases, strict=True):
        for number, variant in enumerate(variants):
            points = sorted(
                (r["n"], r["urls_per_second"], r["peak_rss_mb"])
                for r in results
                if r["variant"] == variant and r["database"] == database and r["status"] == "ok"
            )
            if not points:
                continue
            sizes = [p[0] for p in points]
            style = {"marker": "o", "color": colors(number), "label": LABELS[variant]}
            speed.plot(sizes, [p[1] for p in points], **style)
            memory.plot(sizes, [p[2] for p in points], **style)
        speed.set(
            xscale="log",
            yscale="log",
            xlabel="rows (N)",
            ylabel="URLs per second",
            title=f"{database}: throughput (higher is better)",
        )
        memory.set(
            xscale="log",
            yscale="log",
            xlabel="rows (N)",
            ylabel="peak RSS of the process (MB)",
            title=f"{database}: peak memory (lower is better)",
        )
        for chart in (speed, memory):
            chart.grid(True, which="both", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=4, fontsize=9, frameon=False)
    figure.tight_layout(rect=(0, 1.0 / (4.2 * len(databases) + 1.2), 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return True
