"""Lastmods computed in SQL for a model section's pages and entries.

The pages themselves (stored key ranges) are ``sources.layout``'s.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import connections, models
from django.db.models.expressions import Func

LASTMOD_ALIAS = "sitemapx_lastmod"


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
