"""Editors' sitemap values of one Wagtail page: read and written as our ``Override``.

The page's panel (``panels.SitemapPanel``) renders :class:`PageSitemapForm`
inside Wagtail's page form; when the page is saved (``wagtail_hooks``),
:func:`save_from_request` writes what it holds to the ``Override`` of the
page's live URL on its own site: the URL the sitemap lists, on the host its
site's section is served on (``Override.host``), so two sites' pages at the
same path keep their own values, and the inspector, the CSV export and the
rules' admin see the same row. Clearing every value deletes the override,
unless it holds a value the panel does not show (a forced lastmod set in the
Django admin), which is kept. Where the page's host has no override of its
own, the panel shows the one of every host (set in the Django admin), and
saving values writes one of the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.contrib import messages
from django.db import transaction
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from ...admin.lookup import place
from ...exceptions import InvalidLocation
from ...locations import Origin
from ...locations.hosts import canonical_host
from ...locations.keys import location_key
from ...models import CHANGEFREQ_CHOICES, Override, location_hash
from ...overrides import override_on
from ...registry import default_registry
from .sources import page_model

# The prefix of the panel's fields in Wagtail's page form (no page field starts with it).
PREFIX = "sitemapx"
# What a user needs to change a page's sitemap values from its editor.
EDIT_PERMISSIONS = (
    "django_sitemapx.add_override",
    "django_sitemapx.change_override",
    "django_sitemapx.delete_override",
)
VIEW_PERMISSION = "django_sitemapx.view_override"

_PRIORITIES = [(f"{tenth / 10:.1f}", f"{tenth / 10:.1f}") for tenth in range(10, -1, -1)]


class PageSitemapForm(forms.Form):
    """The panel's fields: exclude, priority, change frequency; empty keeps the section's."""

    # Posted with the panel: a page form without it says nothing about the sitemap.
    present = forms.CharField(widget=forms.HiddenInput, initial="1")
    exclude = forms.BooleanField(
        label=_("Leave this page out of the sitemap"),
        required=False,
        help_text=_("Its translations stop naming it as an alternate too."),
    )
    priority = forms.TypedChoiceField(
        label=_("Sitemap priority"),
        choices=[("", _("The section's value")), *_PRIORITIES],
        coerce=Decimal,
        empty_value=None,
        required=False,
    )
    changefreq = forms.ChoiceField(
        label=_("Sitemap change frequency"),
        choices=[("", _("The section's value")), *CHANGEFREQ_CHOICES],
        required=False,
    )


@dataclass(frozen=True)
class PageUrl:
    """A page's live URL on its own site: the origin, and the override's key."""

    origin: Origin
    key: str

    @property
    def url(self) -> str:
        return self.origin.prefix + self.key

    @property
    def host(self) -> str:
        """The host as ``Override.host`` stores it (the scheme's default port dropped)."""
        return canonical_host(self.origin.host, self.origin.scheme)


def page_url(page: Any) -> PageUrl | None:
    """The live URL of ``page`` (as stored, not its draft) on its site; None without one."""
    stored: Any = page_model()._default_manager.filter(pk=page.pk).first() if page.pk else None
    if stored is None:
        return None
    parts = stored.specific_deferred.get_url_parts()
    if parts is None:
        return None
    _site_id, root_url, path = parts
    if not root_url or not path:
        return None
    split = urlsplit(root_url)
    if split.scheme not in ("http", "https") or not split.netloc:
        return None
    try:
        key = location_key(path)
    except InvalidLocation:
        return None
    return PageUrl(Origin(split.scheme, split.netloc.lower()), key)


def override_of(found: PageUrl | None) -> Override | None:
    """The override that applies to a page's URL on its site's host, if there is one."""
    if found is None:
        return None
    applying: Override | None = override_on(found.key, found.host)
    return applying


def may_edit(user: Any) -> bool:
    return bool(user is not None and user.has_perms(EDIT_PERMISSIONS))


def may_view(user: Any) -> bool:
    return bool(user is not None and (user.has_perm(VIEW_PERMISSION) or may_edit(user)))


def initial(override: Override | None) -> dict[str, Any]:
    """The panel's values for ``override`` (none: the section's values)."""
    if override is None:
        return {"present": "1"}
    return {
        "present": "1",
        "exclude": override.exclude,
        "priority": f"{override.priority:.1f}" if override.priority is not None else "",
        "changefreq": override.changefreq,
    }


def save_from_request(request: HttpRequest, page: Any) -> None:
    """Write the panel's values posted with ``page``'s form to its override (hook receiver)."""
    if request.method != "POST" or f"{PREFIX}-present" not in request.POST:
        return  # this page type has no panel
    if not may_edit(request.user):
        messages.error(request, _("You may not change this page's sitemap settings."))
        return
    form = PageSitemapForm(request.POST, prefix=PREFIX)
    if not form.is_valid():
        errors = "; ".join(
            f"{form.fields[name].label}: {' '.join(map(str, found))}"
            for name, found in form.errors.items()
        )
        messages.error(request, _("The sitemap settings were not saved: %s") % errors)
        return
    values = form.cleaned_data
    found = page_url(page)
    if found is None:
        if values["exclude"] or values["priority"] is not None or values["changefreq"]:
            messages.warning(
                request, _("The sitemap settings were not saved: this page has no URL.")
            )
        return
    write(found, values, request.user)


def write(found: PageUrl, values: dict[str, Any], user: Any = None) -> Override | None:
    """Set the override of ``found`` to ``values``; delete it when it is left empty.

    Returns the override that applies (None when there is none). Nothing is
    written when nothing changes, so saving a page leaves its override's history
    alone. The override written is the one of the page's host; one of every host
    is never changed from here.
    """
    exclude = bool(values.get("exclude"))
    priority = values.get("priority")
    changefreq = values.get("changefreq") or ""
    with transaction.atomic():
        override = (
            Override.objects.select_for_update()
            .filter(location_hash=location_hash(found.key, found.host))
            .first()
        )
        if override is None:
            every_host = Override.objects.filter(location_hash=location_hash(found.key)).first()
            if every_host is not None and (
                every_host.exclude,
                every_host.priority,
                every_host.changefreq,
            ) == (exclude, priority, changefreq):
                return every_host  # the panel showed its values, unchanged
            if not exclude and priority is None and not changefreq:
                return None
            override = Override(location=found.key, host=found.host)
        elif (override.exclude, override.priority, override.changefreq) == (
            exclude,
            priority,
            changefreq,
        ):
            return override
        override.exclude, override.priority, override.changefreq = exclude, priority, changefreq
        if not exclude and priority is None and not changefreq and override.lastmod is None:
            override.delete()  # what it held is gone: the page has the section's values
            return None
        override.changed_by = user if user is not None and user.is_authenticated else None
        override.section, override.page = place(default_registry, found.key, found.origin)
        override.save()
    return override
