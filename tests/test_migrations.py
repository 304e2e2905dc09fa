"""The models and their migrations agree.

Belongs in ``tests/test_models.py``, which another slice of the test move owns;
it moves there once both are merged.
"""

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_migrations_are_complete() -> None:
    call_command("makemigrations", "django_sitemapx", "--check", "--dry-run", verbosity=0)
