"""Signals sent by django-sitemapx."""

from __future__ import annotations

from django.dispatch import Signal

sitemap_invalidated = Signal()
"""Sent after cached documents were invalidated.

Keyword arguments: ``section`` (None: every section) and ``page`` (None: every
page of ``section``). Connect to it to purge a CDN or notify search engines.
"""
