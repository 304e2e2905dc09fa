"""IndexNow: tell search engines which URLs changed, outside the request that changed them.

Opt-in with ``SITEMAPX_INDEXNOW_KEY``. The flow:

1. A saved or deleted row of a registered model, or a changed override, gives the
   URLs whose sitemap entry it changes (``indexnow.handlers``): listed, or listed
   until the change, on the hosts the site serves.
2. After the transaction commits they are stored as ``PendingUrl`` rows
   (:func:`queue_urls`), and a submission task is enqueued on
   ``SITEMAPX_INDEXNOW_TASK_BACKEND`` (Django's Tasks framework).
3. The task, or ``manage.py sitemap_indexnow`` from cron, runs
   :func:`submit_pending`: per host, batches of at most 10,000 distinct URLs are
   POSTed to ``SITEMAPX_INDEXNOW_ENDPOINT``. Accepted and refused batches are
   removed; a batch the endpoint could not take (429, 5xx, no answer, after the
   retries; or a redirect, never followed) stays for the next run.

The pending rows make a submission survive a busy endpoint, a worker that is
down, or a project that has no task worker at all (cron); and the task carries
no URLs, so any backend can queue it cheaply.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from urllib.parse import urlsplit, urlunsplit

from django.db import transaction
from django.urls import NoReverseMatch, reverse

from ..conf import INDEXNOW_MAX_URLS, app_settings
from ..documents import URL_NAMESPACE
from ..locations import Origin
from ..locations.hosts import canonical_host
from ..locations.origins import scheme_for, served_hosts
from .client import Answer, Outcome, Submission

__all__ = [
    "Batch",
    "Outcome",
    "Report",
    "add_pending",
    "enqueue_submission",
    "is_enabled",
    "key_location",
    "queue_urls",
    "submit_pending",
]

logger = logging.getLogger("django_sitemapx.indexnow")

# A batch answered 429 or 5xx, or not at all, is retried RETRIES times, BACKOFF
# seconds after the first try and twice as long before each next one (or after
# the endpoint's Retry-After); each POST may take TIMEOUT seconds.
RETRIES = 3
BACKOFF = 2.0
TIMEOUT = 10.0

# Rows looked up or deleted per query (SQLite's bound-parameter limit was 999
# before 3.32).
_DELETE_CHUNK = 500


def is_enabled() -> bool:
    """True when ``SITEMAPX_INDEXNOW_KEY`` is set."""
    return bool(app_settings.INDEXNOW_KEY)


def key_location(origin: Origin) -> str:
    """The absolute URL of the key file for ``origin``: the routed view, else ``/<key>.txt``."""
    key = app_settings.INDEXNOW_KEY
    assert key
    try:
        path = reverse(f"{URL_NAMESPACE}:indexnow-key", kwargs={"key": key})
    except NoReverseMatch:  # served some other way (check W203 says so)
        path = f"/{key}.txt"
    return origin.prefix + path


def queue_urls(urls: Iterable[str]) -> None:
    """Queue absolute URLs for IndexNow once the current transaction commits.

    A URL of a host the site does not serve (``locations.origins.served_hosts``) is
    left out with a warning: IndexNow refuses a batch holding one. Nothing
    happens while IndexNow is off. Never raises: a failure is logged, since the
    change that caused it has already happened.
    """
    if not is_enabled():
        return
    urls = list(urls)
    if urls:
        transaction.on_commit(partial(_store_and_enqueue, urls), robust=True)


def _store_and_enqueue(urls: list[str]) -> None:
    if add_pending(urls):
        enqueue_submission()


def add_pending(urls: Iterable[str]) -> int:
    """Store absolute URLs as pending now (no task); returns how many were added.

    Each URL is written with its host in canonical form (lower case, no default
    port, no trailing dot): a strict endpoint refuses a whole batch holding a URL
    whose host is not the batch's. A URL of a host the site does not serve is
    left out with a warning; a URL already pending is not added again.
    """
    from ..models import PendingUrl

    hosts = {canonical_host(host) for host in served_hosts()}
    kept: dict[str, str] = {}  # url -> host
    for url in dict.fromkeys(urls):
        normal = _normal_url(url)
        if normal is not None and normal[1] in hosts:
            kept.setdefault(*normal)
        else:
            logger.warning("IndexNow: %s is not a URL of a host this site serves; left out.", url)
    candidates = list(kept)
    for start in range(0, len(candidates), _DELETE_CHUNK):
        chunk = candidates[start : start + _DELETE_CHUNK]
        for url in PendingUrl.objects.filter(url__in=chunk).values_list("url", flat=True):
            kept.pop(url, None)
    PendingUrl.objects.bulk_create(PendingUrl(url=url, host=host) for url, host in kept.items())
    return len(kept)


def _normal_url(url: str) -> tuple[str, str] | None:
    """``(url, host)`` with the host in canonical form; None for no http(s) URL of a host."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or "@" in parts.netloc:
        return None
    host = canonical_host(parts.netloc, parts.scheme)
    return urlunsplit((parts.scheme, host, parts.path or "/", parts.query, "")), host


def enqueue_submission() -> None:
    """Enqueue :func:`submit_pending` on ``SITEMAPX_INDEXNOW_TASK_BACKEND`` (None: cron's job).

    A backend that cannot take the task is logged; the URLs stay pending.
    """
    alias = app_settings.INDEXNOW_TASK_BACKEND
    if alias is None:
        return
    try:
        from .tasks import submit_pending_urls

        submit_pending_urls.using(backend=alias).enqueue()
    except Exception:
        logger.exception(
            "IndexNow: the submission task could not be enqueued on the %r task backend; "
            "the URLs stay pending for the next run (manage.py sitemap_indexnow).",
            alias,
        )


@dataclass
class Batch:
    """One batch of one host: what was (or would be) sent, and what became of it."""

    host: str
    urls: list[str]
    answer: Answer | None = None  # None in a dry run


@dataclass
class Report:
    """What one :func:`submit_pending` run did."""

    dry_run: bool = False
    batches: list[Batch] = field(default_factory=list)
    pending: int = 0  # rows left for the next run

    def count(self, outcome: Outcome) -> int:
        """URLs in batches that ended with ``outcome``."""
        return sum(len(b.urls) for b in self.batches if b.answer and b.answer.outcome == outcome)

    def as_dict(self) -> dict[str, int]:
        """The counts, JSON-ready (a task's return value)."""
        return {
            "batches": len(self.batches),
            "submitted": self.count(Outcome.SUBMITTED),
            "rejected": self.count(Outcome.REJECTED),
            "unavailable": self.count(Outcome.UNAVAILABLE),
            "pending": self.pending,
        }


def submit_pending(
    *, dry_run: bool = False, on_batch: Callable[[Batch], None] | None = None
) -> Report:
    """Submit the pending URLs queued so far, host by host, in batches of at most 10,000.

    Batches are URLs in the order they were queued, each URL once. An accepted
    (200, 202) or refused (other 4xx: logged with the reason) batch is removed;
    when the endpoint stays unavailable (429, 5xx, no answer) after
    ``RETRIES`` retries, or redirects (3xx), the run stops and the rest waits for the
    next one. ``dry_run`` reads and reports the batches; it sends and removes nothing.
    """
    from ..models import PendingUrl

    report = Report(dry_run=dry_run)
    if not is_enabled():
        return report
    submission = _submission()
    served = {canonical_host(host) for host in served_hosts()}
    last = PendingUrl.objects.order_by("-pk").values_list("pk", flat=True).first()
    if last is None:
        return report
    queued = PendingUrl.objects.filter(pk__lte=last)  # rows queued later wait for their task
    hosts = sorted(set(queued.values_list("host", flat=True)))
    for host in hosts:
        if host not in served:
            if not dry_run:
                removed, _ = queued.filter(host=host).delete()
                logger.warning(
                    "IndexNow: %s URLs of %s were dropped: the site no longer serves that host.",
                    removed,
                    host,
                )
            continue
        origin = Origin(scheme_for(None, "https"), host)
        after = 0
        while True:
            rows = list(
                queued.filter(host=host, pk__gt=after)
                .order_by("pk")
                .values_list("pk", "url")[:INDEXNOW_MAX_URLS]
            )
            if not rows:
                break
            after = rows[-1][0]
            urls = _batch_urls(host, [url for _, url in rows])
            if not urls:
                if not dry_run:
                    _delete([pk for pk, _ in rows])
                continue
            batch = Batch(host, urls)
            report.batches.append(batch)
            if not dry_run:
                batch.answer = submission.send(host, key_location(origin), batch.urls)
                _log(batch)
            if on_batch is not None:
                on_batch(batch)
            if dry_run:
                continue
            if batch.answer is not None and batch.answer.outcome == Outcome.UNAVAILABLE:
                report.pending = PendingUrl.objects.count()
                return report
            _delete([pk for pk, _ in rows])
    report.pending = PendingUrl.objects.count()
    return report


def _batch_urls(host: str, urls: list[str]) -> list[str]:
    """The URLs of one host's batch, each once, spelled as :func:`add_pending` spells them.

    A row queued before hosts were written in canonical form is corrected here;
    one whose host is not the batch's is dropped with a warning.
    """
    batch: dict[str, None] = {}
    for url in urls:
        normal = _normal_url(url)
        if normal is not None and normal[1] == host:
            batch[normal[0]] = None
        else:
            logger.warning("IndexNow: %s is not a URL of %s; dropped.", url, host)
    return list(batch)


def _submission() -> Submission:
    key = app_settings.INDEXNOW_KEY
    assert key
    return Submission(
        endpoint=app_settings.INDEXNOW_ENDPOINT,
        key=key,
        retries=RETRIES,
        backoff=BACKOFF,
        timeout=TIMEOUT,
    )


def _delete(pks: list[int]) -> None:
    from ..models import PendingUrl

    for start in range(0, len(pks), _DELETE_CHUNK):
        PendingUrl.objects.filter(pk__in=pks[start : start + _DELETE_CHUNK]).delete()


def _log(batch: Batch) -> None:
    answer = batch.answer
    assert answer is not None
    if answer.outcome == Outcome.SUBMITTED:
        logger.info(
            "IndexNow: %s URLs of %s submitted (%s).", len(batch.urls), batch.host, answer.status
        )
    elif answer.outcome == Outcome.REJECTED:
        logger.error(
            "IndexNow refused %s URLs of %s and they were given up: %s",
            len(batch.urls),
            batch.host,
            answer.reason,
        )
    else:
        logger.warning(
            "IndexNow could not take %s URLs of %s after %s attempts (%s); they stay "
            "pending for the next run.",
            len(batch.urls),
            batch.host,
            answer.attempts,
            answer.reason,
        )
