"""Switching the garbage collector off, to see what only an explicit close() frees."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def garbage_collector_off() -> Iterator[None]:
    """Only reference counting frees objects inside the block; cycles wait until it ends."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()
