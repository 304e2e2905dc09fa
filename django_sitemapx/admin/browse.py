"""Pages for people: a section's pages, and the URLs of one page, to browse and search.

Browsers no longer render XSL stylesheets, so the sitemap is made readable here,
in the admin, rather than in the XML crawlers get (which does not change). The
pages are paginated for people: a sitemap page of 50,000 URLs is shown 100 at
a time. Every view takes the site to show as ``?host=`` (see ``views.site_choice``).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlencode

from django.core.paginator import Page as PaginatorPage
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from ..documents import page_entries, page_path
from ..entries import EntryTuple
from ..exceptions import NotRegistered
from ..locations import Origin
from ..models import Override
from ..registry import default_registry
from ..sources import Source
from .views import SiteChoice, common_context, require_view, site_choice

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin

# Rows per screen: pages of a section, URLs of a page.
PER_SCREEN = 100
MAX_QUERY_LENGTH = 200


def _served_source(section: str, site: SiteChoice) -> tuple[Source, Origin]:
    try:
        source = default_registry.get(section)
    except NotRegistered:
        raise Http404(f"No sitemap section {section!r}.") from None
    if not source.serves(site.origin):
        raise Http404(f"The section {section!r} is not served on {site.origin.host}.")
    bound = source.for_origin(site.origin)
    assert bound.origin is not None
    return bound, bound.origin


def _context(
    model_admin: ModelAdmin[Override], request: HttpRequest, **values: Any
) -> dict[str, Any]:
    return {**common_context(model_admin, request), **values}


def _number(request: HttpRequest, name: str = "p") -> str:
    value = request.GET.get(name, "1")
    return value if value.isascii() and value.isdigit() else "1"


def section_pages(
    model_admin: ModelAdmin[Override], request: HttpRequest, section: str
) -> HttpResponse:
    """The pages of one section on a site: URL counts, lastmods, links to browse them."""
    require_view(model_admin, request)
    site = site_choice(request)
    source, _origin = _served_source(section, site)
    summaries = source.page_summaries()
    screen = Paginator(summaries, PER_SCREEN).get_page(_number(request))
    context = _context(
        model_admin,
        request,
        title=_("Section %(section)s") % {"section": section},
        section=section,
        site=site,
        screen=screen,
        urls=sum(source.url_count(summary) for summary in summaries),
        page_count=len(summaries),
        pages=[
            {
                "number": summary.number,
                "urls": source.url_count(summary),
                "lastmod": summary.lastmod,
                "document_url": site.document_url(page_path(section, summary.number)),
                "browse_url": _browse_url(section, summary.number, site),
            }
            for summary in screen.object_list
        ],
        screen_links=_screen_links(screen, site.query),
    )
    return TemplateResponse(request, "admin/django_sitemapx/browse_section.html", context)


def page_urls(
    model_admin: ModelAdmin[Override], request: HttpRequest, section: str, number: int
) -> HttpResponse:
    """The URLs of one page as crawlers get them (overrides applied), searchable, 100 at a time."""
    require_view(model_admin, request)
    site = site_choice(request)
    source, origin = _served_source(section, site)
    # The views' bound: a page number of a 64-bit key has at most 19 digits.
    page = source.page(number) if 1 <= number < 10**19 else None
    if page is None:
        raise Http404("This sitemap page has no URL.")
    skipped: Counter[str] = Counter()
    entries = page_entries(source, page, origin, skipped)
    query = request.GET.get("q", "").strip()[:MAX_QUERY_LENGTH]
    shown = _matching(entries, query) if query else entries
    screen = Paginator(shown, PER_SCREEN).get_page(_number(request))
    extra = "&".join(
        part for part in (site.query, urlencode({"q": query}) if query else "") if part
    )
    inspect = reverse("admin:django_sitemapx_inspect")
    context = _context(
        model_admin,
        request,
        title=_("Section %(section)s, page %(number)s") % {"section": section, "number": number},
        section=section,
        number=number,
        site=site,
        query=query,
        total=len(entries),
        matching=len(shown),
        screen=screen,
        rows=[_row(entry, inspect) for entry in screen.object_list],
        skipped=sorted(skipped.items()),
        document_url=site.document_url(page_path(section, number)),
        section_url=_section_url(section, site),
        screen_links=_screen_links(screen, extra),
    )
    return TemplateResponse(request, "admin/django_sitemapx/browse_page.html", context)


def _row(entry: EntryTuple, inspect: str) -> dict[str, Any]:
    loc, lastmod, changefreq, priority, extras = entry
    return {
        "loc": loc,
        "lastmod": lastmod,
        "changefreq": changefreq,
        "priority": priority,
        "alternates": len(extras.alternates) if extras is not None else 0,
        "inspect_url": f"{inspect}?{urlencode({'url': loc})}",
    }


def _matching(entries: list[EntryTuple], query: str) -> list[EntryTuple]:
    """Entries whose URL holds ``query``, case-insensitively, as typed or percent-decoded."""
    needle = query.lower()
    matching = []
    for entry in entries:
        loc, _lastmod, _changefreq, _priority, _extras = entry
        if needle in loc.lower() or needle in unquote(loc).lower():
            matching.append(entry)
    return matching


def _section_url(section: str, site: SiteChoice) -> str:
    url = reverse("admin:django_sitemapx_browse_section", kwargs={"section": section})
    return f"{url}?{site.query}" if site.query else url


def _browse_url(section: str, number: int, site: SiteChoice) -> str:
    url = reverse(
        "admin:django_sitemapx_browse_page", kwargs={"section": section, "number": number}
    )
    return f"{url}?{site.query}" if site.query else url


def _screen_links(screen: PaginatorPage[Any], extra: str) -> dict[str, str | None]:
    def link(number: int) -> str:
        return "?" + "&".join(part for part in (extra, f"p={number}") if part)

    return {
        "first": link(1) if screen.number > 1 else None,
        "previous": link(screen.previous_page_number()) if screen.has_previous() else None,
        "next": link(screen.next_page_number()) if screen.has_next() else None,
        "last": link(screen.paginator.num_pages)
        if screen.number < screen.paginator.num_pages
        else None,
    }
