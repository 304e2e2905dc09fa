"""The protocol's values: parsing, validating and formatting lastmod, changefreq, priority.

Every place that reads or writes one of these values comes here: sources
(static attributes and per-item methods), overrides, the index's page
lastmods, ETag and Last-Modified, and the admin.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterable
from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils import timezone

from .exceptions import InvalidValue, SkipReason, SourceConfigurationError

CHANGEFREQS = ("always", "hourly", "daily", "weekly", "monthly", "yearly", "never")

# W3C Datetime as the sitemap schema accepts it: a date, or a date-time with
# seconds (fraction optional) and an explicit offset.
_W3C_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?", re.ASCII
)
# xs:dateTime allows time zone offsets up to 14 hours.
_MAX_OFFSET = datetime.timedelta(hours=14)
_MINUTE = datetime.timedelta(minutes=1)

# -- lastmod ------------------------------------------------------------------


# The one rule for a lastmod's range: its instant lies from 0001-01-02 to
# 9999-12-30 in UTC. A day inside each end of what Python's datetime holds, so
# the instant can be written with any offset (up to 14 hours) and read back in
# any time zone; a value outside it (year 10000 or later, infinity, BC dates
# from the database) is dropped and counted as ``invalid_lastmod``.
EARLIEST_LASTMOD = datetime.datetime(1, 1, 2, tzinfo=datetime.UTC)
LATEST_LASTMOD = datetime.datetime(9999, 12, 31, tzinfo=datetime.UTC)


def format_lastmod(value: datetime.date | datetime.datetime, tz: datetime.tzinfo) -> str:
    """W3C Datetime: a date, or a date-time to the second with an explicit offset.

    A naive datetime is taken to be in ``tz``. An offset the schema refuses (not
    whole minutes, such as the local mean time ``+00:09:21`` that zoneinfo gives
    Paris before 1911, or beyond 14 hours) is written as the same instant in
    UTC. Raises ``InvalidValue`` for a value outside the lastmod range
    (:data:`EARLIEST_LASTMOD` to :data:`LATEST_LASTMOD`).
    """
    if isinstance(value, datetime.datetime):
        try:
            if value.tzinfo is None or value.utcoffset() is None:
                value = value.replace(tzinfo=tz)
            offset = value.utcoffset()
            instant = value.astimezone(datetime.UTC)
        except (OverflowError, ValueError):
            raise InvalidValue(f"lastmod {value!r} is outside the years 1 to 9999") from None
        if not EARLIEST_LASTMOD <= instant < LATEST_LASTMOD:
            raise InvalidValue(f"lastmod {value!r} is outside 0001-01-02 to 9999-12-30 (UTC)")
        if offset is None or offset % _MINUTE or abs(offset) > _MAX_OFFSET:
            value = instant
        return value.replace(microsecond=0).isoformat()
    if not EARLIEST_LASTMOD.date() <= value < LATEST_LASTMOD.date():
        raise InvalidValue(f"lastmod {value!r} is outside 0001-01-02 to 9999-12-30")
    return value.isoformat()


def lastmod_text(value: Any) -> str | None:
    """A date/datetime (naive ones in the project's time zone) as W3C Datetime text.

    A string is accepted only if it already is W3C Datetime within the lastmod
    range; ``None`` stays ``None``. Anything else raises ``InvalidValue``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        if _is_w3c_datetime(value):
            return value
        raise InvalidValue(f"lastmod {value[:64]!r} is not a W3C Datetime in range")
    if isinstance(value, datetime.date):
        return format_lastmod(value, timezone.get_default_timezone())
    raise InvalidValue(f"lastmod must be a date or datetime, not {type(value).__name__}")


def lastmod_text_or_none(value: Any) -> str | None:
    """:func:`lastmod_text`, with ``None`` for a value it refuses (a summary's undated row)."""
    try:
        return lastmod_text(value)
    except InvalidValue:
        return None


def _is_w3c_datetime(text: str) -> bool:
    if not _W3C_DATETIME.fullmatch(text):
        return False
    try:
        if "T" not in text:
            day = datetime.date.fromisoformat(text)
            return EARLIEST_LASTMOD.date() <= day < LATEST_LASTMOD.date()
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        offset = moment.utcoffset()
        instant = moment.astimezone(datetime.UTC)
    except (ValueError, OverflowError):
        return False
    return (
        offset is not None
        and abs(offset) <= _MAX_OFFSET
        and EARLIEST_LASTMOD <= instant < LATEST_LASTMOD
    )


def parse_lastmod(text: str) -> datetime.datetime | None:
    """A W3C date or datetime text as an aware datetime (naive: the default time zone)."""
    try:
        value = datetime.datetime.fromisoformat(text)
        if timezone.is_naive(value):
            value = timezone.make_aware(value, timezone.get_default_timezone())
        value.astimezone(datetime.UTC)  # raises for an instant outside the years 1 to 9999
    except (ValueError, OverflowError):
        return None
    return value


def lastmod_timestamp(text: str) -> float | None:
    """Seconds since the epoch of a W3C date or datetime text, or None if it is not one."""
    value = parse_lastmod(text)
    return None if value is None else value.timestamp()


def is_later(value: datetime.datetime, text: str | None) -> bool:
    """Whether ``value`` is later than a W3C Datetime text (a missing one is earliest)."""
    other = None if text is None else parse_lastmod(text)
    return other is None or value > other


def latest_lastmod(values: Iterable[Any]) -> str | None:
    """The latest of dates, datetimes and W3C texts, as text; invalid values are ignored.

    A datetime text comes back with its offset written as ``+00:00``, not ``Z``,
    as the database writes the lastmods of model sections.
    """
    latest: datetime.datetime | datetime.date | None = None
    latest_moment: datetime.datetime | None = None
    for value in values:
        try:
            text = lastmod_text(value)
        except InvalidValue:
            continue
        if text is None or (moment := parse_lastmod(text)) is None:
            continue
        if latest_moment is None or moment > latest_moment:
            latest_moment = moment
            latest = moment if "T" in text else datetime.date.fromisoformat(text)
    return None if latest is None else lastmod_text(latest)


# -- hreflang ---------------------------------------------------------------------


_HREFLANG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")


def format_hreflang(language_code: str) -> str:
    """A Django language code as an ``hreflang`` value (BCP 47 letter case).

    Django writes codes in lower case (``en-us``, ``zh-hans``); BCP 47 (RFC 5646
    section 2.1.1) writes the language in lower case, a four-letter script in
    title case and a region in upper case: ``en-US``, ``zh-Hans``, ``sr-Latn-RS``.
    Case carries no meaning, but this is the form search engines document.
    ``x-default`` is kept as it is. Raises ``ValueError`` for a code that is not
    a language tag.
    """
    if language_code == "x-default":
        return language_code
    if not _HREFLANG.fullmatch(language_code):
        raise ValueError(f"{language_code!r} is not a language tag")
    language, *subtags = language_code.split("-")
    parts = [language.lower()]
    for position, subtag in enumerate(subtags):
        if len(subtag) == 1:
            # A singleton (x-, u-) starts an extension or private use: lower case after it.
            parts += [later.lower() for later in subtags[position:]]
            break
        if len(subtag) == 4 and subtag.isalpha():
            parts.append(subtag.title())
        elif (len(subtag) == 2 and subtag.isalpha()) or (len(subtag) == 3 and subtag.isdigit()):
            parts.append(subtag.upper())
        else:
            parts.append(subtag.lower())
    return "-".join(parts)


# -- changefreq and priority ------------------------------------------------------


def validate_changefreq(value: str) -> str:
    """Return ``value`` if it is one of the seven protocol values."""
    if value not in CHANGEFREQS:
        raise InvalidValue(f"changefreq {value!r} is not one of {', '.join(CHANGEFREQS)}")
    return value


_ONE = Decimal(1)
_THOUSANDTH = Decimal("0.001")


def format_priority(value: float | Decimal | str) -> str:
    """Validate a priority (0.0 to 1.0) and write it with at most three decimals."""
    return decimal_text(value, "priority", _ONE, _THOUSANDTH)


def decimal_text(value: object, what: str, maximum: Decimal, step: Decimal) -> str:
    """A number from 0 to ``maximum``, rounded to ``step``, without trailing zeros ("0.5").

    Anything else raises ``InvalidValue`` naming ``what`` (a priority, a video's rating).
    """
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise InvalidValue(f"{what} {value!r} is not a number") from None
    if not number.is_finite() or not Decimal(0) <= number <= maximum:
        raise InvalidValue(f"{what} {value!r} is outside 0.0 to {maximum:.1f}")
    text = f"{number.quantize(step):f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


# -- a source's values: an attribute, or a method taking the item ------------------

ValueName = str  # "lastmod", "changefreq" or "priority"
ValueReader = Callable[[Any], str | None]

VALUE_NAMES: tuple[ValueName, ...] = ("lastmod", "changefreq", "priority")
_FORMATTERS: dict[ValueName, Callable[[Any], str | None]] = {
    "changefreq": lambda value: None if value is None else validate_changefreq(value),
    "priority": lambda value: None if value is None else format_priority(value),
    "lastmod": lastmod_text,
}
INVALID = {
    "lastmod": SkipReason.INVALID_LASTMOD,
    "changefreq": SkipReason.INVALID_CHANGEFREQ,
    "priority": SkipReason.INVALID_PRIORITY,
}


def formatted(name: ValueName, raw: Any, on_invalid: Callable[[SkipReason], None]) -> str | None:
    """Format one raw value; an invalid one is reported through ``on_invalid`` and dropped."""
    try:
        return _FORMATTERS[name](raw)
    except InvalidValue:
        on_invalid(INVALID[name])
        return None


def static_value(owner: object, name: ValueName) -> str | None:
    """The formatted value of a plain attribute, raising a clear error if it is invalid."""
    try:
        return _FORMATTERS[name](getattr(owner, name, None))
    except InvalidValue as error:
        raise SourceConfigurationError(f"{type(owner).__name__}.{name}: {error}") from None


def per_item_reader(
    owner: object, name: ValueName, on_invalid: Callable[[SkipReason], None]
) -> ValueReader | None:
    """A per-item function for a method attribute, ``None`` for a plain attribute.

    An invalid per-item value is dropped (the URL stays, without that element)
    and reported through ``on_invalid``.
    """
    attribute = getattr(owner, name, None)
    if not callable(attribute):
        return None
    return checked_reader(attribute, name, on_invalid)


def checked_reader(
    read: Callable[[Any], Any], name: ValueName, on_invalid: Callable[[SkipReason], None]
) -> ValueReader:
    """``read`` (an item's raw value) formatted as ``name``'s protocol text.

    An invalid value is dropped (None: the URL stays, without that element) and
    reported through ``on_invalid``; the closure is all a row pays.
    """
    formatter = _FORMATTERS[name]
    reason = INVALID[name]

    def text(item: Any) -> str | None:
        try:
            return formatter(read(item))
        except InvalidValue:
            on_invalid(reason)
            return None

    return text
