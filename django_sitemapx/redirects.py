"""Permanent redirects from ``django.contrib.sitemaps``' URLs to this app's.

Contrib serves a section at ``sitemap-<section>.xml`` and its page N at
``sitemap-<section>.xml?p=N``; this app at ``/sitemap-<section>-<N>.xml``. A site
that submitted contrib's URLs to search engines keeps them working with::

    from django_sitemapx.redirects import contrib_redirects

    urlpatterns = [
        *contrib_redirects(),  # sitemap-<section>.xml?p=N -> /sitemap-<section>-<N>.xml
        path("", include("django_sitemapx.urls")),
    ]

List them before the include: a section name holding ``-`` (``blog-posts``)
would otherwise read as this app's ``sitemap-blog-<page>.xml``. A path of
this app's own form that reaches them (``sitemap-blog-posts-2.xml``) is served,
not redirected.

Give ``index=`` and ``section=`` the paths contrib's views had, if they were
elsewhere (``index="sitemaps/index.xml"``, ``section="sitemaps/<section>.xml"``).
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponseBase, HttpResponsePermanentRedirect
from django.urls import URLPattern, path

from . import views
from .documents import index_path, page_path
from .registry import default_registry
from .views import parse_page


def index_redirect(request: HttpRequest) -> HttpResponsePermanentRedirect:
    """301 to this app's index."""
    return HttpResponsePermanentRedirect(index_path())


def section_redirect(request: HttpRequest, section: str) -> HttpResponseBase:
    """301 from ``<section>.xml?p=N`` to this app's page N of the section (page 1 without p).

    An unknown section is a 404, unless the path is one of this app's own
    (``<section>-<page>``), which is served.
    """
    if section not in default_registry.sections:
        name, _, page = section.rpartition("-")
        if name in default_registry.sections:
            return views.section(request, name, page)
        raise Http404(f"No sitemap section {section!r}.")
    number = parse_page(request.GET.get("p", "1"))
    return HttpResponsePermanentRedirect(page_path(section, number))


def contrib_redirects(
    index: str | None = None, section: str = "sitemap-<section>.xml"
) -> list[URLPattern]:
    """URL patterns answering contrib's sitemap paths with a 301 to this app's.

    ``index`` is the path contrib's index view had; by default none, since it was
    usually ``sitemap.xml``, which this app serves itself. ``section`` must hold
    ``<section>``. A bad ``?p=`` is a 404, as with contrib.
    """
    if "<section>" not in section:
        raise ImproperlyConfigured(
            f"contrib_redirects(section={section!r}) needs '<section>' in the path."
        )
    patterns = [path(section, section_redirect, name="contrib-section-redirect")]
    if index is not None:
        if index.lstrip("/") == index_path().lstrip("/"):
            raise ImproperlyConfigured(
                f"contrib_redirects(index={index!r}) would redirect the index to itself."
            )
        patterns.insert(0, path(index, index_redirect, name="contrib-index-redirect"))
    return patterns
