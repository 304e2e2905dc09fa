"""The checks of every registry's sources (``checks/sources.py``), through ``manage.py check``."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import Group
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import modify_settings, override_settings

import django_sitemapx as sitemapx
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article, Category
from tests.support.checks import ID, check_errors, check_warnings, failing_check_output
from tests.testapp.models import Document, Placement, Tag, UUIDThing


def test_e101_invalid_source_value_set_after_registration(registry: SitemapRegistry) -> None:
    source = registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    source.priority = 7
    assert check_errors() == ["E101"]


def test_e102_unreversible_url_name(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["home", "no-such-page"])
    output = failing_check_output()
    assert ID.findall(output) == ["E102"]
    assert "'no-such-page'" in output


def test_e103_model_source_without_model(registry: SitemapRegistry) -> None:
    registry.register("orphan", sitemapx.ModelSource)
    assert check_errors() == ["E103"]


def test_e104_a_key_that_cannot_page(registry: SitemapRegistry) -> None:
    # Integer, UUID and string keys page.
    registry.register(UUIDThing, url_name="home")
    registry.register(Tag, url_name="home")
    registry.register(Category, section="by-slug", key_field="slug", url_name="home")
    assert check_warnings() == []
    registry.register(Document, section="by-weight", key_field="weight", url_name="home")
    registry.register(Document, section="by-path", key_field="path", url_name="home")  # not unique
    assert check_errors() == ["E104", "E104"]


def test_e104_a_composite_primary_key(registry: SitemapRegistry) -> None:
    registry.register(Placement, url_name="home")
    output = failing_check_output()
    assert "django_sitemapx.E104" in output and "composite" in output


def test_e105_lastmod_field(registry: SitemapRegistry) -> None:
    registry.register(Document, url_name="home", lastmod_field="path")
    registry.register(Document, section="d2", url_name="home", lastmod_field="nope")
    assert check_errors() == ["E105", "E105"]


def test_e106_url_name_with_wrong_kwargs(registry: SitemapRegistry) -> None:
    registry.register(Article, url_name="article-detail", url_kwargs={"slug": "slug"})
    assert check_errors() == ["E106"]


def test_e107_unknown_field(registry: SitemapRegistry) -> None:
    registry.register(Document, url_name="home", fields=["nope"])
    assert check_errors() == ["E107"]


def test_w101_instances_per_url(registry: SitemapRegistry) -> None:
    registry.register(Document)
    assert check_warnings() == ["W101"]


def test_e101_ill_formed_sites_set_after_registration(registry: SitemapRegistry) -> None:
    source = registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    source.sites = ["https://example.com/"]
    output = failing_check_output()
    assert ID.findall(output) == ["E101"]
    assert "give a host name" in output


def test_e108_site_ids_without_the_sites_framework(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["home"], sites=[1])
    with modify_settings(INSTALLED_APPS={"remove": "django.contrib.sites"}):
        assert check_errors() == ["E108"]


@pytest.mark.django_db
def test_e109_unknown_site_id_is_a_database_check(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["home"], sites=[1, 404])
    assert check_warnings() == []  # without --database, no query
    with pytest.raises(SystemCheckError) as info:
        call_command("check", databases=["default"], stdout=io.StringIO(), stderr=io.StringIO())
    output = str(info.value)
    assert ID.findall(output) == ["E109"]
    assert "site ID 404" in output


def test_w102_host_that_allowed_hosts_refuses(registry: SitemapRegistry) -> None:
    registry.register(
        "pages", sitemapx.StaticSource, url_names=["home"], sites=["example.com", "nowhere.test"]
    )
    assert check_warnings() == ["W102"]
    with override_settings(ALLOWED_HOSTS=[".test", "example.com"]):
        assert check_warnings() == ["W004"]  # a wildcard: see tests/checks/test_settings.py


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
    output = failing_check_output()
    assert ID.findall(output) == ["E102"]
    assert "'no-such-page' of section 'extra'" in output


def test_a_custom_sources_own_check_is_reported(registry: SitemapRegistry) -> None:
    class Audited(sitemapx.StaticSource):
        def check(self) -> list[checks.CheckMessage]:
            return [checks.Error("audit failed", obj=self, id="myapp.E001")]

    registry.register("pages", Audited, url_names=["home"])
    assert "(myapp.E001) audit failed" in failing_check_output()


def test_e111_a_section_with_no_way_to_build_a_location(registry: SitemapRegistry) -> None:
    # Group has no get_absolute_url(): its page could only answer 500.
    registry.register(Group)
    output = failing_check_output()
    assert ID.findall(output) == ["E111"]
    assert "Group has no get_absolute_url()" in output


def test_e110_not_reported_when_url_name_or_location_builds_it(registry: SitemapRegistry) -> None:
    registry.register(Group, url_name="home")
    registry.register(Group, section="by-location", location=lambda row: "/about/")
    assert check_warnings() == []
