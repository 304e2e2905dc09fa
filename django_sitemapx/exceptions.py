"""Exceptions raised by django-sitemapx, and the reasons an entry is left out."""

from __future__ import annotations

from enum import StrEnum

from django.core.exceptions import ImproperlyConfigured


class AlreadyRegistered(Exception):
    """A section name is registered twice."""


class NotRegistered(Exception):
    """A section or model is not in the registry."""


class SourceConfigurationError(ImproperlyConfigured):
    """A source declares something the protocol or the app cannot serve."""


class ExportError(Exception):
    """An export cannot run as asked (bad argument, destination not writable, ...)."""


class NothingToExport(ExportError):
    """The sitemap has no URL on the host exported: nothing would be written."""


class InvalidValue(ValueError):
    """A value cannot be written to a sitemap (bad priority, changefreq or date).

    Raised by ``values``; a source's static value becomes a
    ``SourceConfigurationError``, a per-item one a counted skip.
    """


class InvalidURL(ValueError):
    """A base URL or a site's domain that names no usable origin; the message says why.

    Raised by ``locations.origins``; the export turns it into an ``ExportError``,
    the system checks into an error message.
    """


class InvalidLocation(ValueError):
    """A value that is neither a path nor an http(s) URL; ``code`` says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class SkipReason(StrEnum):
    """Why an entry, or one of its values, was left out of a document.

    Each page's skips are logged with counts by reason; the admin's URL
    inspector words them for editors.
    """

    # The entry is left out.
    CONTROL_CHARACTERS = "control_characters"
    # Not a string, not parseable as a URL (``http://[x/``), or not encodable
    # (a lone surrogate).
    INVALID_LOCATION = "invalid_location"
    NOT_ABSOLUTE = "not_absolute"
    OTHER_HOST = "other_host"
    TOO_LONG = "too_long"
    MISSING_VALUE = "missing_value"
    NO_REVERSE_MATCH = "no_reverse_match"
    # get_languages_for_item() gave a language the source's languages do not hold.
    UNKNOWN_LANGUAGE = "unknown_language"
    # The writer leaves the entry out: the document is full, the entry is larger
    # than its source's max_url_bytes(), or it holds a character XML 1.0 forbids.
    OVER_URL_LIMIT = "over_url_limit"
    OVER_SIZE_LIMIT = "over_size_limit"
    ILLEGAL_CHARACTERS = "illegal_characters"
    # The entry stays, without this value.
    INVALID_LASTMOD = "invalid_lastmod"
    INVALID_CHANGEFREQ = "invalid_changefreq"
    INVALID_PRIORITY = "invalid_priority"
    # Extensions (see ``extensions``). The entry is left out: a news section
    # lists only items with valid news of the last two days.
    MISSING_NEWS = "missing_news"
    INVALID_NEWS = "invalid_news"
    OLD_NEWS = "old_news"
    # The entry stays, without this image, video or tag.
    INVALID_IMAGE = "invalid_image"
    OVER_IMAGE_LIMIT = "over_image_limit"
    INVALID_VIDEO = "invalid_video"
    OVER_VIDEO_LIMIT = "over_video_limit"
    OVER_VIDEO_TAG_LIMIT = "over_video_tag_limit"


# Reasons for which the entry is kept, without the value (or image, video, tag) named.
VALUE_REASONS = frozenset(
    {
        SkipReason.INVALID_LASTMOD,
        SkipReason.INVALID_CHANGEFREQ,
        SkipReason.INVALID_PRIORITY,
        SkipReason.INVALID_IMAGE,
        SkipReason.OVER_IMAGE_LIMIT,
        SkipReason.INVALID_VIDEO,
        SkipReason.OVER_VIDEO_LIMIT,
        SkipReason.OVER_VIDEO_TAG_LIMIT,
    }
)


class Skip(Exception):
    """Raised while building an entry that cannot be written; ``reason`` says why."""

    def __init__(self, reason: SkipReason) -> None:
        super().__init__(reason)
        self.reason = reason
