"""Turning a source's locations into absolute URIs that the protocol accepts."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from .conf import PROTOCOL_MAX_LOC_LENGTH

# Django's iri_to_uri() safe set (RFC 3987 section 3.1): reserved, unreserved and "%".
IRI_SAFE = "/#%[]=:;$&()+,!?*@'~"

# C0 controls and DEL: no real URL has them, so an entry holding one is skipped
# rather than percent-encoded into something that resolves nowhere.
CONTROL_CHARS = re.compile("[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Site:
    """The scheme and host every URL of one document is written for."""

    protocol: str
    domain: str

    @property
    def prefix(self) -> str:
        """``scheme://host[:port]``, the host in ASCII (IDNA) as a URI needs it."""
        return f"{self.protocol}://{ascii_host(self.domain)}"


def ascii_host(domain: str) -> str:
    """An internationalised domain name as IDNA ("xn--") labels; ASCII ones unchanged."""
    if domain.isascii():
        return domain
    host, colon, port = domain.rpartition(":") if domain.count(":") == 1 else (domain, "", "")
    try:
        return host.encode("idna").decode("ascii") + colon + port
    except UnicodeError:
        return quote(domain, safe=IRI_SAFE)


class Skip(Exception):
    """An entry that cannot be written; ``reason`` is a short stable code."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def iri_to_uri(iri: str) -> str:
    """Percent-encode an IRI (non-ASCII, spaces) the way ``django.utils.encoding`` does."""
    return quote(iri, safe=IRI_SAFE)


class LocationBuilder:
    """Makes absolute, length-checked, single-host URIs for one site."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.prefix = site.prefix
        self._hosts = {site.domain.lower(), ascii_host(site.domain).lower()}

    def absolute(self, location: str) -> str:
        """Return the absolute URI for a path or same-host URL, or raise ``Skip``."""
        if CONTROL_CHARS.search(location):
            raise Skip("control_characters")
        if location.startswith("/") and not location.startswith("//"):
            uri = self.prefix + iri_to_uri(location)
        else:
            parts = urlsplit(location)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise Skip("not_absolute")
            if parts.netloc.lower() not in self._hosts:
                raise Skip("other_host")
            rest = location[len(parts.scheme) + 3 + len(parts.netloc) :]
            uri = f"{parts.scheme}://{ascii_host(parts.netloc)}{iri_to_uri(rest)}"
        if len(uri) > PROTOCOL_MAX_LOC_LENGTH:
            raise Skip("too_long")
        return uri
