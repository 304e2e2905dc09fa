"""Two server processes sharing PostgreSQL and Redis see each other's changes.

Runs on the services leg (``SITEMAPX_REQUIRE_SERVICES=1``), where it must not
be skipped; elsewhere a cache in one process cannot be shared, so it skips.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connection

from tests.conftest import ROOT, locs, validate_sitemap
from tests.factories import ArticleFactory

STARTUP_SECONDS = 30


def _on_services() -> bool:
    return connection.vendor == "postgresql" and isinstance(caches["default"], RedisCache)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _database_url() -> str:
    """The test database (``test_...``), which the servers must use too."""
    settings = connection.settings_dict
    user = urllib.parse.quote(settings["USER"] or "", safe="")
    password = settings["PASSWORD"]
    auth = f"{user}:{urllib.parse.quote(password, safe='')}" if password else user
    host = settings["HOST"] or "127.0.0.1"
    port = settings["PORT"] or 5432
    return f"postgres://{auth}@{host}:{port}/{settings['NAME']}"


def _get(url: str) -> tuple[int, bytes, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=20) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


@pytest.fixture
def servers() -> Iterator[tuple[str, str]]:
    if not _on_services():
        vendor = os.environ.get("SITEMAPX_TEST_DATABASE_VENDOR", "postgresql")
        if os.environ.get("SITEMAPX_REQUIRE_SERVICES") and vendor == "postgresql":
            pytest.fail("the services leg must run on PostgreSQL and Redis")
        pytest.skip("needs PostgreSQL and Redis shared between processes")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": _database_url(),
        "PYTHONPATH": str(ROOT),
    }
    processes: list[subprocess.Popen[bytes]] = []
    urls = []
    try:
        for _ in range(2):
            port = _free_port()
            processes.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "django",
                        "runserver",
                        "--noreload",
                        "--skip-checks",
                        f"127.0.0.1:{port}",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            urls.append(f"http://127.0.0.1:{port}")
        for url, process in zip(urls, processes, strict=True):
            _wait_until_up(url, process)
        yield urls[0], urls[1]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server for {url} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", int(url.rsplit(":", 1)[1])), 0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"the server for {url} did not start in {STARTUP_SECONDS} s")


@pytest.mark.django_db(transaction=True)
def test_a_change_through_one_server_shows_on_the_other(
    servers: tuple[str, str],
) -> None:
    editor, reader = servers
    article = ArticleFactory(slug="before")

    status, body, headers = _get(f"{reader}/sitemap-article-1.xml")
    assert status == 200
    assert any(loc.endswith("/before/") for loc in locs(validate_sitemap(body)))
    # Served again from Redis: same bytes, same validators.
    again = _get(f"{reader}/sitemap-article-1.xml")
    assert again[1] == body and again[2]["ETag"] == headers["ETag"]

    request = urllib.request.Request(
        f"{editor}/test-only/articles/{article.pk}/rename/",
        data=urllib.parse.urlencode({"slug": "after"}).encode(),
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        assert response.status == 200

    status, body, new_headers = _get(f"{reader}/sitemap-article-1.xml")
    assert status == 200
    listed = locs(validate_sitemap(body))
    assert any(loc.endswith("/after/") for loc in listed)
    assert not any(loc.endswith("/before/") for loc in listed)
    assert new_headers["ETag"] != headers["ETag"]
    index = _get(f"{reader}/sitemap.xml")
    assert index[0] == 200 and index[2]["ETag"]
