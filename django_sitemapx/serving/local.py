"""Recently served documents kept in this process's memory, keyed like the shared cache.

A document key holds its generation tokens, which are always read from the
shared cache, so a copy here is never served after an invalidation: it just
stops being asked for. What it saves is fetching and unpickling megabytes from
the shared cache on every hit.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..conf import app_settings

R = TypeVar("R")


@dataclass
class _Copy(Generic[R]):
    record: R
    expires: float | None
    bodies: dict[str, bytes] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return sum(len(body) for body in self.bodies.values())


class LocalCopies(Generic[R]):
    """A least-recently-used map of document key to record and bodies, bounded in bytes."""

    def __init__(self) -> None:
        self._copies: OrderedDict[str, _Copy[R]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> tuple[R, dict[str, bytes]] | None:
        """The record and the bodies kept for ``key``, if any and not expired."""
        with self._lock:
            copy = self._copies.get(key)
            if copy is None:
                return None
            if copy.expires is not None and copy.expires <= time.monotonic():
                self._drop(key)
                return None
            self._copies.move_to_end(key)
            return copy.record, dict(copy.bodies)

    def put(self, key: str, record: R, bodies: dict[str, bytes]) -> None:
        """Keep ``bodies`` (added to what is kept for ``key``) within the byte budget."""
        budget = app_settings.CACHE_LOCAL_BYTES
        timeout = app_settings.CACHE_TIMEOUT
        with self._lock:
            copy = self._copies.get(key)
            if copy is None or copy.record != record:
                if copy is not None:
                    self._drop(key)
                expires = time.monotonic() + timeout if timeout is not None else None
                copy = self._copies[key] = _Copy(record, expires)
            self._size -= copy.size
            copy.bodies.update(bodies)
            self._size += copy.size
            self._copies.move_to_end(key)
            while self._copies and self._size > budget:
                self._drop(next(iter(self._copies)))

    def clear(self) -> None:
        """Forget every copy."""
        with self._lock:
            self._copies.clear()
            self._size = 0

    @property
    def size(self) -> int:
        """Bytes kept."""
        return self._size

    def _drop(self, key: str) -> None:
        copy = self._copies.pop(key)
        self._size -= copy.size
