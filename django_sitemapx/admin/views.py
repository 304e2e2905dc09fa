"""The URL inspector and the sitemap overview, and what every page of the override admin shares.

Every page takes the site to show as ``?host=`` (one of the sites the project
knows, see ``locations.origins.known_origins``), by default the admin's own.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django import forms
from django.contrib.auth import get_permission_codename
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Model
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from ..audit import last_report
from ..audit.report import KIND_LABELS
from ..documents import index_path, listed_pages, page_path, served_here
from ..entries import NewsElement, VideoElement
from ..exceptions import InvalidURL, SkipReason
from ..locations import Origin
from ..locations.hosts import canonical_host
from ..locations.origins import known_origins, origin_for_request
from ..models import Override, Rule
from ..overrides import fetch, fetch_rules, override_on, table_ready
from ..registry import SitemapRegistry, default_registry
from ..rules import EMPTY, CompiledRule, RuleSet
from ..skips import recorded_skips
from ..values import parse_lastmod
from . import lookup as locating

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin

REASONS = {
    locating.NOT_REGISTERED: _(
        "No registered section lists this URL: its model or page is not registered in "
        "the sitemap, or its section builds a different URL."
    ),
    locating.EXCLUDED: _("An override excludes this URL from the sitemap."),
    locating.EXCLUDED_BY_RULE: _("A rule excludes this URL from the sitemap."),
    locating.FILTERED_OUT: _(
        "The row exists but the section's queryset filters it out (for example, it is "
        "not published)."
    ),
    locating.TOO_LONG: _("The URL is too long: the protocol allows fewer than 2,048 characters."),
    locating.SKIPPED: _("The section has this row but leaves its entry out."),
    locating.INVALID: _("This is not a path or an http(s) URL."),
    locating.UNKNOWN_HOST: _(
        "No sitemap is served on this URL's host: it is not a host of this project "
        "(ALLOWED_HOSTS, its sites, SITEMAPX_HOSTS) that a section is served on."
    ),
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
# The values in the order search engines weigh them: lastmod is read when it is
# accurate; changefreq and priority are hints Google and Bing say they ignore.
VALUE_LABELS = (_("last modified"), _("change frequency"), _("priority"))


class InspectForm(forms.Form):
    url = forms.CharField(
        label=_("URL or path"),
        max_length=4096,
        widget=forms.TextInput(attrs={"size": 80, "autofocus": True}),
    )


@dataclass(frozen=True)
class Value:
    """One effective value and what set it: the section, an override, or nothing."""

    label: Any
    value: Any
    set_by: Any


@dataclass(frozen=True)
class SiteChoice:
    """The site an admin page shows, and the others it can show instead."""

    origin: Origin
    choices: list[Origin]
    own: bool = True

    def document_url(self, path: str) -> str:
        """A link to a document: its path on the admin's own host, else its full URL."""
        return path if self.own else self.origin.prefix + path

    @property
    def query(self) -> str:
        """``host=...`` for links that keep the choice; empty for the admin's own host."""
        return "" if self.own else urlencode({"host": self.origin.host})


def site_choice(request: HttpRequest, registry: SitemapRegistry | None = None) -> SiteChoice:
    """The site asked for with ``?host=``, else the admin's own; 404 for a host not known."""
    registry = registry if registry is not None else default_registry
    own = origin_for_request(request)
    choices = {own.host: own}
    try:
        known = known_origins(registry.site_hosts(), request.scheme or "https")
    except InvalidURL:  # a Site whose domain is no host: it cannot be served either
        known = []
    for origin in known:
        choices.setdefault(origin.host, origin)
    asked = request.GET.get("host")
    if asked is None:
        return SiteChoice(own, list(choices.values()))
    chosen = choices.get(canonical_host(asked[:300]))
    if chosen is None:
        raise Http404("No known site has this host.")
    return SiteChoice(chosen, list(choices.values()), own=chosen.host == own.host)


def require_view(model_admin: ModelAdmin[Override], request: HttpRequest) -> None:
    """403 unless the user may view overrides: the rule of every page of this admin."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied


def common_context(model_admin: ModelAdmin[Override], request: HttpRequest) -> dict[str, Any]:
    """What every page of the app's admin shows: the admin's context, and its two notes."""
    # "served": export-only sites do not include django_sitemapx.urls, so the
    # document paths are where sitemap_export writes, not links that would 404.
    return {
        **model_admin.admin_site.each_context(request),
        "opts": Override._meta,
        "served": served_here(),
        "migrated": table_ready(),
    }


def inspect(model_admin: ModelAdmin[Override], request: HttpRequest) -> HttpResponse:
    """Where a pasted URL is in the sitemap, with what values, or why it is absent."""
    require_view(model_admin, request)
    form = InspectForm(request.GET or None)
    context: dict[str, Any] = {
        **common_context(model_admin, request),
        "title": _("URL inspector"),
        "form": form,
    }
    if form.is_valid() and context["migrated"]:
        context.update(_inspect(model_admin, request, form.cleaned_data["url"]))
    return TemplateResponse(request, "admin/django_sitemapx/inspect.html", context)


def _inspect(model_admin: ModelAdmin[Override], request: HttpRequest, url: str) -> dict[str, Any]:
    own = origin_for_request(request)
    # A full URL is inspected on its own host (a Wagtail site's, a language's), a path on
    # the admin's.
    origin = locating.inspected_origin(default_registry, url, own)
    if origin is None:
        finding = locating.Finding(key="", reason=locating.UNKNOWN_HOST)
        return {"finding": finding, "reason": REASONS[locating.UNKNOWN_HOST]}
    finding = locating.locate(default_registry, url, origin, _may_view_rows(request))
    if finding.reason == locating.INVALID:
        return {"finding": finding, "reason": REASONS[locating.INVALID]}
    host = origin.host
    # The override that applies on the inspected host: its own, else its site's (a Wagtail
    # site served under another name), else the one of every host.
    override = override_on(finding.key, host, finding.fallback_host)
    reason = finding.reason
    rules = EMPTY
    excluding = None
    if finding.found:
        assert finding.entry is not None
        rules = fetch_rules(finding.section, host, finding.fallback_host)
        excluding, _per_value = rules.deciding(finding.entry[0])
        if override is not None:
            excluding = None  # the override decides whether its URL is listed
            if override.exclude:
                reason = locating.EXCLUDED
        elif excluding is not None:
            reason = locating.EXCLUDED_BY_RULE
    return {
        "finding": finding,
        "override": override,
        "in_sitemap": finding.found and reason is None,
        "reason": REASONS.get(reason) if reason else None,
        "excluding_rule": _rule_source(model_admin, request, excluding) if excluding else None,
        "skip_reasons": [SKIP_REASONS.get(code, code) for code in finding.skipped],
        "values": _values(model_admin, request, finding, override, rules, host)
        if finding.found
        else [],
        "inspected_host": None if origin == own else host,
        "document_url": (origin.prefix if origin != own else "")
        + page_path(finding.section, finding.page)
        if finding.found and finding.page
        else None,
        "override_url": _override_url(
            model_admin,
            request,
            finding.key,
            override,
            None if origin == own else finding.fallback_host or host,
        ),
        "media": _media(finding, origin),
    }


def _may_view_rows(request: HttpRequest) -> locating.MayViewHidden:
    """Whether the user may view a model's rows, as its admin would let them (view or
    change permission): only then does the inspector say a row exists but is left out."""

    def may_view(model: type[Model]) -> bool:
        opts = model._meta
        return any(
            request.user.has_perm(f"{opts.app_label}.{get_permission_codename(action, opts)}")
            for action in ("view", "change")
        )

    return may_view


@dataclass(frozen=True)
class Media:
    """A section's images, videos and news for the inspected URL."""

    section: str
    page: int | None
    images: tuple[str, ...]
    videos: tuple[VideoElement, ...]
    news: NewsElement | None


def _media(finding: locating.Finding, origin: Origin) -> list[Media]:
    found = locating.extension_findings(default_registry, finding, origin)
    media = []
    for other in found:
        assert other.entry is not None
        _loc, _lastmod, _changefreq, _priority, extras = other.entry
        if extras:
            media.append(
                Media(other.section, other.page, extras.images, extras.videos, extras.news)
            )
    return media


def _values(
    model_admin: ModelAdmin[Override],
    request: HttpRequest,
    finding: locating.Finding,
    override: Override | None,
    rules: RuleSet,
    host: str,
) -> list[Value]:
    assert finding.entry is not None
    loc, lastmod, changefreq, priority, _extras = finding.entry
    forced = (
        fetch([finding.key], host, finding.fallback_host).get(finding.key)
        if override is not None
        else None
    )
    _exclude, *forced_values = forced if forced is not None else (False, None, None, None)
    _excluding, deciding = rules.deciding(loc)
    rows = []
    for label, source_value, forced_value, rule in zip(
        VALUE_LABELS, (lastmod, changefreq, priority), forced_values, deciding, strict=True
    ):
        if forced_value is not None:
            rows.append(Value(label, forced_value, OVERRIDE))
        elif rule is not None:
            index = VALUE_LABELS.index(label) + 1
            rows.append(Value(label, rule.values[index], _rule_source(model_admin, request, rule)))
        elif source_value is not None:
            rows.append(Value(label, source_value, SOURCE))
        else:
            rows.append(Value(label, "", NONE))
    return rows


def _rule_source(
    model_admin: ModelAdmin[Override], request: HttpRequest, rule: CompiledRule
) -> Any:
    """ "rule <pattern>", linked to the rule when the user may view rules."""
    text = format_html("{} <code>{}</code>", _("rule"), rule.pattern)
    rule_admin = model_admin.admin_site._registry.get(Rule)
    if rule_admin is None or not rule_admin.has_view_permission(request):
        return text
    url = reverse("admin:django_sitemapx_rule_change", args=[rule.pk])
    return format_html('<a href="{}" class="deciding-rule">{}</a>', url, text)


def _override_url(
    model_admin: ModelAdmin[Override],
    request: HttpRequest,
    key: str,
    override: Override | None,
    host: str | None = None,
) -> str | None:
    """The override's change page; else its add page, for ``host`` when given."""
    info = (Override._meta.app_label, Override._meta.model_name)
    if override is not None:
        if not model_admin.has_view_permission(request, override):
            return None
        return reverse("admin:{}_{}_change".format(*info), args=[override.pk])
    if not model_admin.has_add_permission(request):
        return None
    initial = {"location": key, **({"host": host} if host else {})}
    return reverse("admin:{}_{}_add".format(*info)) + "?" + urlencode(initial)


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
    # The last audit's URLs checked and findings (label, count); None: not audited.
    audited: int | None = None
    audit: list[tuple[Any, int]] | None = None


def overview(model_admin: ModelAdmin[Override], request: HttpRequest) -> HttpResponse:
    """Per section: URLs, pages, the latest lastmod and a link to every document."""
    require_view(model_admin, request)
    context = common_context(model_admin, request)
    site = site_choice(request)
    listed = listed_pages(default_registry, site.origin)
    excluded = _excluded_counts(site.origin.host) if context["migrated"] else {}
    skips = recorded_skips(default_registry.sections)
    report = last_report()
    found = report.by_section() if report is not None else {}
    rows = []
    for source in default_registry:
        if not source.serves(site.origin):
            continue
        section = source.section
        pages = [listed_page.summary for listed_page in listed if listed_page.section == section]
        lastmods = [page.lastmod for page in pages if page.lastmod]
        rows.append(
            SectionRow(
                section=section,
                urls=sum(source.url_count(page) for page in pages),
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
                audited=report.checked.get(section) if report is not None else None,
                audit=[(KIND_LABELS[kind], count) for kind, count in found[section].items()]
                if section in found
                else None,
            )
        )
    context |= {
        "title": _("Sitemap overview"),
        "rows": rows,
        "index_url": site.document_url(index_path()),
        "total_urls": sum(row.urls for row in rows),
        "page_link_limit": 50,
        "site": site,
        "audit_report": report,
    }
    return TemplateResponse(request, "admin/django_sitemapx/overview.html", context)


def _excluded_counts(host: str) -> dict[str, int]:
    """Per section, the URLs excluded on ``host``: by its overrides, or those of every host
    (a URL whose host's own override lists it again is still counted, the rare case)."""
    rows = (
        Override.objects.filter(exclude=True, host__in=["", canonical_host(host)])
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
