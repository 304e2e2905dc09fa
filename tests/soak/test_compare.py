"""The soak test's comparison finds every kind of wrong it counts (no server, no database)."""

from __future__ import annotations

import datetime

from tests.soak.crawl import WRONG, Answer, Crawl, compare

BASE = "http://127.0.0.1:8000"
T = datetime.datetime(2026, 1, 2, 3, 4, 5, 600_000, tzinfo=datetime.UTC)


def _crawl(pages: dict[int, list[tuple[str, str | None]]], index: dict[int, str]) -> Crawl:
    urls = {n: f"{BASE}/sitemap-article-{n}.xml" for n in index}
    index_answer = Answer(f"{BASE}/sitemap.xml", 200, entries=[(urls[n], index[n]) for n in index])
    answers = {}
    for n, url in urls.items():
        entries = pages.get(n)
        answers[url] = Answer(url, 404) if entries is None else Answer(url, 200, entries=entries)
    return Crawl(index_answer, answers)


def test_a_converged_crawl_shows_nothing_wrong() -> None:
    expected = {f"{BASE}/a/": T, f"{BASE}/b/": T - datetime.timedelta(hours=1)}
    crawl = _crawl(
        {1: [(f"{BASE}/a/", "2026-01-02T04:04:05+01:00"), (f"{BASE}/b/", "2026-01-02T02:04:05Z")]},
        {1: "2026-01-02T03:04:05+00:00"},
    )
    findings = compare(crawl, "article", expected, {1: 2})
    assert findings.wrong == 0, findings.line()
    assert findings.counts["listed"] == 2


def test_every_kind_of_wrong_is_counted() -> None:
    older = T - datetime.timedelta(days=1)
    expected = {
        f"{BASE}/kept/": T,
        f"{BASE}/stale/": T,
        f"{BASE}/lost/": T,
        f"{BASE}/twice/": older,
    }
    crawl = _crawl(
        {
            1: [
                (f"{BASE}/kept/", T.replace(microsecond=0).isoformat()),
                (f"{BASE}/twice/", older.replace(microsecond=0).isoformat()),
            ],
            2: [
                (f"{BASE}/stale/", older.replace(microsecond=0).isoformat()),
                (f"{BASE}/gone/", T.replace(microsecond=0).isoformat()),
                (f"{BASE}/twice/", older.replace(microsecond=0).isoformat()),
            ],
            3: [],
        },
        {
            1: older.replace(microsecond=0).isoformat(),
            2: T.replace(microsecond=0).isoformat(),
            3: T.replace(microsecond=0).isoformat(),
            4: T.replace(microsecond=0).isoformat(),
        },
    )
    crawl.pages[f"{BASE}/sitemap-article-2.xml"].headers["Last-Modified"] = (
        "Thu, 01 Jan 2026 03:04:05 GMT"
    )
    findings = compare(crawl, "article", expected, {1: 2, 2: 2})
    assert findings.counts["missing"] == 1  # lost
    assert findings.counts["extra"] == 1  # gone
    assert findings.counts["duplicated"] == 1  # twice
    assert findings.counts["stale lastmods"] == 1  # stale
    assert findings.counts["stale index lastmods"] == 1  # page 1 says older, holds kept
    assert findings.counts["stale Last-Modified"] == 1  # page 2
    assert findings.counts["empty pages in the index"] == 2  # page 3 empty, page 4 a 404
    assert findings.counts["stale page counts"] == 1  # page 2 lists 3, the table says 2
    assert findings.wrong == sum(findings.counts[kind] for kind in WRONG) == 9
