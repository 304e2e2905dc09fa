"""The URL inspector and the sitemap overview, two pages of the override admin."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from ..documents import index_path, listed_pages, page_path, served_here
from ..entries import NewsElement, VideoElement
from ..exceptions import SkipReason
from ..locations.hosts import origin_for_request
from ..models import Override
from ..overrides import fetch, table_ready
from ..registry import default_registry
from ..skips import recorded_skips
from ..values import parse_lastmod
from . import lookup as locating

if TYPE_CHECKING:
    from . import OverrideAdmin

REASONS = {
    locating.NOT_REGISTERED: _(
        "No registered section lists this URL: its model or page is not registered in "
        "the sitemap, or its section builds a different URL."
    ),
    locating.EXCLUDED: _("An override excludes this URL from the sitemap."),
    locating.FILTERED_OUT: _(
        "The row exists but the section's queryset filters it out (for example, it is "
        "not published)."
    ),
    locating.TOO_LONG: _("The URL is too long: the protocol allows fewer than 2,048 characters."),
    locating.SKIPPED: _("The section has this row but leaves its entry out."),
    locating.INVALID: _("This is not a path or an http(s) URL."),
}
SKIP_REASONS: dict[str, Any] = {
    SkipReason.CONTROL_CHARACTERS: _("the URL would contain control characters"),
    SkipReason.INVALID_LOCATION: _("its location is not a well-formed path or URL"),
    SkipReason.NOT_ABSOLUTE: _("the location is not a path or an absolute URL"),
    SkipReason.OTHER_HOST: _("the URL is on another host"),
    SkipReason.TOO_LONG: _("the URL is too long"),
    SkipReason.MISSING_VALUE: _("a value the URL needs is empty"),
    SkipReason.NO_REVERSE_MATCH: _("its values do not fit the URL pattern"),
    SkipReason.OVER_URL_LIMIT: _("its page already holds the most URLs allowed"),
    SkipReason.OVER_SIZE_LIMIT: _("it is larger than its section allows one URL to be"),
    SkipReason.UNKNOWN_LANGUAGE: _("its language is not one of the section's languages"),
    SkipReason.ILLEGAL_CHARACTERS: _("it holds characters XML does not allow"),
    SkipReason.INVALID_LASTMOD: _("its last modification date is invalid"),
    SkipReason.INVALID_CHANGEFREQ: _("its change frequency is invalid"),
    SkipReason.INVALID_PRIORITY: _("its priority is invalid"),
    SkipReason.MISSING_NEWS: _("it has no news data (publication date and title)"),
    SkipReason.INVALID_NEWS: _("its news data is invalid"),
    SkipReason.OLD_NEWS: _("its news item is older than two days"),
    SkipReason.INVALID_IMAGE: _("one of its images has an invalid URL"),
    SkipReason.OVER_IMAGE_LIMIT: _("it has more images than a URL may list"),
    SkipReason.INVALID_VIDEO: _("one of its videos is invalid"),
    SkipReason.OVER_VIDEO_LIMIT: _("it has more videos than a URL may list"),
    SkipReason.OVER_VIDEO_TAG_LIMIT: _("a video has more than 32 tags"),
}
SOURCE, OVERRIDE, NONE = _("section"), _("override"), _("not set")


class InspectForm(forms.Form):
    url = forms.CharField(
        label=_("URL or path"),
        max_length=4096,
        widget=forms.TextInput(attrs={"size": 80, "autofocus": True}),
    )


@dataclass(frozen=True)
class Value:
    """One effective value and where it comes from."""

    label: Any
    value: Any
    origin: Any


def require_view(model_admin: OverrideAdmin, request: HttpRequest) -> None:
    """403 unless the user may view overrides: the rule of every page of this admin."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied


def common_context(model_admin: OverrideAdmin, request: HttpRequest) -> dict[str, Any]:
    """What every page of the app's admin shows: the admin's context, and its two notes."""
    # "served": export-only sites do not include django_sitemapx.urls, so the
    # document paths are where sitemap_export writes, not links that would 404.
    return {
        **model_admin.admin_site.each_context(request),
        "opts": Override._meta,
        "served": served_here(),
        "migrated": table_ready(),
    }


_require_view = require_view


def inspect(model_admin: OverrideAdmin, request: HttpRequest) -> HttpResponse:
    """Where a pasted URL is in the sitemap, with what values, or why it is absent."""
    _require_view(model_admin, request)
    form = InspectForm(request.GET or None)
    context: dict[str, Any] = {
        **common_context(model_admin, request),
        "title": _("URL inspector"),
        "form": form,
    }
    if form.is_valid() and context["migrated"]:
        context.update(_inspect(model_admin, request, form.cleaned_data["url"]))
    return TemplateResponse(request, "admin/django_sitemapx/inspect.html", context)


def _inspect(model_admin: OverrideAdmin, request: HttpRequest, url: str) -> dict[str, Any]:
    finding = locating.locate(default_registry, url, origin_for_request(request))
    if finding.reason == locating.INVALID:
        return {"finding": finding, "reason": REASONS[locating.INVALID]}
    override = Override.objects.filter(location=finding.key).first()
    reason = finding.reason
    if finding.found and override is not None and override.exclude:
        reason = locating.EXCLUDED
    return {
        "finding": finding,
        "override": override,
        "in_sitemap": finding.found and reason is None,
        "reason": REASONS.get(reason) if reason else None,
        "skip_reasons": [SKIP_REASONS.get(code, code) for code in finding.skipped],
        "values": _values(finding, override) if finding.found else [],
        "document_url": page_path(finding.section, finding.page)
        if finding.found and finding.page
        else None,
        "override_url": _override_url(model_admin, request, finding.key, override),
        "media": _media(finding, request),
    }


@dataclass(frozen=True)
class Media:
    """A section's images, videos and news for the inspected URL."""

    section: str
    page: int | None
    images: tuple[str, ...]
    videos: tuple[VideoElement, ...]
    news: NewsElement | None


def _media(finding: locating.Finding, request: HttpRequest) -> list[Media]:
    found = locating.extension_findings(default_registry, finding, origin_for_request(request))
    media = []
    for other in found:
        assert other.entry is not None
        extras = other.entry[4]
        if extras:
            media.append(
                Media(other.section, other.page, extras.images, extras.videos, extras.news)
            )
    return media


def _values(finding: locating.Finding, override: Override | None) -> list[Value]:
    assert finding.entry is not None
    _loc, lastmod, changefreq, priority, _extras = finding.entry
    forced = fetch([finding.key]).get(finding.key) if override is not None else None
    rows = []
    for label, source_value, index in (
        (_("last modified"), lastmod, 1),
        (_("change frequency"), changefreq, 2),
        (_("priority"), priority, 3),
    ):
        if forced is not None and forced[index] is not None:
            rows.append(Value(label, forced[index], OVERRIDE))
        elif source_value is not None:
            rows.append(Value(label, source_value, SOURCE))
        else:
            rows.append(Value(label, "", NONE))
    return rows


def _override_url(
    model_admin: OverrideAdmin, request: HttpRequest, key: str, override: Override | None
) -> str | None:
    info = (Override._meta.app_label, Override._meta.model_name)
    if override is not None:
        if not model_admin.has_view_permission(request, override):
            return None
        return reverse("admin:{}_{}_change".format(*info), args=[override.pk])
    if not model_admin.has_add_permission(request):
        return None
    return reverse("admin:{}_{}_add".format(*info)) + "?" + urlencode({"location": key})


@dataclass(frozen=True)
class SectionRow:
    """One line of the overview."""

    section: str
    urls: int
    pages: list[tuple[int, str, str | None]]
    latest: str | None
    excluded: int
    # What the latest build of its pages left out: (reason, count), None if unknown.
    skipped: list[tuple[Any, int]] | None = None
    browse_url: str = ""


def overview(model_admin: OverrideAdmin, request: HttpRequest) -> HttpResponse:
    """Per section: URLs, pages, the latest lastmod and a link to every document."""
    _require_view(model_admin, request)
    context = common_context(model_admin, request)

    from .browse import site_choice

    site = site_choice(request)
    listed = listed_pages(default_registry, site.origin)
    excluded = _excluded_counts() if context["migrated"] else {}
    skips = recorded_skips(default_registry.sections)
    rows = []
    for section in [source.section for source in default_registry if source.serves(site.origin)]:
        pages = [listed_page.summary for listed_page in listed if listed_page.section == section]
        lastmods = [page.lastmod for page in pages if page.lastmod]
        rows.append(
            SectionRow(
                section=section,
                urls=sum(page.rows for page in pages),
                pages=[
                    (p.number, site.document_url(page_path(section, p.number)), p.lastmod)
                    for p in pages
                ],
                latest=max(lastmods, key=_moment) if lastmods else None,
                excluded=excluded.get(section, 0),
                skipped=None
                if skips is None
                else [
                    (SKIP_REASONS.get(reason, reason), count)
                    for reason, count in sorted(skips.get(section, {}).items())
                ],
                browse_url=reverse(
                    "admin:django_sitemapx_browse_section", kwargs={"section": section}
                )
                + (f"?{site.query}" if site.query else ""),
            )
        )
    context |= {
        "title": _("Sitemap overview"),
        "rows": rows,
        "index_url": site.document_url(index_path()),
        "total_urls": sum(row.urls for row in rows),
        "page_link_limit": 50,
        "site": site,
    }
    return TemplateResponse(request, "admin/django_sitemapx/overview.html", context)


def _excluded_counts() -> dict[str, int]:
    from django.db.models import Count

    rows = (
        Override.objects.filter(exclude=True)
        .exclude(section="")
        .order_by()
        .values_list("section")
        .annotate(count=Count("pk"))
    )
    return dict(rows)


def _moment(text: str) -> datetime.datetime:
    # Lastmods here are the index's own W3C texts, so they parse.
    moment = parse_lastmod(text)
    assert moment is not None
    return moment
