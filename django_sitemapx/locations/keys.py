"""The one form an override's location is stored and matched in.

The rule: keep the path and query of the URL, nothing else.

- The scheme and host are dropped: a sitemap is written for one host at a time
  (``LocationBuilder`` refuses other hosts), so ``https://host/a/``
  and ``/a/`` name the same page, and an override keeps working when the site
  moves host or is served on several.
- Trailing slashes are dropped (``/`` stays ``/``): ``/a/`` and ``/a`` are one
  key. With ``APPEND_SLASH`` they are one page anyway, and an editor who pastes
  either must not create a second row by accident.
- The fragment is dropped; the query string is kept, because ``/list?page=2``
  is a different document.
- Non-ASCII is percent-encoded as the sitemap writes it (``/café`` equals
  ``/caf%C3%A9``) and percent-escapes are upper-cased (RFC 3986, 6.2.2.1).
- Paths are case-sensitive, as URLs are, so case is kept.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

from ..exceptions import InvalidLocation
from . import URL_CONTROL_CHARS, iri_to_uri

_ESCAPE = re.compile("%[0-9a-fA-F]{2}")


def location_key(value: str) -> str:
    """The normalised key of a path or absolute URL an editor entered.

    Raises ``InvalidLocation`` with a message fit for a form.
    """
    value = value.strip()
    if not value:
        raise InvalidLocation("empty", "Enter a path such as /about/ or a full URL.")
    if URL_CONTROL_CHARS.search(value) or URL_CONTROL_CHARS.search(unquote(value)):
        # Percent-escaped too: "%00" names no page, and PostgreSQL refuses the
        # NUL it decodes to when the URL's values are looked up.
        raise InvalidLocation("control_characters", "The location contains control characters.")
    try:
        return _key(value)
    except InvalidLocation:
        raise
    except (ValueError, UnicodeError):  # "http://[x/", a lone surrogate
        raise InvalidLocation(
            "malformed", "This is not a well-formed path or http(s) URL."
        ) from None


def _key(value: str) -> str:
    if value.startswith("/") and not value.startswith("//"):
        return _tidy(iri_to_uri(value))
    parts = urlsplit(value if "://" in value or value.startswith("//") else "")
    if not parts.netloc or parts.scheme not in ("http", "https", ""):
        raise InvalidLocation(
            "not_http", "Enter a path starting with / or a full http:// or https:// URL."
        )
    path = parts.path or "/"
    query = f"?{parts.query}" if parts.query else ""
    return _tidy(iri_to_uri(path + query))


def uri_key(uri: str) -> str:
    """The key of an absolute URI as the sitemap writes it (already encoded).

    The hot path: called once per URL while overrides are applied, so it only
    slices strings.
    """
    start = uri.find("/", uri.find("://") + 3)
    return _tidy(uri[start:]) if start != -1 else "/"


def _tidy(path: str) -> str:
    path = path.partition("#")[0]
    if "%" in path:
        path = _ESCAPE.sub(lambda match: match.group().upper(), path)
    path, _mark, query = path.partition("?")
    path = path.rstrip("/") or "/"
    return f"{path}?{query}" if query else path
