"""Proves which database and cache a test run really used (CI runs both legs)."""

import os

import pytest
from django.core.cache import caches
from django.db import connection

pytestmark = pytest.mark.django_db


@pytest.mark.skipif(not os.environ.get("SITEMAPX_REQUIRE_SERVICES"), reason="services leg only")
def test_services_leg_runs_on_its_database_and_redis() -> None:
    from django.core.cache.backends.redis import RedisCache

    # The MariaDB leg says so (scripts/test); the other services legs run on PostgreSQL.
    assert connection.vendor == os.environ.get("SITEMAPX_TEST_DATABASE_VENDOR", "postgresql")
    cache = caches["default"]
    assert isinstance(cache, RedisCache)
    cache.set("django_sitemapx:test:ping", "pong", 5)
    assert cache.get("django_sitemapx:test:ping") == "pong"


def test_database_answers() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
