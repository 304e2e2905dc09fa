"""Wagtail page trees as a sitemap section (the ``django-sitemapx[wagtail]`` extra).

Register :class:`WagtailPageSource` once; add ``django_sitemapx.contrib.wagtail``
to ``INSTALLED_APPS`` so Wagtail's page events invalidate what they change.
See docs/guide/wagtail.md.
"""

from .sources import WagtailPageSource

__all__ = ["WagtailPageSource"]
