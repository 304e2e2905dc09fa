"""The registry of sitemap sections, shaped like ``django.contrib.admin``'s."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.utils.module_loading import autodiscover_modules

from .conf import app_settings
from .exceptions import AlreadyRegistered, NotRegistered
from .model_source import ModelSource
from .sources import ContribSitemapSource, ItemSource, Source

SourceT = TypeVar("SourceT", bound=type[Source])
Target = type[models.Model] | str


class SitemapRegistry:
    """Holds the sections of one sitemap, in registration order.

    A section is registered for a model (its name defaults to the model's
    ``model_name``) or under an explicit name for non-model sources.
    """

    def __init__(self, name: str = "sitemapx") -> None:
        self.name = name
        # Keep this attribute name: autodiscover_modules() restores it if an
        # app's module fails to import.
        self._registry: dict[str, Source] = {}
        self._origins: dict[str, str] = {}
        self._pending: dict[str, str] = {}

    def register(
        self,
        target: Target,
        source_class: type[Source] | Any = None,
        *,
        section: str | None = None,
        **options: Any,
    ) -> Source:
        """Register ``target`` (a model, or a section name) and return its source instance.

        ``source_class`` may be a ``Source`` subclass, a ``django.contrib.sitemaps``
        ``Sitemap`` subclass or instance (wrapped), or for a named section a
        callable returning items. ``options`` set attributes on the instance.
        """
        name, model = self._section_name(target, section)
        if name in self._registry:
            raise AlreadyRegistered(
                f"The sitemap section {name!r} is already registered "
                f"(first registered at {self._origins[name]})."
            )
        source = self._build(name, model, source_class, options)
        source.validate()
        self._registry[name] = source
        self._origins[name] = _caller()
        self._pending.pop(name, None)
        return source

    def unregister(self, target: Target) -> None:
        """Remove a section, given its model or its name."""
        name = self._lookup(target)
        del self._registry[name]
        del self._origins[name]

    def is_registered(self, target: Target) -> bool:
        """Whether a section exists for this model or name."""
        try:
            self._lookup(target)
        except NotRegistered:
            return False
        return True

    def get(self, section: str) -> Source:
        """The source of a section, or ``NotRegistered``."""
        try:
            return self._registry[section]
        except KeyError:
            raise NotRegistered(f"No sitemap section is named {section!r}.") from None

    def __iter__(self) -> Iterator[Source]:
        return iter(list(self._registry.values()))

    def __len__(self) -> int:
        return len(self._registry)

    def __bool__(self) -> bool:
        # autodiscover_modules() tests "if register_to:" before rolling back a
        # failed import: an empty registry must still count as given.
        return True

    def __contains__(self, section: object) -> bool:
        return section in self._registry

    @property
    def sections(self) -> list[str]:
        """Section names in registration order (the order of the index)."""
        return list(self._registry)

    def pending(self) -> dict[str, str]:
        """``register(model)`` calls with no source that were never used as decorators."""
        return dict(self._pending)

    def mark_pending(self, target: Target, section: str | None) -> None:
        name, _ = self._section_name(target, section)
        self._pending[name] = _caller()

    def autodiscover(self) -> None:
        """Import every installed app's sitemap module (``sitemapx.py`` by default)."""
        autodiscover_modules(app_settings.AUTODISCOVER_MODULE, register_to=self)

    def _lookup(self, target: Target) -> str:
        if isinstance(target, str):
            if target in self._registry:
                return target
        else:
            for name, source in self._registry.items():
                if getattr(source, "model", None) is target:
                    return name
        raise NotRegistered(f"{target!r} is not registered in the sitemap.")

    @staticmethod
    def _section_name(
        target: Target, section: str | None
    ) -> tuple[str, type[models.Model] | None]:
        if isinstance(target, str):
            name, model = section or target, None
        elif isinstance(target, type) and issubclass(target, models.Model):
            if target._meta.abstract:
                raise ImproperlyConfigured(
                    f"The model {target.__name__} is abstract, so it cannot be registered "
                    "in the sitemap."
                )
            name, model = section or target._meta.model_name or "", target
        else:
            raise TypeError(f"Register a model class or a section name, not {target!r}")
        if not name or not all(c.isalnum() or c in "-_" for c in name) or not name.isascii():
            raise ImproperlyConfigured(
                f"Sitemap section name {name!r} must be non-empty ASCII letters, digits, "
                "'-' or '_'."
            )
        return name, model

    @staticmethod
    def _build(
        name: str, model: type[models.Model] | None, source_class: Any, options: dict[str, Any]
    ) -> Source:
        if source_class is None:
            source_class = ModelSource if model is not None else ItemSource
        if isinstance(source_class, type) and issubclass(source_class, Source):
            if issubclass(source_class, ModelSource):
                return source_class(name, model=model, **options)
            return source_class(name, **options)
        if _is_contrib_sitemap(source_class):
            return ContribSitemapSource(name, sitemap=source_class, **options)
        if callable(source_class) and model is None:
            return ItemSource(name, items=source_class, **options)
        raise TypeError(f"{source_class!r} is not a sitemap source")


def _is_contrib_sitemap(candidate: Any) -> bool:
    from django.contrib.sitemaps import Sitemap

    if isinstance(candidate, type):
        return issubclass(candidate, Sitemap)
    return isinstance(candidate, Sitemap)


def _caller() -> str:
    """Where the registration came from: the first frame outside this module."""
    for frame in reversed(traceback.extract_stack()):
        if frame.filename != __file__:
            return f"{frame.filename}:{frame.lineno}"
    return "unknown"


site = SitemapRegistry()


def register(
    target: Target,
    source_class: Any = None,
    *,
    section: str | None = None,
    registry: SitemapRegistry | None = None,
    **options: Any,
) -> Any:
    """Register a section in the default registry, or decorate a source class.

    ``register(Article, ArticleSitemap)`` and ``register(Article, lastmod_field=...)``
    register at once. ``@register(Article)`` above a ``Source`` subclass registers
    that class. ``register(Article)`` used as neither is reported by check
    ``django_sitemapx.E005``.
    """
    registry = registry or site
    if source_class is not None or options:
        registry.register(target, source_class, section=section, **options)
        return source_class
    registry.mark_pending(target, section)

    def decorator(cls: SourceT) -> SourceT:
        registry.register(target, cls, section=section)
        return cls

    return decorator


def unregister(target: Target, *, registry: SitemapRegistry | None = None) -> None:
    """Remove a section from the default registry (or ``registry``)."""
    (registry or site).unregister(target)
