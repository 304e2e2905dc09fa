"""Fixtures shared by the admin tests."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.support.admin import EDITOR_PERMISSIONS, staff_client


@pytest.fixture
def editor() -> Client:
    """A staff user who may view, add, change and delete overrides."""
    return staff_client(*EDITOR_PERMISSIONS)
