"""The checks of the ``SITEMAPX_*`` settings (``checks/settings.py``), through ``check``."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.test import modify_settings, override_settings

import django_sitemapx as sitemapx
from django_sitemapx.registry import SitemapRegistry
from tests.support.checks import ID, check_errors, check_warnings, failing_check_output


@pytest.mark.parametrize("limit", [0, 50_001, "100", 2.5, True])
def test_e001_limit(limit: object) -> None:
    with override_settings(SITEMAPX_LIMIT=limit):
        assert check_errors() == ["E001"]


def test_limit_zero_lets_a_source_register_and_check_reports_e001(
    registry: SitemapRegistry,
) -> None:
    # The old code validated the setting at registration, so start-up itself
    # failed with a traceback instead of check naming the setting.
    with override_settings(SITEMAPX_LIMIT=0):
        source = registry.register("pages", sitemapx.StaticSource, url_names=["home"])
        assert source.limit is None
        assert registry.sections == ["pages"]
        assert check_errors() == ["E001"]


def test_e002_protocol() -> None:
    with override_settings(SITEMAPX_PROTOCOL="ftp"):
        assert check_errors() == ["E002"]


@pytest.mark.parametrize("use_sites", ["yes", "False", 1, 0])
def test_e004_use_sites_is_not_none_true_or_false(use_sites: object) -> None:
    with override_settings(SITEMAPX_USE_SITES=use_sites):
        assert check_errors() == ["E004"]


@modify_settings(INSTALLED_APPS={"remove": ["django.contrib.sites"]})
def test_e004_use_sites_without_the_sites_framework() -> None:
    with override_settings(SITEMAPX_USE_SITES=True):
        output = failing_check_output()
    assert ID.findall(output) == ["E004"]
    assert "django.contrib.sites is not installed" in output
    with override_settings(SITEMAPX_USE_SITES=None):
        assert check_warnings() == []


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_e006_overrides(value: object) -> None:
    with override_settings(SITEMAPX_OVERRIDES=value):
        assert check_errors() == ["E006"]


@pytest.mark.parametrize("setting", ["SITEMAPX_EXPORT_STORAGE", "SITEMAPX_SERVE_FROM_STORAGE"])
def test_e007_storage_alias(setting: str) -> None:
    with override_settings(**{setting: "nope"}):
        output = failing_check_output()
    assert ID.findall(output) == ["E007"]
    assert f"{setting} is 'nope'" in output
    assert "Known aliases: default, staticfiles." in output


def test_e007_accepts_known_aliases() -> None:
    with override_settings(
        SITEMAPX_EXPORT_STORAGE="default", SITEMAPX_SERVE_FROM_STORAGE="staticfiles"
    ):
        assert check_warnings() == []


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_e008_index_links_gzip(value: object) -> None:
    with override_settings(SITEMAPX_INDEX_LINKS_GZIP=value):
        assert check_errors() == ["E008"]


def test_e009_http_cache_control() -> None:
    with override_settings(SITEMAPX_HTTP_CACHE_CONTROL=300):
        assert check_errors() == ["E009"]
    with override_settings(SITEMAPX_HTTP_CACHE_CONTROL=None):
        assert check_warnings() == []


@pytest.mark.parametrize("value", ["", "  ", "noindex\r\nSet-Cookie: x=1", 1, ["noindex"]])
def test_e014_x_robots_tag(value: object) -> None:
    with override_settings(SITEMAPX_X_ROBOTS_TAG=value):
        assert check_errors() == ["E014"]


@pytest.mark.parametrize("value", [None, "noindex", "noindex, noodp, noarchive", "all"])
def test_e014_accepts_none_and_header_values(value: object) -> None:
    with override_settings(SITEMAPX_X_ROBOTS_TAG=value):
        assert check_warnings() == []


def test_e010_unknown_cache_alias() -> None:
    with override_settings(SITEMAPX_CACHE_ALIAS="nope"):
        assert check_errors() == ["E010"]
    with override_settings(SITEMAPX_CACHE_ALIAS=None):
        assert check_warnings() == []


@pytest.mark.parametrize("timeout", [0, -5, "60", True])
def test_e011_cache_timeout(timeout: object) -> None:
    with override_settings(SITEMAPX_CACHE_TIMEOUT=timeout):
        assert check_errors() == ["E011"]


@pytest.mark.parametrize("timeout", [None, 1, 0.5])
def test_e011_accepts_none_and_positive_numbers(timeout: object) -> None:
    with override_settings(SITEMAPX_CACHE_TIMEOUT=timeout):
        assert check_warnings() == []


@pytest.mark.parametrize("value", [0, -1, "10", None])
def test_e012_wait(value: object) -> None:
    with override_settings(SITEMAPX_CACHE_WAIT=value):
        assert check_errors() == ["E012"]


@pytest.mark.parametrize("size", [-1, 1.5, "64MB", True])
def test_e013_local_bytes(size: object) -> None:
    with override_settings(SITEMAPX_CACHE_LOCAL_BYTES=size):
        assert check_errors() == ["E013"]


def test_e013_accepts_zero() -> None:
    with override_settings(SITEMAPX_CACHE_LOCAL_BYTES=0):
        assert check_warnings() == []


def test_w001_dummy_cache() -> None:
    dummy = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    with override_settings(CACHES=dummy):
        assert check_warnings() == ["W001"]


@pytest.mark.parametrize("name", ["SITEMAPX_GZIP", "SITEMAPX_CACHE_CONTROL", "SITEMAPX_LIMT"])
def test_w002_names_an_unknown_setting(name: str) -> None:
    stderr = io.StringIO()
    with override_settings(**{name: True}):
        call_command("check", stdout=io.StringIO(), stderr=stderr)
    output = stderr.getvalue()
    assert ID.findall(output) == ["W002"]
    assert f"{name} is not a setting of django-sitemapx" in output


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("SITEMAPX_GZIP", "SITEMAPX_INDEX_LINKS_GZIP"),
        ("SITEMAPX_CACHE_CONTROL", "SITEMAPX_HTTP_CACHE_CONTROL"),
    ],
)
def test_w002_names_the_new_name_of_a_renamed_setting(old: str, new: str) -> None:
    stderr = io.StringIO()
    with override_settings(**{old: True}):
        call_command("check", stdout=io.StringIO(), stderr=stderr)
    assert f"It was renamed {new}." in stderr.getvalue()


@pytest.mark.parametrize(
    ("name", "now"),
    [
        ("SITEMAPX_CHUNK_SIZE", "2,000 rows per query"),
        ("SITEMAPX_AUTODISCOVER_MODULE", "call autodiscover_modules() yourself"),
        ("SITEMAPX_CACHE_LOCK_TIMEOUT", "six times SITEMAPX_CACHE_WAIT"),
        ("SITEMAPX_INDEXNOW_RETRIES", "retried 3 times"),
        ("SITEMAPX_INDEXNOW_BACKOFF", "2, 4 and 8 seconds apart"),
        ("SITEMAPX_INDEXNOW_TIMEOUT", "10 seconds"),
    ],
)
def test_w002_says_what_replaced_a_removed_setting(name: str, now: str) -> None:
    # A project upgrading learns that its setting is ignored, and what to do instead.
    stderr = io.StringIO()
    with override_settings(**{name: 5}):
        call_command("check", stdout=io.StringIO(), stderr=stderr)
    output = stderr.getvalue()
    assert ID.findall(output) == ["W002"]
    assert f"{name} is not a setting of django-sitemapx" in output
    assert "It was removed: " in output and now in output


def _deploy_warnings() -> list[str]:
    stderr = io.StringIO()
    call_command("check", deploy=True, stdout=io.StringIO(), stderr=stderr)
    return sorted(set(ID.findall(stderr.getvalue())))


LOCMEM = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
SHARED = {"default": {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "c"}}


@override_settings(CACHES=LOCMEM)
def test_w003_local_memory_cache_is_reported_by_check_deploy_only() -> None:
    assert _deploy_warnings() == ["W003"]
    assert check_warnings() == []  # plain check: one runserver process is fine


@override_settings(CACHES=SHARED)
def test_w003_not_reported_for_a_shared_cache() -> None:
    assert _deploy_warnings() == []


@override_settings(CACHES=LOCMEM, SITEMAPX_CACHE_ALIAS=None)
def test_w003_not_reported_when_the_sitemap_cache_is_off() -> None:
    assert _deploy_warnings() == []


def database_check_warnings() -> list[str]:
    stderr = io.StringIO()
    call_command("check", databases=["default"], stdout=io.StringIO(), stderr=stderr)
    return sorted(ID.findall(stderr.getvalue()))


@pytest.mark.django_db
@override_settings(SITEMAPX_USE_SITES=None, SITE_ID=1)
def test_w004_site_id_with_several_sites_names_the_setting_to_use() -> None:
    from django.contrib.sites.models import Site

    assert database_check_warnings() == []  # one site: nothing to say
    Site.objects.create(domain="second.example", name="Second")
    stderr = io.StringIO()
    call_command("check", stdout=io.StringIO(), stderr=stderr)
    assert "W006" not in stderr.getvalue()  # without --database, no query
    stderr = io.StringIO()
    call_command("check", databases=["default"], stdout=io.StringIO(), stderr=stderr)
    output = stderr.getvalue()
    assert ID.findall(output) == ["W006"]
    assert "second.example" in output and "SITEMAPX_USE_SITES = False" in output
    for use_sites in (True, False):  # the setting says which is meant
        with override_settings(SITEMAPX_USE_SITES=use_sites):
            assert database_check_warnings() == []
    with override_settings(SITE_ID=None):  # the site is found by host
        assert database_check_warnings() == []
