"""One URL asked of the site itself, in process, as a crawler asks for it.

No network: the request goes through Django's handler, with the URL's host and
scheme and a crawler's User-Agent, and whatever the view writes to the database
is rolled back. Django's test ``Client`` is the in-process handler used here: it
makes the request a server would (``HTTP_HOST``, ``wsgi.url_scheme``) and leaves
the database connections open between requests, as a transaction needs.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

from django.db import connections, transaction
from django.http import HttpResponseBase
from django.test import Client
from django.utils import translation

# Googlebot's own User-Agent, and the token its robots.txt rules are matched by.
DEFAULT_USER_AGENT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
DEFAULT_ROBOTS_TOKEN = "Googlebot"
# Search engines read the first megabytes of a page (Google: 15 MB); the head is enough here.
MAX_BODY_BYTES = 2 * 1024 * 1024
# <meta name=...> values a crawler obeys: every crawler's, and Google's own.
ROBOTS_META_NAMES = frozenset({"robots", "googlebot"})


@dataclass(frozen=True)
class Answer:
    """What the site answered for one URL, as far as the audit needs it."""

    status: int
    location: str = ""
    noindex: str = ""  # where noindex was seen ("X-Robots-Tag", "<meta name=robots>"), or ""
    canonical: str = ""  # the absolute canonical URL, or ""


@contextlib.contextmanager
def rolled_back() -> Iterator[None]:
    """Run the block in a transaction of every database, rolled back at its end."""
    with contextlib.ExitStack() as stack:
        for alias in connections:
            stack.enter_context(transaction.atomic(using=alias))
        try:
            yield
        finally:
            for alias in connections:
                transaction.set_rollback(True, using=alias)


class RateLimit:
    """At most ``rate`` requests a second over every thread (None: no limit)."""

    def __init__(self, rate: float | None) -> None:
        self._interval = 1.0 / rate if rate else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Sleep until the next request may start."""
        if not self._interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._interval
        if start > now:
            time.sleep(start - now)


def get(url: str, user_agent: str = DEFAULT_USER_AGENT) -> tuple[HttpResponseBase, bytes]:
    """The response to a GET of the absolute ``url``, and the start of its body.

    Cookies are never kept from one request to the next: a crawler sends none.
    """
    parts = urlsplit(url)
    client = Client(raise_request_exception=False, HTTP_USER_AGENT=user_agent)
    # LocaleMiddleware activates the URL's language in this thread and leaves it so:
    # the next reverse() of the audit must not be made in it.
    with translation.override(translation.get_language()), rolled_back():
        response = client.get(
            parts.path or "/",
            QUERY_STRING=parts.query,
            headers={"host": parts.netloc},
            secure=parts.scheme == "https",
        )
        # The client has closed a response already (a streaming one once read to
        # its end), keeping the connections open: closing it here would close them.
        body = _read(response)
    return response, body


def _read(response: HttpResponseBase) -> bytes:
    if not getattr(response, "streaming", False):
        content: bytes = response.content  # type: ignore[attr-defined]
        return content[:MAX_BODY_BYTES]
    data = bytearray()
    for chunk in response.streaming_content:  # type: ignore[attr-defined]
        # Read to the end, so the response is closed; keep only the start.
        if len(data) < MAX_BODY_BYTES:
            data += chunk
    return bytes(data[:MAX_BODY_BYTES])


def answer(url: str, user_agent: str = DEFAULT_USER_AGENT) -> Answer:
    """Ask the site for ``url`` and read what an indexer reads of the answer."""
    response, body = get(url, user_agent)
    location = response.headers.get("Location", "")
    noindex = ""
    if header_noindex(response.headers.get("X-Robots-Tag", "")):
        noindex = "X-Robots-Tag"
    canonical = ""
    if response.headers.get("Content-Type", "").startswith(("text/html", "application/xhtml")):
        head = HeadReader()
        head.feed(body.decode(getattr(response, "charset", None) or "utf-8", "replace"))
        head.close()
        if not noindex and head.noindex:
            noindex = f'<meta name="{head.noindex}">'
        canonical = urljoin(url, head.canonical) if head.canonical else ""
    return Answer(
        status=response.status_code,
        location=urljoin(url, location) if location else "",
        noindex=noindex,
        canonical=canonical,
    )


def header_noindex(value: str) -> bool:
    """Whether an ``X-Robots-Tag`` value says noindex (``noindex``, ``none``, ``bot: noindex``).

    Several headers arrive joined by commas. A directive may name the crawler it
    is for (``googlebot: noindex``); any such one counts, as the audit cannot know
    which crawlers matter to the site.
    """
    for part in value.lower().split(","):
        directive = part.rpartition(":")[2].strip()
        if directive in {"noindex", "none"}:
            return True
    return False


class HeadReader(HTMLParser):
    """Reads a page's robots ``<meta>`` and its ``<link rel="canonical">``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.noindex = ""
        self.canonical = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "meta":
            name = values.get("name", "").strip().lower()
            content = values.get("content", "").lower()
            if name in ROBOTS_META_NAMES and not self.noindex and header_noindex(content):
                self.noindex = name
        elif (
            tag == "link"
            and not self.canonical
            and "canonical" in values.get("rel", "").lower().split()
        ):
            self.canonical = values.get("href", "").strip()

    handle_startendtag = handle_starttag


class RobotsRules:
    """The robots.txt a host serves, read by ``urllib.robotparser``.

    As RFC 9309 says: a robots.txt that is not found (4xx) allows everything,
    one that fails (5xx) disallows everything.
    """

    def __init__(self, origin_prefix: str, user_agent: str = DEFAULT_USER_AGENT) -> None:
        self.url = f"{origin_prefix}/robots.txt"
        self.parser = RobotFileParser(self.url)
        response, body = get(self.url, user_agent)
        self.status = response.status_code
        if 200 <= self.status < 300:
            lines = body.decode("utf-8", "replace").splitlines()
        elif self.status >= 500:
            lines = ["User-agent: *", "Disallow: /"]
        else:
            lines = []  # no rule: everything allowed
        self.parser.parse(lines)

    def allows(self, url: str, token: str = DEFAULT_ROBOTS_TOKEN) -> bool:
        """Whether the crawler ``token`` names may fetch ``url``."""
        return self.parser.can_fetch(token, url)
