"""One test per system check ID, and one proving the checks are registered."""

import pytest
from django.core import checks
from django.test import override_settings

import django_sitemapx as sitemapx
from django_sitemapx.checks import check_cache_settings, check_settings, check_sources
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article
from tests.testapp.models import Document, UUIDThing


def _ids(messages: list[checks.CheckMessage]) -> list[str]:
    return [m.id for m in messages if m.id]


def test_checks_are_registered() -> None:
    registered = checks.registry.registry.get_checks()
    assert check_settings in registered
    assert check_sources in registered
    assert check_cache_settings in registered


def test_project_as_configured_is_clean() -> None:
    assert _ids(check_settings()) == []
    assert _ids(check_sources()) == []
    assert _ids(check_cache_settings()) == []


@pytest.mark.parametrize("limit", [0, 50_001, "100", 2.5, True])
def test_e001_limit(limit: object) -> None:
    with override_settings(SITEMAPX_LIMIT=limit):
        assert _ids(check_settings()) == ["django_sitemapx.E001"]


def test_e002_protocol() -> None:
    with override_settings(SITEMAPX_PROTOCOL="ftp"):
        assert _ids(check_settings()) == ["django_sitemapx.E002"]


def test_e003_invalid_source_value_set_after_registration(registry: SitemapRegistry) -> None:
    source = registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    source.priority = 7
    assert _ids(check_sources()) == ["django_sitemapx.E003"]


def test_e004_chunk_size() -> None:
    with override_settings(SITEMAPX_CHUNK_SIZE=0):
        assert _ids(check_settings()) == ["django_sitemapx.E004"]


def test_e005_register_without_source_or_decorator(registry: SitemapRegistry) -> None:
    sitemapx.register(Article)
    [message] = check_sources()
    assert message.id == "django_sitemapx.E005"
    assert "test_checks.py" in message.msg


def test_e006_unreversible_url_name(registry: SitemapRegistry) -> None:
    registry.register("pages", sitemapx.StaticSource, url_names=["home", "no-such-page"])
    assert _ids(check_sources()) == ["django_sitemapx.E006"]


def test_e007_model_source_without_model(registry: SitemapRegistry) -> None:
    registry.register("orphan", sitemapx.ModelSource)
    assert _ids(check_sources()) == ["django_sitemapx.E007"]


def test_e008_non_integer_key(registry: SitemapRegistry) -> None:
    registry.register(UUIDThing, url_name="home")
    assert _ids(check_sources()) == ["django_sitemapx.E008"]
    registry.register(Document, section="by-weight", key_field="weight", url_name="home")
    assert "django_sitemapx.E008" in _ids(check_sources())


def test_e009_lastmod_field(registry: SitemapRegistry) -> None:
    registry.register(Document, url_name="home", lastmod_field="path")
    registry.register(Document, section="d2", url_name="home", lastmod_field="nope")
    assert _ids(check_sources()) == ["django_sitemapx.E009", "django_sitemapx.E009"]


def test_e010_url_name_with_wrong_kwargs(registry: SitemapRegistry) -> None:
    registry.register(Article, url_name="article-detail", url_kwargs={"slug": "slug"})
    assert _ids(check_sources()) == ["django_sitemapx.E010"]


def test_e011_unknown_field(registry: SitemapRegistry) -> None:
    registry.register(Document, url_name="home", fields=["nope"])
    assert _ids(check_sources()) == ["django_sitemapx.E011"]


def test_w001_instances_per_url(registry: SitemapRegistry) -> None:
    registry.register(Document)
    [message] = check_sources()
    assert message.id == "django_sitemapx.W001"
    assert message.level == checks.WARNING


def test_e013_unknown_cache_alias() -> None:
    with override_settings(SITEMAPX_CACHE_ALIAS="nope"):
        assert _ids(check_cache_settings()) == ["django_sitemapx.E013"]
    with override_settings(SITEMAPX_CACHE_ALIAS=None):
        assert _ids(check_cache_settings()) == []


@pytest.mark.parametrize("timeout", [0, -5, "60", True])
def test_e014_cache_timeout(timeout: object) -> None:
    with override_settings(SITEMAPX_CACHE_TIMEOUT=timeout):
        assert _ids(check_cache_settings()) == ["django_sitemapx.E014"]


def test_e014_accepts_none_and_numbers() -> None:
    for timeout in (None, 1, 0.5):
        with override_settings(SITEMAPX_CACHE_TIMEOUT=timeout):
            assert _ids(check_cache_settings()) == []


@pytest.mark.parametrize("name", ["SITEMAPX_CACHE_WAIT", "SITEMAPX_CACHE_LOCK_TIMEOUT"])
def test_e015_wait_and_lock_timeout(name: str) -> None:
    with override_settings(**{name: 0}):
        assert _ids(check_cache_settings()) == ["django_sitemapx.E015"]


def test_e016_cache_control() -> None:
    with override_settings(SITEMAPX_CACHE_CONTROL=300):
        assert _ids(check_cache_settings()) == ["django_sitemapx.E016"]


def test_e017_gzip() -> None:
    with override_settings(SITEMAPX_GZIP="yes"):
        assert _ids(check_cache_settings()) == ["django_sitemapx.E017"]


def test_w002_dummy_cache() -> None:
    dummy = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    with override_settings(CACHES=dummy):
        assert _ids(check_cache_settings()) == ["django_sitemapx.W002"]


@pytest.mark.parametrize("size", [-1, 1.5, "64MB"])
def test_e018_local_bytes(size: object) -> None:
    with override_settings(SITEMAPX_CACHE_LOCAL_BYTES=size):
        assert _ids(check_cache_settings()) == ["django_sitemapx.E018"]
