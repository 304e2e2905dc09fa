"""Check ``django_sitemapx.E012`` (storage aliases of the export settings)."""

from __future__ import annotations

import pytest
from django.core import checks
from django.test import override_settings

from django_sitemapx.checks import check_export_storages


def test_registered() -> None:
    assert check_export_storages in checks.registry.registry.get_checks()


@pytest.mark.parametrize("setting", ["SITEMAPX_EXPORT_STORAGE", "SITEMAPX_SERVE_FROM_STORAGE"])
def test_unknown_alias_is_e012(setting: str) -> None:
    with override_settings(**{setting: "nope"}):
        errors = check_export_storages()
    assert [e.id for e in errors] == ["django_sitemapx.E012"]
    assert "'nope'" in errors[0].msg and "default, staticfiles" in (errors[0].hint or "")


def test_known_alias_or_none_passes() -> None:
    assert check_export_storages() == []
    with override_settings(
        SITEMAPX_EXPORT_STORAGE="default", SITEMAPX_SERVE_FROM_STORAGE="default"
    ):
        assert check_export_storages() == []
