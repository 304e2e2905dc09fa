"""The robots.txt and IndexNow checks (``checks/discovery.py``), through ``manage.py check``."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import override_settings

from django_sitemapx.checks import discovery
from django_sitemapx.compat import require_tasks_module
from tests.support.checks import check_errors, check_warnings, failing_check_output

GOOD_KEY = "a1b2c3d4-e5f6"


def _backend(name: str) -> dict[str, dict[str, str]]:
    module = require_tasks_module().__name__
    return {"default": {"BACKEND": f"{module}.backends.{name}"}}


@pytest.mark.parametrize(
    "key",
    [
        "short12",
        "x" * 129,
        "has space in it",
        "under_score_key",
        "ключ-ключ-ключ",
        12345678,
        b"bytes123",
    ],
)
def test_e201_indexnow_key(key: object) -> None:
    with override_settings(SITEMAPX_INDEXNOW_KEY=key):
        assert check_errors() == ["E201"]


@pytest.mark.parametrize("key", ["a" * 8, "A-z-0-9-" * 16, GOOD_KEY])
def test_e201_accepts_the_protocols_keys(key: str) -> None:
    with override_settings(
        SITEMAPX_INDEXNOW_KEY=key,
        TASKS=_backend("dummy.DummyBackend"),
        ALLOWED_HOSTS=["example.com"],
    ):
        assert check_warnings() == []


@pytest.mark.parametrize("endpoint", ["api.indexnow.org/indexnow", "ftp://x.example/", 42])
def test_e202_endpoint(endpoint: object) -> None:
    with override_settings(SITEMAPX_INDEXNOW_ENDPOINT=endpoint):
        assert check_errors() == ["E202"]


@pytest.mark.parametrize("alias", ["missing", 1])
def test_e203_task_backend(alias: object) -> None:
    with override_settings(SITEMAPX_INDEXNOW_KEY=GOOD_KEY, SITEMAPX_INDEXNOW_TASK_BACKEND=alias):
        assert check_errors() == ["E203"]


def test_e203_needs_indexnow_on_to_look_for_the_alias() -> None:
    with override_settings(SITEMAPX_INDEXNOW_TASK_BACKEND="missing"):
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())


def test_e203_without_any_tasks_framework(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discovery, "tasks_module", lambda: None)
    with override_settings(SITEMAPX_INDEXNOW_KEY=GOOD_KEY):
        output = failing_check_output()
    assert "(django_sitemapx.E203)" in output
    assert "django-sitemapx[tasks]" in output


@pytest.mark.parametrize(
    "hosts", ["example.com", ["https://example.com"], ["example.com/path"], ["not.allowed"], [1]]
)
def test_e204_hosts(hosts: object) -> None:
    with override_settings(SITEMAPX_HOSTS=hosts):
        assert check_errors() == ["E204"]


@pytest.mark.parametrize("rules", [None, ["User-agent: *"]])
def test_e206_robots_rules(rules: object) -> None:
    with override_settings(SITEMAPX_ROBOTS_RULES=rules):
        assert check_errors() == ["E206"]


@pytest.mark.parametrize("url", ["cdn.example.net", "https://cdn.example.net/s?x=1", 5])
def test_e207_files_base_url(url: object) -> None:
    with override_settings(SITEMAPX_FILES_BASE_URL=url):
        assert check_errors() == ["E207"]


def test_w201_no_host_to_submit_for() -> None:
    with override_settings(
        SITEMAPX_INDEXNOW_KEY=GOOD_KEY,
        TASKS=_backend("dummy.DummyBackend"),
        ALLOWED_HOSTS=["*", ".example.com", "localhost"],
    ):
        # W004: with a wildcard, only SITEMAPX_HOSTS bounds the hosts served.
        assert sorted(check_warnings()) == ["W004", "W201"]
    with override_settings(
        SITEMAPX_INDEXNOW_KEY=GOOD_KEY,
        TASKS=_backend("dummy.DummyBackend"),
        ALLOWED_HOSTS=["*"],
        SITEMAPX_HOSTS=["www.example.com"],
    ):
        assert check_warnings() == []


def test_w202_immediate_backend_runs_in_the_request() -> None:
    with override_settings(
        SITEMAPX_INDEXNOW_KEY=GOOD_KEY, TASKS=_backend("immediate.ImmediateBackend")
    ):
        assert check_warnings() == ["W202"]
    with override_settings(
        SITEMAPX_INDEXNOW_KEY=GOOD_KEY,
        TASKS=_backend("immediate.ImmediateBackend"),
        SITEMAPX_INDEXNOW_TASK_BACKEND=None,
    ):
        assert check_warnings() == []


@pytest.mark.parametrize(
    "urlconf", ["tests.urls_sitemaps_elsewhere", "tests.urls_sitemaps_nowhere"]
)
def test_w203_key_file_not_at_the_root(urlconf: str) -> None:
    with override_settings(
        SITEMAPX_INDEXNOW_KEY=GOOD_KEY, TASKS=_backend("dummy.DummyBackend"), ROOT_URLCONF=urlconf
    ):
        assert check_warnings() == ["W203"]
