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
from ..entries import interleave
from ..exceptions import Skip, SkipReason
from ..writer import needs_escape
from . import URL_CONTROL_CHARS, checked_uri
from .reverse import CompiledUrl

# Characters reverse() leaves unquoted (RFC 3986 unreserved, sub-delims, ":@"
# and, in a path converter, "/"), narrowed to what each converter's regex takes.
_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_PLAIN = {
    "str": _ALNUM + b"_.~!$&'()*+,;=:@-",
    "path": _ALNUM + b"_.~!$&'()*+,;=:@/-",
    "slug": _ALNUM + b"_-",
}
# The same, less what XML escapes: a URI of these is its own <loc> text.
_XML_PLAIN = {kind: allowed.translate(None, b"&'") for kind, allowed in _PLAIN.items()}


class RowLocations:
    """Fills a reversed URL with row values: ``prefix`` + path, as a URI."""

    def __init__(self, prefix: str, url: CompiledUrl, row_fields: list[str]) -> None:
        self._fill_path = url.fill
        self._indexes = [row_fields.index(name) for name in url.fields]
        self._prefix = prefix
        plain = self._plain = url.plain
        self.literals: tuple[str, ...] | None = None
        if plain is not None:
            self._plain_indexes = [row_fields.index(name) for name in plain.fields]
            self.literals = (prefix + plain.literals[0], *plain.literals[1:])
            self._literal_length = sum(map(len, self.literals))
            self._xml_literals = not needs_escape("".join(self.literals))

    def one(self, row: Sequence[Any]) -> str:
        """The URI of one row, or ``Skip`` with the reason it cannot be written."""
        values = [row[index] for index in self._indexes]
        for value in values:
            if isinstance(value, str) and URL_CONTROL_CHARS.search(value):
                raise Skip(SkipReason.CONTROL_CHARACTERS)
        return checked_uri(self._prefix + self._fill_path(values))

    def many(self, rows: Sequence[Sequence[Any]]) -> list[str] | None:
        """The URIs of all ``rows`` if every value is plain, else None (go row by row)."""
        columns = self._columns(rows, _PLAIN)
        if columns is None:
            return None
        assert self.literals is not None
        uris = interleave(self.literals, columns, len(rows))
        if uris and max(map(len, uris)) > PROTOCOL_MAX_LOC_LENGTH:
            return None
        return uris

    def xml_columns(self, rows: Sequence[Sequence[Any]]) -> list[list[str]] | None:
        """The values filling :attr:`literals` for ``rows``, column by column, when
        every URI they make is plain, is XML text as it stands (no ``&`` or
        ``'`` to escape) and is within the length limit; else None."""
        if self.literals is None or not self._xml_literals or not rows:
            return None
        columns = self._columns(rows, _XML_PLAIN)
        if columns is None:
            return None
        # The longest value of each column together bound the longest URI:
        # past the limit, many() measures each URI.
        longest = self._literal_length + sum(max(map(len, column)) for column in columns)
        return columns if longest <= PROTOCOL_MAX_LOC_LENGTH else None

    def _columns(
        self, rows: Sequence[Sequence[Any]], allowed: dict[str, bytes]
    ) -> list[list[str]] | None:
        if self._plain is None:
            return None
        columns = []
        for index, kind in zip(self._plain_indexes, self._plain.kinds, strict=True):
            column = _plain_column(list(map(itemgetter(index), rows)), kind, allowed)
            if column is None:
                return None
            columns.append(column)
        return columns


def _plain_column(column: list[Any], kind: str, allowed: dict[str, bytes]) -> list[str] | None:
    if kind == "int":
        # Exactly int (not bool) and not negative, checked in C rather than per row.
        if not column or (set(map(type, column)) == {int} and min(column) >= 0):
            return list(map(str, column))
        return None
    try:
        joined = "".join(column)
    except TypeError:  # None, numbers, anything to_url() must see
        return None
    # Plain when deleting every allowed character leaves nothing: one pass in C,
    # several times faster than a regular expression over the same text.
    if joined.isascii() and not joined.encode().translate(None, allowed[kind]) and all(column):
        return column
    return None
