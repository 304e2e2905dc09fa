"""``SitemapPanel``: a page's sitemap values in Wagtail's page editor.

Add it to a page type's panels, usually its promote tab::

    promote_panels = [*Page.promote_panels, SitemapPanel()]

It renders ``editing.PageSitemapForm`` (exclude, priority, change frequency)
inside the page's form, prefixed so no page field clashes; saving the page
writes them to the ``Override`` of its URL (``wagtail_hooks``). Users without
the override permissions see the values, not the fields.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _
from wagtail.admin.panels import Panel

from . import editing


class SitemapPanel(Panel):  # type: ignore[misc]  # Wagtail is untyped
    """Exclude a page from the sitemap, or set its priority and change frequency."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("heading", _("Sitemap"))
        super().__init__(**kwargs)

    @property
    def clean_name(self) -> str:
        return str(super().clean_name or "sitemapx")

    class BoundPanel(Panel.BoundPanel):  # type: ignore[misc]  # Wagtail is untyped
        template_name = "sitemapx_wagtail/panel.html"

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            user = getattr(self.request, "user", None)
            self.editable = editing.may_edit(user)
            self.visible = self.editable or editing.may_view(user)
            self.found = editing.page_url(self.instance) if self.visible else None
            self.override = editing.override_of(self.found)
            self.sitemap_form = editing.PageSitemapForm(
                initial=editing.initial(self.override), prefix=editing.PREFIX
            )

        def is_shown(self) -> bool:
            return bool(self.visible)

        def inspect_url(self) -> str | None:
            """This page's URL in our URL inspector (the Django admin's), if it is installed."""
            if self.found is None:
                return None
            try:
                inspector = reverse("admin:django_sitemapx_inspect")
            except NoReverseMatch:
                return None
            return f"{inspector}?{urlencode({'url': self.found.url})}"

        def get_context_data(self, parent_context: Any = None) -> Any:
            context = super().get_context_data(parent_context)
            context.update(
                {
                    "form": self.sitemap_form,
                    "editable": self.editable,
                    "override": self.override,
                    "page_url": self.found.url if self.found is not None else None,
                    "inspect_url": self.inspect_url(),
                }
            )
            return context
