"""Lastmods computed in SQL for a model section's page summaries and entries."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import connections, models
from django.db.models.expressions import Func

from ..values import EARLIEST_LASTMOD, LATEST_LASTMOD

if TYPE_CHECKING:
    from .querysets import ModelSource

LASTMOD_ALIAS = "sitemapx_lastmod"

# values.EARLIEST_LASTMOD and values.LATEST_LASTMOD, for PostgreSQL, whose
# timestamps and dates reach far beyond them (psycopg raises on reading one
# that Python cannot hold).
_IN_RANGE = (
    "%(expressions)s >= '0001-01-02 00:00:00+00' AND %(expressions)s < '9999-12-31 00:00:00+00'"
)

# PostgreSQL's to_char() pattern of W3C Datetime text (seconds, UTC).
_W3C_FORMAT = """'YYYY-MM-DD"T"HH24:MI:SS"+00:00"'"""


class W3CDatetime(Func):
    """A timestamp rendered as W3C Datetime text in UTC by the database itself.

    Parsing timestamps into aware ``datetime`` objects and formatting them again
    is most of the per-row cost on PostgreSQL; the database does it far faster.
    Only used where the stored value is known to be UTC (see ``formats_lastmod_in_sql``).
    """

    output_field = models.CharField()
    arity = 1

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        # A timestamp outside the lastmod range (year 10000 or later, infinity,
        # BC, which to_char writes without its era) becomes NULL.
        return self.as_sql(
            compiler,
            connection,
            template=(
                f"CASE WHEN {_IN_RANGE} THEN "
                f"to_char(%(expressions)s AT TIME ZONE 'UTC', {_W3C_FORMAT}) END"
            ),
            **extra,
        )

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template="strftime('%%%%Y-%%%%m-%%%%dT%%%%H:%%%%M:%%%%S+00:00', %(expressions)s)",
            **extra,
        )


def greatest_w3c_sql(values: str) -> str:
    """PostgreSQL: the ``W3CDatetime`` text of the greatest of ``values`` within the lastmod range.

    An aggregate over a column of rows (``values`` is its SQL): the same text
    as the greatest of the rows' ``W3CDatetime`` texts (fixed-width UTC text
    sorts as the moments do; a value out of range has none), formatted once
    for the group rather than once per row.
    """
    in_range = _IN_RANGE % {"expressions": values}
    greatest = f"max({values}) FILTER (WHERE {in_range})"
    return f"to_char({greatest} AT TIME ZONE 'UTC', {_W3C_FORMAT})"


class LastmodInRange(Func):
    """A date or timestamp as it is when within the lastmod range, else NULL.

    Only PostgreSQL holds values Python cannot read; elsewhere the value is
    passed through unchanged.
    """

    arity = 1

    def as_sql(self, compiler: Any, connection: Any, **extra: Any) -> Any:  # type: ignore[override]
        if connection.vendor != "postgresql":
            return compiler.compile(self.source_expressions[0])
        return super().as_sql(
            compiler, connection, template=f"CASE WHEN {_IN_RANGE} THEN %(expressions)s END"
        )


def out_of_lastmod_range(column: str) -> models.Q:
    """Rows whose ``column`` lies outside the lastmod range (see ``values``)."""
    return models.Q(**{f"{column}__lt": EARLIEST_LASTMOD}) | models.Q(
        **{f"{column}__gte": LATEST_LASTMOD}
    )


def formats_lastmod_in_sql(field: models.Field[Any, Any], using: str) -> bool:
    """Whether ``W3CDatetime`` applies to ``field`` on database ``using``."""
    if not isinstance(field, models.DateTimeField):
        return False
    vendor = connections[using].vendor
    # PostgreSQL stores timestamptz whatever USE_TZ says; SQLite stores UTC text
    # only when USE_TZ is on (otherwise local time with no offset).
    return vendor == "postgresql" or (vendor == "sqlite" and settings.USE_TZ)


def lastmod_in_sql(source: ModelSource, using: str) -> bool:
    """Whether the database formats ``source``'s lastmod column as W3C text."""
    column = source.lastmod_column
    if column is None:
        return False
    assert source.model is not None
    field = source.model._meta.get_field(column)
    return formats_lastmod_in_sql(field, using)  # type: ignore[arg-type]


def is_postgresql(using: str) -> bool:
    return connections[using].vendor == "postgresql"
