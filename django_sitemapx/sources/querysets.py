"""The model-backed source: pages of a queryset on stable key ranges, streamed as plain tuples."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any, cast

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.db.models import Count, F, Max

from ..conf import app_settings
from ..entries import Entry, EntryStream, Skipped
from ..exceptions import Skip, SkipReason
from ..locations.reverse import CompiledUrl, compile_url
from ..locations.rows import RowLocations
from ..values import lastmod_text, per_item_reader, static_value
from .base import Page, PageSummary, Source
from .extensions import ExtrasReader, chunk_extras, extras_reader
from .keyset import (
    LASTMOD_ALIAS,
    W3CDatetime,
    bucket_summaries,
    formats_lastmod_in_sql,
    page_for_key,
    page_range,
)

if TYPE_CHECKING:
    from ..locations import LocationBuilder

# Reads one value of an entry from a row (or model instance).
Reader = Callable[[Any], str | None]
# The URIs of a whole chunk of rows, or None when it must go row by row.
BulkLocations = Callable[[list[Any]], list[str] | None]


class ModelSource(Source):
    """A section listing the rows of a queryset.

    Rows are read with ``values_list(...).iterator()``: no model instance is built
    unless the source relies on ``get_absolute_url()``. Give the location as
    ``url_name`` plus ``url_kwargs`` (URL keyword argument to field name), or
    override ``location(row)`` (or pass ``location=`` to ``register()``), where
    ``row`` is a named tuple of ``key_field``, the ``url_kwargs`` fields and
    ``fields``. Per-item ``lastmod``, ``changefreq`` and ``priority`` methods
    receive the same row.

    Page *n* holds the rows whose key lies in ``[(n - 1) * limit + 1, n * limit]``
    (see ``keyset``), so a page holds at most ``limit`` URLs and may hold fewer.
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

    # -- how rows become locations ------------------------------------------------

    @property
    def has_custom_location(self) -> bool:
        """True when ``location`` is overridden, in a subclass or as a ``register()`` option."""
        return "location" in vars(self) or type(self).location is not ModelSource.location

    @property
    def uses_url_name(self) -> bool:
        """True when locations are ``url_name`` filled with row values, in bulk."""
        return self.url_name is not None and not self.has_custom_location

    @property
    def uses_instances(self) -> bool:
        """True when locations come from ``get_absolute_url()`` on model instances."""
        return self.url_name is None and not self.has_custom_location

    @property
    def key_name(self) -> str:
        """The field pages are cut on (``key_field``, the primary key's name for ``"pk"``)."""
        assert self.model is not None
        return self.model._meta.pk.name if self.key_field == "pk" else self.key_field

    @property
    def lastmod_column(self) -> str | None:
        """``lastmod_field``, unless a ``lastmod`` method decides the lastmods."""
        return self.lastmod_field if self.lastmod_field and not callable(self.lastmod) else None

    def url_fields(self) -> dict[str, str]:
        """``url_kwargs``: URL keyword argument to field name."""
        return dict(self.url_kwargs or {})

    def row_fields(self) -> list[str]:
        """The fields of a row, in order: the key, the ``url_kwargs`` fields, ``fields``."""
        names = [self.key_name, *self.url_fields().values(), *self.fields]
        return list(dict.fromkeys(names))

    def compiled_url(self) -> CompiledUrl:
        """``url_name`` reversed once; raises ``NoReverseMatch`` if it cannot be."""
        assert self.url_name is not None
        return compile_url(self.url_name, self.url_fields())

    # -- pages ------------------------------------------------------------------

    def page_for_key(self, key: Any) -> int | None:
        """The page that lists the row keyed ``key``; None if no page can."""
        return page_for_key(key, self.rows_per_page()) if isinstance(key, int) else None

    def page_summaries(self) -> list[PageSummary]:
        rows = self._listable()
        latest = self._latest(rows.db)
        buckets = bucket_summaries(
            rows, self.key_name, self.rows_per_page(), latest, self._dated()
        )
        return [
            self._summary(number, count, value, latest, count - dated)
            for number, count, value, dated in buckets
        ]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        low, high = page_range(number, self.rows_per_page())
        # The lower bound comes with _listable(low).
        rows = self._listable(low).filter(**{f"{self.key_name}__lte": high})
        if summary is None:
            # The index's summary, read for one key range: a plain aggregate, as a
            # GROUP BY over one range only costs SQLite a sort.
            latest = self._latest(rows.db)
            aggregates: dict[str, Any] = {"rows": Count("pk")}
            if latest is not None:
                aggregates["latest"] = latest
            dated = self._dated()
            if dated is not None:
                aggregates["dated"] = dated
            found = rows.order_by().aggregate(**aggregates)
            if not found["rows"]:
                return None
            undated = found["rows"] - found.get("dated", found["rows"])
            summary = self._summary(number, found["rows"], found.get("latest"), latest, undated)
        return Page(summary, functools.partial(self._entries, rows))

    def _latest(self, using: str) -> Max | W3CDatetime | None:
        """The aggregate of a page's greatest lastmod, or None when it is not a column."""
        column = self.lastmod_column
        if column is None:
            return None
        if self._lastmod_in_sql(using):
            # The same text the pages carry, not a re-formatting of it.
            return W3CDatetime(Max(column))
        return Max(column)

    def _dated(self) -> Count | None:
        """The aggregate counting a page's rows that have a lastmod; None if all have one."""
        column = self.lastmod_column
        if column is None:
            return None
        assert self.model is not None
        return Count(column) if self.model._meta.get_field(column).null else None

    def _summary(
        self,
        number: int,
        rows: int,
        latest_value: Any,
        latest: Max | W3CDatetime | None,
        undated: int = 0,
    ) -> PageSummary:
        if latest is None:  # no lastmod column: the source's constant, if any
            text = None if callable(self.lastmod) else lastmod_text(self.lastmod)
            undated = 0 if text is not None else rows
        else:
            text = lastmod_text(latest_value)
        return PageSummary(number, rows, text, undated)

    def _lastmod_in_sql(self, using: str) -> bool:
        column = self.lastmod_column
        if column is None:
            return False
        assert self.model is not None
        field = self.model._meta.get_field(column)
        return formats_lastmod_in_sql(field, using)  # type: ignore[arg-type]

    def _listable(self, low: int = 1) -> models.QuerySet[Any]:
        """``get_queryset()`` less rows that can never be listed: keys below 1, NULL URL values.

        The index, a page's summary and its entries all start here, so they
        count the same rows.
        """
        # A page passes its own lower bound as ``low``: given two lower bounds,
        # SQLite may range-scan from the looser one, from key 1, which made the
        # last page of a million rows cost twice the first.
        queryset = self.get_queryset().filter(**{f"{self.key_name}__gte": max(low, 1)})
        if self.uses_url_name:
            assert self.model is not None
            not_null = {
                f"{field}__isnull": False
                for field in self.url_fields().values()
                if _nullable(self.model, field)
            }
            queryset = queryset.filter(**not_null)
        return queryset

    def rows_queryset(
        self, queryset: models.QuerySet[Any] | None = None, *, named: bool = True
    ) -> models.QuerySet[Any]:
        """``values_list()`` of :meth:`row_fields`, then the lastmod column, if any."""
        if queryset is None:
            queryset = self._listable()
        names = self.row_fields()
        column = self.lastmod_column
        if column is not None:
            if self._lastmod_in_sql(queryset.db):
                queryset = queryset.annotate(**{LASTMOD_ALIAS: W3CDatetime(F(column))})
                names.append(LASTMOD_ALIAS)
            else:
                names.append(column)
        return queryset.values_list(*names, named=named)

    # -- entries ----------------------------------------------------------------

    def _entries(self, page_rows: models.QuerySet[Any], builder: LocationBuilder) -> EntryStream:
        chunk_size = app_settings.CHUNK_SIZE
        skipped: Counter[SkipReason] = Counter()

        def count(reason: SkipReason) -> None:
            skipped[reason] += 1

        if self.uses_instances:
            rows = page_rows.order_by(self.key_name).iterator(chunk_size=chunk_size)
            lastmod = self._instance_lastmod(count)
        else:
            named = not self._rows_are_private()
            queryset = self.rows_queryset(page_rows, named=named).order_by(self.key_name)
            rows = queryset.iterator(chunk_size=chunk_size)
            lastmod = self._row_lastmod(count, queryset.db)
        location, bulk = self._row_location(builder)
        values = (
            lastmod,
            self._column_reader("changefreq", count),
            self._column_reader("priority", count),
        )
        extras = extras_reader(self, builder, count)
        yield from _chunks(rows, location, bulk, values, skipped, chunk_size, extras)

    def _rows_are_private(self) -> bool:
        """True when no user code sees a row, so plain tuples can replace named ones."""
        return self.uses_url_name and not any(
            callable(getattr(self, name))
            for name in ("lastmod", "changefreq", "priority", "images", "videos", "news")
        )

    def _row_location(
        self, builder: LocationBuilder
    ) -> tuple[Callable[[Any], str], BulkLocations | None]:
        if not self.uses_url_name:
            return (lambda row: builder.absolute(self.location(row))), None
        locations = RowLocations(builder.prefix, self.compiled_url(), self.row_fields())
        return locations.one, locations.many

    def _column_reader(self, name: str, count: Callable[[SkipReason], None]) -> Reader | Fixed:
        per_item = per_item_reader(self, name, count)
        return per_item if per_item is not None else Fixed(static_value(self, name))

    def _row_lastmod(self, count: Callable[[SkipReason], None], using: str) -> Reader | Fixed:
        column = self.lastmod_column
        if column is None:
            return self._column_reader("lastmod", count)
        index = len(self.row_fields())  # rows_queryset() puts the lastmod column last
        if self._lastmod_in_sql(using):
            return itemgetter(index)  # already W3C text, formatted by the database
        return lambda row: lastmod_text(row[index])

    def _instance_lastmod(self, count: Callable[[SkipReason], None]) -> Reader | Fixed:
        column = self.lastmod_column
        if column is None:
            return self._column_reader("lastmod", count)
        return lambda obj: lastmod_text(getattr(obj, column))

    # -- invalidation -------------------------------------------------------------

    def pages_touched_by(self, instance: models.Model) -> list[int | None]:
        """The pages a saved or deleted ``instance`` can change: ``[None]`` means all of them.

        A row of the section's model is on the page its key gives (none for a
        key no page lists); a row of a model the section reads through a
        relation (``category__slug``) may change any page.
        """
        assert self.model is not None
        model = instance._meta.concrete_model
        if self.model._meta.concrete_model is model:
            key = (
                instance.pk if self.key_field == "pk" else getattr(instance, self.key_field, None)
            )
            if not isinstance(key, int):
                return [None]
            page = self.page_for_key(key)
            return [page] if page is not None else []
        if model in self.related_models():
            return [None]
        return []

    def related_models(self) -> set[type[models.Model]]:
        """Models the rows read through relations (``url_kwargs`` and ``fields``)."""
        assert self.model is not None
        related: set[type[models.Model]] = set()
        for lookup in [*self.url_fields().values(), *self.fields]:
            model: Any = self.model
            for part in lookup.split("__")[:-1]:
                try:
                    field = model._meta.get_field(part)
                except FieldDoesNotExist:  # reported by the system checks
                    break
                model = field.related_model
                if model is None:
                    break
                related.add(model._meta.concrete_model)
        return related


def _nullable(model: type[models.Model], path: str) -> bool:
    """False only if ``path`` follows non-null forward fields: its value is never NULL."""
    # Then "IS NOT NULL" filters nothing, and leaving it out spares the index its
    # join (the index query reads every row: a join there doubled its time).
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
    skipped: Counter[SkipReason],
    chunk_size: int,
    extras_reader: ExtrasReader | None = None,
) -> EntryStream:
    """Entries in chunks of at most ``chunk_size``, each followed by what it skipped."""
    while batch := list(islice(rows, chunk_size)):
        uris = bulk(batch) if bulk is not None else None
        if uris is None:
            uris, kept = [], []
            for row in batch:
                try:
                    uris.append(location(row))
                except Skip as skip:
                    skipped[skip.reason] += 1
                    continue
                kept.append(row)
            batch = kept
        extras: Iterable[Any] = repeat(None, len(batch))
        if extras_reader is not None and batch:
            kept_rows, found, dropped = chunk_extras(extras_reader, batch)
            if dropped:
                skipped.update(dropped)
                keep = {id(row) for row in kept_rows}
                uris = [uri for uri, row in zip(uris, batch, strict=True) if id(row) in keep]
                batch = kept_rows
            extras = found or ()
        if batch:
            columns = [_column(reader, batch) for reader in values]
            # Plain tuples are entries too: zip() builds them with no Python call per row.
            yield cast(list[Entry], list(zip(uris, *columns, extras, strict=True)))
        if skipped:
            yield from (Skipped(reason, number) for reason, number in skipped.items())
            skipped.clear()
