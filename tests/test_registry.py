"""The registry: registration, errors, decorators, wrapping and autodiscovery."""

import gc
import importlib
import inspect
import sys
import weakref

import pytest
from django.contrib.sitemaps import GenericSitemap, Sitemap
from django.core.exceptions import ImproperlyConfigured

import django_sitemapx as sitemapx
from django_sitemapx.registry import SitemapRegistry, all_registries, default_registry
from example_project.articles.models import Article, Category
from tests.conftest import EXAMPLE_SECTIONS
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


def test_imperative_register_returns_the_source(registry: SitemapRegistry) -> None:
    class ArticleSitemap(sitemapx.ModelSource):
        url_name = "article-detail"
        url_kwargs = {"category": "category__slug", "slug": "slug"}

    source = sitemapx.default_registry.register(Article, ArticleSitemap, priority=0.4)
    assert isinstance(source, ArticleSitemap)
    assert registry.get("article") is source
    assert source.priority == 0.4


def test_register_as_decorator_returns_the_class_unchanged(registry: SitemapRegistry) -> None:
    class NewsSitemap(sitemapx.ModelSource):
        url_name = "article-detail"
        url_kwargs = {"category": "category__slug", "slug": "slug"}

        priority = 0.3

    attributes = dict(vars(NewsSitemap))
    assert sitemapx.register(Article, section="news")(NewsSitemap) is NewsSitemap
    assert dict(vars(NewsSitemap)) == attributes
    source = registry.get("news")
    assert type(source) is NewsSitemap
    assert (source.model, source.priority) == (Article, 0.3)


def test_the_decorator_takes_no_options(registry: SitemapRegistry) -> None:
    # The old options form, register(Model, url_name=...), would return an unused
    # decorator and register nothing: it fails loudly instead.
    with pytest.raises(TypeError):
        sitemapx.register(Article, url_name="article-detail")  # type: ignore[call-arg]
    assert registry.sections == []


def test_in_asks_for_a_section_name_or_a_model(registry: SitemapRegistry) -> None:
    registry.register(Category, url_name="category-detail", url_kwargs={"category": "slug"})
    assert "category" in registry and Category in registry
    assert "article" not in registry and Article not in registry
    assert registry.get("category") not in registry  # a source is not a section name


def test_register_decorator_into_another_registry(registry: SitemapRegistry) -> None:
    other = SitemapRegistry()

    @sitemapx.register(Category, registry=other)
    class Categories(sitemapx.ModelSource):
        url_name = "category-detail"
        url_kwargs = {"category": "slug"}

    assert isinstance(other.get("category"), Categories)
    assert registry.sections == []


def test_register_takes_no_source_positionally(registry: SitemapRegistry) -> None:
    class ArticleSitemap(sitemapx.ModelSource):
        url_name = "article-detail"
        url_kwargs = {"category": "category__slug", "slug": "slug"}

    with pytest.raises(TypeError):
        sitemapx.register(Article, ArticleSitemap)  # type: ignore[call-arg]
    assert registry.sections == []


def test_registering_a_section_twice_names_the_first_registration(
    registry: SitemapRegistry,
) -> None:
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    registry.register(Document, lastmod_field="published_on")
    with pytest.raises(sitemapx.AlreadyRegistered) as info:
        registry.register(Document)
    assert "'document'" in str(info.value)
    assert f"(first registered at {__file__}:{line})" in str(info.value)


def test_a_decorated_registration_names_the_decorator(registry: SitemapRegistry) -> None:
    @sitemapx.register("pages")
    class Pages(sitemapx.StaticSource):
        url_names = ["home"]

    line = inspect.getsourcelines(Pages)[1]  # the line of @sitemapx.register
    with pytest.raises(sitemapx.AlreadyRegistered) as info:
        registry.register("pages", Pages)
    assert f"(first registered at {__file__}:{line})" in str(info.value)


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
    assert registry.sections == []


def test_unregister(registry: SitemapRegistry) -> None:
    registry.register(Document)
    registry.unregister(Document)
    assert not registry.is_registered(Document)
    with pytest.raises(sitemapx.NotRegistered):
        registry.unregister(Document)
    with pytest.raises(sitemapx.NotRegistered):
        registry.get("document")


def test_iteration_is_in_registration_order(registry: SitemapRegistry) -> None:
    for name in ["zeta", "alpha", "mid"]:
        registry.register(name, sitemapx.StaticSource, url_names=["home"])
    assert [source.section for source in registry] == ["zeta", "alpha", "mid"]
    assert registry.sections == ["zeta", "alpha", "mid"]
    assert registry.is_registered("alpha")


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
    second.register(Category, url_name="category-detail")
    assert second.sections == ["category"]
    assert first.sections == ["document"]


def test_autodiscovery_imported_every_apps_module() -> None:
    assert sys.modules["tests.testapp.sitemapx"].IMPORTED is True
    assert default_registry.is_registered(Article)
    assert default_registry.sections == EXAMPLE_SECTIONS


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
    assert not registry.is_registered("half-done")
    assert registry.sections == []
    del broken


def test_options_win_over_the_wrapped_contrib_sitemap(registry: SitemapRegistry) -> None:
    class Pages(Sitemap):
        priority = 0.5
        changefreq = "daily"
        limit = 10

        def items(self) -> list[str]:
            return ["/a/"]

    source = registry.register("pages", Pages, priority=0.3, limit=5)
    assert (source.priority, source.changefreq, source.limit) == (0.3, "daily", 5)


def test_unregister_a_model_removes_every_section_of_it(registry: SitemapRegistry) -> None:
    registry.register(Document, section="docs-a")
    registry.register("pages", sitemapx.StaticSource, url_names=["home"])
    registry.register(Document, section="docs-b")
    registry.unregister(Document)
    assert registry.sections == ["pages"]
    assert not registry.is_registered(Document)
    # Both names are free again, and registering does not trip on a leftover origin.
    registry.register(Document, section="docs-b")
    registry.register(Document, section="docs-a")
    assert registry.sections == ["pages", "docs-b", "docs-a"]


def test_unregister_by_name_removes_that_section_only(registry: SitemapRegistry) -> None:
    registry.register(Document, section="docs-a")
    registry.register(Document, section="docs-b")
    registry.unregister("docs-a")
    assert registry.sections == ["docs-b"]
    assert registry.is_registered(Document)
    with pytest.raises(sitemapx.NotRegistered):
        registry.unregister("docs-a")


def test_temporarily_empty_restores_sections_and_their_origins() -> None:
    custom = SitemapRegistry()
    line = inspect.currentframe().f_lineno + 1  # type: ignore[union-attr]
    first = custom.register("pages", sitemapx.StaticSource, url_names=["home"])
    with custom.temporarily_empty() as inside:
        assert inside is custom
        assert custom.sections == []
        custom.register("pages", sitemapx.StaticSource, url_names=["about"])
        custom.register("legal", sitemapx.StaticSource, url_names=["about"])
    assert custom.sections == ["pages"]
    assert custom.get("pages") is first
    with pytest.raises(sitemapx.AlreadyRegistered) as info:
        custom.register("pages", sitemapx.StaticSource, url_names=["home"])
    assert f"(first registered at {__file__}:{line})" in str(info.value)


def test_temporarily_empty_restores_after_an_exception() -> None:
    before = default_registry.sections
    assert before == EXAMPLE_SECTIONS
    with pytest.raises(RuntimeError), default_registry.temporarily_empty():
        default_registry.register("extra", sitemapx.StaticSource, url_names=["home"])
        raise RuntimeError
    assert default_registry.sections == before


def test_all_registries_holds_the_default_and_custom_ones_while_they_live() -> None:
    assert default_registry in all_registries
    custom = SitemapRegistry()
    custom.register("pages", sitemapx.StaticSource, url_names=["home"])
    assert custom in all_registries
    gone = weakref.ref(custom)
    del custom
    gc.collect()
    assert gone() is None
    assert default_registry in all_registries
