"""Audit the sitemap as a search engine would: ask the site for every URL it lists.

Search Console's page-indexing report flags the URLs a sitemap should not list:
not found, redirected, marked ``noindex``, blocked by robots.txt, or naming
another URL as canonical. :func:`audit_sitemap` finds them before it does, with
no network: each URL is rendered by Django in this process (see ``fetch``), as
a crawler's GET for the URL's host, and nothing it writes to the database is
kept. ``manage.py sitemap_audit`` is a thin shell around it; ``tasks`` runs it
as a task of Django's Tasks framework and keeps the report for the admin.
"""

from __future__ import annotations

import datetime
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urldefrag, urlsplit

from django.db import connections

from ..conf import app_settings
from ..documents import page_entries
from ..locations import Origin
from ..locations.origins import served_origins
from ..registry import SitemapRegistry, default_registry
from .fetch import (
    DEFAULT_ROBOTS_TOKEN,
    DEFAULT_USER_AGENT,
    Answer,
    RateLimit,
    RobotsRules,
    answer,
    rolled_back,
)
from .report import AuditReport, Finding, Kind, last_report, store_report

__all__ = [
    "AuditReport",
    "Finding",
    "Kind",
    "ListedUrl",
    "audit_sitemap",
    "last_report",
    "listed_urls",
    "store_report",
]

# (URLs done, URLs to do): called after each request.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ListedUrl:
    """One ``<loc>`` of the sitemap, the section listing it, and its hreflang alternates."""

    url: str
    section: str
    alternates: tuple[tuple[str, str], ...] = ()
    # Whether it carries image, video or news elements: an image sitemap beside the
    # pages' lists the same URLs on purpose.
    extended: bool = False


def listed_urls(registry: SitemapRegistry, origin: Origin) -> list[ListedUrl]:
    """Every URL the sitemap lists on ``origin``, as its documents do (overrides applied)."""
    listed: list[ListedUrl] = []
    with rolled_back():  # counting pages may store them: the audit keeps nothing
        for source in registry.for_origin(origin):
            bound = source.origin or origin
            for summary in source.page_summaries():
                page = source.page_at(summary.number, bound)
                if page is None:
                    continue
                for loc, _lastmod, _changefreq, _priority, extras in page_entries(
                    source, page, bound, Counter()
                ):
                    if extras is None:
                        listed.append(ListedUrl(loc, source.section))
                        continue
                    extended = bool(extras.images or extras.videos or extras.news)
                    listed.append(
                        ListedUrl(loc, source.section, tuple(extras.alternates), extended)
                    )
    return listed


def audit_sitemap(
    registry: SitemapRegistry | None = None,
    *,
    origins: Sequence[Origin] | None = None,
    sections: Iterable[str] = (),
    sample: int | None = None,
    seed: int | None = None,
    concurrency: int = 1,
    rate: float | None = None,
    user_agent: str = DEFAULT_USER_AGENT,
    robots_token: str = DEFAULT_ROBOTS_TOKEN,
    progress: Progress | None = None,
) -> AuditReport:
    """Ask the site for the URLs its sitemap lists and report what a search engine would flag.

    ``origins`` are the hosts audited (default: every served host, see
    ``locations.origins.served_origins``); ``sections`` limits the URLs asked
    for to those sections (every section is still read, to know what is
    listed); ``sample`` asks for that many URLs drawn at random (``seed`` makes
    the draw repeatable). At most ``concurrency`` requests run at once, at most
    ``rate`` a second. Raises ``ValueError`` for an unknown section.
    """
    registry = registry or default_registry
    wanted = set(sections)
    unknown = wanted - set(registry.sections)
    if unknown:
        raise ValueError(f"No sitemap section is named {', '.join(sorted(unknown))}.")
    if origins is None:
        origins = served_origins(app_settings.PROTOCOL)
    report = AuditReport(started=_now(), hosts=[origin.host for origin in origins])

    everything: list[ListedUrl] = []
    for origin in origins:
        listed = listed_urls(registry, origin)
        report.findings.extend(_duplicates(listed, wanted))
        everything.extend(listed)
    all_locs = {_plain(item.url) for item in everything}
    candidates: dict[str, ListedUrl] = {}
    for item in everything:
        if not wanted or item.section in wanted:
            candidates.setdefault(item.url, item)
    chosen = list(candidates.values())
    if sample is not None and sample < len(chosen):
        chosen = random.Random(seed).sample(chosen, sample)
    for item in chosen:
        report.checked[item.section] = report.checked.get(item.section, 0) + 1

    robots = {
        prefix: RobotsRules(prefix, user_agent) for prefix in {_prefix(i.url) for i in chosen}
    }
    asked = [item.url for item in chosen]
    asked_set = set(asked)
    asked += list(
        dict.fromkeys(
            href for item in chosen for _lang, href in item.alternates if href not in asked_set
        )
    )
    answers = _ask(asked, concurrency, rate, user_agent, progress)

    for item in chosen:
        report.findings.extend(
            _findings(item, answers, all_locs, robots[_prefix(item.url)], robots_token)
        )
    report.finished = _now()
    return report


def _duplicates(listed: list[ListedUrl], wanted: set[str]) -> list[Finding]:
    """A URL listed again in another section, unless one listing carries its extensions."""
    first: dict[str, ListedUrl] = {}
    found = []
    for item in listed:
        earlier = first.setdefault(item.url, item)
        if (
            earlier.section != item.section
            and not (earlier.extended or item.extended)
            and (not wanted or item.section in wanted)
        ):
            found.append(Finding(Kind.DUPLICATE, item.section, item.url, detail=earlier.section))
    return found


def _findings(
    item: ListedUrl,
    answers: dict[str, Answer | None],
    listed: set[str],
    robots: RobotsRules,
    token: str,
) -> list[Finding]:
    found: list[Finding] = []
    got = answers[item.url]
    if got is None:
        return [Finding(Kind.STATUS, item.section, item.url, detail="the view raised an error")]
    if 300 <= got.status < 400:
        found.append(
            Finding(
                Kind.REDIRECT,
                item.section,
                item.url,
                got.status,
                got.location,
                _plain(got.location) in listed if got.location else None,
            )
        )
    elif got.status != 200:
        found.append(Finding(Kind.STATUS, item.section, item.url, got.status))
    if got.noindex:
        found.append(Finding(Kind.NOINDEX, item.section, item.url, got.status, detail=got.noindex))
    if got.canonical and _plain(got.canonical) != _plain(item.url):
        found.append(
            Finding(
                Kind.CANONICAL,
                item.section,
                item.url,
                got.status,
                got.canonical,
                _plain(got.canonical) in listed,
            )
        )
    if not robots.allows(item.url, token):
        found.append(
            Finding(
                Kind.ROBOTS, item.section, item.url, detail=f"{robots.url}, User-agent: {token}"
            )
        )
    for hreflang, href in item.alternates:
        if href == item.url:  # its own language version: reported above if it fails
            continue
        alternate = answers.get(href)
        status = None if alternate is None else alternate.status
        if status != 200:
            found.append(
                Finding(
                    Kind.ALTERNATE,
                    item.section,
                    item.url,
                    status,
                    href,
                    _plain(href) in listed,
                    detail=f"hreflang={hreflang}",
                )
            )
    return found


def _ask(
    urls: list[str],
    concurrency: int,
    rate: float | None,
    user_agent: str,
    progress: Progress | None,
) -> dict[str, Answer | None]:
    limit = RateLimit(rate)
    answers: dict[str, Answer | None] = {}
    done = 0
    lock = threading.Lock()

    def one(url: str, worker: bool) -> None:
        nonlocal done
        limit.wait()
        try:
            got: Answer | None = answer(url, user_agent)
        except Exception:
            got = None
        finally:
            if worker:  # a worker thread's connections end with its request
                connections.close_all()
        with lock:
            answers[url] = got
            done += 1
            if progress is not None:
                progress(done, len(urls))

    if concurrency <= 1:
        for url in urls:
            one(url, worker=False)
    else:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(lambda url: one(url, worker=True), urls))
    return answers


def _plain(url: str) -> str:
    return urldefrag(url)[0]


def _prefix(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
