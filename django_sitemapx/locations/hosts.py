"""Host spelling: the one canonical form of a host name, with or without its port.

Pure functions of strings. Where an origin's host comes from (a request, the
Sites framework, a base URL) is :mod:`.origins`' concern; this module imports
nothing of the rest of ``locations``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from urllib.parse import quote

# Django's iri_to_uri() safe set (RFC 3987 section 3.1): reserved, unreserved and "%".
IRI_SAFE = "/#%[]=:;$&()+,!?*@'~"

DEFAULT_PORTS = {"http": 80, "https": 443}
# A host name (letters, digits, "-", "_", "." labels, IDNA-encoded) or an IPv6 literal.
_HOST_NAME = re.compile(r"(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])", re.ASCII)


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


def checked_host(
    host: str, scheme: str | None = None, *, ports: Collection[int] | None = None
) -> str | None:
    """The canonical spelling of ``host`` (``name[:port]``), or None for what is no host.

    The name is lower-cased, IDNA-encoded and loses a trailing dot; the
    ``scheme``'s default port is dropped. With ``ports``, any other port not in
    it is dropped as well (a ``Host`` header names whatever port the client
    likes; only the ports the server is reached on are kept).
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
        if (scheme is not None and number == DEFAULT_PORTS.get(scheme)) or (
            ports is not None and number not in ports
        ):
            return name
        return f"{name}:{number}"
    return name


def canonical_host(
    host: str, scheme: str | None = None, *, ports: Collection[int] | None = None
) -> str:
    """The one spelling of a host that sites are matched and documents cached under.

    Lower case, without the trailing dot of a fully qualified name, in ASCII
    (IDNA) form; a port is kept (``example.com:8000``). ``Example.COM.`` and
    ``example.com`` are the same host. Given the ``scheme``, its default port is
    dropped (``example.com:443`` for https is ``example.com``); given ``ports``,
    any port not in it as well (see :func:`checked_host`, and
    :func:`.origins.request_host` for a request's ``Host``).
    """
    checked = checked_host(host.strip(), scheme, ports=ports)
    if checked is not None:
        return checked
    host = host.strip().lower()
    if host.startswith("["):  # an IPv6 literal, with any port
        return host
    name, colon, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
    return ascii_host(name.rstrip(".")) + colon + port


def host_name(host: str) -> str:
    """``host`` without its port: ``example.com`` for ``example.com:8000``."""
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.rpartition(":")[0] if host.count(":") == 1 else host


def host_folder(host: str) -> str:
    """The folder a host's exported files go to: the canonical host, with any character
    other than a letter, digit, ``.`` or ``-`` (a port's ``:``) as ``_``."""
    return re.sub(r"[^A-Za-z0-9.\-]", "_", canonical_host(host))
