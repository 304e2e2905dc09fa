"""django-sitemapx: streaming, protocol-exact XML sitemaps for Django.

The public API is importable from here: the registry, the sources, and what a
custom source needs (``Entry``, ``Skipped``, ``SkipCounter``, ``Skip``,
``LocationBuilder``, ``Page``, ``PageSummary``, ``XHTML_NAMESPACE``), and the
image, video and news extensions (``RelatedImages``, ``RelatedVideos``,
``Video``, ``News``, ``Publication``, ``NewsSource``); ``django_sitemapx.values``
formats lastmod, changefreq and priority as protocol text. Nothing here
imports models, so this module is safe to import from settings and
``AppConfig`` modules.
"""

from __future__ import annotations

from .entries import (
    IMAGE_NAMESPACE,
    NEWS_NAMESPACE,
    VIDEO_NAMESPACE,
    XHTML_NAMESPACE,
    Alternate,
    Entry,
    EntryStream,
    Extras,
    SkipCounter,
    Skipped,
)
from .exceptions import (
    AlreadyRegistered,
    ExportError,
    NotRegistered,
    Skip,
    SkipReason,
    SourceConfigurationError,
)
from .extensions import News, Publication, RelatedImages, RelatedVideos, Video
from .invalidation import invalidate
from .locations import LocationBuilder, Origin
from .registry import SitemapRegistry, default_registry, register
from .sources import (
    ContribSitemapSource,
    ItemSource,
    ModelSource,
    Page,
    PageSummary,
    Source,
    StaticSource,
)
from .sources.news import NewsSource

__all__ = [
    "IMAGE_NAMESPACE",
    "NEWS_NAMESPACE",
    "VIDEO_NAMESPACE",
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
    "News",
    "NewsSource",
    "NotRegistered",
    "Origin",
    "Page",
    "PageSummary",
    "Publication",
    "RelatedImages",
    "RelatedVideos",
    "SitemapRegistry",
    "Skip",
    "SkipCounter",
    "SkipReason",
    "Skipped",
    "Source",
    "SourceConfigurationError",
    "StaticSource",
    "Video",
    "autodiscover",
    "default_registry",
    "invalidate",
    "register",
]


def autodiscover() -> None:
    """Import every installed app's sitemap module into the default registry."""
    default_registry.autodiscover()
