"""The registry: registration, errors, decorators, wrapping and autodiscovery."""

import importlib
import sys

import pytest
from django.apps import apps
from django.contrib.sitemaps import GenericSitemap, Sitemap
from django.core.exceptions import ImproperlyConfigured

import django_sitemapx as sitemapx
from django_sitemapx.apps import SimpleSitemapxConfig, SitemapxConfig
from django_sitemapx.registry import SitemapRegistry
from example_project.articles.models import Article, Category
from tests.testapp.models import AbstractThing, Document


def test_register_model_with_options(registry: SitemapRegistry) -> None:
    source = registry.register(
        Category, url_name="category-detail", url_kwargs={"category": "slug"}
    )
    assert isinstance(source, sitemapx.ModelSource)
    assert source.section == "category"
    assert source.model is Category
    assert registry.is_registered(Category)
    assert registry.is_registered("category")
    assert registry.get("category") is source


def test_module_register_with_source_class_returns_the_class(registry: SitemapRegistry) -> None:
    class ArticleSitemap(sitemapx.ModelSource):
        url_name = "article-detail"
        url_kwargs = {"category": "category__slug", "slug": "slug"}

    assert sitemapx.register(Article, ArticleSitemap) is ArticleSitemap
    assert isinstance(registry.get("article"), ArticleSitemap)


def test_register_as_decorator(registry: SitemapRegistry) -> None:
    @sitemapx.register(Article, section="news")
    class NewsSitemap(sitemapx.ModelSource):
        url_name = "article-detail"
        url_kwargs = {"category": "category__slug", "slug": "slug"}

    assert isinstance(NewsSitemap, type)
    assert isinstance(registry.get("news"), NewsSitemap)
    assert registry.pending() == {}


def test_register_without_source_and_without_decorating_is_pending(
    registry: SitemapRegistry,
) -> None:
    sitemapx.register(Article)
    assert "article" in registry.pending()
    assert __file__ in registry.pending()["article"]
    assert not registry.is_registered(Article)


def test_registering_a_section_twice_names_the_first_registration(
    registry: SitemapRegistry,
) -> None:
    registry.register(Document, lastmod_field="published_on")
    with pytest.raises(sitemapx.AlreadyRegistered) as info:
        registry.register(Document)
    assert "'document'" in str(info.value)
    assert f"{__file__}:" in str(info.value)


def test_same_model_in_two_sections(registry: SitemapRegistry) -> None:
    registry.register(Document, section="docs-a")
    registry.register(Document, section="docs-b")
    assert registry.sections == ["docs-a", "docs-b"]


def test_abstract_models_are_refused(registry: SitemapRegistry) -> None:
    with pytest.raises(ImproperlyConfigured, match="abstract"):
        registry.register(AbstractThing)


@pytest.mark.parametrize("name", ["", "a b", "a/b", "café", "a.b"])
def test_bad_section_names_are_refused(registry: SitemapRegistry, name: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="section name"):
        registry.register(name, sitemapx.StaticSource, url_names=["home"])


def test_register_refuses_other_targets(registry: SitemapRegistry) -> None:
    with pytest.raises(TypeError):
        registry.register(42)  # type: ignore[arg-type]


def test_unknown_option_is_a_clear_error(registry: SitemapRegistry) -> None:
    with pytest.raises(TypeError, match="no option 'lastmod_feld'"):
        registry.register(Document, lastmod_feld="published_on")


def test_invalid_static_values_fail_at_registration(registry: SitemapRegistry) -> None:
    with pytest.raises(sitemapx.SourceConfigurationError, match="priority"):
        registry.register(Document, priority=7)
    with pytest.raises(sitemapx.SourceConfigurationError, match="changefreq"):
        registry.register("pages", sitemapx.StaticSource, changefreq="sometimes")
    with pytest.raises(sitemapx.SourceConfigurationError, match="limit"):
        registry.register(Document, limit=50_001)
    with pytest.raises(sitemapx.SourceConfigurationError, match="protocol"):
        registry.register(Document, protocol="ftp")
    assert len(registry) == 0


def test_unregister(registry: SitemapRegistry) -> None:
    registry.register(Document)
    sitemapx.unregister(Document)
    assert not registry.is_registered(Document)
    with pytest.raises(sitemapx.NotRegistered):
        registry.unregister(Document)
    with pytest.raises(sitemapx.NotRegistered):
        registry.get("document")


def test_iteration_is_in_registration_order(registry: SitemapRegistry) -> None:
    for name in ["zeta", "alpha", "mid"]:
        registry.register(name, sitemapx.StaticSource, url_names=["home"])
    assert [source.section for source in registry] == ["zeta", "alpha", "mid"]
    assert "alpha" in registry


def test_callable_becomes_an_item_source(registry: SitemapRegistry) -> None:
    source = registry.register("legal", lambda: ["/terms/", {"location": "/privacy/"}])
    assert isinstance(source, sitemapx.ItemSource)
    assert list(source.items()) == ["/terms/", {"location": "/privacy/"}]


def test_contrib_sitemap_class_and_instance_are_wrapped(registry: SitemapRegistry) -> None:
    class Pages(Sitemap):
        def items(self) -> list[str]:
            return ["/a/"]

        def location(self, item: str) -> str:
            return item

    by_class = registry.register("pages", Pages)
    by_instance = registry.register(
        "generic", GenericSitemap({"queryset": Article.objects.all()}, priority=0.4)
    )
    assert isinstance(by_class, sitemapx.ContribSitemapSource)
    assert isinstance(by_instance, sitemapx.ContribSitemapSource)
    assert by_instance.priority == 0.4


def test_separate_registries_do_not_share_sections() -> None:
    first, second = SitemapRegistry(), SitemapRegistry()
    first.register(Document)
    assert not second.is_registered(Document)
    sitemapx.register(Category, registry=second, url_name="category-detail")
    assert second.sections == ["category"]


def test_autodiscovery_imported_every_apps_module() -> None:
    assert sys.modules["tests.testapp.sitemapx"].IMPORTED is True
    assert sitemapx.site.is_registered(Article)
    assert sitemapx.site.sections == ["article", "category", "pages"]


def test_autodiscovery_failure_rolls_the_registry_back(
    registry: SitemapRegistry, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    broken = type(sys)("tests.testapp.sitemapx")

    def import_module(name: str, package: str | None = None):  # type: ignore[no-untyped-def]
        if name.endswith(".sitemapx") and name.startswith("tests.testapp"):
            registry.register("half-done", sitemapx.StaticSource, url_names=["home"])
            raise ImportError("boom")
        return importlib.import_module(name, package)

    monkeypatch.setattr("django.utils.module_loading.import_module", import_module)
    with pytest.raises(ImportError, match="boom"):
        registry.autodiscover()
    assert "half-done" not in registry
    del broken


def test_default_config_autodiscovers_and_simple_config_does_not(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[str] = []
    monkeypatch.setattr(SitemapRegistry, "autodiscover", lambda self: calls.append("x"))
    module = importlib.import_module("django_sitemapx")
    SimpleSitemapxConfig("django_sitemapx", module).ready()
    assert calls == []
    SitemapxConfig("django_sitemapx", module).ready()
    assert calls == ["x"]
    assert isinstance(apps.get_app_config("django_sitemapx"), SitemapxConfig)


def test_options_win_over_the_wrapped_contrib_sitemap(registry: SitemapRegistry) -> None:
    class Pages(Sitemap):
        priority = 0.5
        changefreq = "daily"
        limit = 10

        def items(self) -> list[str]:
            return ["/a/"]

    source = registry.register("pages", Pages, priority=0.3, limit=5)
    assert (source.priority, source.changefreq, source.limit) == (0.3, "daily", 5)
