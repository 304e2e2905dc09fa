"""Sitemap sources: the sections of a sitemap and where their entries come from.

- ``base``: the contract every source follows (:class:`Source`, :class:`Page`,
  :class:`PageSummary`);
- ``querysets``: :class:`ModelSource`, its options and hooks; its pages are
  stored key ranges (``pages``, ``codecs``), summarized in SQL (``summaries``)
  and streamed as plain rows (``rows``, with ``extras`` and ``languages``);
- ``items``: :class:`ItemSource` and :class:`StaticSource`, in-memory lists paged
  like ``django.contrib.sitemaps``; ``contrib``: :class:`ContribSitemapSource`.
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
