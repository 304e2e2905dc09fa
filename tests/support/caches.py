"""Cache backends that misbehave, for the failure tests."""

import pickle
from typing import Any

from django.core.cache.backends.locmem import LocMemCache


class BrokenCache(LocMemCache):
    """Every operation raises, like a backend whose server is down."""

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("cache server unreachable (test double)")

    get = set = add = delete = get_many = set_many = incr = clear = _fail  # type: ignore[assignment]


class ForgetfulCache(LocMemCache):
    """Accepts writes and keeps nothing, like a cache evicting everything at once."""

    def add(self, *args: Any, **kwargs: Any) -> bool:
        return True

    def set(self, *args: Any, **kwargs: Any) -> None:
        return None

    def set_many(self, *args: Any, **kwargs: Any) -> list[str]:
        return []


class SizeCappedCache(LocMemCache):
    """Refuses values over 1 MB, as Memcached does by default (with
    ``SITEMAPX_CACHE_PART_BYTES`` set, as it must be for such a backend)."""

    LIMIT = 1024 * 1024

    def set(self, key: str, value: Any, *args: Any, **kwargs: Any) -> None:
        size = len(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        if size > self.LIMIT:
            raise ValueError(f"value of {size} bytes is over the 1 MB cap")
        super().set(key, value, *args, **kwargs)

    def set_many(self, data: dict[str, Any], *args: Any, **kwargs: Any) -> list[str]:
        for key, value in data.items():
            self.set(key, value, *args, **kwargs)
        return []


class CountingCache(LocMemCache):
    """Counts the operations the app asks of it, one per call it makes (what a network
    backend pays one round trip for: ``get_many()`` is one, however many keys)."""

    calls: list[str] = []  # shared by every instance (one per request)

    def __getattribute__(self, name: str) -> Any:
        attribute = super().__getattribute__(name)
        if name not in _COUNTED:
            return attribute

        def counted(*args: Any, **kwargs: Any) -> Any:
            # LocMemCache.get_many() calls get() per key: the outer call alone counts.
            if _depth[0] == 0:
                CountingCache.calls.append(name)
            _depth[0] += 1
            try:
                return attribute(*args, **kwargs)
            finally:
                _depth[0] -= 1

        return counted


_COUNTED = frozenset(
    ("get", "get_many", "set", "set_many", "add", "delete", "delete_many", "incr", "touch")
)
_depth = [0]
