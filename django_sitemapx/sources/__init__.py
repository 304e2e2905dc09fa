"""Sitemap sources: the sections of a sitemap and where their entries come from.

- ``base``: the contract every source follows (:class:`Source`, :class:`Page`,
  :class:`PageSummary`);
- ``querysets``: :class:`ModelSource`, pages of a queryset cut on stable key
  ranges (``keyset``) and streamed as plain rows;
- ``items``: :class:`ItemSource`, :class:`StaticSource` and
  :class:`ContribSitemapSource`, in-memory lists paged like
  ``django.contrib.sitemaps``.
"""

from .base import ListedPage, Page, PageSummary, Source
from .contrib import ContribSitemapSource
from .items import ItemSource, StaticSource
from .querysets import ModelSource

__all__ = [
    "ContribSitemapSource",
    "ItemSource",
    "ListedPage",
    "ModelSource",
    "Page",
    "PageSummary",
    "Source",
    "StaticSource",
]
