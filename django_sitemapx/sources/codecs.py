"""A model section's keys as the page table stores them: text that sorts as the keys do."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connections, models

# Longest string key the page table can hold (its ``first`` column).
MAX_STRING_KEY = 255
_INT_OFFSET = 2**63


@dataclass(frozen=True)
class KeyCodec:
    """Turns keys into the text the page table orders them by, and back."""

    kind: str
    encode: Callable[[Any], str]
    decode: Callable[[str], Any]


def _encode_int(key: Any) -> str:
    return f"{int(key) + _INT_OFFSET:020d}"


def _decode_int(text: str) -> int:
    return int(text) - _INT_OFFSET


def _as_uuid(key: Any) -> uuid.UUID:
    return key if isinstance(key, uuid.UUID) else uuid.UUID(str(key))


def _encode_uuid(key: Any) -> str:
    return _as_uuid(key).hex


def _decode_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(hex=text)


def _encode_mariadb_uuid(key: Any) -> str:
    # MariaDB's UUID type compares the groups from the last to the first.
    h = _as_uuid(key).hex
    return h[20:32] + h[16:20] + h[12:16] + h[8:12] + h[0:8]


def _decode_mariadb_uuid(text: str) -> uuid.UUID:
    return uuid.UUID(hex=text[24:32] + text[20:24] + text[16:20] + text[12:16] + text[0:12])


def _encode_str(key: Any) -> str:
    text = str(key)
    if len(text) > MAX_STRING_KEY:
        raise ValueError(f"a string key longer than {MAX_STRING_KEY} characters")
    return text


def key_model_field(model: type[models.Model], name: str) -> models.Field[Any, Any] | None:
    """The concrete field holding the values of key ``name`` (through a primary-key relation)."""
    try:
        found: Any = model._meta.get_field(name)
    except Exception:  # FieldDoesNotExist, or a composite pk's missing parts
        return None
    while getattr(found, "is_relation", False) and getattr(found, "target_field", None):
        found = found.target_field
    return found if isinstance(found, models.Field) else None


def key_kind(field: models.Field[Any, Any] | None) -> str | None:
    """``"int"``, ``"uuid"`` or ``"str"``: how a key field pages; None if it cannot."""
    if isinstance(field, models.IntegerField):  # AutoField and BigAutoField too
        return "int"
    if isinstance(field, models.UUIDField):
        return "uuid"
    if (
        isinstance(field, models.CharField)
        and not getattr(field, "db_collation", None)
        and field.max_length is not None
        and field.max_length <= MAX_STRING_KEY
    ):
        return "str"
    return None


def codec_for(field: models.Field[Any, Any] | None, using: str) -> KeyCodec | None:
    """The codec of a key field on database ``using``; None for a key that cannot page."""
    kind = key_kind(field)
    if kind == "int":
        return KeyCodec(kind, _encode_int, _decode_int)
    if kind == "uuid":
        connection = connections[using]
        if connection.vendor == "mysql" and connection.features.has_native_uuid_field:
            return KeyCodec(kind, _encode_mariadb_uuid, _decode_mariadb_uuid)
        return KeyCodec(kind, _encode_uuid, _decode_uuid)
    if kind == "str":
        return KeyCodec(kind, _encode_str, str)
    return None
