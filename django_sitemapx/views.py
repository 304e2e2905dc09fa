"""Thin views: find the origin and the document, then let ``serving`` answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from .conf import app_settings
from .documents import URL_NAMESPACE
from .exceptions import NotRegistered
from .locations.origins import is_served_host, origin_for_request, request_host
from .registry import SitemapRegistry, default_registry
from .robots import rules_text
from .serving import content_type as document_type
from .serving import index_document, page_document, serve
from .serving.storage import exported_file_response
from .sources.pages import settle_owed

# Page numbers of a 64-bit key (up to 9,223,372,036,854,775,807 with a limit of 1)
# have at most 19 digits; a longer one is refused before it reaches a source.
_MAX_PAGE_DIGITS = 19


def index(
    request: HttpRequest,
    registry: SitemapRegistry | None = None,
    section_url_name: str | None = None,
    gz: bool = False,
    content_type: str | None = None,
    **contrib_arguments: Any,
) -> HttpResponseBase:
    """The ``<sitemapindex>`` of every non-empty page served on the host; 404 when there is none.

    ``section_url_name`` names the URL of the section view the index links to;
    by default ``section`` (``section-gz`` with ``SITEMAPX_INDEX_LINKS_GZIP``)
    in the namespace the index was reached through. Give it when routing a
    custom ``registry`` through URL patterns of your own. ``gz`` serves the
    index itself as a gzip file. ``content_type`` replaces the plain variant's
    ``Content-Type``, as contrib's argument of that name does; contrib's other
    arguments raise ``ImproperlyConfigured`` saying what to do instead.
    """
    _refuse(contrib_arguments, "index")
    response: HttpResponseBase
    if app_settings.SERVE_FROM_STORAGE:
        response = exported_file_response(request, document_type(gz))
    else:
        settle_owed()
        paths = _section_paths(request, section_url_name)
        origin = origin_for_request(request)
        document = index_document(registry or default_registry, origin, paths)
        response = serve(request, document, gz)
    return _finish(response, gz, content_type)


def index_part(
    request: HttpRequest,
    part: str,
    registry: SitemapRegistry | None = None,
    section_url_name: str | None = None,
    gz: bool = False,
) -> HttpResponseBase:
    """Index file ``part`` (2, 3 ...) of a sitemap of more pages than one index lists."""
    if app_settings.SERVE_FROM_STORAGE:
        parse_page(part)
        return _finish(exported_file_response(request, document_type(gz)), gz, None)
    number = parse_page(part)
    if number == 1:  # that one is /sitemap.xml
        raise Http404("The first index is the sitemap index itself.")
    settle_owed()
    paths = _section_paths(request, section_url_name)
    origin = origin_for_request(request)
    document = index_document(registry or default_registry, origin, paths, number)
    return _finish(serve(request, document, gz), gz, None)


def section(
    request: HttpRequest,
    section: str,
    page: str = "1",
    registry: SitemapRegistry | None = None,
    gz: bool = False,
    content_type: str | None = None,
    **contrib_arguments: Any,
) -> HttpResponseBase:
    """One page of one section; 404 for an unknown section or a bad or empty page.

    ``section`` may come from the URL or from the pattern's arguments, as with
    contrib; ``content_type`` as for :func:`index`.
    """
    _refuse(contrib_arguments, "section")
    if app_settings.SERVE_FROM_STORAGE:
        parse_page(page)
        return _finish(exported_file_response(request, document_type(gz)), gz, content_type)
    try:
        source = (registry or default_registry).get(section)
    except NotRegistered:
        raise Http404(f"No sitemap section {section!r}.") from None
    number = parse_page(page)
    settle_owed()
    # The section's scheme is needed before the host: it decides which port is
    # the default one, dropped from the host.
    origin = origin_for_request(request, source.scheme(request.scheme or "https"))
    if not source.serves(origin):
        raise Http404(f"The sitemap section {section!r} is not served on this host.")
    document = page_document(source.for_origin(origin), number, origin)
    return _finish(serve(request, document, gz), gz, content_type)


# What to do instead of each argument of contrib's views that these views do not take.
_CONTRIB_ARGUMENTS = {
    "sitemaps": "register each sitemap once, e.g. in your app's sitemapx.py: "
    "for name, sitemap in sitemaps.items(): default_registry.register(name, sitemap); "
    "then include django_sitemapx.urls (docs/guide/migrating-from-contrib.md)",
    "template_name": "documents are written by django-sitemapx's writer, not by a template; "
    "remove the argument (a custom template cannot keep a document schema-valid). A Google "
    "News template: register a NewsSource section (or give a source news()), which writes "
    "<news:news> (docs/guide/extensions/news.md); images and videos: the images and videos "
    "options (docs/guide/extensions/)",
    "sitemap_url_name": "use section_url_name, naming a URL that takes 'section' and 'page'",
}


def _refuse(arguments: dict[str, Any], view: str) -> None:
    for name in arguments:
        advice = _CONTRIB_ARGUMENTS.get(
            name, "the arguments are registry, section_url_name, gz and content_type"
        )
        raise ImproperlyConfigured(
            f"django_sitemapx.views.{view}() takes no {name!r} argument: {advice}."
        )


def _finish(response: HttpResponseBase, gz: bool, type_: str | None) -> HttpResponseBase:
    """The headers every sitemap response carries: X-Robots-Tag, a requested Content-Type."""
    robots = app_settings.X_ROBOTS_TAG
    if robots:
        response.headers["X-Robots-Tag"] = robots
    if type_ is not None and not gz and response.has_header("Content-Type"):
        response.headers["Content-Type"] = type_
    return response


def _section_paths(request: HttpRequest, url_name: str | None) -> Callable[[str, int], str]:
    match = request.resolver_match
    namespace = match.namespace if match is not None and match.namespace else URL_NAMESPACE
    name = (
        url_name or f"{namespace}:{'section-gz' if app_settings.INDEX_LINKS_GZIP else 'section'}"
    )
    current_app = match.namespace if match is not None else None

    def path(section: str, page: int) -> str:
        try:
            return reverse(
                name, kwargs={"section": section, "page": str(page)}, current_app=current_app
            )
        except NoReverseMatch:
            raise ImproperlyConfigured(
                f"The sitemap index links its pages through the URL {name!r}, which does not "
                "reverse: include django_sitemapx.urls, or pass section_url_name."
            ) from None

    return path


def parse_page(page: str) -> int:
    """A positive page number in canonical form ("1", not "01" or "+1"), else 404."""
    if not (page.isascii() and page.isdigit()) or page.startswith("0"):
        raise Http404("A sitemap page number is a positive integer.")
    if len(page) > _MAX_PAGE_DIGITS:
        raise Http404("No such sitemap page.")
    return int(page)


def robots_txt(
    request: HttpRequest, template_name: str = "django_sitemapx/robots.txt"
) -> HttpResponse:
    """``/robots.txt`` for the requested host: the site's rules, then the ``Sitemap`` line.

    The rules are ``SITEMAPX_ROBOTS_RULES`` (the template's ``rules``); for rules
    that need logic, override the template ``django_sitemapx/robots.txt`` or pass
    ``template_name``, and write ``{% load sitemapx %}{% sitemap_robots_lines %}``
    where the line goes.
    """
    return render(
        request,
        template_name,
        {"rules": rules_text()},
        content_type="text/plain; charset=utf-8",
    )


def indexnow_key(request: HttpRequest, key: str) -> HttpResponse:
    """The IndexNow key file: the key as UTF-8 text, at ``/<key>.txt``.

    The URL pattern only matches the configured key (``SITEMAPX_INDEXNOW_KEY``),
    so any other ``.txt`` path reaches the project's own patterns. Only the hosts
    IndexNow submits for (``locations.origins.served_hosts``) answer: on any other
    host Django accepts, the key would vouch for URLs the site never submits.
    """
    if key != app_settings.INDEXNOW_KEY:  # the key was changed since the URL resolved
        raise Http404("Not the IndexNow key.")
    if not is_served_host(request_host(request, request.scheme or "https")):
        raise Http404("No IndexNow key on this host.")
    return HttpResponse(key, content_type="text/plain; charset=utf-8")
