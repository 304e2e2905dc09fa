"""Two page types: a plain page, and an event listing its tickets page too."""

from __future__ import annotations

from typing import Any

from django.db import models
from wagtail.admin.panels import FieldPanel
from wagtail.models import Page

from django_sitemapx.contrib.wagtail.panels import SitemapPanel


class DemoPage(Page):
    """A page as Wagtail lists it: one URL, from its url_path."""

    body = models.TextField(blank=True)

    content_panels = [*Page.content_panels, FieldPanel("body")]
    # Editors exclude it, or set its priority and change frequency, on its promote tab.
    promote_panels = [*Page.promote_panels, SitemapPanel()]
    template = "wagtail_demo/page.html"


class DemoEventPage(Page):
    """A page making its own sitemap URLs: itself, and its tickets page."""

    body = models.TextField(blank=True)

    content_panels = [*Page.content_panels, FieldPanel("body")]
    promote_panels = [*Page.promote_panels, SitemapPanel()]
    template = "wagtail_demo/page.html"

    def get_sitemap_urls(self, request: Any = None) -> list[dict[str, Any]]:
        urls = super().get_sitemap_urls(request)
        if urls:
            urls.append(
                {
                    "location": urls[0]["location"] + "tickets/",
                    "lastmod": self.last_published_at,
                    "changefreq": "daily",
                }
            )
        return urls
