"""Which origin (scheme and host) a document's URLs are written for.

A served document takes its host from the Sites framework or the request's
validated ``Host``; an export from a base URL or a Sites framework ID. Either
way the scheme follows one rule, :func:`scheme_for`.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.http import Http404, HttpRequest

from ..conf import app_settings
from ..exceptions import ExportError
from . import Origin, ascii_host, iri_to_uri

_validate_url = URLValidator(schemes=["http", "https"])


def scheme_for(protocol: str | None, default: str) -> str:
    """A document's scheme: the source's ``protocol``, ``SITEMAPX_PROTOCOL`` or ``default``."""
    return protocol or app_settings.PROTOCOL or default


def uses_sites_framework() -> bool:
    """``SITEMAPX_USE_SITES``, defaulting to whether ``django.contrib.sites`` is installed."""
    setting = app_settings.USE_SITES
    if setting is None:
        return apps.is_installed("django.contrib.sites")
    return bool(setting)


def origin_for_request(request: HttpRequest, protocol: str | None = None) -> Origin:
    """The origin of a request: the Sites framework's domain, else the validated ``Host``.

    Without ``SITE_ID``, a host that no ``Site`` matches answers 404. The scheme
    follows :func:`scheme_for`, defaulting to the request's.
    """
    scheme = scheme_for(protocol, request.scheme or "https")
    if uses_sites_framework():
        from django.contrib.sites.models import Site
        from django.contrib.sites.shortcuts import get_current_site

        try:
            host = get_current_site(request).domain
        except Site.DoesNotExist:
            raise Http404("No Site matches this host.") from None
    else:
        host = request.get_host()
    return Origin(scheme, host)


def served_hosts() -> list[str]:
    """Every public host the site serves, for what needs them all at once (IndexNow).

    ``SITEMAPX_HOSTS`` when set; else, with the Sites framework, the domain of
    every ``Site``; otherwise the exact names in ``ALLOWED_HOSTS``. Of the last
    two, a wildcard (``*``, ``.example.com``) names no host, and a name no search
    engine can reach (``localhost``, ``testserver``, a loopback or private
    address) is left out.
    """
    if app_settings.HOSTS is not None:
        return list(dict.fromkeys(name.lower() for name in app_settings.HOSTS))
    if uses_sites_framework():
        from django.contrib.sites.models import Site

        names = list(Site.objects.order_by("pk").values_list("domain", flat=True))
    else:
        names = list(settings.ALLOWED_HOSTS)
    return list(dict.fromkeys(name.lower() for name in names if _is_public_host(name)))


def served_origins(section: str | None = None, protocol: str | None = None) -> list[Origin]:
    """The origins whose documents list ``section`` (every section when None).

    Every served host serves every section today; a host limited to some
    sections is filtered here, so robots.txt and IndexNow follow the same rule.
    The scheme follows :func:`scheme_for`, defaulting to https.
    """
    scheme = scheme_for(protocol, "https")
    return [Origin(scheme, host) for host in served_hosts()]


def _is_public_host(name: str) -> bool:
    host = name.rpartition(":")[0] if name.count(":") == 1 else name
    host = host.strip("[]")
    if not host or host == "*" or host.startswith("."):
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." in host  # "localhost", "testserver": no public name has no dot
    return address.is_global


def origin_from_url(url: str) -> Origin:
    """``https://example.com`` as an ``Origin``; anything more or less is an ``ExportError``."""
    origin, path = _split(url, "base URL")
    if path:
        raise ExportError(
            f"The base URL {url!r} has a path; give only the scheme and host "
            "(https://example.com): the paths come from the URLconf."
        )
    return origin


def files_root_from_url(url: str) -> tuple[Origin, str]:
    """The origin and path prefix (no trailing slash) of the URL exported files are served at."""
    return _split(url, "files base URL")


def origin_from_sites_framework(site_id: int | None = None) -> Origin:
    """The domain of ``django.contrib.sites`` site ``site_id`` (default: ``SITE_ID``).

    The scheme follows :func:`scheme_for`, defaulting to https.
    """
    if not apps.is_installed("django.contrib.sites"):
        raise ExportError("Using a site by ID needs django.contrib.sites in INSTALLED_APPS.")
    from django.contrib.sites.models import Site

    try:
        if site_id is None:
            domain = Site.objects.get_current().domain
        else:
            domain = Site.objects.get(pk=site_id).domain
    except Site.DoesNotExist:
        raise ExportError(f"No site with ID {site_id} in django.contrib.sites.") from None
    return origin_from_url(f"{scheme_for(None, 'https')}://{domain}")


def _split(url: str, label: str) -> tuple[Origin, str]:
    parts = urlsplit(url)
    problem = _problem(url)
    if problem is None:
        # urlsplit() lower-cases the host name.
        host = ascii_host(parts.hostname or "")
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc += f":{parts.port}"
        try:
            _validate_url(f"{parts.scheme}://{netloc}/")
        except ValidationError:
            problem = "its host is not a valid domain name or IP address"
    if problem is not None:
        raise ExportError(f"Malformed {label} {url!r}: {problem}.")
    return Origin(parts.scheme, netloc), iri_to_uri(parts.path.rstrip("/"))


def _problem(url: str) -> str | None:
    """What makes ``url`` unusable as a base URL, before its host is validated."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "it must start with http:// or https:// and name a host"
    if parts.username is not None or parts.password is not None:
        return "it must not hold a user name or password"
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        return "it must not have a query or a fragment"
    try:
        parts.port  # noqa: B018  (reading it validates it)
    except ValueError:
        return "its port is not a number from 0 to 65535"
    return None
