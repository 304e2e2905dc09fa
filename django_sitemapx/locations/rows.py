"""Absolute URIs for the rows of a model source, a whole chunk at a time.

Per row, what a location needs (the converter's ``to_url()`` and regex,
percent-encoding, control characters, length) costs more in Python than
everything else a sitemap URL takes. Nearly every value is a plain slug or
number that needs none of it, and a chunk of them is proven plain by one
scan, in C, of each column joined together (see ``reverse.PlainTemplate``).
A chunk holding anything else goes row by row through ``CompiledUrl.fill``,
so both ways give the same URIs and the same skips.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from ..conf import PROTOCOL_MAX_LOC_LENGTH
from ..exceptions import Skip, SkipReason
from . import CONTROL_CHARS, checked_uri
from .reverse import CompiledUrl

# Characters reverse() leaves unquoted (RFC 3986 unreserved, sub-delims, ":@"
# and, in a path converter, "/"), narrowed to what each converter's regex takes.
_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_PLAIN = {
    "str": _ALNUM + b"_.~!$&'()*+,;=:@-",
    "path": _ALNUM + b"_.~!$&'()*+,;=:@/-",
    "slug": _ALNUM + b"_-",
}


class RowLocations:
    """Fills a reversed URL with row values: ``prefix`` + path, as a URI."""

    def __init__(self, prefix: str, url: CompiledUrl, row_fields: list[str]) -> None:
        self._fill_path = url.fill
        self._indexes = [row_fields.index(name) for name in url.fields]
        self._prefix = prefix
        plain = self._plain = url.plain
        if plain is not None:
            self._plain_indexes = [row_fields.index(name) for name in plain.fields]
            self._literals = [prefix + plain.literals[0], *plain.literals[1:]]

    def one(self, row: Sequence[Any]) -> str:
        """The URI of one row, or ``Skip`` with the reason it cannot be written."""
        values = [row[index] for index in self._indexes]
        for value in values:
            if isinstance(value, str) and CONTROL_CHARS.search(value):
                raise Skip(SkipReason.CONTROL_CHARACTERS)
        return checked_uri(self._prefix + self._fill_path(values))

    def many(self, rows: Sequence[Sequence[Any]]) -> list[str] | None:
        """The URIs of all ``rows`` if every value is plain, else None (go row by row)."""
        if self._plain is None:
            return None
        columns = []
        for index, kind in zip(self._plain_indexes, self._plain.kinds, strict=True):
            column = _plain_column(list(map(itemgetter(index), rows)), kind)
            if column is None:
                return None
            columns.append(column)
        uris = self._fill(columns, len(rows))
        if uris and max(map(len, uris)) > PROTOCOL_MAX_LOC_LENGTH:
            return None
        return uris

    def _fill(self, columns: list[list[str]], count: int) -> list[str]:
        # Comprehensions over f-strings: no Python call per row.
        literals = self._literals
        if not columns:
            return [literals[0]] * count
        if len(columns) == 1:
            a, b = literals
            return [f"{a}{v}{b}" for v in columns[0]]
        if len(columns) == 2:
            a, b, c = literals
            return [f"{a}{v}{b}{w}{c}" for v, w in zip(*columns, strict=True)]
        tail = literals[1:]
        return [
            literals[0] + "".join(v + t for v, t in zip(values, tail, strict=True))
            for values in zip(*columns, strict=True)
        ]


def _plain_column(column: list[Any], kind: str) -> list[str] | None:
    if kind == "int":
        if all(type(value) is int and value >= 0 for value in column):
            return list(map(str, column))
        return None
    try:
        joined = "".join(column)
    except TypeError:  # None, numbers, anything to_url() must see
        return None
    # Plain when deleting every allowed character leaves nothing: one pass in C,
    # several times faster than a regular expression over the same text.
    if joined.isascii() and not joined.encode().translate(None, _PLAIN[kind]) and all(column):
        return column
    return None
