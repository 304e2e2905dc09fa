"""Reading a source's per-entry values (attribute or per-item method) as protocol text."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from .exceptions import InvalidValue, SourceConfigurationError
from .writer import format_lastmod, format_priority, validate_changefreq

ValueGetter = Callable[[Any], str | None]


# W3C Datetime as the sitemap schema accepts it: a date, or a date-time with
# seconds (fraction optional) and an explicit offset.
_W3C_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2}))?", re.ASCII
)
# xs:dateTime allows time zone offsets up to 14 hours.
_MAX_OFFSET = datetime.timedelta(hours=14)


def _is_w3c_datetime(text: str) -> bool:
    if not _W3C_DATETIME.fullmatch(text):
        return False
    try:
        if "T" not in text:
            datetime.date.fromisoformat(text)
            return True
        offset = datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).utcoffset()
    except ValueError:
        return False
    return offset is not None and abs(offset) <= _MAX_OFFSET


def lastmod_text(value: Any) -> str | None:
    """Format a date/datetime (naive ones in the project's time zone) as W3C Datetime.

    A string is accepted only if it already is W3C Datetime.
    """
    if value is None:
        return None
    if isinstance(value, str):
        if _is_w3c_datetime(value):
            return value
        raise InvalidValue(f"lastmod {value!r} is not a W3C Datetime")
    if isinstance(value, datetime.datetime | datetime.date):
        return format_lastmod(value, timezone.get_default_timezone())
    raise InvalidValue(f"lastmod must be a date or datetime, not {type(value).__name__}")


def parse_lastmod(text: str) -> datetime.datetime | None:
    """A W3C date or datetime text as an aware datetime (naive: the default time zone)."""
    try:
        value = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if timezone.is_naive(value):
        value = timezone.make_aware(value, timezone.get_default_timezone())
    return value


_FORMATTERS: dict[str, Callable[[Any], str | None]] = {
    "changefreq": lambda value: None if value is None else validate_changefreq(value),
    "priority": lambda value: None if value is None else format_priority(value),
    "lastmod": lastmod_text,
}


def formatted(name: str, raw: Any, on_invalid: Callable[[str], None]) -> str | None:
    """Format one raw value; an invalid one is reported as ``invalid_<name>`` and dropped."""
    try:
        return _FORMATTERS[name](raw)
    except InvalidValue:
        on_invalid(f"invalid_{name}")
        return None


def static_value(owner: object, name: str) -> str | None:
    """The formatted value of a plain attribute, raising a clear error if it is invalid."""
    try:
        return _FORMATTERS[name](getattr(owner, name, None))
    except InvalidValue as error:
        raise SourceConfigurationError(f"{type(owner).__name__}.{name}: {error}") from None


def getter(owner: object, name: str, on_invalid: Callable[[str], None]) -> ValueGetter | None:
    """A per-item function for a method attribute, ``None`` for a plain attribute.

    An invalid per-item value is dropped (the URL stays, without that field) and
    reported through ``on_invalid`` with a stable reason such as ``"invalid_priority"``.
    """
    attribute = getattr(owner, name, None)
    if not callable(attribute):
        return None
    formatter = _FORMATTERS[name]
    reason = f"invalid_{name}"

    def read(item: Any) -> str | None:
        try:
            return formatter(attribute(item))
        except InvalidValue:
            on_invalid(reason)
            return None

    return read
