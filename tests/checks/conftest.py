"""Every check test module starts with no stray registry."""

from __future__ import annotations

import gc

import pytest


@pytest.fixture(autouse=True, scope="module")
def _collect_stray_registries() -> None:
    """Free registries of earlier test modules that only a reference cycle keeps alive.

    ``all_registries`` is weak, but a test's frame held by an exception's
    traceback keeps its registry until the garbage collector runs; its sources
    must not be checked here.
    """
    gc.collect()
