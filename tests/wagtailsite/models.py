"""Two page types: one as Wagtail lists it, one making its own sitemap URLs."""

from __future__ import annotations

from typing import Any

from django.db import models
from wagtail.models import Page

from django_sitemapx.contrib.wagtail.panels import SitemapPanel


class ArticlePage(Page):
    """A page Wagtail lists as it is: its URL from its url_path."""

    summary = models.CharField(max_length=200, blank=True)

    # Editors set its sitemap values on its promote tab.
    promote_panels = [*Page.promote_panels, SitemapPanel()]


class EventPage(Page):
    """A page listing its own URLs: none when hidden, its schedule too when it has one."""

    hidden = models.BooleanField(default=False)
    has_schedule = models.BooleanField(default=False)

    def get_sitemap_urls(self, request: Any = None) -> list[dict[str, Any]]:
        if self.hidden:
            return []
        urls = super().get_sitemap_urls(request)
        urls[0]["priority"] = 0.8
        if self.has_schedule:
            urls.append(
                {
                    "location": urls[0]["location"] + "schedule/",
                    "lastmod": self.last_published_at,
                    "changefreq": "daily",
                }
            )
        return urls
