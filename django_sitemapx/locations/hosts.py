"""Which origin (scheme and host) a document's URLs are written for.

A served document takes its host from the Sites framework or the request's
validated ``Host``; an export from a base URL or a Sites framework ID. Either
way the scheme follows one rule, :func:`scheme_for`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from urllib.parse import urlsplit

from django.apps import apps
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.http import Http404, HttpRequest

from ..conf import app_settings
from ..exceptions import ExportError
from . import Origin, ascii_host, iri_to_uri

_validate_url = URLValidator(schemes=["http", "https"])

DEFAULT_PORTS = {"http": 80, "https": 443}
# A host name (letters, digits, "-", "_", "." labels, IDNA-encoded) or an IPv6 literal.
_HOST_NAME = re.compile(r"(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])", re.ASCII)


def canonical_host(host: str, scheme: str, *, ports: Collection[int] | None = None) -> str | None:
    """The one spelling of ``host`` (``name[:port]``) that documents and cache keys use.

    The name is lower-cased, IDNA-encoded and loses a trailing dot; the scheme's
    default port is dropped. With ``ports``, any other port not in it is dropped
    as well (a ``Host`` header names whatever port the client likes; only the
    ports the server is reached on are kept). None for what is not a host.
    """
    name, colon, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not colon:
        name, port = host, ""
    try:
        name = ascii_host(name.lower().rstrip(".")).lower() if name else ""
    except UnicodeError:
        return None
    if not name or not _HOST_NAME.fullmatch(name) or len(name) > 253:
        return None
    if port:
        if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
            return name if ports is not None else None
        number = int(port)
        if number == DEFAULT_PORTS.get(scheme) or (ports is not None and number not in ports):
            return name
        return f"{name}:{number}"
    return name


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
        host = canonical_host(host, scheme) or host
    else:
        host = request_host(request, scheme)
    return Origin(scheme, host)


def request_host(request: HttpRequest, scheme: str) -> str:
    """The canonical host of a request's validated ``Host`` (see :func:`canonical_host`).

    A port is kept only when it is the one the request reached the server on
    (``SERVER_PORT``, or ``X-Forwarded-Port`` with ``USE_X_FORWARDED_PORT``) and
    is not the scheme's default, so a client choosing ports, letter case or a
    trailing dot cannot make documents (and cache entries) of its own: one host
    name gives at most two spellings per scheme.
    """
    host = request.get_host()  # raises DisallowedHost (a 400) for a host not allowed
    try:
        reached = {int(request.get_port())}
    except (TypeError, ValueError):
        reached = set()
    return canonical_host(host, scheme, ports=reached) or host


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
