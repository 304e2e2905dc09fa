"""App configs: the default one autodiscovers, the simple one does not; both add checks."""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Iterator

import pytest
from django.apps import apps
from django.core import checks
from django.core.checks.registry import CheckRegistry
from django.test import override_settings

import django_sitemapx as sitemapx
from django_sitemapx.apps import SimpleSitemapxConfig, SitemapxConfig
from django_sitemapx.registry import SitemapRegistry, default_registry
from tests.conftest import EXAMPLE_SECTIONS

SITEMAP_MODULES = ("example_project.articles.sitemapx", "tests.testapp.sitemapx")


def _config(config_class: type[SimpleSitemapxConfig]) -> SimpleSitemapxConfig:
    return config_class("django_sitemapx", importlib.import_module("django_sitemapx"))


def test_the_default_config_is_the_autodiscovering_one() -> None:
    assert type(apps.get_app_config("django_sitemapx")) is SitemapxConfig


def test_start_up_imported_every_apps_sitemap_module() -> None:
    assert sys.modules["tests.testapp.sitemapx"].IMPORTED is True
    assert default_registry.sections == EXAMPLE_SECTIONS


@pytest.fixture
def fresh_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[SitemapRegistry]:
    """An empty default registry and the apps' sitemap modules not yet imported."""
    for name in SITEMAP_MODULES:
        package, _, module = name.rpartition(".")
        # Restored afterwards: the module and the package's attribute naming it.
        monkeypatch.setattr(sys.modules[package], module, sys.modules[name])
        monkeypatch.delitem(sys.modules, name)
    with default_registry.temporarily_empty():
        yield default_registry


def test_sitemapx_config_ready_autodiscovers(fresh_start: SitemapRegistry) -> None:
    _config(SitemapxConfig).ready()
    assert all(name in sys.modules for name in SITEMAP_MODULES)
    assert fresh_start.sections == EXAMPLE_SECTIONS


def test_simple_config_ready_does_not_autodiscover(fresh_start: SitemapRegistry) -> None:
    _config(SimpleSitemapxConfig).ready()
    assert not any(name in sys.modules for name in SITEMAP_MODULES)
    assert fresh_start.sections == []


def test_only_the_default_config_calls_autodiscover(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[SitemapRegistry] = []
    monkeypatch.setattr(SitemapRegistry, "autodiscover", lambda self: calls.append(self))
    _config(SimpleSitemapxConfig).ready()
    assert calls == []
    _config(SitemapxConfig).ready()
    assert calls == [default_registry]


@pytest.mark.parametrize("config_class", [SimpleSitemapxConfig, SitemapxConfig])
def test_ready_registers_the_checks(
    config_class: type[SimpleSitemapxConfig], monkeypatch: pytest.MonkeyPatch
) -> None:
    gc.collect()  # no registry of an earlier test, kept by a reference cycle, is checked
    registry = CheckRegistry()
    monkeypatch.setattr(checks, "register", registry.register)
    monkeypatch.setattr(SitemapRegistry, "autodiscover", lambda self: None)
    assert registry.run_checks() == []
    _config(config_class).ready()
    with default_registry.temporarily_empty():
        default_registry.register("pages", sitemapx.StaticSource, url_names=["no-such-page"])
        with override_settings(SITEMAPX_LIMIT=0):
            ids = sorted(message.id for message in registry.run_checks())
        # The source checks are tagged "urls", as Django's own URL checks are.
        urls_ids = [message.id for message in registry.run_checks(tags=[checks.Tags.urls])]
    assert ids == ["django_sitemapx.E001", "django_sitemapx.E102"]
    assert urls_ids == ["django_sitemapx.E102"]
