"""The export's task settings (``checks/export.py``), through ``manage.py check``."""

from __future__ import annotations

import pytest
from django.test import override_settings

from django_sitemapx.compat import require_tasks_module
from tests.support.checks import check_errors, check_warnings

ON_CHANGE = {"output_dir": "/srv/sitemaps", "base_url": "https://example.com"}


def _backend(name: str) -> dict[str, dict[str, str]]:
    module = require_tasks_module().__name__
    return {"default": {"BACKEND": f"{module}.backends.{name}"}}


@pytest.mark.parametrize("alias", ["missing", 1])
def test_e301_task_backend(alias: object) -> None:
    with override_settings(SITEMAPX_EXPORT_TASK_BACKEND=alias):
        assert check_errors() == ["E301"]


def test_e301_the_default_alias_is_needed_only_when_exports_run_as_tasks() -> None:
    with override_settings(TASKS={"other": _backend("dummy.DummyBackend")["default"]}):
        assert check_warnings() == []  # the check passes
        with override_settings(SITEMAPX_EXPORT_ON_CHANGE=ON_CHANGE):
            assert check_errors() == ["E301"]


@pytest.mark.parametrize("lease", [0, -1, "60", True, None])
def test_e302_lease(lease: object) -> None:
    with override_settings(SITEMAPX_EXPORT_LEASE=lease):
        assert check_errors() == ["E302"]


@pytest.mark.parametrize("debounce", [-1, "60", True, None])
def test_e303_debounce(debounce: object) -> None:
    with override_settings(SITEMAPX_EXPORT_DEBOUNCE=debounce):
        assert check_errors() == ["E303"]


@pytest.mark.parametrize(
    "options",
    [
        "/srv/sitemaps",
        {"base_url": "https://example.com"},
        {**ON_CHANGE, "folder": "/srv"},
        {**ON_CHANGE, "gzip": "yes"},
    ],
)
def test_e304_on_change(options: object) -> None:
    with override_settings(
        SITEMAPX_EXPORT_ON_CHANGE=options, TASKS=_backend("dummy.DummyBackend")
    ):
        assert check_errors() == ["E304"]


def test_w301_on_change_on_an_immediate_backend() -> None:
    with override_settings(
        SITEMAPX_EXPORT_ON_CHANGE=ON_CHANGE, TASKS=_backend("immediate.ImmediateBackend")
    ):
        assert check_warnings() == ["W301"]
    with override_settings(
        SITEMAPX_EXPORT_ON_CHANGE=ON_CHANGE,
        SITEMAPX_EXPORT_DEBOUNCE=0,
        TASKS=_backend("dummy.DummyBackend"),
    ):
        assert check_warnings() == []


@pytest.mark.parametrize("splice", ["yes", 1, None])
def test_e730_splice(splice: object) -> None:
    with override_settings(SITEMAPX_EXPORT_SPLICE=splice):
        assert check_errors() == ["E730"]


@pytest.mark.parametrize("splice", [True, False])
def test_e730_splice_on_or_off_passes(splice: bool) -> None:
    with override_settings(SITEMAPX_EXPORT_SPLICE=splice):
        assert check_warnings() == []


@pytest.mark.parametrize("spares", ["no", 0, None])
def test_e731_spares(spares: object) -> None:
    with override_settings(SITEMAPX_EXPORT_SPARES=spares):
        assert check_errors() == ["E731"]


@pytest.mark.parametrize("spares", [True, False])
def test_e731_spares_on_or_off_passes(spares: bool) -> None:
    with override_settings(SITEMAPX_EXPORT_SPARES=spares):
        assert check_warnings() == []
