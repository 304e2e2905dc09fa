"""The sitemap as HTML pages for people: its sections, and the URLs of each page.

Browsers no longer run XSL stylesheets, so a sitemap meant for people is a page
of its own. Opt in with ``path("sitemap/", include("django_sitemapx.html.urls"))``.

Each HTML page is read from the XML document the site serves at that moment:
the index and section views are called in process for the same host, so the
HTML goes through the same sources, overrides and cache (or exported files) as
the XML and never disagrees with it. A sitemap page of 50,000 URLs is shown
``PER_SCREEN`` at a time. The templates (``django_sitemapx/html/*.html``) are
overridden like any Django template.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.template.response import TemplateResponse
from django.urls import Resolver404, get_script_prefix, resolve, reverse

from .. import views
from ..documents import INDEX_CAPACITY, index_part_path, index_path, page_path

logger = logging.getLogger("django_sitemapx")

# Links per screen: a browser lays out a thousand list items in a blink.
PER_SCREEN = 1_000
_SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
_CONDITIONAL = ("HTTP_IF_NONE_MATCH", "HTTP_IF_MODIFIED_SINCE", "HTTP_ACCEPT_ENCODING")


@dataclass(frozen=True)
class Link:
    """One ``<loc>`` of a document, with its ``<lastmod>`` (``""`` when it has none)."""

    loc: str
    lastmod: str


@dataclass(frozen=True)
class PageLink:
    """One page of a section as the index lists it, and where its HTML page is."""

    section: str
    number: int
    lastmod: str
    url: str


class _DocumentRequest(HttpRequest):
    """A GET of a sitemap document for the same client and host as ``request``."""

    def __init__(self, request: HttpRequest, path: str) -> None:
        super().__init__()
        self.method = "GET"
        self.path = self.path_info = path
        self.META = {key: value for key, value in request.META.items() if key not in _CONDITIONAL}
        self.META["PATH_INFO"] = path
        self._scheme = request.scheme or "https"
        if hasattr(request, "urlconf"):  # set by a middleware for this host
            self.urlconf = request.urlconf

    def _get_scheme(self) -> str:
        return self._scheme


def _document(
    view: Callable[..., HttpResponseBase], request: HttpRequest, path: str, **kwargs: Any
) -> bytes:
    """The bytes the sitemap view answers at ``path`` (raises ``Http404`` as it does)."""
    response = view(_DocumentRequest(request, path), **kwargs)
    try:
        if response.status_code != 200:
            raise Http404(f"The sitemap document answered {response.status_code}.")
        if getattr(response, "streaming", False):
            return b"".join(response.streaming_content)  # type: ignore[attr-defined]
        content: bytes = response.content  # type: ignore[attr-defined]
        return content
    finally:
        # Not response.close(): it also sends request_finished, whose receiver would
        # close this request's database connections (close_old_connections).
        for closer in getattr(response, "_resource_closers", ()):
            closer()


def _links(document: bytes, tag: str) -> Iterator[Link]:
    # The site's own document, valid by construction: no DTD, no entity.
    root = ElementTree.fromstring(document)
    for element in root.iter(f"{_SM}{tag}"):
        yield Link(
            (element.findtext(f"{_SM}loc") or "").strip(),
            (element.findtext(f"{_SM}lastmod") or "").strip(),
        )


def _local(path: str) -> str:
    prefix = get_script_prefix()
    return "/" + path.removeprefix(prefix) if path.startswith(prefix) else path


def _page_of(loc: str) -> tuple[str, int] | None:
    """The section and page number of a page's URL in the index, else None."""
    path = loc.split("://", 1)[-1].partition("/")[2]
    try:
        match = resolve(_local("/" + path))
        section, page = match.kwargs.get("section"), match.kwargs.get("page", "1")
    except Resolver404:
        section = page = None
    if section is None:
        # Exported files served elsewhere (SITEMAPX_FILES_BASE_URL): the file's name,
        # as sitemap_export gives it, "sitemap-<section>-<page>.xml" (a page holds no "-").
        name = path.rpartition("/")[2].removesuffix(".gz")
        if not (name.startswith("sitemap-") and name.endswith(".xml")):
            return None
        section, _, page = name.removeprefix("sitemap-").removesuffix(".xml").rpartition("-")
        if not section:
            return None
    if not (str(page).isascii() and str(page).isdigit()):
        return None
    return str(section), int(page)


def _listed(request: HttpRequest) -> list[tuple[str, int, str]]:
    """(section, page number, lastmod) of every page the index files list, in their order."""
    listed: list[tuple[str, int, str]] = []
    part = 1
    while True:
        if part == 1:
            document = _document(views.index, request, _local(index_path()))
        else:
            document = _document(
                views.index_part, request, _local(index_part_path(part)), part=str(part)
            )
        links = list(_links(document, "sitemap"))
        for link in links:
            found = _page_of(link.loc)
            if found is None:
                logger.warning("The HTML sitemap cannot tell which page %s is.", link.loc)
            else:
                listed.append((*found, link.lastmod))
        if len(links) < INDEX_CAPACITY:
            return listed
        part += 1


def sitemap_index(request: HttpRequest) -> HttpResponse:
    """Every section, and its pages, as the sitemap index lists them for this host."""
    try:
        listed = _listed(request)
    except Http404:
        listed = []
    screen = Paginator(listed, PER_SCREEN).get_page(request.GET.get("p"))
    sections: dict[str, list[PageLink]] = {}
    for section, number, lastmod in screen.object_list:
        url = _html_page_url(request, section, number)
        sections.setdefault(section, []).append(PageLink(section, number, lastmod, url))
    return TemplateResponse(
        request,
        "django_sitemapx/html/index.html",
        {"sections": sections, "screen": screen, "pages": len(listed)},
    )


def sitemap_page(request: HttpRequest, section: str, page: str) -> HttpResponse:
    """The URLs of one page of one section, ``PER_SCREEN`` at a time (``?p=2``)."""
    number = views.parse_page(page)
    document = _document(
        views.section, request, _local(page_path(section, number)), section=section, page=page
    )
    links = list(_links(document, "url"))
    screen = Paginator(links, PER_SCREEN).get_page(request.GET.get("p"))
    return TemplateResponse(
        request,
        "django_sitemapx/html/page.html",
        {
            "section": section,
            "number": number,
            "screen": screen,
            "urls": len(links),
            "index_url": _html_index_url(request),
        },
    )


def _html_page_url(request: HttpRequest, section: str, number: int) -> str:
    namespace = _namespace(request)
    return reverse(f"{namespace}:page", kwargs={"section": section, "page": str(number)})


def _html_index_url(request: HttpRequest) -> str:
    return reverse(f"{_namespace(request)}:index")


def _namespace(request: HttpRequest) -> str:
    match = request.resolver_match
    return match.namespace if match is not None and match.namespace else "django_sitemapx_html"
