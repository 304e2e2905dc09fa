"""Conditional GET: a document's ETag and Last-Modified, known before its body, and the 304s.

The ETag is a digest of the document's cache key (which holds its generations)
and of its ETag basis, read before the body: the pages' row counts and greatest lastmods. It
changes whenever an invalidation or a row count or lastmod change can have
changed the bytes.

Last-Modified follows one rule, cache or no cache (RFC 9110 section 8.8.2: the
time the server believes the representation was last modified): it is the
greatest lastmod of the document's URLs (of every page, for the index), sent
only when every URL has one; a naive datetime is read in ``TIME_ZONE``, as in
the ``<lastmod>`` elements; a time in the future is replaced by the time of the
response (section 8.8.2.1). A document with an undated URL has no
Last-Modified: nothing tells when that URL last changed. Changes no lastmod
shows (a deleted row, an override, ``invalidate()``) change the ETag, which a
conditional request is compared by first (section 13.2.2).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import get_conditional_response
from django.utils.http import http_date, quote_etag

from ..conf import app_settings
from ..values import lastmod_timestamp

# The gzip variant is other bytes, so it has its own ETag: the plain one plus this.
GZIP_ETAG_SUFFIX = "-gz"


@dataclass(frozen=True)
class Validators:
    """A document's ETag (unquoted, plain variant) and Last-Modified timestamp."""

    etag: str
    last_modified: float | None

    def variant_etag(self, gz: bool) -> str:
        """The quoted ETag of the plain or gzip variant (different bytes, different tags)."""
        return quote_etag(self.etag + GZIP_ETAG_SUFFIX if gz else self.etag)


def make_validators(key: str, etag_basis: str, lastmods: Iterable[str | None]) -> Validators:
    """Validators from a document's key, its ETag basis and its parts' lastmods.

    ``lastmods`` holds one greatest lastmod per part (the page, or each page of
    the index), ``None`` for a part with an undated URL, which leaves the
    document without Last-Modified.
    """
    digest = hashlib.sha256(f"{key}|{etag_basis}".encode()).hexdigest()[:32]
    return Validators(digest, last_modified(lastmods))


def last_modified(lastmods: Iterable[str | None]) -> float | None:
    """The Last-Modified timestamp of a document whose parts have ``lastmods`` (the rule above)."""
    times = []
    for text in lastmods:
        stamp = None if text is None else lastmod_timestamp(text)
        if stamp is None:
            return None
        times.append(stamp)
    if not times:
        return None
    return min(max(times), time.time())


def not_modified(
    request: HttpRequest, validators: Validators, gz: bool
) -> HttpResponseBase | None:
    """The 304 (or 412) that the request's conditional headers call for, if any."""
    last_modified = validators.last_modified
    response = get_conditional_response(
        request,
        etag=validators.variant_etag(gz),
        last_modified=int(last_modified) if last_modified is not None else None,
    )
    if response is not None:
        set_headers(response, validators, gz)
    return response


def set_headers(response: HttpResponseBase, validators: Validators, gz: bool) -> None:
    """ETag, Last-Modified and the configured Cache-Control."""
    response.headers["ETag"] = validators.variant_etag(gz)
    if validators.last_modified is not None:
        response.headers["Last-Modified"] = http_date(validators.last_modified)
    cache_control = app_settings.HTTP_CACHE_CONTROL
    if cache_control:
        response.headers["Cache-Control"] = cache_control
