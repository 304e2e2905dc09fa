"""What every check module builds its messages with: the ID prefix and the value tests."""

from __future__ import annotations

from typing import Any

from django.core import checks

Messages = list[checks.CheckMessage]


def error(message: str, number: str, hint: str | None = None, obj: Any = None) -> checks.Error:
    """An error with the ID ``django_sitemapx.<number>``."""
    return checks.Error(message, hint=hint, obj=obj, id=f"django_sitemapx.{number}")


def is_int(value: Any) -> bool:
    """An integer that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_positive_number(value: Any) -> bool:
    """An integer or float above 0 that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


def not_a_bool(setting: str, value: Any, number: str, hint: str | None = None) -> Messages:
    """The error ``number`` when ``SITEMAPX_<setting>`` is not True or False, else none."""
    if isinstance(value, bool):
        return []
    return [error(f"SITEMAPX_{setting} must be True or False, not {value!r}.", number, hint)]
