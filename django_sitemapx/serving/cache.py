"""Cached sitemap documents: keys, records, build locks, complete documents only.

A document's key holds everything that changes its bytes (scheme, host, section,
page, language, configuration) and a digest of the generations it depends on
(``generations``): replacing a generation makes the document stop being found.

Every backend call goes through :class:`DocumentCache`, which logs a failing
backend and lets the caller serve the document uncached. ``invalidation.invalidate()``
is the public way to mark documents stale.
"""

from __future__ import annotations

import hashlib
import math
import re
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..conf import app_settings
from ..generations import PREFIX, SitemapCache
from ..locations import Origin
from ..locations.hosts import canonical_host
from .local import LocalCopies

# Memcached refuses values over 1 MB by default; parts stay well below it.
PART_BYTES = 512 * 1024
# Bump when what a record or its parts hold changes, so old entries are ignored.
KEY_VERSION = "v1"
_SAFE_HOST = re.compile(r"[A-Za-z0-9.\-\[\]:]{1,100}")
_SAFE_PATH = re.compile(r"[A-Za-z0-9._~/\-]{1,120}")
_POLL_SECONDS = 0.02
# A build lock expires after this many SITEMAPX_CACHE_WAITs (60 s by default):
# past a build, which that wait is set above, yet soon after a builder's crash.
LOCK_WAITS = 6


def host_part(origin: Origin) -> str:
    """The origin in a key: its canonical host, readable when short and safe, else a digest.

    Spellings of one host (case, trailing dot, default port) share one key; see
    ``locations.hosts.canonical_host``.
    """
    host = canonical_host(origin.host, origin.scheme) or origin.host
    if _SAFE_HOST.fullmatch(host):
        return f"{origin.scheme}:{host}"
    return f"{origin.scheme}:{hashlib.sha256(host.encode()).hexdigest()[:32]}"


def path_part(path: str) -> str:
    """The request path in a key: as is when short and safe, else a digest."""
    if _SAFE_PATH.fullmatch(path):
        return path
    return hashlib.sha256(path.encode()).hexdigest()[:32]


def document_key(identity: Sequence[str], tokens: Sequence[str]) -> str:
    """The key of a document: its identity, then a digest of its generation tokens."""
    digest = hashlib.sha256("|".join(tokens).encode()).hexdigest()[:20]
    return ":".join([PREFIX, "doc", KEY_VERSION, *identity, digest])


class PartMissing(Exception):
    """A part of a stored document left the cache while the document was sent."""


@dataclass(frozen=True)
class Record:
    """What the cache says about a stored document: its validators and its parts."""

    etag: str
    last_modified: float | None
    parts: dict[str, int]
    # Seconds since the epoch after which the document is stale by itself (news
    # items age out); None: only invalidation makes it stale.
    expires: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """What the cache stores under the document's key."""
        return {
            "etag": self.etag,
            "last_modified": self.last_modified,
            "parts": self.parts,
            "expires": self.expires,
        }

    @classmethod
    def from_dict(cls, record: Any) -> Record | None:
        """The record stored as :meth:`as_dict`, or None for anything else."""
        try:
            return cls(
                record["etag"],
                record["last_modified"],
                dict(record["parts"]),
                record.get("expires"),
            )
        except (TypeError, KeyError, AttributeError):
            return None

    @property
    def expired(self) -> bool:
        """True once the document's own expiry has passed."""
        return self.expires is not None and self.expires <= time.time()


@dataclass(frozen=True)
class Lock:
    """The build lock of one document, held by this request."""

    key: str
    token: str


# Recently served documents kept in this process (see ``local``).
local_copies: LocalCopies[Record] = LocalCopies()


class DocumentCache(SitemapCache):
    """Documents in the cache: records, parts and build locks, failing soft as
    :class:`~django_sitemapx.generations.SitemapCache` does."""

    # -- documents ------------------------------------------------------------

    def record(self, key: str) -> Record | None:
        """The record of a complete stored document, if any."""
        local = local_copies.get(self._local_key(key))
        record = (
            local[0]
            if local is not None
            else Record.from_dict(self._call(lambda: self.backend.get(key), None))
        )
        # A backend keeps a value up to its timeout, rounded to whole seconds or
        # more: the record's own expiry is what decides.
        return None if record is None or record.expired else record

    def body(self, key: str, record: Record, variant: str) -> bytes | None:
        """The bytes of one variant of a stored document, or None if a part is gone."""
        local = local_copies.get(self._local_key(key))
        if local is not None and variant in local[1]:
            return local[1][variant]
        count = record.parts.get(variant)
        if count is None:
            return None
        names = [f"{key}:{variant}:{number}" for number in range(count)]
        parts = self._call(lambda: self.backend.get_many(names), None)
        if parts is None or len(parts) != count:
            return None
        data = b"".join(parts[name] for name in names)
        local_copies.put(self._local_key(key), record, {variant: data})
        return data

    def parts(self, key: str, record: Record, variant: str) -> Iterator[bytes]:
        """The bytes of one stored variant, part by part: memory stays flat.

        Raises ``PartMissing`` if a part is gone before it is read (evicted
        mid-response): the client must see a broken transfer, not a short document.
        """
        for number in range(record.parts.get(variant, 0)):
            name = f"{key}:{variant}:{number}"
            data = self._call(lambda name=name: self.backend.get(name), None)
            if data is None:
                raise PartMissing(f"{name} left the cache while it was being sent")
            yield data

    def _local_key(self, key: str) -> str:
        return f"{self.alias}|{key}"

    def store(self, key: str, record: Record, bodies: dict[str, bytes]) -> None:
        """Store every variant in parts, then the record that makes them visible.

        A record with an expiry is kept no longer than until then.
        """
        timeout = self._timeout(record.expires)
        if timeout == 0:
            return
        values: dict[str, bytes] = {}
        parts: dict[str, int] = {}
        for variant, data in bodies.items():
            pieces = [
                data[start : start + PART_BYTES] for start in range(0, len(data), PART_BYTES)
            ]
            parts[variant] = len(pieces)
            values.update({f"{key}:{variant}:{n}": piece for n, piece in enumerate(pieces)})
        failed = self._call(lambda: self.backend.set_many(values, timeout), None)
        if failed is None or failed:
            return
        complete = Record(record.etag, record.last_modified, parts, record.expires)
        self._call(lambda: self.backend.set(key, complete.as_dict(), timeout), None)
        if self.available:
            local_copies.put(self._local_key(key), complete, bodies)

    def part_writer(self, key: str, expires: float | None = None) -> PartWriter:
        """Stores a document being built part by part; its record comes last.

        ``expires`` is the document's own expiry: the record carries it, and
        nothing is kept past it.
        """
        return PartWriter(self, key, expires)

    @staticmethod
    def _timeout(expires: float | None) -> float | None:
        """The cache timeout of a document expiring at ``expires``: 0 if it already has."""
        timeout = app_settings.CACHE_TIMEOUT
        if expires is None:
            return timeout
        remaining = expires - time.time()
        if remaining <= 0:
            return 0
        # Whole seconds, rounded up: the record's own expiry is checked on read.
        return min(timeout, math.ceil(remaining)) if timeout else math.ceil(remaining)

    def _set(self, name: str, value: Any, timeout: float | None = None) -> bool:
        if timeout is None:
            timeout = app_settings.CACHE_TIMEOUT
        self._call(lambda: self.backend.set(name, value, timeout), None)
        return self.available

    # -- stampede protection --------------------------------------------------

    def lock(self, key: str) -> Lock | None:
        """Become the one builder of ``key``, or None if another request is."""
        token = secrets.token_hex(8)
        # Whole seconds, at least one: backends round a timeout down, and Redis
        # deletes a key added with a timeout of 0 at once (no lock at all).
        timeout = max(1, math.ceil(app_settings.CACHE_WAIT * LOCK_WAITS))
        added = self._call(lambda: self.backend.add(f"{key}:lock", token, timeout), None)
        return Lock(key, token) if added else None

    def claim(self, key: str) -> Record | Lock | None:
        """The document's record if it was stored meanwhile, else its build lock, else None.

        Reading the record again once the lock is held closes the gap where a
        builder stores and unlocks between a miss and the lock, which would
        otherwise build the document twice.
        """
        lock = self.lock(key)
        if lock is None:
            return None
        record = self.record(key)
        if record is not None:
            self.unlock(lock)
            return record
        return lock

    def unlock(self, lock: Lock) -> None:
        """Release a lock taken by :meth:`lock` (unless it expired and moved on)."""
        name = f"{lock.key}:lock"
        if self._call(lambda: self.backend.get(name), None) == lock.token:
            self._call(lambda: self.backend.delete(name), None)

    def wait(self, key: str, seconds: float) -> Record | Lock | None:
        """Wait for another builder: its record, or the lock it gave up; None after ``seconds``."""
        deadline = time.monotonic() + seconds
        while self.available:
            claimed = self.record(key) or self.claim(key)
            if claimed is not None:
                return claimed
            if time.monotonic() >= deadline:
                break
            time.sleep(_POLL_SECONDS)
        return None


class PartWriter:
    """One document's variants stored in parts as the build produces them.

    The builder holds at most one part per variant in memory, whatever the
    document's size; the record that makes the parts visible is stored last,
    by :meth:`finish`, so a reader never sees half a document.
    """

    def __init__(self, cache: DocumentCache, key: str, expires: float | None = None) -> None:
        self._cache = cache
        self._key = key
        self._expires = expires
        self._buffers: dict[str, bytearray] = {}
        self._parts: dict[str, int] = {}

    def add(self, variant: str, data: bytes) -> bool:
        """Append bytes to ``variant``; False once the cache failed (nothing will be stored)."""
        buffer = self._buffers.setdefault(variant, bytearray())
        self._parts.setdefault(variant, 0)
        buffer += data
        while len(buffer) >= PART_BYTES:
            if not self._put(variant, bytes(buffer[:PART_BYTES])):
                return False
            del buffer[:PART_BYTES]
        return self._cache.available

    def _put(self, variant: str, piece: bytes) -> bool:
        number = self._parts[variant]
        self._parts[variant] = number + 1
        timeout = self._cache._timeout(self._expires)
        if timeout == 0:  # expired while it was being built: nothing is kept
            return False
        return self._cache._set(f"{self._key}:{variant}:{number}", piece, timeout)

    def finish(self, etag: str, last_modified: float | None) -> Record | None:
        """Store the last parts, then the record; the record, or None if the cache failed."""
        for variant, buffer in self._buffers.items():
            if buffer and not self._put(variant, bytes(buffer)):
                return None
        record = Record(etag, last_modified, dict(self._parts), self._expires)
        timeout = self._cache._timeout(self._expires)
        if timeout == 0:
            return None
        return record if self._cache._set(self._key, record.as_dict(), timeout) else None
