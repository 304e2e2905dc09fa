"""The scheme and host an export writes for, from a base URL or the Sites framework."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.apps import apps
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from .conf import app_settings
from .exceptions import ExportError
from .locations import Site, iri_to_uri

_validate_url = URLValidator(schemes=["http", "https"])


def site_from_url(url: str) -> Site:
    """``https://example.com`` as a ``Site``; anything more or less is an ``ExportError``."""
    site, path = _split(url, "base URL")
    if path:
        raise ExportError(
            f"The base URL {url!r} has a path; give only the scheme and host "
            "(https://example.com): the paths come from the URLconf."
        )
    return site


def files_root_from_url(url: str) -> tuple[Site, str]:
    """The site and path prefix (no trailing slash) of the URL exported files are served at."""
    return _split(url, "files base URL")


def site_from_sites_framework(site_id: int | None = None) -> Site:
    """The domain of ``django.contrib.sites`` site ``site_id`` (default: ``SITE_ID``).

    The scheme is ``SITEMAPX_PROTOCOL``, else https.
    """
    if not apps.is_installed("django.contrib.sites"):
        raise ExportError("Using a site by ID needs django.contrib.sites in INSTALLED_APPS.")
    from django.contrib.sites.models import Site as SitesSite

    try:
        if site_id is None:
            domain = SitesSite.objects.get_current().domain
        else:
            domain = SitesSite.objects.get(pk=site_id).domain
    except SitesSite.DoesNotExist:
        raise ExportError(f"No site with ID {site_id} in django.contrib.sites.") from None
    return site_from_url(f"{app_settings.PROTOCOL or 'https'}://{domain}")


def _split(url: str, label: str) -> tuple[Site, str]:
    parts = urlsplit(url)
    problem = None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        problem = "it must start with http:// or https:// and name a host"
    elif parts.username is not None or parts.password is not None:
        problem = "it must not hold a user name or password"
    elif parts.query or parts.fragment or url.endswith(("?", "#")):
        problem = "it must not have a query or a fragment"
    else:
        try:
            port = parts.port
        except ValueError:
            port = None
            problem = "its port is not a number from 0 to 65535"
    if problem is None:
        host = _ascii_host(parts.hostname or "")
        netloc = f"[{host}]" if ":" in host else host
        if port is not None:
            netloc += f":{port}"
        try:
            _validate_url(f"{parts.scheme}://{netloc}/")
        except ValidationError:
            problem = "its host is not a valid domain name or IP address"
    if problem is not None:
        raise ExportError(f"Malformed {label} {url!r}: {problem}.")
    return Site(parts.scheme, netloc), iri_to_uri(parts.path.rstrip("/"))


def _ascii_host(host: str) -> str:
    """Lower case, and internationalised domain names in their ASCII (IDNA) form."""
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return host.lower()
