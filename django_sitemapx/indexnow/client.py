"""One IndexNow submission: a JSON POST, retried with backoff on 429, 5xx or no answer.

The protocol (indexnow.org/documentation): ``POST`` JSON ``{"host", "key",
"keyLocation", "urlList"}`` with at most 10,000 URLs, all of that host. 200 and
202 (key validation pending) mean received; 400 (bad format), 403 (key not
valid), 422 (URLs not of the host, or a key not matching the protocol) will not
change on a retry; 429 (too many requests) and 5xx will.

Redirects are never followed: an endpoint answering 3xx is misconfigured (or
not the endpoint), and following it would send the batch, or a ``GET`` in its
place, wherever the ``Location`` points. The batch is kept and the answer logged.
"""

from __future__ import annotations

import enum
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..conf import INDEXNOW_MAX_URLS

logger = logging.getLogger("django_sitemapx.indexnow")

# A Retry-After longer than this is not waited for: the batch stays pending.
MAX_RETRY_AFTER = 60.0
# Bytes of an error response kept for the log.
REASON_BYTES = 500

USER_AGENT = "django-sitemapx (IndexNow)"


class Outcome(enum.StrEnum):
    """What became of one batch."""

    SUBMITTED = "submitted"  # 200 or 202: the search engine has the URLs
    REJECTED = "rejected"  # another 4xx: retrying would not help; given up
    # 429, 5xx or no answer after every retry, or a redirect (3xx, not followed
    # and not retried): left pending
    UNAVAILABLE = "unavailable"


@dataclass(frozen=True)
class Answer:
    """The last answer to one batch."""

    outcome: Outcome
    status: int | None
    reason: str
    attempts: int


@dataclass(frozen=True)
class Submission:
    """One POST's settings; :meth:`send` submits one batch of one host."""

    endpoint: str
    key: str
    retries: int
    backoff: float
    timeout: float
    sleep: Callable[[float], None] = time.sleep

    def payload(self, host: str, key_location: str, urls: Sequence[str]) -> bytes:
        """The JSON body: at most 10,000 URLs, duplicates removed, order kept."""
        unique = list(dict.fromkeys(urls))
        if len(unique) > INDEXNOW_MAX_URLS:
            raise ValueError(f"An IndexNow batch holds at most {INDEXNOW_MAX_URLS} URLs.")
        body = {"host": host, "key": self.key, "keyLocation": key_location, "urlList": unique}
        return json.dumps(body).encode()

    def send(self, host: str, key_location: str, urls: Sequence[str]) -> Answer:
        """POST one batch, retrying 429, 5xx and network failures with exponential backoff."""
        data = self.payload(host, key_location, urls)
        attempt = 0
        while True:
            attempt += 1
            status, reason, retry_after = self._post(data)
            if status is not None and 200 <= status < 300:
                return Answer(Outcome.SUBMITTED, status, reason, attempt)
            if status is not None and 300 <= status < 400:
                # Retrying would be redirected again: the batch waits for a fixed endpoint.
                return Answer(Outcome.UNAVAILABLE, status, reason, attempt)
            if status is not None and status != 429 and status < 500:
                return Answer(Outcome.REJECTED, status, reason, attempt)
            wait = self.backoff * 2 ** (attempt - 1) if retry_after is None else retry_after
            if attempt > self.retries or wait > MAX_RETRY_AFTER:
                return Answer(Outcome.UNAVAILABLE, status, reason, attempt)
            logger.info(
                "IndexNow answered %s for %s; retry %s of %s in %.1f s",
                status or reason,
                host,
                attempt,
                self.retries,
                wait,
            )
            self.sleep(wait)

    def _post(self, data: bytes) -> tuple[int | None, str, float | None]:
        """(status, reason, Retry-After seconds); status None when nothing answered."""
        request = urllib.request.Request(
            self.endpoint,
            data=data,
            method="POST",
            headers={"Content-Type": "application/json; charset=utf-8", "User-Agent": USER_AGENT},
        )
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                return response.status, _text(response.read(REASON_BYTES)), None
        except urllib.error.HTTPError as error:
            with error:
                body = _text(error.read(REASON_BYTES))
                reason = f"{error.code} {error.reason}: {body}" if body else str(error)
                if 300 <= error.code < 400:
                    location = error.headers.get("Location", "")[:REASON_BYTES]
                    reason = (
                        f"{error.code} {error.reason}: redirected to {location!r}, not "
                        "followed (check SITEMAPX_INDEXNOW_ENDPOINT)"
                    )
                return error.code, reason, _retry_after(error.headers.get("Retry-After"))
        except (urllib.error.URLError, OSError) as error:  # refused, timed out, DNS
            return None, str(getattr(error, "reason", error)), None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Hands a 3xx back as an ``HTTPError`` instead of following it."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# Like urlopen()'s default opener, without following redirects.
_OPENER = urllib.request.build_opener(_NoRedirect)


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace").strip()


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (an HTTP date is read as no hint)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
