"""Which origin (scheme and host) a document's URLs are written for.

A served document takes its host from the Sites framework or the request's
validated ``Host``; an export from a base URL or a Sites framework site. Either
way the scheme follows one rule, :func:`scheme_for`, and the host is spelled by
:mod:`.hosts`. A malformed URL or domain is an ``InvalidURL``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.http import Http404, HttpRequest
from django.http.request import split_domain_port

from ..conf import app_settings
from ..exceptions import InvalidURL
from . import Origin, iri_to_uri
from .hosts import canonical_host, checked_host, host_name

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


# -- requests --------------------------------------------------------------------------


def origin_for_request(request: HttpRequest, protocol: str | None = None) -> Origin:
    """The origin of a request: the Sites framework's domain, else the validated ``Host``.

    Without ``SITE_ID``, a host that no ``Site`` matches answers 404, and so does
    a site whose domain is no host name (``"><script>``, a domain holding a
    newline): a ``Site`` is data an editor may change, and its domain is written
    into documents, robots.txt and HTML. The scheme follows :func:`scheme_for`,
    defaulting to the request's.
    """
    scheme = scheme_for(protocol, request.scheme or "https")
    if uses_sites_framework():
        from django.contrib.sites.models import Site
        from django.contrib.sites.shortcuts import get_current_site

        try:
            site = get_current_site(request)
        except Site.DoesNotExist:
            raise Http404("No Site matches this host.") from None
        host = checked_host(site.domain.strip(), scheme)
        if host is None:
            raise Http404("The site's domain is not a host name.")
        return Origin(scheme, host, getattr(site, "pk", None))
    return Origin(scheme, request_host(request, scheme))


def request_host(request: HttpRequest, scheme: str) -> str:
    """The canonical host of a request's validated ``Host`` (see :func:`.hosts.canonical_host`).

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
    return canonical_host(host, scheme, ports=reached)


# -- the hosts the site serves -----------------------------------------------------------


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


def is_served_host(host: str) -> bool:
    """Whether ``host`` (any spelling: case, trailing dot) is one of :func:`served_hosts`."""
    return canonical_host(host) in {canonical_host(name) for name in served_hosts()}


def served_origins(protocol: str | None = None) -> list[Origin]:
    """The origin of every served host (:func:`served_hosts`).

    Every served host serves every section; whoever needs a section's hosts asks
    ``Source.serves()`` of each. The scheme follows :func:`scheme_for`,
    defaulting to https.
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


# -- base URLs ---------------------------------------------------------------------------


def origin_from_url(url: str) -> Origin:
    """``https://example.com`` as an ``Origin``; anything more or less is an ``InvalidURL``."""
    origin, path = _split(url, "base URL")
    if path:
        raise InvalidURL(
            f"The base URL {url!r} has a path; give only the scheme and host "
            "(https://example.com): the paths come from the URLconf."
        )
    return origin


def files_root_from_url(url: str) -> tuple[Origin, str]:
    """The origin and path prefix (no trailing slash) of the URL exported files are served at.

    Raises ``InvalidURL`` for a URL that is no http(s) URL with a host, or has a
    user name, query or fragment.
    """
    return _split(url, "files base URL")


def _split(url: str, label: str) -> tuple[Origin, str]:
    parts = urlsplit(url)
    problem = _problem(url)
    if problem is None:
        # urlsplit() lower-cases the host name.
        host = canonical_host(parts.hostname or "")
        netloc = f"[{host}]" if ":" in host else host
        if parts.port is not None:
            netloc += f":{parts.port}"
        try:
            _validate_url(f"{parts.scheme}://{netloc}/")
        except ValidationError:
            problem = "its host is not a valid domain name or IP address"
    if problem is not None:
        raise InvalidURL(f"Malformed {label} {url!r}: {problem}.")
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


# -- the Sites framework -----------------------------------------------------------------


def site_origin(domain: str, site_id: int | None = None, default_scheme: str = "https") -> Origin:
    """The origin of a Sites framework domain (scheme by :func:`scheme_for`).

    Raises ``InvalidURL`` for a domain that is no host (``example.com/shop``).
    """
    try:
        origin = origin_from_url(f"{scheme_for(None, default_scheme)}://{domain}")
    except InvalidURL:
        raise InvalidURL(
            f"The domain {domain!r} of django.contrib.sites site {site_id} is not a host name."
        ) from None
    return Origin(origin.scheme, origin.host, site_id)


def site_domains(site_ids: frozenset[int]) -> list[str]:
    """The canonical domains of these ``django.contrib.sites`` sites (unknown IDs left out)."""
    if not apps.is_installed("django.contrib.sites"):
        return []
    from django.contrib.sites.models import Site

    domains = Site.objects.filter(pk__in=site_ids).values_list("domain", flat=True)
    return [canonical_host(domain) for domain in domains]


def known_origins(hosts: Iterable[str] = (), default_scheme: str = "https") -> list[Origin]:
    """Every site the project knows of: the Sites framework's sites, then ``hosts``.

    Used to export every site and to choose a site in the admin. A host that is
    also a site's domain is listed once, as the site. Raises ``InvalidURL`` for a
    site whose domain is no host name.
    """
    scheme = scheme_for(None, default_scheme)
    origins: dict[str, Origin] = {}
    if apps.is_installed("django.contrib.sites"):
        from django.contrib.sites.models import Site

        for site_id, domain in Site.objects.order_by("pk").values_list("pk", "domain"):
            origin = site_origin(domain, site_id, default_scheme)
            origins.setdefault(origin.host, origin)
    for host in hosts:
        origins.setdefault(canonical_host(host), Origin(scheme, canonical_host(host)))
    return list(origins.values())


# -- the sites a section is limited to ---------------------------------------------------


@dataclass(frozen=True)
class SiteSelection:
    """The sites a section is limited to: ``django.contrib.sites`` IDs and host names.

    A host name without a port matches the host on any port; one with a port
    matches only that port.
    """

    site_ids: frozenset[int]
    hosts: frozenset[str]

    def matches(self, origin: Origin) -> bool:
        """Whether ``origin`` is one of these sites (site IDs may cost a query)."""
        host = canonical_host(origin.host)
        if host in self.hosts or host_name(host) in self.hosts:
            return True
        if not self.site_ids:
            return False
        if origin.site_id is not None:
            return origin.site_id in self.site_ids
        domains = site_domains(self.site_ids)
        return host in domains or host_name(host) in domains


def parse_sites(value: object) -> SiteSelection:
    """A ``sites`` option as a :class:`SiteSelection`; ``ValueError`` says what is wrong.

    ``value`` is a list (or tuple or set) of site IDs (positive integers) and
    host names (``"example.com"``, ``"example.com:8000"``), not empty.
    """
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple | set | frozenset):
        raise ValueError(f"must be a list of site IDs and host names, not {value!r}")
    if not value:
        raise ValueError("is empty: the section would be served on no site")
    ids: set[int] = set()
    hosts: set[str] = set()
    for item in value:
        if isinstance(item, int) and not isinstance(item, bool) and item > 0:
            ids.add(item)
        elif isinstance(item, str):
            hosts.add(_valid_host(item))
        else:
            raise ValueError(f"holds {item!r}, which is neither a site ID nor a host name")
    return SiteSelection(frozenset(ids), frozenset(hosts))


def _valid_host(value: str) -> str:
    if "/" in value or "@" in value or not value.strip():
        raise ValueError(f"holds {value!r}: give a host name (example.com), not a URL")
    host = canonical_host(value)
    # Django's own rule for a Host header: single-label names (intranet hosts) too.
    domain, _port = split_domain_port(host)
    if not domain:
        raise ValueError(f"holds {value!r}, which is not a valid host name")
    return host
