"""Settings access: documented defaults, read at call time, never validated."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from django_sitemapx.conf import (
    REMOVED_SETTINGS,
    RENAMED_SETTINGS,
    SETTING_NAMES,
    Settings,
    app_settings,
)

# The defaults of docs/reference/settings.md, written out rather than read from conf.
DEFAULTS: dict[str, object] = {
    "LIMIT": 50_000,
    "PROTOCOL": None,
    "USE_SITES": None,
    "OVERRIDES": True,
    "EXPORT_STORAGE": None,
    "SERVE_FROM_STORAGE": None,
    "INDEX_LINKS_GZIP": False,
    "HTTP_CACHE_CONTROL": "public, max-age=300",
    "X_ROBOTS_TAG": "noindex",
    "CACHE_ALIAS": "default",
    "CACHE_TIMEOUT": 86_400,
    "CACHE_WAIT": 10.0,
    "CACHE_LOCAL_BYTES": 64 * 1024 * 1024,
    "CACHE_PART_BYTES": None,
    "CACHE_STORE_THREAD": True,
    "CACHE_BUILDS": 4,
    "CACHE_BUILD_WAIT": 5.0,
    "WILDCARD_HOSTS": 10,
    "HOSTS": None,
    "LANGUAGE_HOSTS": None,
    "FILES_BASE_URL": None,
    "ROBOTS_RULES": "User-agent: *\nDisallow:\n",
    "INDEXNOW_KEY": None,
    "INDEXNOW_ENDPOINT": "https://api.indexnow.org/indexnow",
    "INDEXNOW_TASK_BACKEND": "default",
    "AUDIT_TASK_BACKEND": "default",
    "XML_STYLESHEET": None,
    "EXPORT_TASK_BACKEND": "default",
    "EXPORT_LEASE": 300,
    "EXPORT_ON_CHANGE": None,
    "EXPORT_DEBOUNCE": 60,
    "EXPORT_SPLICE": False,
    "EXPORT_SPARES": True,
}


def _properties() -> set[str]:
    return {name for name, value in vars(Settings).items() if isinstance(value, property)}


def test_every_property_has_a_documented_default() -> None:
    assert _properties() == set(DEFAULTS)


def test_setting_names_lists_exactly_the_properties() -> None:
    assert {"SITEMAPX_" + name for name in DEFAULTS} == SETTING_NAMES


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_default_when_unset(name: str) -> None:
    with override_settings():
        delattr(settings, f"SITEMAPX_{name}")  # tests/settings.py sets SITEMAPX_USE_SITES
        assert not hasattr(settings, f"SITEMAPX_{name}")
        value = getattr(app_settings, name)
    assert value == DEFAULTS[name]
    assert type(value) is type(DEFAULTS[name])


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_reads_the_setting_each_time_and_returns_it_as_given(name: str) -> None:
    before = getattr(app_settings, name)
    given = object()  # not a valid value of any setting: conf must not validate
    with override_settings(**{f"SITEMAPX_{name}": given}):
        assert getattr(app_settings, name) is given
    assert getattr(app_settings, name) == before


def test_a_new_settings_object_is_not_needed_to_see_a_change() -> None:
    reader = Settings()
    with override_settings(SITEMAPX_LIMIT=10):
        assert reader.LIMIT == 10
        with override_settings(SITEMAPX_LIMIT=20):
            assert reader.LIMIT == 20
        assert reader.LIMIT == 10


def test_renamed_and_removed_names_are_not_settings() -> None:
    # W002 must report them, with their hint.
    assert not (set(RENAMED_SETTINGS) | set(REMOVED_SETTINGS)) & SETTING_NAMES
