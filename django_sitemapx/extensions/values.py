"""Image, video and news sitemap extensions: what a source declares, validated as protocol text.

Google documents the three extensions (see ``docs/extensions/``):

- images: ``<image:image><image:loc>`` only, at most 1,000 per URL;
- videos: ``thumbnail_loc``, ``title``, ``description`` and ``content_loc`` or
  ``player_loc``, plus optional fields with documented ranges;
- news: publication name and language, a W3C ``publication_date`` and a title,
  for items published in the last two days only.

A source gives :class:`Video` and :class:`News` values (or mappings of their
fields) and image URLs; the functions here turn them into the entry elements the
writer escapes (``entries.VideoElement``, ``entries.NewsElement``), or raise
``InvalidValue`` saying what is wrong. Nothing here knows of sources or the ORM.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any

from django.utils import timezone

from ..entries import IMAGE_NAMESPACE, NEWS_NAMESPACE, VIDEO_NAMESPACE, NewsElement, VideoElement
from ..exceptions import InvalidValue, Skip
from ..locations import (
    URL_CONTROL_CHARS,
    LocationBuilder,
    checked_uri,
    location_uri,
)
from ..locations.hosts import checked_host
from ..values import decimal_text, lastmod_text, parse_lastmod
from ..writer import NOT_XML_CHAR_RANGES

__all__ = [
    "IMAGE_NAMESPACE",
    "NEWS_NAMESPACE",
    "VIDEO_NAMESPACE",
    "News",
    "Publication",
    "Video",
]

# Google: "Each <url> tag can contain up to 1,000 <image:image> tags."
MAX_IMAGES_PER_URL = 1_000
# Google's video sitemap reference: duration 1 to 28,800 seconds (eight hours),
# rating 0.0 to 5.0, at most 32 tags, a description of at most 2,048 characters;
# the schema caps a title at 100 characters; uploader at most 255 characters.
VIDEO_MAX_DURATION = 28_800
VIDEO_MAX_RATING = Decimal(5)
VIDEO_MAX_TAGS = 32
VIDEO_MAX_TITLE = 100
VIDEO_MAX_DESCRIPTION = 2_048
VIDEO_MAX_UPLOADER = 255
# No limit is documented for a tag: one this long is no tag a search engine reads.
VIDEO_MAX_TAG = 256
# Google: "Only include recent URLs for articles that were created in the last two days."
NEWS_MAX_AGE = datetime.timedelta(days=2)
# Google: "at most 1,000 news:news tags" per sitemap.
NEWS_MAX_URLS = 1_000
# No limits are documented for these; they bound a URL's size, so pages can be
# sized so that no URL is ever dropped (see ``max_bytes``).
NEWS_MAX_NAME = 256
NEWS_MAX_TITLE = 2_048

_COUNTRY = re.compile(r"[A-Z]{2}", re.ASCII)
_NEWS_LANGUAGE = re.compile(r"zh-cn|zh-tw|[a-z]{2,3}", re.ASCII)
_PLATFORMS = ("web", "mobile", "tv")
_RELATIONSHIPS = ("allow", "deny")
# Refused in a text value (a title, a name) and a media host: what XML cannot
# hold (the writer's reason), and the C1 controls and DEL no title should carry.
_NOT_PLAIN_TEXT = re.compile(f"[{NOT_XML_CHAR_RANGES}\x7f-\x9f]")


@dataclass(frozen=True, kw_only=True)
class Video:
    """One ``<video:video>`` of a URL, as Google's video sitemap reference lists its fields.

    Locations are paths (made absolute on the document's origin) or absolute
    http(s) URLs, on any host (videos are often on a CDN). ``restriction`` and
    ``platform`` are ``(relationship, values)`` pairs: ``("allow", ["IE", "GB"])``,
    ``("deny", ["tv"])``. Dates are dates, datetimes or W3C Datetime text.
    """

    thumbnail_loc: str
    title: str
    description: str
    content_loc: str | None = None
    player_loc: str | None = None
    duration: int | None = None
    expiration_date: Any = None
    rating: float | Decimal | str | None = None
    view_count: int | None = None
    publication_date: Any = None
    tags: Sequence[str] = ()
    family_friendly: bool | None = None
    restriction: tuple[str, Iterable[str]] | None = None
    platform: tuple[str, Iterable[str]] | None = None
    requires_subscription: bool | None = None
    uploader: str | None = None
    uploader_info: str | None = None
    live: bool | None = None


@dataclass(frozen=True, kw_only=True)
class News:
    """The ``<news:news>`` of a URL: its title and publication date.

    ``name`` and ``language`` default to the source's ``news_publication``.
    """

    title: str
    publication_date: datetime.date | datetime.datetime | str
    name: str | None = None
    language: str | None = None


@dataclass(frozen=True)
class Publication:
    """The publication a news section belongs to: its name and ISO 639 language code.

    Google: the name exactly as it appears on news.google.com; the language
    ``zh-cn`` or ``zh-tw`` for Chinese, else an ISO 639 code of two or three letters.
    """

    name: str
    language: str

    def __post_init__(self) -> None:
        news_name(self.name)
        news_language(self.language)


# -- images ------------------------------------------------------------------------


def media_uri(builder: LocationBuilder, location: Any, what: str) -> str:
    """The absolute URI of an image or video location, with ``<loc>``'s rules.

    A path is made absolute on the document's origin; an absolute http(s) URL
    may be on another host (media often is on a CDN). Control characters, other
    schemes and URIs over 2,047 characters raise ``InvalidValue``.
    """
    if not isinstance(location, str) or not location:
        raise InvalidValue(f"{what} must be a non-empty string, not {location!r}")
    if _PLAIN_MEDIA_URI.match(location):
        # Nearly every media URL (a CDN's): nothing to encode, so only its length to check.
        try:
            return checked_uri(location)
        except Skip as skip:
            raise InvalidValue(f"{what} {location[:80]!r} is refused: {skip.reason}") from None
    if URL_CONTROL_CHARS.search(location):
        raise InvalidValue(f"{what} {location[:80]!r} holds control characters")
    try:
        if location.startswith("/") and not location.startswith("//"):
            return builder.absolute(location)
        scheme, separator, rest = location.partition("://")
        if scheme.lower() not in ("http", "https") or not separator or not rest:
            raise InvalidValue(f"{what} {location[:80]!r} is not a path or an http(s) URL")
        # The host ends where the path, the query or the fragment starts.
        end = min((i for i in map(rest.find, "/?#") if i != -1), default=len(rest))
        path = rest[end:]
        host = checked_host(rest[:end], scheme.lower())
        if host is None:
            raise InvalidValue(f"{what} {location[:80]!r} has no valid host")
        # <loc>'s rule for what follows the host: "[", "]", a bare "%" and a second
        # "#" are percent-encoded, or the image and video schemas refuse the URI.
        return checked_uri(f"{scheme.lower()}://{host}{location_uri(path)}")
    except Skip as skip:
        raise InvalidValue(f"{what} {location[:80]!r} is refused: {skip.reason}") from None


# An absolute http(s) URL that the rules below would return unchanged: a lower-case
# scheme, an ASCII host name, and a path of characters a URI keeps as they are.
_PLAIN_MEDIA_URI = re.compile(
    r"https?://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9_.~/=:;$&()+,!?*@'-]*)?\Z"
)


# -- text --------------------------------------------------------------------------


def text_value(value: Any, what: str, max_length: int, *, required: bool = True) -> str:
    """``value`` as element text: a string within ``max_length``, no control character."""
    if value is None or value == "":
        if required:
            raise InvalidValue(f"{what} is required")
        return ""
    if not isinstance(value, str):
        raise InvalidValue(f"{what} must be a string, not {type(value).__name__}")
    if _NOT_PLAIN_TEXT.search(value):
        raise InvalidValue(f"{what} holds control characters")
    if len(value) > max_length:
        raise InvalidValue(f"{what} is longer than {max_length} characters")
    if not value.strip():
        raise InvalidValue(f"{what} is blank")
    return value


def _date_text(value: Any, what: str) -> str | None:
    try:
        return lastmod_text(value)
    except InvalidValue:
        raise InvalidValue(f"{what} {value!r} is not a date, datetime or W3C Datetime") from None


def _yes_no(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, bool):
        raise InvalidValue(f"{what} must be True, False or None, not {value!r}")
    return "yes" if value else "no"


def _whole_number(value: Any, what: str, low: int, high: int | None) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(f"{what} must be an integer, not {value!r}")
    if value < low or (high is not None and value > high):
        limit = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise InvalidValue(f"{what} {value} is not {limit}")
    return str(value)


# A rating is written with at most two decimals.
_HUNDREDTH = Decimal("0.01")


def _rating(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidValue(f"video rating must be a number, not {value!r}")
    return decimal_text(value, "video rating", VIDEO_MAX_RATING, _HUNDREDTH)


def _relationship_list(
    value: Any, what: str, valid: Any, fix: Any = str
) -> tuple[str, str] | None:
    if value is None:
        return None
    try:
        relationship, items = value
    except (TypeError, ValueError):
        raise InvalidValue(f"{what} must be a (relationship, values) pair") from None
    if relationship not in _RELATIONSHIPS:
        raise InvalidValue(f"{what} relationship must be 'allow' or 'deny', not {relationship!r}")
    if isinstance(items, str):
        items = items.split()
    words = [fix(item) for item in items]
    bad = [word for word in words if not valid(word)]
    if bad:
        raise InvalidValue(f"{what} has invalid values {bad[:5]!r}")
    return relationship, " ".join(dict.fromkeys(words))


# -- videos ------------------------------------------------------------------------


def as_video(value: Any) -> Video:
    """A :class:`Video`, or a mapping of its fields as one."""
    if isinstance(value, Video):
        return value
    if isinstance(value, Mapping):
        names = {item.name for item in fields(Video)}
        unknown = set(value) - names
        if unknown:
            raise InvalidValue(f"video has unknown fields {sorted(unknown)!r}")
        try:
            return Video(**value)
        except TypeError as error:
            raise InvalidValue(f"video: {error}") from None
    raise InvalidValue(f"a video must be a Video or a mapping, not {type(value).__name__}")


def video_element(value: Any, builder: LocationBuilder) -> tuple[VideoElement, int]:
    """A video as the writer's element, and how many tags past 32 it left out.

    Raises ``InvalidValue`` for a video that cannot be written: a required field
    missing, a location refused, a value out of its documented range.
    """
    video = as_video(value)
    if not video.content_loc and not video.player_loc:
        raise InvalidValue("video needs content_loc or player_loc")
    tags = video.tags
    if isinstance(tags, str):
        raise InvalidValue("video tags must be a sequence of strings, not one string")
    tag_texts = tuple(text_value(tag, "video tag", VIDEO_MAX_TAG) for tag in tags)
    uploader = text_value(video.uploader, "video uploader", VIDEO_MAX_UPLOADER, required=False)
    if video.uploader_info and not uploader:
        raise InvalidValue("video uploader_info needs an uploader")
    element = VideoElement(
        thumbnail_loc=media_uri(builder, video.thumbnail_loc, "video thumbnail_loc"),
        title=text_value(video.title, "video title", VIDEO_MAX_TITLE),
        description=text_value(video.description, "video description", VIDEO_MAX_DESCRIPTION),
        content_loc=(
            media_uri(builder, video.content_loc, "video content_loc")
            if video.content_loc
            else None
        ),
        player_loc=(
            media_uri(builder, video.player_loc, "video player_loc") if video.player_loc else None
        ),
        duration=_whole_number(video.duration, "video duration", 1, VIDEO_MAX_DURATION),
        expiration_date=_date_text(video.expiration_date, "video expiration_date"),
        rating=_rating(video.rating),
        view_count=_whole_number(video.view_count, "video view_count", 0, None),
        publication_date=_date_text(video.publication_date, "video publication_date"),
        tags=tag_texts[:VIDEO_MAX_TAGS],
        family_friendly=_yes_no(video.family_friendly, "video family_friendly"),
        restriction=_relationship_list(
            video.restriction, "video restriction", _COUNTRY.fullmatch, lambda c: str(c).upper()
        ),
        requires_subscription=_yes_no(video.requires_subscription, "video requires_subscription"),
        uploader=uploader or None,
        uploader_info=(
            media_uri(builder, video.uploader_info, "video uploader_info")
            if video.uploader_info
            else None
        ),
        platform=_relationship_list(
            video.platform, "video platform", _PLATFORMS.__contains__, lambda p: str(p).lower()
        ),
        live=_yes_no(video.live, "video live"),
    )
    return element, max(len(tag_texts) - VIDEO_MAX_TAGS, 0)


# -- news --------------------------------------------------------------------------


def news_name(value: Any) -> str:
    """A publication name, validated."""
    return text_value(value, "news publication name", NEWS_MAX_NAME)


def news_language(value: Any) -> str:
    """A publication language: ``zh-cn``, ``zh-tw`` or an ISO 639 code (lower case)."""
    if not isinstance(value, str) or not _NEWS_LANGUAGE.fullmatch(value):
        raise InvalidValue(
            f"news language {value!r} is not an ISO 639 code (two or three lower-case "
            "letters) nor zh-cn/zh-tw"
        )
    return value


def news_moment(value: Any) -> datetime.datetime:
    """A publication date as an aware datetime (a date: its start, in the default time zone)."""
    if isinstance(value, str):
        text = lastmod_text(value)
        assert text is not None
        moment = parse_lastmod(text)
        if moment is None:
            raise InvalidValue(f"news publication_date {value!r} is not a W3C Datetime")
        return moment
    if isinstance(value, datetime.datetime):
        if timezone.is_naive(value):
            return timezone.make_aware(value, timezone.get_default_timezone())
        return value
    if isinstance(value, datetime.date):
        start = datetime.datetime.combine(value, datetime.time())
        return timezone.make_aware(start, timezone.get_default_timezone())
    raise InvalidValue(f"news publication_date must be a date or datetime, not {value!r}")


def as_news(value: Any) -> News:
    """A :class:`News`, or a mapping of its fields as one."""
    if isinstance(value, News):
        return value
    if isinstance(value, Mapping):
        try:
            return News(**value)
        except TypeError as error:
            raise InvalidValue(f"news: {error}") from None
    raise InvalidValue(f"news must be a News or a mapping, not {type(value).__name__}")


def news_element(
    value: Any, publication: Publication | None, now: datetime.datetime
) -> NewsElement | None:
    """The writer's element of a URL's news, or None if it is older than two days.

    Raises ``InvalidValue`` for news that cannot be written.
    """
    news = as_news(value)
    name = news.name if news.name is not None else (publication.name if publication else None)
    language = (
        news.language
        if news.language is not None
        else (publication.language if publication else None)
    )
    moment = news_moment(news.publication_date)
    if moment < now - NEWS_MAX_AGE:
        return None
    text = lastmod_text(news.publication_date)
    assert text is not None
    return NewsElement(
        name=news_name(name),
        language=news_language(language),
        publication_date=text,
        title=text_value(news.title, "news title", NEWS_MAX_TITLE),
    )


# -- sizes -------------------------------------------------------------------------

# The most bytes one character of a URI or of text takes in the document: a URI
# is ASCII, where "'" becomes "&apos;"; text is UTF-8 (up to four bytes) and
# escaped the same way, six at most.
_ESCAPED = 6
_URI_BYTES = 2_047 * _ESCAPED
IMAGE_ELEMENT_BYTES = len("<image:image><image:loc></image:loc></image:image>") + _URI_BYTES
VIDEO_ELEMENT_BYTES = (
    400  # every tag of the element, and its attributes
    + 4 * _URI_BYTES  # thumbnail, content, player, uploader info
    + (VIDEO_MAX_TITLE + VIDEO_MAX_DESCRIPTION + VIDEO_MAX_UPLOADER) * _ESCAPED
    + VIDEO_MAX_TAGS * (len("<video:tag></video:tag>") + VIDEO_MAX_TAG * _ESCAPED)
    + 5 * 64  # numbers and dates
    + 2 * 1_024  # restriction (every country code) and platform
)
NEWS_ELEMENT_BYTES = 300 + (NEWS_MAX_NAME + NEWS_MAX_TITLE) * _ESCAPED + 64
