"""Locations: the origin a document is written for, and absolute, protocol-valid URIs.

The sub-modules each answer one question: ``hosts`` how a host is spelled,
``origins`` which origin a request or an export writes for (the request, the
Sites framework, a base URL), ``reverse`` how a URL name becomes a path per row,
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
from .hosts import IRI_SAFE, ascii_host, checked_host

# C0 controls and DEL: no real URL has them, so an entry holding one is skipped
# rather than percent-encoded into something that resolves nowhere.
URL_CONTROL_CHARS = re.compile("[\x00-\x1f\x7f]")


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


def iri_to_uri(iri: str) -> str:
    """Percent-encode an IRI (non-ASCII, spaces) the way ``django.utils.encoding`` does."""
    return quote(iri, safe=IRI_SAFE)


# RFC 3986 characters kept as they are after the host: unreserved, sub-delims,
# ":@/?" and "%". "[" and "]" belong to an IPv6 host only, "#" starts the one fragment.
_URI_SAFE = "/%=:;$&()+,!?*@'~"
_BARE_PERCENT = re.compile("%(?![0-9A-Fa-f]{2})")


def location_uri(rest: str) -> str:
    """The path, query and fragment of a location as RFC 3986 text.

    Non-ASCII and other characters a URI may not hold are percent-encoded, as are
    ``[``, ``]``, a ``%`` that starts no escape, and every ``#`` after the first.
    Raises ``UnicodeEncodeError`` for a lone surrogate.
    """
    path, hash_, fragment = rest.partition("#")
    text = quote(path, safe=_URI_SAFE)
    if hash_:
        text += "#" + quote(fragment, safe=_URI_SAFE)
    return _BARE_PERCENT.sub("%25", text) if "%" in text else text


def checked_uri(uri: str) -> str:
    """``uri`` if the protocol accepts its length, else ``Skip``."""
    if len(uri) > PROTOCOL_MAX_LOC_LENGTH:
        raise Skip(SkipReason.TOO_LONG)
    return uri


class LocationBuilder:
    """Makes absolute, length-checked, single-host URIs for one origin.

    Every location a source gives goes through :meth:`absolute`: what cannot be
    written as a valid ``<loc>`` is a counted ``Skip``, never an error.
    """

    def __init__(self, origin: Origin) -> None:
        self.origin = origin
        self.prefix = origin.prefix
        self._hosts = {origin.host.lower(), ascii_host(origin.host).lower()}
        self._host = checked_host(origin.host, origin.scheme) or ascii_host(origin.host)

    def absolute(self, location: object) -> str:
        """The absolute URI of a path or same-host URL, or ``Skip`` with the reason."""
        if not isinstance(location, str):
            raise Skip(SkipReason.INVALID_LOCATION)
        if URL_CONTROL_CHARS.search(location):
            raise Skip(SkipReason.CONTROL_CHARACTERS)
        try:
            if location.startswith("/") and not location.startswith("//"):
                return checked_uri(self.prefix + location_uri(location))
            parts = urlsplit(location)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise Skip(SkipReason.NOT_ABSOLUTE)
            host = checked_host(parts.netloc, parts.scheme)
            if host is None:
                raise Skip(SkipReason.INVALID_LOCATION)
            if host != self._host and parts.netloc.lower() not in self._hosts:
                raise Skip(SkipReason.OTHER_HOST)
            rest = location[len(parts.scheme) + 3 + len(parts.netloc) :]
            return checked_uri(f"{parts.scheme}://{self._host}{location_uri(rest)}")
        except (ValueError, UnicodeError):
            # urlsplit() refuses "http://[x/"; a lone surrogate cannot be encoded.
            raise Skip(SkipReason.INVALID_LOCATION) from None


# Reasons that depend on the document's host: a location skipped for one of
# them on one host can still be written on another.
_HOST_DEPENDENT = frozenset({SkipReason.OTHER_HOST})
_ANY_ORIGIN = Origin("https", "sitemapx.invalid")


def usable_location(location: object) -> bool:
    """Whether ``location`` gives a valid URI on some host (what the index can know).

    A path, or an http(s) URL that is well formed, of valid characters and
    within the length limit. The index knows its own host, but a source's pages
    are listed before that: a page whose every location names another host is
    still listed, and answers 404 on this one.
    """
    try:
        LocationBuilder(_ANY_ORIGIN).absolute(location)
    except Skip as skip:
        return skip.reason in _HOST_DEPENDENT
    return True
