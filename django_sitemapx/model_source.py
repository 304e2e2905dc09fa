"""The model-backed source: SQL keyset pages streamed as plain tuples."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from operator import itemgetter
from typing import Any

from django.core import checks
from django.core.exceptions import FieldDoesNotExist, FieldError
from django.db import models
from django.db.models import F, Max
from django.urls import NoReverseMatch

from .conf import app_settings
from .locations import LocationBuilder, Skip
from .pages import (
    LASTMOD_ALIAS,
    W3CDatetime,
    bucket_summaries,
    formats_lastmod_in_sql,
    page_range,
)
from .row_locations import RowLocations
from .sources import PageSummary, Source
from .urltemplates import compile_url
from .values import getter, lastmod_text, static_value
from .writer import Entry, WriteStats

_INTEGER_FIELDS = (models.IntegerField, models.AutoField)
_PER_ITEM = ("lastmod", "changefreq", "priority")
# Reads one value of an entry from a row (or model instance).
Reader = Callable[[Any], str | None]
# The URIs of a whole chunk of rows, or None when it must go row by row.
BulkLocations = Callable[[list[Any]], list[str] | None]


class ModelSource(Source):
    """A section listing the rows of a queryset.

    Rows are read with ``values_list(...).iterator()``: no model instance is built
    unless the source relies on ``get_absolute_url()``. Give the location as
    ``url_name`` plus ``url_kwargs`` (URL keyword argument to field name), or
    override ``location(row)``, where ``row`` is a named tuple of ``key_field``,
    the ``url_kwargs`` fields and ``fields``. Per-item ``lastmod``,
    ``changefreq`` and ``priority`` methods receive the same row.
    """

    model: type[models.Model] | None = None
    queryset: models.QuerySet[Any] | None = None
    key_field: str = "pk"
    url_name: str | None = None
    url_kwargs: Mapping[str, str] | None = None
    fields: Sequence[str] = ()
    lastmod_field: str | None = None

    def __init__(
        self, section: str = "", model: type[models.Model] | None = None, **options: Any
    ) -> None:
        super().__init__(section, **options)
        if model is not None:
            self.model = model
        elif self.model is None and self.queryset is not None:
            self.model = self.queryset.model

    def get_queryset(self) -> models.QuerySet[Any]:
        """The rows of this section; evaluated anew for every document."""
        if self.queryset is not None:
            return self.queryset.all()
        assert self.model is not None
        return self.model._default_manager.all()

    def location(self, row: Any) -> str:
        """Path or same-host URL of ``row``; override it, or set ``url_name``."""
        return str(row.get_absolute_url())

    # -- configuration --------------------------------------------------------

    @property
    def uses_instances(self) -> bool:
        """True when locations come from ``get_absolute_url()`` on model instances."""
        return self.url_name is None and type(self).location is ModelSource.location

    def _key(self) -> str:
        assert self.model is not None
        return self.model._meta.pk.name if self.key_field == "pk" else self.key_field

    def _url_kwargs(self) -> dict[str, str]:
        return dict(self.url_kwargs or {})

    def check(self) -> list[checks.CheckMessage]:
        errors = super().check()
        if self.model is None:
            return [
                *errors,
                checks.Error(
                    f"Section {self.section!r} has no model.", obj=self, id="django_sitemapx.E007"
                ),
            ]
        errors += self._check_key()
        errors += self._check_lastmod_field()
        if not errors:
            errors += self._check_query()
        if self.url_name is not None and not errors:
            try:
                compile_url(self.url_name, self._url_kwargs())
            except NoReverseMatch:
                errors.append(
                    checks.Error(
                        f"Section {self.section!r}: URL name {self.url_name!r} cannot be "
                        f"reversed with keyword arguments {sorted(self._url_kwargs())}.",
                        hint="url_kwargs maps each URL keyword argument to a field name.",
                        obj=self,
                        id="django_sitemapx.E010",
                    )
                )
        if self.uses_instances:
            errors.append(
                checks.Warning(
                    f"Section {self.section!r} builds a model instance per URL to call "
                    "get_absolute_url().",
                    hint="Set url_name and url_kwargs, or override location(row), to stream "
                    "plain rows.",
                    obj=self,
                    id="django_sitemapx.W001",
                )
            )
        return errors

    def _check_key(self) -> list[checks.CheckMessage]:
        assert self.model is not None
        try:
            field = self.model._meta.get_field(self._key())
        except FieldDoesNotExist:
            field = None
        if isinstance(field, _INTEGER_FIELDS) and (field.unique or field.primary_key):
            return []
        return [
            checks.Error(
                f"Section {self.section!r}: key_field {self.key_field!r} must be a unique "
                "integer field of the model.",
                hint="Pages are fixed ranges of an integer key; use the integer primary key "
                "or another unique integer column.",
                obj=self,
                id="django_sitemapx.E008",
            )
        ]

    def _check_lastmod_field(self) -> list[checks.CheckMessage]:
        assert self.model is not None
        if self.lastmod_field is None:
            return []
        try:
            field = self.model._meta.get_field(self.lastmod_field)
        except FieldDoesNotExist:
            field = None
        if isinstance(field, models.DateField):
            return []
        return [
            checks.Error(
                f"Section {self.section!r}: lastmod_field {self.lastmod_field!r} is not a "
                "date or datetime field of the model.",
                obj=self,
                id="django_sitemapx.E009",
            )
        ]

    def _check_query(self) -> list[checks.CheckMessage]:
        try:
            self._rows_queryset(using=None).query.sql_with_params()
        except (FieldError, FieldDoesNotExist) as error:
            return [
                checks.Error(
                    f"Section {self.section!r}: {error}",
                    hint="Check fields and url_kwargs.",
                    obj=self,
                    id="django_sitemapx.E011",
                )
            ]
        return []

    # -- pages ----------------------------------------------------------------

    def _lastmod_in_sql(self, using: str) -> bool:
        if not self.lastmod_field or callable(self.lastmod):
            return False
        assert self.model is not None
        field = self.model._meta.get_field(self.lastmod_field)
        return formats_lastmod_in_sql(field, using)  # type: ignore[arg-type]

    def _listable(self, low: int = 1) -> models.QuerySet[Any]:
        """``get_queryset()`` less rows that can never be listed: keys below 1, NULL URL values.

        Pages and the index both start here, so the index does not list a page
        made only of such rows. A page passes its own lower key bound as ``low``:
        given two lower bounds, SQLite may range-scan from the looser one, from
        key 1, which made the last page of a million rows cost twice the first.
        """
        queryset = self.get_queryset().filter(**{f"{self._key()}__gte": max(low, 1)})
        if self.url_name is not None and type(self).location is ModelSource.location:
            assert self.model is not None
            not_null = {
                f"{field}__isnull": False
                for field in self._url_kwargs().values()
                if _nullable(self.model, field)
            }
            queryset = queryset.filter(**not_null)
        return queryset

    def page_summaries(self) -> list[PageSummary]:
        queryset = self._listable()
        latest: Max | W3CDatetime | None = None
        if self.lastmod_field and not callable(self.lastmod):
            latest = Max(self.lastmod_field)
            if self._lastmod_in_sql(queryset.db):
                # The same text the pages carry, not a re-formatting of it.
                latest = W3CDatetime(latest)
        summaries = bucket_summaries(queryset, self._key(), self.get_limit(), latest)
        constant = None if callable(self.lastmod) else lastmod_text(self.lastmod)
        return [
            PageSummary(number, rows, lastmod_text(value) if latest is not None else constant)
            for number, rows, value in summaries
        ]

    def _row_fields(self) -> list[str]:
        names = [self._key(), *self._url_kwargs().values(), *self.fields]
        return list(dict.fromkeys(names))

    def _rows_queryset(
        self, using: str | None, named: bool = True, low: int = 1
    ) -> models.QuerySet[Any]:
        queryset = self._listable(low)
        names = self._row_fields()
        if self.lastmod_field and not callable(self.lastmod):
            if self._lastmod_in_sql(using or queryset.db):
                queryset = queryset.annotate(**{LASTMOD_ALIAS: W3CDatetime(F(self.lastmod_field))})
                names.append(LASTMOD_ALIAS)
            else:
                names.append(self.lastmod_field)
        return queryset.values_list(*names, named=named)

    def _rows_are_private(self) -> bool:
        """True when no user code sees a row, so plain tuples can replace named ones."""
        return (
            self.url_name is not None
            and type(self).location is ModelSource.location
            and not any(callable(getattr(self, name)) for name in _PER_ITEM)
        )

    def iter_entries(
        self, page: int, builder: LocationBuilder, stats: WriteStats
    ) -> Iterator[list[Entry]]:
        low, high = page_range(page, self.get_limit())
        key = self._key()
        page_filter = {f"{key}__lte": high}  # the lower bound comes with _listable(low)
        chunk_size = int(app_settings.CHUNK_SIZE)
        bulk: BulkLocations | None = None
        if self.uses_instances:
            queryset = self._listable(low).filter(**page_filter).order_by(key)
            rows: Iterator[Any] = queryset.iterator(chunk_size=chunk_size)
            location = self._instance_location(builder)
            lastmod = self._instance_lastmod(stats)
        else:
            named = not self._rows_are_private()
            queryset = self._rows_queryset(None, named, low).filter(**page_filter).order_by(key)
            rows = queryset.iterator(chunk_size=chunk_size)
            location, bulk = self._row_location(builder)
            lastmod = self._row_lastmod(stats)
        changefreq = self._column_reader("changefreq", stats)
        priority = self._column_reader("priority", stats)
        values = (lastmod, changefreq, priority)
        yield from _chunks(rows, location, bulk, values, stats, chunk_size)

    def _row_location(
        self, builder: LocationBuilder
    ) -> tuple[Callable[[Any], str], BulkLocations | None]:
        if type(self).location is not ModelSource.location or self.url_name is None:
            return (lambda row: builder.absolute(self.location(row))), None
        fields = self._row_fields()
        locations = RowLocations(builder.prefix, self.url_name, self._url_kwargs(), fields)
        return locations.one, locations.many

    def _column_reader(self, name: str, stats: WriteStats) -> Reader | Fixed:
        per_item = getter(self, name, stats.skip)
        return per_item if per_item is not None else Fixed(static_value(self, name))

    def _row_lastmod(self, stats: WriteStats) -> Reader | Fixed:
        if callable(self.lastmod):
            return self._value_reader("lastmod", stats)
        if not self.lastmod_field:
            return Fixed(lastmod_text(self.lastmod))
        index = len(self._row_fields())
        if self._lastmod_in_sql(self.get_queryset().db):
            return itemgetter(index)  # already W3C text, formatted by the database
        return lambda row: lastmod_text(row[index])

    def _instance_location(self, builder: LocationBuilder) -> Callable[[Any], str]:
        return lambda obj: builder.absolute(self.location(obj))

    def _instance_lastmod(self, stats: WriteStats) -> Reader | Fixed:
        if callable(self.lastmod):
            return self._value_reader("lastmod", stats)
        if not self.lastmod_field:
            return Fixed(lastmod_text(self.lastmod))
        name = self.lastmod_field
        return lambda obj: lastmod_text(getattr(obj, name))


def _nullable(model: type[models.Model], path: str) -> bool:
    """False only if ``path`` follows non-null forward fields: its value is never NULL.

    Then "IS NOT NULL" filters nothing, and leaving it out spares the index its
    join (the index query reads every row: a join there doubled its time).
    """
    *relations, last = path.split("__")
    try:
        for name in relations:
            field = model._meta.get_field(name)
            if not (field.many_to_one or field.one_to_one) or not field.concrete or field.null:
                return True
            assert isinstance(field.related_model, type)
            model = field.related_model
        field = model._meta.get_field(last)
    except FieldDoesNotExist:
        return True
    return bool(field.null) or not field.concrete or field.is_relation


@dataclass(frozen=True)
class Fixed:
    """A value that is the same for every row of a section."""

    value: str | None


def _column(reader: Reader | Fixed, rows: list[Any]) -> Iterable[str | None]:
    if isinstance(reader, Fixed):
        return repeat(reader.value, len(rows))
    return map(reader, rows)


def _chunks(
    rows: Iterator[Any],
    location: Callable[[Any], str],
    bulk: BulkLocations | None,
    values: tuple[Reader | Fixed, Reader | Fixed, Reader | Fixed],
    stats: WriteStats,
    chunk_size: int,
) -> Iterator[list[Entry]]:
    """Entries in chunks of at most ``chunk_size``; rows that cannot be written are counted."""
    while batch := list(islice(rows, chunk_size)):
        uris = bulk(batch) if bulk is not None else None
        if uris is None:
            uris, kept = [], []
            for row in batch:
                try:
                    uris.append(location(row))
                except Skip as skip:
                    stats.skip(skip.reason)
                    continue
                kept.append(row)
            batch = kept
        if batch:
            yield list(zip(uris, *[_column(reader, batch) for reader in values], strict=True))
