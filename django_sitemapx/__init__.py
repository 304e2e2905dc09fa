"""django-sitemapx: streaming, protocol-exact XML sitemaps for Django.

The public API is importable from here: the registry, the sources, and what a
custom source needs (``Entry``, ``Skipped``, ``Skip``, ``LocationBuilder``,
``Page``, ``PageSummary``, ``XHTML_NAMESPACE``); ``django_sitemapx.values``
formats lastmod, changefreq and priority as protocol text. Nothing here
imports models, so this module is safe to import from settings and
``AppConfig`` modules.
"""

from __future__ import annotations

from .entries import XHTML_NAMESPACE, Alternate, Entry, EntryStream, Extras, Skipped
from .exceptions import (
    AlreadyRegistered,
    ExportError,
    NotRegistered,
    Skip,
    SkipReason,
    SourceConfigurationError,
)
from .locations import LocationBuilder, Origin
from .registry import SitemapRegistry, default_registry, register
from .serving.cache import invalidate
from .sources import (
    ContribSitemapSource,
    ItemSource,
    ModelSource,
    Page,
    PageSummary,
    Source,
    StaticSource,
)

__all__ = [
    "XHTML_NAMESPACE",
    "AlreadyRegistered",
    "Alternate",
    "ContribSitemapSource",
    "Entry",
    "EntryStream",
    "ExportError",
    "Extras",
    "ItemSource",
    "LocationBuilder",
    "ModelSource",
    "NotRegistered",
    "Origin",
    "Page",
    "PageSummary",
    "SitemapRegistry",
    "Skip",
    "SkipReason",
    "Skipped",
    "Source",
    "SourceConfigurationError",
    "StaticSource",
    "autodiscover",
    "default_registry",
    "invalidate",
    "register",
]


def autodiscover() -> None:
    """Import every installed app's sitemap module into the default registry."""
    default_registry.autodiscover()
