"""Which scheme and host a request's sitemap documents are written for."""

from __future__ import annotations

from django.apps import apps
from django.http import Http404, HttpRequest

from .conf import app_settings
from .locations import Site


def uses_sites_framework() -> bool:
    """``SITEMAPX_USE_SITES``, defaulting to whether ``django.contrib.sites`` is installed."""
    setting = app_settings.USE_SITES
    if setting is None:
        return apps.is_installed("django.contrib.sites")
    return bool(setting)


def site_for_request(request: HttpRequest, protocol: str | None = None) -> Site:
    """The site of a request: Sites framework domain, else the validated ``Host``.

    Without ``SITE_ID``, a host that no ``Site`` matches answers 404.

    The scheme is ``protocol`` (a source's own), else ``SITEMAPX_PROTOCOL``,
    else the request's scheme.
    """
    scheme = protocol or app_settings.PROTOCOL or request.scheme or "https"
    if uses_sites_framework():
        from django.contrib.sites.models import Site as SiteModel
        from django.contrib.sites.shortcuts import get_current_site

        try:
            domain = get_current_site(request).domain
        except SiteModel.DoesNotExist:
            raise Http404("No Site matches this host.") from None
    else:
        domain = request.get_host()
    return Site(scheme, domain)
