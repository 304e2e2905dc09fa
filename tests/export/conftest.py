"""Fixtures the export tests share."""

from __future__ import annotations

from typing import Any

import pytest

from django_sitemapx.compat import tasks_module


@pytest.fixture
def immediate(settings: Any) -> None:
    """Django's Tasks framework with the immediate backend: a task runs when enqueued."""
    module = tasks_module()
    assert module is not None
    settings.TASKS = {
        "default": {"BACKEND": f"{module.__name__}.backends.immediate.ImmediateBackend"}
    }
