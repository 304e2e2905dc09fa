"""The recording IndexNow endpoint as a fixture for every IndexNow test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from django_sitemapx import indexnow
from tests.support.endpoint import KEY, Endpoint


@pytest.fixture
def endpoint(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Endpoint]:
    """A running endpoint; IndexNow is on and points at it, with tiny backoffs."""
    server = Endpoint()
    server.start()
    settings.SITEMAPX_INDEXNOW_KEY = KEY
    settings.SITEMAPX_INDEXNOW_ENDPOINT = server.url
    monkeypatch.setattr(indexnow, "BACKOFF", 0.01)
    try:
        yield server
    finally:
        server.stop()
