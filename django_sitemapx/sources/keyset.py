"""Stable keyset pages over a queryset, and per-page lastmods computed in SQL.

Page ``n`` of a model section holds the rows whose integer key lies in
``[(n - 1) * limit + 1, n * limit]`` (auto-increment keys start at 1, so 50,000
rows fill exactly one page). Rows with a key below 1 are not listed. The
ranges are fixed: deleting a row never moves another row to a different page,
and serving the last page costs what the first costs (an index range scan, no
COUNT, no OFFSET). A page holds at
most ``limit`` rows because keys are unique integers; pages whose range holds
no row are simply absent from the index.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connections, models
from django.db.models import Count, F, Value
from django.db.models.expressions import Func

LASTMOD_ALIAS = "sitemapx_lastmod"
BUCKET_ALIAS = "sitemapx_page"


class W3CDatetime(Func):
    """A timestamp rendered as W3C Datetime text in UTC by the database itself.

    Parsing timestamps into aware ``datetime`` objects and formatting them again
    is most of the per-row cost on PostgreSQL; the database does it far faster.
    Only used where the stored value is known to be UTC (see ``formats_lastmod_in_sql``).
    """

    output_field = models.CharField()
    arity = 1

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler,
            connection,
            template=(
                "to_char(%(expressions)s AT TIME ZONE 'UTC', "
                '\'YYYY-MM-DD"T"HH24:MI:SS"+00:00"\')'
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


def formats_lastmod_in_sql(field: models.Field[Any, Any], using: str) -> bool:
    """Whether ``W3CDatetime`` applies to ``field`` on database ``using``."""
    if not isinstance(field, models.DateTimeField):
        return False
    vendor = connections[using].vendor
    # PostgreSQL stores timestamptz whatever USE_TZ says; SQLite stores UTC text
    # only when USE_TZ is on (otherwise local time with no offset).
    return vendor == "postgresql" or (vendor == "sqlite" and settings.USE_TZ)


def page_range(page: int, limit: int) -> tuple[int, int]:
    """Key bounds ``[low, high]`` (both inclusive) of ``page`` (1-based)."""
    return (page - 1) * limit + 1, page * limit


def page_for_key(key: int, limit: int) -> int | None:
    """The page holding the row with integer ``key``; None for keys below 1."""
    if key < 1:
        return None
    return (key - 1) // limit + 1


def bucket_summaries(
    queryset: models.QuerySet[Any], key: str, limit: int, latest: Any = None, dated: Any = None
) -> list[tuple[int, int, Any, int]]:
    """``(page, rows, latest, dated rows)`` for every non-empty page, in one query.

    ``latest`` is an aggregate expression (the greatest lastmod) or None;
    ``dated`` one counting the rows with a lastmod, or None (every row counts).
    """
    bucket = models.ExpressionWrapper(
        (F(key) - Value(1)) / Value(limit), output_field=models.BigIntegerField()
    )
    aggregates: dict[str, Any] = {"rows": Count("pk")}
    if latest is not None:
        aggregates["latest"] = latest
    if dated is not None:
        aggregates["dated"] = dated
    rows = (
        queryset.order_by()
        .annotate(**{BUCKET_ALIAS: bucket})
        .values(BUCKET_ALIAS)
        .annotate(**aggregates)
        .order_by(BUCKET_ALIAS)
    )
    return [
        (int(row[BUCKET_ALIAS]) + 1, row["rows"], row.get("latest"), row.get("dated", row["rows"]))
        for row in rows
    ]
