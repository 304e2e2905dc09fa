"""The registry of sitemap sections, shaped like ``django.contrib.admin``'s."""

from __future__ import annotations

import contextlib
import traceback
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.exceptions import ImproperlyConfigured
from django.db import models
from django.utils.module_loading import autodiscover_modules

from .exceptions import AlreadyRegistered, NotRegistered
from .sources import ContribSitemapSource, ItemSource, ModelSource, Source

if TYPE_CHECKING:
    from .locations import Origin

SourceT = TypeVar("SourceT", bound=type[Any])
Target = type[models.Model] | str

# Every registry, so the system checks cover custom ones too (like admin's all_sites).
all_registries: weakref.WeakSet[SitemapRegistry] = weakref.WeakSet()


class SitemapRegistry:
    """Holds the sections of one sitemap, in registration order.

    A section is registered for a model (its name defaults to the model's
    ``model_name``) or under an explicit name for non-model sources.
    """

    def __init__(self) -> None:
        # Keep this attribute name: autodiscover_modules() restores it if an
        # app's module fails to import.
        self._registry: dict[str, Source] = {}
        # Where each section was registered (file:line), for AlreadyRegistered.
        self._registered_at: dict[str, str] = {}
        all_registries.add(self)

    def register(
        self,
        target: Target,
        source_class: type[Source] | Any = None,
        *,
        section: str | None = None,
        **options: Any,
    ) -> Source:
        """Register ``target`` (a model, or a section name) and return its source instance.

        ``source_class`` may be a ``Source`` subclass (default: ``ModelSource``
        for a model), a ``django.contrib.sitemaps`` ``Sitemap`` subclass or
        instance (wrapped), or for a named section a callable returning items.
        ``options`` set attributes on the instance. ``section`` names the
        section (default: the model's ``model_name``), so one model can have
        several. Raises ``AlreadyRegistered``, ``TypeError`` for an unknown
        option, and ``SourceConfigurationError`` for a value of the source's
        own that the protocol refuses.
        """
        name, model = self._section_name(target, section)
        if name in self._registry:
            raise AlreadyRegistered(
                f"The sitemap section {name!r} is already registered "
                f"(first registered at {self._registered_at[name]})."
            )
        source = self._build(name, model, source_class, options)
        source.validate()
        self._registry[name] = source
        self._registered_at[name] = _caller()
        return source

    def unregister(self, target: Target) -> None:
        """Remove the section of this name, or every section of this model."""
        for name in self._lookup(target):
            del self._registry[name]
            del self._registered_at[name]

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
        """The sources, in registration order (the order of the index)."""
        return iter(list(self._registry.values()))

    def __contains__(self, target: object) -> bool:
        """``"article" in registry`` or ``Article in registry``: as :meth:`is_registered`."""
        return isinstance(target, str | type) and self.is_registered(target)

    @property
    def sections(self) -> list[str]:
        """Section names in registration order (the order of the index)."""
        return list(self._registry)

    def for_origin(self, origin: Origin) -> list[Source]:
        """The sources served on ``origin``'s host, each bound to it, in registration order."""
        return [source.for_origin(origin) for source in self if source.serves(origin)]

    def site_hosts(self) -> list[str]:
        """The hosts the sections name as served on (``Source.site_hosts``: their ``sites``
        options', their languages', a Wagtail section's sites'), in registration order."""
        hosts: dict[str, None] = {}
        for source in self:
            hosts.update(dict.fromkeys(source.site_hosts()))
        return list(hosts)

    def autodiscover(self) -> None:
        """Import every installed app's ``sitemapx`` module, as the admin imports ``admin``."""
        autodiscover_modules("sitemapx", register_to=self)

    @contextlib.contextmanager
    def temporarily_empty(self) -> Iterator[SitemapRegistry]:
        """Empty the registry inside a ``with`` block and restore it afterwards (for tests)."""
        saved = dict(self._registry), dict(self._registered_at)
        self._registry.clear()
        self._registered_at.clear()
        try:
            yield self
        finally:
            self._registry.clear()
            self._registered_at.clear()
            self._registry.update(saved[0])
            self._registered_at.update(saved[1])

    def _lookup(self, target: Target) -> list[str]:
        if isinstance(target, str):
            names = [target] if target in self._registry else []
        else:
            names = [
                name
                for name, source in self._registry.items()
                if getattr(source, "model", None) is target
            ]
        if not names:
            raise NotRegistered(f"{target!r} is not registered in the sitemap.")
        return names

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


default_registry = SitemapRegistry()


def register(
    target: Target, *, section: str | None = None, registry: SitemapRegistry | None = None
) -> Callable[[SourceT], SourceT]:
    """Register the decorated source class for ``target`` and return the class unchanged.

    ``@register(Article)`` above a ``Source`` subclass (or a
    ``django.contrib.sitemaps.Sitemap`` subclass) registers it in the default
    registry, or in ``registry``; ``section`` names the section. The class's
    attributes are its options. :meth:`SitemapRegistry.register` is the
    imperative form, which also takes options.
    """

    def decorator(source_class: SourceT) -> SourceT:
        (registry or default_registry).register(target, source_class, section=section)
        return source_class

    return decorator
