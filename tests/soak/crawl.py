"""Crawling a served sitemap over HTTP, and comparing a crawl with the database.

No Django here: the crawlers are plain processes reading the site as a search
engine does (``urllib``, one connection per request), and the comparison is
given what the database holds by the test.
"""

from __future__ import annotations

import contextlib
import datetime
import http.client
import random
import re
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

from lxml import etree

NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
PAGE_PATH = re.compile(r"/sitemap-(?P<section>.+)-(?P<number>[0-9]+)\.xml$")
TIMEOUT = 60

# What a crawl may find wrong with one answer.
NOT_200 = "non-200"  # a 5xx (or any status but 200 and 404)
TRUNCATED = "truncated"  # a 200 whose body stops before the document ends
CONNECTION = "connection"  # no HTTP answer at all (reset, closed, timed out)


@dataclass
class Answer:
    """One request's outcome; ``failure`` is empty when it is a whole 200 or a 404."""

    url: str
    status: int = 0  # 0: no status line came
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    started: float = 0.0
    ended: float = 0.0
    failure: str = ""
    detail: str = ""
    # The parsed document of a whole 200: (loc, lastmod) per <url> or <sitemap>.
    entries: list[tuple[str, str | None]] = field(default_factory=list)


def fetch(url: str) -> Answer:
    """GET ``url``, read the whole body and parse it; every failure caught and named."""
    answer = Answer(url, started=time.monotonic())
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as response:
            answer.status = response.status
            answer.headers = dict(response.headers)
            answer.body = response.read()
    except urllib.error.HTTPError as error:
        answer.status = error.code
        answer.headers = dict(error.headers)
        with contextlib.suppress(http.client.HTTPException, OSError):
            answer.body = error.read()
    except http.client.IncompleteRead as error:
        answer.failure = TRUNCATED
        answer.detail = f"{len(error.partial)} bytes, then the connection closed"
    except (http.client.HTTPException, OSError) as error:
        answer.failure = TRUNCATED if answer.status else CONNECTION
        answer.detail = f"{type(error).__name__}: {error}"
    answer.ended = time.monotonic()
    if answer.failure:
        return answer
    if answer.status == 200:
        try:
            answer.entries = parse(answer.body)
        except etree.XMLSyntaxError as error:
            answer.failure = TRUNCATED
            answer.detail = f"{len(answer.body)} bytes: {error}"
    elif answer.status != 404:
        answer.failure = NOT_200
        answer.detail = f"HTTP {answer.status}"
    return answer


def parse(body: bytes) -> list[tuple[str, str | None]]:
    """The ``(loc, lastmod)`` of every ``<url>`` or ``<sitemap>`` of a whole document."""
    root = etree.fromstring(body)
    if root.tag not in (f"{NS}urlset", f"{NS}sitemapindex"):
        raise etree.XMLSyntaxError(f"unexpected root {root.tag}", None, 0, 0, None)
    entries = []
    for element in root:
        loc = element.findtext(f"{NS}loc")
        if loc is None:
            raise etree.XMLSyntaxError("an entry without <loc>", None, 0, 0, None)
        entries.append((loc, element.findtext(f"{NS}lastmod")))
    return entries


@dataclass
class Crawl:
    """The index and every page it lists, read one after the other."""

    index: Answer
    pages: dict[str, Answer]

    def answers(self) -> list[Answer]:
        return [self.index, *self.pages.values()]


def crawl(base: str, shuffle: random.Random | None = None, pages: int | None = None) -> Crawl:
    """Read ``base``'s ``/sitemap.xml`` and every page it lists (shuffled with ``shuffle``).

    ``pages``: read only the first that many of them (after shuffling).
    """
    index = fetch(f"{base}/sitemap.xml")
    locations = list(dict.fromkeys(loc for loc, _ in index.entries))
    if shuffle is not None:
        shuffle.shuffle(locations)
    locations = locations[:pages]
    return Crawl(index, {loc: fetch(loc) for loc in locations})


def moment(text: str | None) -> datetime.datetime | None:
    """A W3C Datetime (or an HTTP date) as an aware datetime, to the second."""
    if text is None:
        return None
    if "," in text:
        return parsedate_to_datetime(text)
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def second(value: datetime.datetime | None) -> datetime.datetime | None:
    return None if value is None else value.replace(microsecond=0)


# The kinds of wrong a converged sitemap may show, in the order they are printed.
WRONG = (
    "missing",
    "extra",
    "duplicated",
    "stale lastmods",
    "stale index lastmods",
    "stale Last-Modified",
    "empty pages in the index",
    "stale page counts",
)


@dataclass
class Findings:
    """What a crawl of one section shows against the database: counts and a few examples."""

    section: str
    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, example: str) -> None:
        self.counts[kind] += 1
        shown = self.examples.setdefault(kind, [])
        if len(shown) < 5:
            shown.append(example)

    @property
    def wrong(self) -> int:
        return sum(self.counts[kind] for kind in WRONG)

    def line(self) -> str:
        parts = [f"expected {self.counts['expected']}", f"listed {self.counts['listed']}"]
        parts += [f"{kind} {self.counts[kind]}" for kind in WRONG]
        return f"{self.section}: " + ", ".join(parts)


def compare(
    crawl: Crawl,
    section: str,
    expected: Mapping[str, datetime.datetime | None],
    page_counts: Mapping[int, int] | None = None,
) -> Findings:
    """Compare ``section``'s pages in ``crawl`` with ``expected`` (loc to lastmod, from the rows).

    ``page_counts`` maps a page number to the row count the page table holds for
    it (None: not checked). Lastmods compare to the second, as they are written.
    """
    findings = Findings(section)
    findings.counts["expected"] = len(expected)
    seen: Counter[str] = Counter()
    for page_url, index_lastmod in crawl.index.entries:
        match = PAGE_PATH.search(page_url)
        if match is None or match["section"] != section:
            continue
        page = crawl.pages[page_url]
        number = int(match["number"])
        if page.status != 200 or page.failure or not page.entries:
            findings.add("empty pages in the index", f"{page_url}: HTTP {page.status}")
            continue
        latest: datetime.datetime | None = None
        for loc, lastmod in page.entries:
            seen[loc] += 1
            if loc not in expected:
                continue
            want = second(expected[loc])
            if want is not None:
                latest = want if latest is None else max(latest, want)
                if moment(lastmod) != want:
                    findings.add(
                        "stale lastmods", f"{loc} on {page_url}: {lastmod}, rows say {want}"
                    )
        if latest is not None:
            if moment(index_lastmod) != latest:
                findings.add(
                    "stale index lastmods",
                    f"{page_url}: the index says {index_lastmod}, its rows {latest.isoformat()}",
                )
            header = page.headers.get("Last-Modified")
            if header is not None and moment(header) != latest:
                findings.add(
                    "stale Last-Modified",
                    f"{page_url}: Last-Modified {header}, its rows {latest.isoformat()}",
                )
        if page_counts is not None and page_counts.get(number) != len(page.entries):
            findings.add(
                "stale page counts",
                f"{page_url}: {len(page.entries)} URLs, the page table counts "
                f"{page_counts.get(number)}",
            )
    findings.counts["listed"] = sum(seen.values())
    for loc in expected:
        if loc not in seen:
            findings.add("missing", loc)
    for loc, times in seen.items():
        if loc not in expected:
            findings.add("extra", loc)
        if times > 1:
            findings.add("duplicated", f"{loc} ({times} times)")
    return findings
