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
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.core.cache import BaseCache
from django.core.cache.backends.memcached import BaseMemcachedCache
from django.core.cache.backends.redis import RedisCache

from ..conf import app_settings
from ..generations import PREFIX, SitemapCache, logger, new_token
from ..locations import Origin
from ..locations.hosts import canonical_host
from ..skips import Skips, record_skips
from .background import store_thread
from .local import LocalCopies

# Memcached refuses values over 1 MB by default; parts stay well below it.
PART_BYTES = 512 * 1024
# Bump when what a record or its parts hold changes, so old entries are ignored.
KEY_VERSION = "v2"
_SAFE_HOST = re.compile(r"[A-Za-z0-9.\-\[\]:]{1,100}")
_SAFE_PATH = re.compile(r"[A-Za-z0-9._~/\-]{1,120}")
_POLL_SECONDS = 0.02
# A build lock or slot expires after this many SITEMAPX_CACHE_WAITs (60 s by
# default): past a build, which that wait is set above, yet soon after a
# builder's crash.
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
    """The build lock of one document (or a build slot), held by this request.

    ``taken`` is when it was asked for (``time.monotonic()``, before the
    ``add()``) and ``timeout`` the seconds it was added for: see :meth:`surely_held`.
    """

    key: str
    token: str
    taken: float | None = field(default=None, compare=False)
    timeout: float = field(default=0, compare=False)

    def surely_held(self) -> bool:
        """Whether the key cannot have expired yet, so it still holds this request's token.

        Memcached counts expiry in whole seconds (a key may go up to a second
        early): ``RELEASE_MARGIN`` seconds are kept in hand. Past them, or for a
        lock of unknown age, releasing reads the key first.
        """
        return self.taken is not None and time.monotonic() - self.taken < (
            self.timeout - RELEASE_MARGIN
        )


# Seconds before a lock's expiry after which releasing it reads its token first.
RELEASE_MARGIN = 2


# The build slot taken where builds are not bounded: it holds no key.
FREE_SLOT = Lock("", "")

# Recently served documents kept in this process (see ``local``).
local_copies: LocalCopies[Record] = LocalCopies()

# A record's part count for a variant held in the record's own entry.
INLINE = 0

# Backends whose stores run on the store thread (``background``): network caches,
# whose clients each thread has its own of. A database cache's connection and a
# local or file cache's work belong in the request.
DEFERRING = (RedisCache, BaseMemcachedCache)


def part_bytes(backend: BaseCache) -> int | None:
    """The most bytes one entry of ``backend`` holds, or None: a document is one entry.

    ``SITEMAPX_CACHE_PART_BYTES`` when set (0: no limit); else ``PART_BYTES`` for
    Memcached (1 MB items), and no limit for the other built-in backends.
    """
    setting = app_settings.CACHE_PART_BYTES
    if setting is not None:
        return setting or None
    return PART_BYTES if isinstance(backend, BaseMemcachedCache) else None


class DocumentCache(SitemapCache):
    """Documents in the cache: records, parts and build locks, failing soft as
    :class:`~django_sitemapx.generations.SitemapCache` does.

    Where the backend holds values of any size, a document is one entry: its
    record and both variants, so a culling backend (Django's defaults keep 300
    entries) drops whole documents, never a part of one. On Memcached the
    variants are stored in parts beside the record.
    """

    def __init__(self, alias: str | None = None) -> None:
        super().__init__(alias)
        # Bodies read with a record in one entry, for this request only.
        self._bodies: dict[str, dict[str, bytes]] = {}

    @property
    def part_bytes(self) -> int | None:
        """The most bytes of one stored part; None when a document is one entry."""
        return part_bytes(self.backend) if self._cache is not None else None

    # -- generations ------------------------------------------------------------

    def current(self, names: Sequence[str]) -> list[str | None] | None:
        """The token of each generation, None for one that does not exist; None if down.

        It creates nothing: a document is never stored under a generation that
        does not exist yet, so a missing one means a miss (``create()`` makes it).
        """
        found = self._call(lambda: self.backend.get_many(names), None)
        if found is None:
            return None
        return [None if name not in found else str(found[name]) for name in names]

    def create(
        self, names: Sequence[str], current: Sequence[str | None]
    ) -> tuple[list[str], bool] | None:
        """The tokens of ``names``, creating those ``current`` lacks; None if the cache failed.

        The flag says whether no token moved since ``current`` was read: the
        existing ones are unchanged and every missing one is this call's own.
        A token that does not stay (a cache keeping nothing) switches the cache off.
        """
        own: dict[str, str] = {}
        for name, token in zip(names, current, strict=True):
            if token is None:
                fresh = new_token()
                # add() keeps whichever token another process created first.
                if self._call(
                    lambda name=name, fresh=fresh: self.backend.add(name, fresh, None), None
                ):
                    own[name] = fresh
        found = self.current(names)
        if found is None or None in found:
            if self.available:
                logger.warning("The sitemap cache %r does not keep keys.", self.alias)
            self.available = False
            return None
        tokens = [str(token) for token in found]
        unmoved = all(
            token == (before if before is not None else own.get(name))
            for name, token, before in zip(names, tokens, current, strict=True)
        )
        return tokens, unmoved

    # -- documents ------------------------------------------------------------

    def record(self, key: str) -> Record | None:
        """The record of a complete stored document, if any."""
        local = local_copies.get(self._local_key(key))
        if local is not None:
            record: Record | None = local[0]
        else:
            entry = self._call(lambda: self.backend.get(key), None)
            record = Record.from_dict(entry)
            if record is not None:
                bodies = entry.get("bodies")
                if isinstance(bodies, dict):
                    self._bodies[key] = bodies
        # A backend keeps a value up to its timeout, rounded to whole seconds or
        # more: the record's own expiry is what decides.
        return None if record is None or record.expired else record

    def body(self, key: str, record: Record, variant: str) -> bytes | None:
        """All the bytes of one variant of a stored document, or None if any is gone.

        Every part is read before this returns, so a response made from it is
        whole: a part evicted meanwhile is a miss, never a short document.
        """
        inline = self._bodies.get(key)
        if inline is not None and variant in inline:
            # Read from the shared cache with the record: kept here too, so the
            # next hit in this process fetches and unpickles nothing.
            local_copies.put(self._local_key(key), record, {variant: inline[variant]})
            return inline[variant]
        local = local_copies.get(self._local_key(key))
        if local is not None and variant in local[1]:
            return local[1][variant]
        count = record.parts.get(variant)
        if count is None:
            return None
        if count == INLINE:
            entry = self._call(lambda: self.backend.get(key), None)
            if Record.from_dict(entry) != record or not isinstance(entry.get("bodies"), dict):
                return None
            data = entry["bodies"].get(variant)
            if not isinstance(data, bytes):
                return None
        else:
            names = [f"{key}:{variant}:{number}" for number in range(count)]
            parts = self._call(lambda: self.backend.get_many(names), None)
            if parts is None or len(parts) != count:
                return None
            data = b"".join(parts[name] for name in names)
        local_copies.put(self._local_key(key), record, {variant: data})
        return data

    def add_variant(self, key: str, record: Record, variant: str, data: bytes) -> Record | None:
        """Store one more variant of a stored document; its new record, or None if not kept.

        A document is stored with the variant its build was asked for; the
        other (gzip) is made from it when first asked and added here.
        """
        timeout = self._timeout(record.expires)
        if timeout == 0:
            return None
        limit = self.part_bytes
        if limit is None:
            bodies = dict(self._bodies.get(key) or {})
            local = local_copies.get(self._local_key(key))
            if local is not None and local[0] == record:
                bodies = {**local[1], **bodies}
            if any(name not in bodies for name in record.parts):
                return None
            bodies[variant] = data
            added = replace(record, parts=dict.fromkeys(bodies, INLINE))
            if not self._set(key, {**added.as_dict(), "bodies": bodies}, timeout):
                return None
            self._bodies[key] = bodies
            local_copies.put(self._local_key(key), added, bodies)
            return added
        pieces = [data[start : start + limit] for start in range(0, len(data), limit)] or [b""]
        for number, piece in enumerate(pieces):
            if not self._set(f"{key}:{variant}:{number}", piece, timeout):
                return None
        added = replace(record, parts={**record.parts, variant: len(pieces)})
        if not self._set(key, added.as_dict(), timeout):
            return None
        local_copies.put(self._local_key(key), added, {variant: data})
        return added

    def _local_key(self, key: str) -> str:
        return f"{self.alias}|{key}"

    def store(self, key: str, record: Record, bodies: dict[str, bytes]) -> Record | None:
        """Store every variant, then the record that makes them visible; None if not kept.

        A record with an expiry is kept no longer than until then.
        """
        built = {variant: [data] for variant, data in bodies.items()}
        return self.put(Built(key, record.etag, record.last_modified, record.expires, built))

    def keep(self, built: Built) -> None:
        """Store ``built`` and release its lock and slot: on the store thread for a
        network cache (``background``), else now, in this request."""
        if (
            self.available
            and app_settings.CACHE_STORE_THREAD
            and isinstance(self.backend, DEFERRING)
        ):
            alias = self.alias
            if store_thread.submit(lambda: DocumentCache(alias).put(built)):
                return
        self.put(built)

    def put(self, built: Built) -> Record | None:
        """Store a built document, then release its lock and slot; its record, or None.

        Where the backend holds values of any size, the record and the variants
        are one entry; else the parts are stored first, the record that makes them
        visible last, so a reader never sees half a document. The bytes are not
        kept in this process (``local``): a build's memory is its own request's,
        and the first hit here reads the document once.
        """
        try:
            return self._put(built)
        finally:
            if built.lock is not None:
                self.unlock(built.lock, built.slot)
            elif built.slot is not None:
                self.release(built.slot)
            for skipped in built.skipped:
                record_skips(*skipped)

    def _put(self, built: Built) -> Record | None:
        timeout = self._timeout(built.expires)
        if timeout == 0 or not self.available:  # expired while it was being built
            return None
        limit = self.part_bytes
        # Each variant's chunks are let go of once joined: with the response sent,
        # the page is then in memory once while the backend pickles it.
        joined = {variant: b"".join(built.bodies.pop(variant)) for variant in list(built.bodies)}
        if limit is None:
            bodies = joined
            record = built.record(dict.fromkeys(bodies, INLINE))
            stored = self._set(built.key, {**record.as_dict(), "bodies": bodies}, timeout)
            return record if stored else None
        parts: dict[str, bytes] = {}
        counts: dict[str, int] = {}
        for variant, data in joined.items():
            pieces = [data[start : start + limit] for start in range(0, len(data), limit)]
            counts[variant] = len(pieces) or 1
            for number, piece in enumerate(pieces or [b""]):
                parts[f"{built.key}:{variant}:{number}"] = piece
        failed = self._call(lambda: self.backend.set_many(parts, timeout), None)
        if failed is None or failed:
            return None
        record = built.record(counts)
        return record if self._set(built.key, record.as_dict(), timeout) else None

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
        timeout, taken = _lock_timeout(), time.monotonic()
        added = self._call(lambda: self.backend.add(f"{key}:lock", token, timeout), None)
        return Lock(key, token, taken, timeout) if added else None

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

    def unlock(self, lock: Lock, slot: Lock | None = None) -> None:
        """Release a lock taken by :meth:`lock` (unless it expired and moved on), and
        ``slot``, a build slot (see :meth:`release`), with it."""
        held = [(lock, f"{lock.key}:lock")]
        if slot is not None and slot != FREE_SLOT:
            held.append((slot, slot.key))
        self._release(held)

    def _release(self, held: Sequence[tuple[Lock, str]]) -> None:
        # Given back even where this request turned the cache off for not keeping a key
        # (``create``): the backend answers, and a slot left taken would bar builds until
        # it expires (every slot, with a few such requests: 503s for a minute).
        # One round trip while the keys cannot have expired; else check each is still ours.
        names = [
            name
            for lock, name in held
            if lock.surely_held()
            or self._call(lambda name=name: self.backend.get(name), None, turned_off=True)
            == lock.token
        ]
        if len(names) == 1:
            self._call(lambda: self.backend.delete(names[0]), None, turned_off=True)
        elif names:
            self._call(lambda: self.backend.delete_many(names), None, turned_off=True)

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

    # -- build slots ----------------------------------------------------------

    def build_slot(self, seconds: float) -> Lock | None:
        """One of ``SITEMAPX_CACHE_BUILDS`` build slots, waiting up to ``seconds``; None if none.

        The slots are keys of the shared cache, so the bound holds for every
        process using it; each expires like a build lock, so a slot whose
        holder died frees itself. With no bound (0), or once the cache failed,
        ``FREE_SLOT``, which holds nothing.
        """
        count = app_settings.CACHE_BUILDS
        if not count:
            return FREE_SLOT
        names = [f"{PREFIX}:build:{number}" for number in range(count)]
        token = secrets.token_hex(8)
        deadline = time.monotonic() + seconds
        start = secrets.randbelow(count)  # spread the attempts over the slots
        timeout = _lock_timeout()
        order = names[start:] + names[:start]
        # First the one slot drawn, blind: free (nearly always) costs one round trip.
        taken = time.monotonic()
        if self._call(lambda: self.backend.add(order[0], token, timeout), None):
            return Lock(order[0], token, taken, timeout)
        while self.available:
            # One read a round; an add() only for the slots seen free.
            held = self._call(lambda: self.backend.get_many(order), None) or {}
            for name in order:
                taken = time.monotonic()
                if name not in held and self._call(
                    lambda name=name: self.backend.add(name, token, timeout), None
                ):
                    return Lock(name, token, taken, timeout)
            if time.monotonic() >= deadline:
                return None
            time.sleep(_POLL_SECONDS)
        # The cache failed meanwhile: the document is served uncached, unbounded
        # here as everything else is without a cache.
        return FREE_SLOT

    def release(self, slot: Lock) -> None:
        """Give back a slot taken by :meth:`build_slot` (unless it expired and moved on)."""
        if slot != FREE_SLOT:
            self._release([(slot, slot.key)])

    # -- hosts ----------------------------------------------------------------

    def admits(self, host: str) -> bool:
        """Whether ``host`` has, or now takes, one of ``SITEMAPX_WILDCARD_HOSTS`` host slots.

        For hosts that only a wildcard of ``ALLOWED_HOSTS`` lets in: the slots
        bound the hosts an anonymous client can make the cache and the page
        table hold documents for. A slot lasts ``SITEMAPX_CACHE_TIMEOUT`` (a day).
        True when the cache is down: nothing is stored then.
        """
        count = app_settings.WILDCARD_HOSTS
        names = [f"{PREFIX}:host:{number}" for number in range(count)]
        held = self._call(lambda: self.backend.get_many(names), None)
        if held is None:
            return True
        if host in held.values():
            return True
        timeout = app_settings.CACHE_TIMEOUT
        for name in names:
            if name not in held and self._call(
                lambda name=name: self.backend.add(name, host, timeout), None
            ):
                return True
        return not self.available


@dataclass
class Built:
    """A document built to its end, to be stored: each variant's bytes as built.

    ``lock`` and ``slot`` are the build lock and slot its request holds, released
    once it is stored (or not): requests waiting for it find it stored.
    ``expires`` is the document's own expiry: the record carries it, and nothing
    is kept past it.
    """

    key: str
    etag: str
    last_modified: float | None
    expires: float | None
    bodies: dict[str, list[bytes]]
    lock: Lock | None = None
    slot: Lock | None = None
    # What the build left out, for the admin's report (``skips``): recorded with it.
    skipped: list[Skips] = field(default_factory=list)

    def record(self, parts: dict[str, int]) -> Record:
        """The record of this document stored in ``parts``."""
        return Record(self.etag, self.last_modified, parts, self.expires)


def _lock_timeout() -> int:
    # Whole seconds, at least one: backends round a timeout down, and Redis
    # deletes a key added with a timeout of 0 at once (no lock at all).
    return max(1, math.ceil(app_settings.CACHE_WAIT * LOCK_WAITS))
