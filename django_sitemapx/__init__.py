"""django-sitemapx: streaming, protocol-exact XML sitemaps for Django.

The public API is importable from here; nothing here imports models, so this
module is safe to import from settings and ``AppConfig`` modules.
"""

from __future__ import annotations

from .exceptions import AlreadyRegistered, InvalidValue, NotRegistered, SourceConfigurationError
from .invalidation import invalidate
from .model_source import ModelSource
from .registry import SitemapRegistry, register, site, unregister
from .sources import ContribSitemapSource, ItemSource, PageSummary, Source, StaticSource

__all__ = [
    "AlreadyRegistered",
    "ContribSitemapSource",
    "InvalidValue",
    "ItemSource",
    "ModelSource",
    "NotRegistered",
    "PageSummary",
    "SitemapRegistry",
    "Source",
    "SourceConfigurationError",
    "StaticSource",
    "autodiscover",
    "invalidate",
    "register",
    "site",
    "unregister",
]


def autodiscover() -> None:
    """Import every installed app's sitemap module into the default registry."""
    site.autodiscover()
