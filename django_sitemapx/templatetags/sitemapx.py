"""``{% load sitemapx %}``: the robots.txt ``Sitemap`` line in a template of your own.

- ``{% sitemap_robots_lines %}``: ``Sitemap: <index URL>`` for the request's host,
  with its newline, or nothing for a host the site does not serve.
- ``{% sitemap_index_url %}``: the index URL alone.

Both need the request in the context (the ``request`` context processor, or
``render(request, ...)``).
"""

from __future__ import annotations

from typing import Any

from django import template
from django.http import HttpRequest

from ..robots import sitemap_index_url_for_request, sitemap_lines

register = template.Library()


def _request(context: Any, tag: str) -> HttpRequest:
    request = context.get("request")
    if not isinstance(request, HttpRequest):
        raise template.TemplateSyntaxError(
            f"{{% {tag} %}} needs the request in the template context: render the "
            "template with render(request, ...) or enable the request context processor."
        )
    return request


@register.simple_tag(takes_context=True)
def sitemap_robots_lines(context: Any) -> str:
    """``Sitemap: <absolute index URL>`` and a newline, for the request's host.

    Escaped where the template autoescapes (HTML); robots.txt turns autoescaping off.
    """
    return sitemap_lines(_request(context, "sitemap_robots_lines"))


@register.simple_tag(takes_context=True)
def sitemap_index_url(context: Any) -> str:
    """The absolute URL of the sitemap index for the request's host ("" if none), escaped
    where the template autoescapes."""
    return sitemap_index_url_for_request(_request(context, "sitemap_index_url")) or ""
