"""Wagtail's hooks (found by Wagtail in every installed app): a saved page's sitemap values."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from wagtail import hooks

from .editing import save_from_request


def sitemap_values_of_saved_page(request: HttpRequest, page: Any) -> None:
    """A page was created or saved in Wagtail's editor: its panel's values, if it has one."""
    save_from_request(request, page)


hooks.register("after_create_page", sitemap_values_of_saved_page)
hooks.register("after_edit_page", sitemap_values_of_saved_page)
