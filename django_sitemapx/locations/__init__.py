"""Locations: the origin a document is written for, and absolute, protocol-valid URIs.

The sub-modules each answer one question: ``hosts`` which origin a request or
an export writes for, ``reverse`` how a URL name becomes a path per row,
``rows`` the URIs of a whole chunk of model rows, and ``keys`` the normalised
form of a location that overrides are stored and matched under. Nothing here
knows of sources or the registry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from ..conf import PROTOCOL_MAX_LOC_LENGTH
from ..exceptions import Skip, SkipReason

# Django's iri_to_uri() safe set (RFC 3987 section 3.1): reserved, unreserved and "%".
IRI_SAFE = "/#%[]=:;$&()+,!?*@'~"

# C0 controls and DEL: no real URL has them, so an entry holding one is skipped
# rather than percent-encoded into something that resolves nowhere.
CONTROL_CHARS = re.compile("[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Origin:
    """The scheme and host (with any port) every URL of one document is written for.

    ``site_id`` is the ``django.contrib.sites`` site the host came from, when it
    came from the Sites framework; two origins with the same scheme and host are
    equal whatever it is.
    """

    scheme: str
    host: str
    site_id: int | None = field(default=None, compare=False)

    @property
    def prefix(self) -> str:
        """``scheme://host[:port]``, the host in ASCII (IDNA) as a URI needs it."""
        return f"{self.scheme}://{ascii_host(self.host)}"


def ascii_host(host: str) -> str:
    """An internationalised host name as IDNA ("xn--") labels; ASCII ones unchanged.

    A ``:port`` suffix is kept as it is.
    """
    if host.isascii():
        return host
    name, colon, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
    try:
        return name.encode("idna").decode("ascii") + colon + port
    except UnicodeError:
        return quote(host, safe=IRI_SAFE)


def iri_to_uri(iri: str) -> str:
    """Percent-encode an IRI (non-ASCII, spaces) the way ``django.utils.encoding`` does."""
    return quote(iri, safe=IRI_SAFE)


def checked_uri(uri: str) -> str:
    """``uri`` if the protocol accepts its length, else ``Skip``."""
    if len(uri) > PROTOCOL_MAX_LOC_LENGTH:
        raise Skip(SkipReason.TOO_LONG)
    return uri


class LocationBuilder:
    """Makes absolute, length-checked, single-host URIs for one origin."""

    def __init__(self, origin: Origin) -> None:
        self.origin = origin
        self.prefix = origin.prefix
        self._hosts = {origin.host.lower(), ascii_host(origin.host).lower()}

    def absolute(self, location: str) -> str:
        """The absolute URI of a path or same-host URL, or ``Skip`` with the reason."""
        if CONTROL_CHARS.search(location):
            raise Skip(SkipReason.CONTROL_CHARACTERS)
        if location.startswith("/") and not location.startswith("//"):
            return checked_uri(self.prefix + iri_to_uri(location))
        parts = urlsplit(location)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise Skip(SkipReason.NOT_ABSOLUTE)
        if parts.netloc.lower() not in self._hosts:
            raise Skip(SkipReason.OTHER_HOST)
        rest = location[len(parts.scheme) + 3 + len(parts.netloc) :]
        return checked_uri(f"{parts.scheme}://{ascii_host(parts.netloc)}{iri_to_uri(rest)}")
