"""Every system check ID, each seen through ``manage.py check`` as a project would run it.

Each test sets one bad value and runs ``call_command("check")``: an error must
make it fail naming the ID, a warning must be printed without failing. That is
also the proof that the checks are registered at all.
"""

from __future__ import annotations

import gc
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import modify_settings, override_settings

import django_sitemapx as sitemapx
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article
from tests.conftest import ROOT
from tests.testapp.models import Document, UUIDThing

_ID = re.compile(r"\(django_sitemapx\.([EW]\d{3})\)")


@pytest.fixture(autouse=True, scope="module")
def _collect_stray_registries() -> None:
    """Free registries of earlier test modules that only a reference cycle keeps alive.

    ``all_registries`` is weak, but a test's frame held by an exception's
    traceback keeps its registry until the garbage collector runs; its sources
    must not be checked here.
    """
    gc.collect()


def _errors() -> list[str]:
    """The django-sitemapx IDs reported by a ``check`` that must fail."""
    with pytest.raises(SystemCheckError) as info:
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
    return sorted(_ID.findall(str(info.value)))


def _warnings() -> list[str]:
    """The django-sitemapx IDs printed by a ``check`` that must pass (warnings only)."""
    stderr = io.StringIO()
    call_command("check", stdout=io.StringIO(), stderr=stderr)
    return sorted(_ID.findall(stderr.getvalue()))


def _output_of_failing_check() -> str:
    with pytest.raises(SystemCheckError) as info:
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
    return str(info.value)


# -- the whole command -------------------------------------------------------------------


def test_a_clean_configuration_passes_with_no_message() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    call_command("check", fail_level="WARNING", stdout=stdout, stderr=stderr)
    assert stderr.getvalue() == ""
    assert stdout.getvalue().startswith("System check identified no issues")


def test_the_checks_are_registered() -> None:
    # No call of a check function here: the command itself must run them.
    with override_settings(SITEMAPX_PROTOCOL="ftp"):
        assert _errors() == ["E002"]


def test_settings_and_sources_are_reported_together(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["no-such-page"])
    with override_settings(SITEMAPX_CHUNK_SIZE=0):
        assert _errors() == ["E003", "E102"]


# -- settings ----------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, 50_001, "100", 2.5, True])
def test_e001_limit(limit: object) -> None:
    with override_settings(SITEMAPX_LIMIT=limit):
        assert _errors() == ["E001"]


def test_limit_zero_lets_a_source_register_and_check_reports_e001(
    registry: SitemapRegistry,
) -> None:
    # The old code validated the setting at registration, so start-up itself
    # failed with a traceback instead of check naming the setting.
    with override_settings(SITEMAPX_LIMIT=0):
        source = registry.register("pages", sitemapx.StaticSource, url_names=["home"])
        assert source.limit is None
        assert registry.sections == ["pages"]
        assert _errors() == ["E001"]


def test_e002_protocol() -> None:
    with override_settings(SITEMAPX_PROTOCOL="ftp"):
        assert _errors() == ["E002"]


@pytest.mark.parametrize("chunk_size", [0, -1, "2000", 1.5, True])
def test_e003_chunk_size(chunk_size: object) -> None:
    with override_settings(SITEMAPX_CHUNK_SIZE=chunk_size):
        assert _errors() == ["E003"]


@pytest.mark.parametrize("use_sites", ["yes", "False", 1, 0])
def test_e004_use_sites_is_not_none_true_or_false(use_sites: object) -> None:
    with override_settings(SITEMAPX_USE_SITES=use_sites):
        assert _errors() == ["E004"]


@modify_settings(INSTALLED_APPS={"remove": ["django.contrib.sites"]})
def test_e004_use_sites_without_the_sites_framework() -> None:
    with override_settings(SITEMAPX_USE_SITES=True):
        output = _output_of_failing_check()
    assert _ID.findall(output) == ["E004"]
    assert "django.contrib.sites is not installed" in output
    with override_settings(SITEMAPX_USE_SITES=None):
        assert _warnings() == []


@pytest.mark.parametrize("module", ["not a module", "", 42, None])
def test_e005_autodiscover_module(module: object) -> None:
    with override_settings(SITEMAPX_AUTODISCOVER_MODULE=module):
        assert _errors() == ["E005"]


def test_e005_accepts_a_dotted_module_name() -> None:
    with override_settings(SITEMAPX_AUTODISCOVER_MODULE="seo.sitemaps"):
        assert _warnings() == []


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_e006_overrides(value: object) -> None:
    with override_settings(SITEMAPX_OVERRIDES=value):
        assert _errors() == ["E006"]


@pytest.mark.parametrize("setting", ["SITEMAPX_EXPORT_STORAGE", "SITEMAPX_SERVE_FROM_STORAGE"])
def test_e007_storage_alias(setting: str) -> None:
    with override_settings(**{setting: "nope"}):
        output = _output_of_failing_check()
    assert _ID.findall(output) == ["E007"]
    assert f"{setting} is 'nope'" in output
    assert "Known aliases: default, staticfiles." in output


def test_e007_accepts_known_aliases() -> None:
    with override_settings(
        SITEMAPX_EXPORT_STORAGE="default", SITEMAPX_SERVE_FROM_STORAGE="staticfiles"
    ):
        assert _warnings() == []


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_e008_index_links_gzip(value: object) -> None:
    with override_settings(SITEMAPX_INDEX_LINKS_GZIP=value):
        assert _errors() == ["E008"]


def test_e009_http_cache_control() -> None:
    with override_settings(SITEMAPX_HTTP_CACHE_CONTROL=300):
        assert _errors() == ["E009"]
    with override_settings(SITEMAPX_HTTP_CACHE_CONTROL=None):
        assert _warnings() == []


@pytest.mark.parametrize("value", ["", "  ", "noindex\r\nSet-Cookie: x=1", 1, ["noindex"]])
def test_e014_x_robots_tag(value: object) -> None:
    with override_settings(SITEMAPX_X_ROBOTS_TAG=value):
        assert _errors() == ["E014"]


@pytest.mark.parametrize("value", [None, "noindex", "noindex, noodp, noarchive", "all"])
def test_e014_accepts_none_and_header_values(value: object) -> None:
    with override_settings(SITEMAPX_X_ROBOTS_TAG=value):
        assert _warnings() == []


def test_e010_unknown_cache_alias() -> None:
    with override_settings(SITEMAPX_CACHE_ALIAS="nope"):
        assert _errors() == ["E010"]
    with override_settings(SITEMAPX_CACHE_ALIAS=None):
        assert _warnings() == []


@pytest.mark.parametrize("timeout", [0, -5, "60", True])
def test_e011_cache_timeout(timeout: object) -> None:
    with override_settings(SITEMAPX_CACHE_TIMEOUT=timeout):
        assert _errors() == ["E011"]


@pytest.mark.parametrize("timeout", [None, 1, 0.5])
def test_e011_accepts_none_and_positive_numbers(timeout: object) -> None:
    with override_settings(SITEMAPX_CACHE_TIMEOUT=timeout):
        assert _warnings() == []


@pytest.mark.parametrize("name", ["SITEMAPX_CACHE_WAIT", "SITEMAPX_CACHE_LOCK_TIMEOUT"])
@pytest.mark.parametrize("value", [0, -1, "10", None])
def test_e012_wait_and_lock_timeout(name: str, value: object) -> None:
    with override_settings(**{name: value}):
        assert _errors() == ["E012"]


@pytest.mark.parametrize("size", [-1, 1.5, "64MB", True])
def test_e013_local_bytes(size: object) -> None:
    with override_settings(SITEMAPX_CACHE_LOCAL_BYTES=size):
        assert _errors() == ["E013"]


def test_e013_accepts_zero() -> None:
    with override_settings(SITEMAPX_CACHE_LOCAL_BYTES=0):
        assert _warnings() == []


def test_w001_dummy_cache() -> None:
    dummy = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    with override_settings(CACHES=dummy):
        assert _warnings() == ["W001"]


@pytest.mark.parametrize("name", ["SITEMAPX_GZIP", "SITEMAPX_CACHE_CONTROL", "SITEMAPX_LIMT"])
def test_w002_names_an_unknown_setting(name: str) -> None:
    stderr = io.StringIO()
    with override_settings(**{name: True}):
        call_command("check", stdout=io.StringIO(), stderr=stderr)
    output = stderr.getvalue()
    assert _ID.findall(output) == ["W002"]
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


# -- sources -----------------------------------------------------------------------------


def test_e101_invalid_source_value_set_after_registration(registry: SitemapRegistry) -> None:
    source = registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    source.priority = 7
    assert _errors() == ["E101"]


def test_e102_unreversible_url_name(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["home", "no-such-page"])
    output = _output_of_failing_check()
    assert _ID.findall(output) == ["E102"]
    assert "'no-such-page'" in output


def test_e103_model_source_without_model(registry: SitemapRegistry) -> None:
    registry.register("orphan", sitemapx.ModelSource)
    assert _errors() == ["E103"]


def test_e104_non_integer_key(registry: SitemapRegistry) -> None:
    registry.register(UUIDThing, url_name="home")
    assert _errors() == ["E104"]
    registry.register(Document, section="by-weight", key_field="weight", url_name="home")
    assert _errors() == ["E104", "E104"]


def test_e105_lastmod_field(registry: SitemapRegistry) -> None:
    registry.register(Document, url_name="home", lastmod_field="path")
    registry.register(Document, section="d2", url_name="home", lastmod_field="nope")
    assert _errors() == ["E105", "E105"]


def test_e106_url_name_with_wrong_kwargs(registry: SitemapRegistry) -> None:
    registry.register(Article, url_name="article-detail", url_kwargs={"slug": "slug"})
    assert _errors() == ["E106"]


def test_e107_unknown_field(registry: SitemapRegistry) -> None:
    registry.register(Document, url_name="home", fields=["nope"])
    assert _errors() == ["E107"]


def test_w101_instances_per_url(registry: SitemapRegistry) -> None:
    registry.register(Document)
    assert _warnings() == ["W101"]


def test_e101_ill_formed_sites_set_after_registration(registry: SitemapRegistry) -> None:
    source = registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    source.sites = ["https://example.com/"]
    output = _output_of_failing_check()
    assert _ID.findall(output) == ["E101"]
    assert "give a host name" in output


def test_e108_site_ids_without_the_sites_framework(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["home"], sites=[1])
    with modify_settings(INSTALLED_APPS={"remove": "django.contrib.sites"}):
        assert _errors() == ["E108"]


@pytest.mark.django_db
def test_e109_unknown_site_id_is_a_database_check(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["home"], sites=[1, 404])
    assert _warnings() == []  # without --database, no query
    with pytest.raises(SystemCheckError) as info:
        call_command("check", databases=["default"], stdout=io.StringIO(), stderr=io.StringIO())
    output = str(info.value)
    assert _ID.findall(output) == ["E109"]
    assert "site ID 404" in output


def test_w102_host_that_allowed_hosts_refuses(registry: SitemapRegistry) -> None:
    registry.register(
        "pages", sitemapx.StaticSource, url_names=["home"], sites=["example.com", "nowhere.test"]
    )
    assert _warnings() == ["W102"]
    with override_settings(ALLOWED_HOSTS=[".test", "example.com"]):
        assert _warnings() == []


@pytest.fixture
def custom() -> Iterator[SitemapRegistry]:
    """A registry of one test; emptied afterwards, as a lingering frame may keep it alive."""
    registry = SitemapRegistry()
    yield registry
    for name in registry.sections:
        registry.unregister(name)


def test_a_custom_registrys_bad_source_is_reported(custom: SitemapRegistry) -> None:
    # The old checks looked at the default registry only.
    custom.register("extra", sitemapx.StaticSource, url_names=["no-such-page"])
    output = _output_of_failing_check()
    assert _ID.findall(output) == ["E102"]
    assert "'no-such-page' of section 'extra'" in output


def test_a_custom_sources_own_check_is_reported(registry: SitemapRegistry) -> None:
    class Audited(sitemapx.StaticSource):
        def check(self) -> list[checks.CheckMessage]:
            return [checks.Error("audit failed", obj=self, id="myapp.E001")]

    registry.register("pages", Audited, url_names=["home"])
    assert "(myapp.E001) audit failed" in _output_of_failing_check()


# -- at start-up --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "number"),
    [("SITEMAPX_LIMIT = 0", "E001"), ("SITEMAPX_AUTODISCOVER_MODULE = 42", "E005")],
)
def test_a_bad_setting_is_reported_by_manage_py_check_not_a_traceback(
    tmp_path: Path, setting: str, number: str
) -> None:
    # Start-up runs autodiscovery, and registration, before any check: neither may
    # read a setting in a way that fails there.
    (tmp_path / "bad_settings.py").write_text(f"from tests.settings import *\n{setting}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-m", "django", "check", "--settings", "bad_settings"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert f"django_sitemapx.{number}" in done.stderr
    assert "Traceback" not in done.stderr
