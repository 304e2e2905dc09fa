"""The model-backed source: pages of a queryset on stable key ranges, streamed as plain tuples."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from operator import attrgetter, countOf, itemgetter
from typing import TYPE_CHECKING, Any, cast

from django.core.exceptions import FieldDoesNotExist
from django.db import connections, models
from django.db.models import Case, Count, F, Func, Max, Value, When
from django.urls import NoReverseMatch, get_resolver, get_script_prefix, get_urlconf
from django.utils import translation

from ..conf import app_settings
from ..entries import ChunkStream, Entry, EntryStream, EntryTuple, PlainChunk, Skipped
from ..exceptions import InvalidValue, Skip, SkipReason
from ..locations.reverse import CompiledUrl, compile_url
from ..locations.rows import RowLocations
from ..values import lastmod_text, per_item_reader, static_value
from .base import (
    MAX_ESCAPED_LOCATION_BYTES,
    MAX_ORIGIN_LENGTH,
    Page,
    PageSummary,
    PlainChunkEntries,
    Source,
    escaped_length,
)
from .batches import row_batches
from .extensions import ExtrasReader, ItemExtras, chunk_extras, extras_reader
from .keyset import (
    LASTMOD_ALIAS,
    LastmodInRange,
    W3CDatetime,
    formats_lastmod_in_sql,
    out_of_lastmod_range,
)
from .languages import LanguageVersions
from .layout import Bounds, PageLayout, has_host_layouts, key_field

if TYPE_CHECKING:
    from ..locations import LocationBuilder

# The annotation naming a row's page in a grouped count (``summarize_pages``).
_PAGE_ALIAS = "sitemapx_page"
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

    The key (``key_field``, the primary key by default) is any unique integer,
    UUID or string (up to 255 characters) field. Pages are stored key ranges
    (see ``sources.layout``): every page but the last holds at least half of
    :meth:`rows_per_page` rows and none more; a change moves only its page and at
    most one neighbour.
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
        # Made here, on the registered instance, so that the copies each request
        # serves (for_origin) share them: see compiled_url_for, max_location_bytes.
        self._compiled_urls: dict[Any, CompiledUrl] = {}
        self._location_bounds: dict[Any, int] = {}

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

    def compiled_url_for(self, language: str | None) -> CompiledUrl:
        """:meth:`compiled_url` with ``language`` active (None: as it is), kept while the
        URLconf, the script prefix and the source's URL stay the same.

        Page sizing and every document of every language use it, so a section
        reverses its URL once per language, not once per document.
        """
        memo: dict[Any, CompiledUrl] = self.__dict__.setdefault("_compiled_urls", {})
        key = self._url_key(language)
        found = memo.get(key)
        if found is None:
            if language is None:
                found = self.compiled_url()
            else:
                with translation.override(language):
                    found = self.compiled_url()
            _remember(memo, key, found)
        return found

    def _url_key(self, *what: Any) -> tuple[Any, ...]:
        """``what`` with what a reversed URL depends on: the URLconf, the script
        prefix and the source's ``url_name`` and ``url_kwargs``."""
        return (
            *what,
            get_resolver(get_urlconf()),
            get_script_prefix(),
            self.url_name,
            tuple(self.url_fields().items()),
        )

    def max_location_bytes(self) -> int:
        """A bound computed from ``url_name``'s pattern, in each language, and the fields.

        The pattern's literal text, plus for each URL field its longest value
        as the converter writes it: 20 characters for an integer, the field's
        ``max_length`` for a slug (a slug is never encoded or escaped), twelve
        times ``max_length`` for ``str``/``path`` (a four-byte UTF-8 character
        percent-encodes to twelve). The protocol's worst case when a field has
        no ``max_length`` or a converter is not one of Django's.
        """
        if not self.uses_url_name:
            return super().max_location_bytes()
        codes: list[str | None] = list(self.get_languages()) if self.i18n else [None]
        # Every page and the index size pages on it: computed once while the
        # URLconf, the script prefix and the source's URL stay the same.
        memo: dict[Any, int] = self.__dict__.setdefault("_location_bounds", {})
        key = self._url_key(tuple(codes))
        found = memo.get(key)
        if found is None:
            found = self._location_bound(codes)
            _remember(memo, key, found)
        return found

    def _location_bound(self, codes: list[str | None]) -> int:
        longest = 0
        for code in codes:
            try:
                url = self.compiled_url_for(code)
            except NoReverseMatch:  # reported by the checks
                return super().max_location_bytes()
            bound = self._template_bound(url)
            if bound is None:
                return super().max_location_bytes()
            longest = max(longest, bound)
        return min(MAX_ORIGIN_LENGTH + longest, MAX_ESCAPED_LOCATION_BYTES)

    def _template_bound(self, url: CompiledUrl) -> int | None:
        plain = url.plain
        if plain is None:
            return None
        assert self.model is not None
        total = sum(map(escaped_length, plain.literals))
        for field, kind in zip(plain.fields, plain.kinds, strict=True):
            if kind == "int":
                total += _INT_LENGTH
                continue
            length = _max_length(self.model, field)
            if length is None:
                return None
            total += length if kind == "slug" else length * _WORST_ENCODING
        return total

    # -- pages ------------------------------------------------------------------

    def layout(self) -> PageLayout:
        """The section's stored pages (see ``sources.layout``)."""
        return PageLayout(self)

    def page_for_key(self, key: Any) -> int | None:
        """The page that lists the row keyed ``key``; None if no page can (yet)."""
        return self.layout().page_of(key)

    def page_summaries(self) -> list[PageSummary]:
        return [
            PageSummary(state.number, state.rows, state.lastmod, state.undated)
            for state in self.layout().states()
            if state.rows
        ]

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        layout = self.layout()
        # The export hands the index's summary in: the page was counted already.
        found = layout.bounds(layout.states(set() if summary is not None else {number}), number)
        if found is None:
            return None
        state, bounds = found
        if summary is None:
            if not state.rows:
                return None
            summary = PageSummary(number, state.rows, state.lastmod, state.undated)
        rows = self.in_range(self._listable(), bounds)
        return Page(summary, PlainChunkEntries(functools.partial(self._entries, rows)))

    def in_range(self, rows: models.QuerySet[Any], bounds: Bounds) -> models.QuerySet[Any]:
        """``rows`` whose key lies in ``bounds`` (``low <= key < high``)."""
        filters: dict[str, Any] = {}
        if bounds.low is not None:
            filters[f"{self.key_name}__gte"] = bounds.low
        if bounds.high is not None:
            filters[f"{self.key_name}__lt"] = bounds.high
        return rows.filter(**filters)

    def summarize(self, bounds: Bounds) -> tuple[int, str | None, int]:
        """Row count, greatest lastmod (W3C text) and undated rows in ``bounds``: one aggregate."""
        rows = self.in_range(self._listable(), bounds)
        latest, aggregates = self._summary_aggregates(rows.db)
        return self._summary_of(rows.order_by().aggregate(**aggregates), latest)

    def summarize_pages(
        self, firsts: Sequence[Any], high: Any
    ) -> list[tuple[int, str | None, int]]:
        """:meth:`summarize` of consecutive pages, in one grouped pass over their rows.

        Page *i* holds the keys from ``firsts[i]`` (None: no lower bound) below
        ``firsts[i + 1]``, the last one below ``high`` (None: no upper bound).
        Each row's page is found by a binary search over the firsts in SQL (a
        nested ``CASE``, a dozen comparisons for hundreds of pages); the rows
        are read once, whatever the number of pages, instead of once per page.
        """
        if len(firsts) < 2:
            return [self.summarize(Bounds(firsts[0] if firsts else None, high))]
        rows = self.in_range(self._listable(), Bounds(firsts[0], high))
        if firsts[0] is None and high is None:
            # As per page: a row whose key is NULL lies in no page's range.
            rows = rows.filter(**{f"{self.key_name}__isnull": False})
        latest, aggregates = self._summary_aggregates(rows.db)
        found = {
            row[_PAGE_ALIAS]: row
            for row in rows.order_by()
            .annotate(
                **{_PAGE_ALIAS: _page_of_key(self.key_name, firsts, 0, len(firsts), rows.db)}
            )
            .values(_PAGE_ALIAS)
            .annotate(**aggregates)
            .order_by()
        }
        return [
            self._summary_of(found.get(index, {"rows": 0}), latest) for index in range(len(firsts))
        ]

    def counts_pages_together(self) -> bool:
        """Whether neighbouring pages are counted in one pass (:meth:`summarize_pages`).

        As measured (``benchmarks/scale.py``, both ways): on PostgreSQL, whose
        tables are not kept in key order, one pass is faster than an aggregate per
        page on every key tried (dense and sparse integers, UUIDs). On SQLite too,
        except on an integer primary key: the table is stored in its order, a
        page's range is read in place, and one aggregate per page is faster. On
        MariaDB and MySQL (not measured) the table is kept in primary-key order:
        one aggregate per page. A source may override this; both ways give the
        same summaries.
        """
        assert self.model is not None
        connection = connections[self.get_queryset().db]
        if connection.vendor == "postgresql":
            return True
        if connection.vendor == "sqlite":
            field = key_field(self.model, self.key_name)
            return not (
                field is not None
                and field.primary_key
                and field.db_type(connection) == "integer"  # the rowid
            )
        return False

    def _summary_aggregates(self, using: str) -> tuple[Max | W3CDatetime | None, dict[str, Any]]:
        latest = self._latest(using)
        aggregates: dict[str, Any] = {"rows": Count("pk")}
        if latest is not None:
            aggregates["latest"] = latest
        dated = self._dated()
        if dated is not None:
            aggregates["dated"] = dated
        return latest, aggregates

    def _summary_of(
        self, found: Mapping[str, Any], latest: Max | W3CDatetime | None
    ) -> tuple[int, str | None, int]:
        undated = found["rows"] - found.get("dated", found["rows"])
        summary = self._summary(0, found["rows"], found.get("latest"), latest, undated)
        return summary.rows, summary.lastmod, summary.undated

    def _latest(self, using: str) -> Max | W3CDatetime | None:
        """The aggregate of a page's greatest lastmod, or None when it is not a column."""
        column = self.lastmod_column
        if column is None:
            return None
        if self._lastmod_in_sql(using):
            # The same text the pages carry, not a re-formatting of it.
            return W3CDatetime(Max(column))
        return Max(LastmodInRange(F(column)))

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
            try:
                text = lastmod_text(latest_value)
            except InvalidValue:  # out of the lastmod range: the page has no lastmod
                text = None
        return PageSummary(number, rows, text, undated)

    def _lastmod_in_sql(self, using: str) -> bool:
        column = self.lastmod_column
        if column is None:
            return False
        assert self.model is not None
        field = self.model._meta.get_field(column)
        return formats_lastmod_in_sql(field, using)  # type: ignore[arg-type]

    def _listable(self) -> models.QuerySet[Any]:
        """``get_queryset()`` less rows that can never be listed: NULL URL values.

        The index, a page's summary and its entries all start here, so they
        count the same rows.
        """
        queryset = self.get_queryset()
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
        self,
        queryset: models.QuerySet[Any] | None = None,
        *,
        named: bool = True,
        fields: Sequence[str] | None = None,
    ) -> models.QuerySet[Any]:
        """``values_list()`` of :meth:`row_fields` (or ``fields``), then the lastmod column."""
        if queryset is None:
            queryset = self._listable()
        names = list(self.row_fields() if fields is None else fields)
        column = self.lastmod_column
        if column is not None:
            if self._lastmod_in_sql(queryset.db):
                queryset = queryset.annotate(**{LASTMOD_ALIAS: W3CDatetime(F(column))})
                names.append(LASTMOD_ALIAS)
            elif _is_postgresql(queryset.db):
                queryset = queryset.annotate(**{LASTMOD_ALIAS: LastmodInRange(F(column))})
                names.append(LASTMOD_ALIAS)
            else:
                names.append(column)
        return queryset.values_list(*names, named=named)

    # -- entries ----------------------------------------------------------------

    def _entries(
        self, page_rows: models.QuerySet[Any], builder: LocationBuilder, plain: bool = False
    ) -> ChunkStream:
        chunk_size = app_settings.CHUNK_SIZE
        skipped: Counter[SkipReason] = Counter()

        def count(reason: SkipReason) -> None:
            skipped[reason] += 1

        column = self.lastmod_column
        extras = extras_reader(self, builder, count)
        fields = self.row_fields()
        batches: Iterator[list[Any]] | None = None
        # On PostgreSQL the lastmods SQL turned to NULL (out of the lastmod range)
        # are counted: as the rows stream when the column holds no NULL of its
        # own and the rows carry its SQL text, else in one query after them.
        unread_nulls = column is not None and _is_postgresql(page_rows.db)
        if self.uses_instances:
            instances = page_rows.order_by(self.key_name)
            if column is not None and _is_postgresql(instances.db):
                # Loading an instance reads every column, and psycopg raises on a
                # timestamp Python cannot hold: the lastmod comes through SQL.
                instances = instances.defer(column).annotate(
                    **{LASTMOD_ALIAS: LastmodInRange(F(column))}
                )
            rows = instances.iterator(chunk_size=chunk_size)
            lastmod = self._instance_lastmod(count, instances.db)
        else:
            named = not self._rows_are_private()
            if not named and not self.i18n and extras is None:
                # No one reads the key of these rows: only ORDER BY needs it.
                fields = self._fields_without_key()
            queryset = self.rows_queryset(page_rows, named=named, fields=fields)
            queryset = queryset.order_by(self.key_name)
            rows = queryset.iterator(chunk_size=chunk_size)
            lastmod = self._row_lastmod(count, queryset.db, fields)
            if not named and not self.i18n:
                # Plain tuples no user code sees: each fetchmany() list as it comes.
                batches = row_batches(queryset, chunk_size)
        values = (
            lastmod,
            self._column_reader("changefreq", count),
            self._column_reader("priority", count),
        )
        if self.i18n:
            locators = [
                (code, *self._row_location(builder, code)) for code in self.get_languages()
            ]
            languages = self.get_languages_for_item if self.has_languages_per_item else None
            versions = LanguageVersions(self)
            yield from _language_chunks(
                rows, locators, values, versions, languages, skipped, chunk_size, extras
            )
            return
        location, bulk = self._row_location(builder, fields=fields)
        plain_chunks = (
            self._plain_chunks(builder, fields, values) if plain and extras is None else None
        )
        if batches is None:
            batches = _batched(rows, chunk_size)
        if unread_nulls and isinstance(lastmod, itemgetter) and not self._lastmod_nullable():
            batches = _counting_nulls(batches, lastmod, skipped)
            unread_nulls = False
        try:
            yield from _chunks(batches, location, bulk, values, skipped, extras, plain_chunks)
        finally:
            _close(batches)
        if unread_nulls:
            assert column is not None
            out_of_range = page_rows.filter(out_of_lastmod_range(column)).count()
            if out_of_range:
                yield Skipped(SkipReason.INVALID_LASTMOD, out_of_range)

    def _fields_without_key(self) -> list[str]:
        """:meth:`row_fields` less the key, unless the URL or ``fields`` read it too."""
        names = self.row_fields()
        if names[0] in {*self.url_fields().values(), *self.fields} or len(names) < 2:
            return names
        return names[1:]

    def _lastmod_nullable(self) -> bool:
        column = self.lastmod_column
        assert self.model is not None and column is not None
        return bool(self.model._meta.get_field(column).null)

    def _rows_are_private(self) -> bool:
        """True when no user code sees a row, so plain tuples can replace named ones."""
        return (
            self.uses_url_name
            and not (self.i18n and self.has_languages_per_item)
            and not any(
                callable(getattr(self, name))
                for name in ("lastmod", "changefreq", "priority", "images", "videos", "news")
            )
        )

    def _row_location(
        self,
        builder: LocationBuilder,
        language: str | None = None,
        *,
        fields: list[str] | None = None,
    ) -> tuple[Callable[[Any], str], BulkLocations | None]:
        """How a row becomes a URI; for ``language``, the URL compiled with it active.

        One compiled URL per language, once per document: a translated pattern
        or an ``i18n_patterns`` prefix is part of the template. ``fields`` are
        the row's fields when not :meth:`row_fields`.
        """
        locations = self._row_locations(builder, language, fields)
        if locations is None:
            return (lambda row: builder.absolute(self.location(row))), None
        return locations.one, locations.many

    def _row_locations(
        self, builder: LocationBuilder, language: str | None, fields: list[str] | None
    ) -> RowLocations | None:
        if not self.uses_url_name:
            return None
        url = self.compiled_url_for(language)
        return RowLocations(builder.prefix, url, fields or self.row_fields())

    def _plain_chunks(
        self,
        builder: LocationBuilder,
        fields: list[str],
        values: tuple[Reader | Fixed, Reader | Fixed, Reader | Fixed],
    ) -> Callable[[list[Any]], PlainChunk | None] | None:
        """How a batch becomes a ``PlainChunk``, if this section's entries can be one:
        locations filled from the row, the lastmod SQL text or fixed, the rest fixed."""
        lastmod, changefreq, priority = values
        if not (
            isinstance(lastmod, itemgetter | Fixed)
            and isinstance(changefreq, Fixed)
            and isinstance(priority, Fixed)
        ):
            return None
        locations = self._row_locations(builder, None, fields)
        if locations is None or locations.literals is None:
            return None
        return _plain_chunks(locations, lastmod, changefreq, priority)

    def _column_reader(self, name: str, count: Callable[[SkipReason], None]) -> Reader | Fixed:
        per_item = per_item_reader(self, name, count)
        return per_item if per_item is not None else Fixed(static_value(self, name))

    def _row_lastmod(
        self, count: Callable[[SkipReason], None], using: str, fields: list[str]
    ) -> Reader | Fixed:
        column = self.lastmod_column
        if column is None:
            return self._column_reader("lastmod", count)
        index = len(fields)  # rows_queryset() puts the lastmod column last
        if self._lastmod_in_sql(using):
            return itemgetter(index)  # already W3C text, formatted by the database
        return _checked_lastmod(itemgetter(index), count)

    def _instance_lastmod(self, count: Callable[[SkipReason], None], using: str) -> Reader | Fixed:
        column = self.lastmod_column
        if column is None:
            return self._column_reader("lastmod", count)
        name = LASTMOD_ALIAS if _is_postgresql(using) else column
        return _checked_lastmod(attrgetter(name), count)

    def uris_of(self, instance: models.Model, builders: Sequence[LocationBuilder]) -> list[str]:
        """The URIs this section lists for ``instance`` as the database has it now.

        One per builder's origin; none when the section does not list the row
        (filtered out, a NULL URL field, or another model). One query, read
        through the same queryset and location code as the pages.
        """
        assert self.model is not None
        if instance._meta.concrete_model is not self.model._meta.concrete_model:
            return []
        found = self._listable().filter(pk=instance.pk)
        rows = list(found[:1] if self.uses_instances else self.rows_queryset(found)[:1])
        uris: list[str] = []
        for builder in builders:
            location, _bulk = self._row_location(builder)
            for row in rows:
                try:
                    uris.append(location(row))
                except Skip:
                    continue
        return uris

    # -- invalidation -------------------------------------------------------------

    def pages_touched_by(
        self, instance: models.Model, *, key_known: bool = False
    ) -> list[int | None]:
        """The pages a saved or deleted ``instance`` can change: ``[None]`` means all of them.

        A row of the section's model is on the page its key falls in (one
        indexed query on the page table). A ``key_field`` other than the primary
        key may have changed on an update, its old value unknown: every page,
        unless ``key_known`` (a created or deleted row). A
        row of a model the section reads through a relation (``category__slug``)
        may change any page.
        """
        assert self.model is not None
        model = instance._meta.concrete_model
        if self.model._meta.concrete_model is model:
            if self.key_field != "pk" and not key_known:
                return [None]
            key = (
                instance.pk if self.key_field == "pk" else getattr(instance, self.key_field, None)
            )
            if key is None:
                return [None]
            try:
                layout = self.layout()
            except ValueError:  # a key that cannot page: the checks report it
                return [None]
            if has_host_layouts(self.section, layout.using):
                # Hosts with pages of their own number them their own way.
                return [None]
            page = layout.page_of(key)
            return [page] if page is not None else [None]
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


class _WidthBucket(Func):
    """PostgreSQL's ``width_bucket(key, thresholds)``: the index of the page holding the key."""

    function = "width_bucket"
    output_field = models.IntegerField()


def _page_of_key(key: str, firsts: Sequence[Any], low: int, high: int, using: str) -> Any:
    """The index of the page (of ``firsts[low:high]``) holding ``key``: a binary search in SQL.

    PostgreSQL has one built in (``width_bucket`` over an array of the firsts);
    elsewhere a nested ``CASE``, a dozen comparisons for hundreds of pages.
    """
    if _is_postgresql(using) and low == 0 and high == len(firsts):
        return _WidthBucket(F(key), Value(list(firsts[1:])))
    if high - low == 1:
        return Value(low)
    middle = (low + high) // 2
    return Case(
        When(**{f"{key}__lt": firsts[middle]}, then=_page_of_key(key, firsts, low, middle, using)),
        default=_page_of_key(key, firsts, middle, high, using),
    )


def _remember(memo: dict[Any, Any], key: Any, value: Any) -> None:
    if len(memo) > 64:  # URLconfs swapped many times (tests): start again
        memo.clear()
    memo[key] = value


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


# The longest integer a URL's int converter writes (a 64-bit key has 19 digits).
_INT_LENGTH = 20
# The most characters one character of a str/path value becomes in a location:
# four UTF-8 bytes, each percent-encoded as three characters.
_WORST_ENCODING = 12


def _max_length(model: type[models.Model], path: str) -> int | None:
    """The most characters ``path``'s value can have, or None if nothing bounds it."""
    *relations, last = path.split("__")
    try:
        for name in relations:
            related = model._meta.get_field(name).related_model
            if not isinstance(related, type):
                return None
            model = related
        field = model._meta.get_field(last)
    except FieldDoesNotExist:
        return None
    if isinstance(field, models.IntegerField | models.AutoField):
        return _INT_LENGTH
    length = getattr(field, "max_length", None)
    return length if isinstance(length, int) else None


def _is_postgresql(using: str) -> bool:
    return connections[using].vendor == "postgresql"


def _checked_lastmod(read: Reader, count: Callable[[SkipReason], None]) -> Reader:
    """A row's lastmod as text; one out of the lastmod range is dropped and counted."""

    def text(row: Any) -> str | None:
        try:
            return lastmod_text(read(row))
        except InvalidValue:
            count(SkipReason.INVALID_LASTMOD)
            return None

    return text


@dataclass(frozen=True)
class Fixed:
    """A value that is the same for every row of a section."""

    value: str | None


def _column(reader: Reader | Fixed, rows: list[Any]) -> Iterable[str | None]:
    if isinstance(reader, Fixed):
        return repeat(reader.value, len(rows))
    return map(reader, rows)


def _batched(rows: Iterator[Any], size: int) -> Iterator[list[Any]]:
    while batch := list(islice(rows, size)):
        yield batch


def _counting_nulls(
    batches: Iterator[list[Any]], read: itemgetter[Any], skipped: Counter[SkipReason]
) -> Iterator[list[Any]]:
    """``batches``, counting the rows whose SQL lastmod is NULL (out of the lastmod range)."""
    try:
        for batch in batches:
            missing = countOf(map(read, batch), None)  # in C, no list built
            if missing:
                skipped[SkipReason.INVALID_LASTMOD] += missing
            yield batch
    finally:
        _close(batches)


def _close(batches: Iterator[list[Any]]) -> None:
    # The cursor of a page the client left goes now, not when collected.
    close = getattr(batches, "close", None)
    if close is not None:
        close()


def _chunks(
    batches: Iterator[list[Any]],
    location: Callable[[Any], str],
    bulk: BulkLocations | None,
    values: tuple[Reader | Fixed, Reader | Fixed, Reader | Fixed],
    skipped: Counter[SkipReason],
    extras_reader: ExtrasReader | None = None,
    plain: Callable[[list[Any]], PlainChunk | None] | None = None,
) -> ChunkStream:
    """Entries, one chunk per batch of rows, each followed by what it skipped.

    With ``plain``, a batch it takes comes as a ``PlainChunk`` instead.
    """
    for batch in batches:
        chunk: PlainChunk | list[Entry] | None = plain(batch) if plain is not None else None
        if chunk is None:
            chunk = _entries_of(batch, location, bulk, values, skipped, extras_reader)
        if chunk:
            yield chunk
        if skipped:
            yield from (Skipped(reason, number) for reason, number in skipped.items())
            skipped.clear()


def _entries_of(
    batch: list[Any],
    location: Callable[[Any], str],
    bulk: BulkLocations | None,
    values: tuple[Reader | Fixed, Reader | Fixed, Reader | Fixed],
    skipped: Counter[SkipReason],
    extras_reader: ExtrasReader | None,
) -> list[Entry]:
    """The entries of a batch of rows, counting in ``skipped`` the rows left out."""
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
    if not batch:
        return []
    columns = [_column(reader, batch) for reader in values]
    # Plain tuples are entries too: zip() builds them with no Python call per row.
    return cast(list[Entry], list(zip(uris, *columns, extras, strict=True)))


def _plain_chunks(
    locations: RowLocations, lastmod: itemgetter[Any] | Fixed, changefreq: Fixed, priority: Fixed
) -> Callable[[list[Any]], PlainChunk | None]:
    """What makes a batch of rows a ``PlainChunk``, when its values let it be one (else None)."""
    literals = locations.literals
    assert literals is not None
    fixed = lastmod.value if isinstance(lastmod, Fixed) else None

    def chunk(rows: list[Any]) -> PlainChunk | None:
        columns = locations.xml_columns(rows)
        if columns is None:
            return None
        lastmods = None
        if not isinstance(lastmod, Fixed):
            lastmods = list(map(lastmod, rows))
            if None in lastmods:  # no <lastmod> for those rows: the entries say so
                return None
        return PlainChunk(
            len(rows), literals, tuple(columns), lastmods, fixed, changefreq.value, priority.value
        )

    return chunk


# (language code, one row's URI, a chunk's URIs) for each language of a section.
Locator = tuple[str, Callable[[Any], str], BulkLocations | None]


def _language_chunks(
    rows: Iterator[Any],
    locators: list[Locator],
    values: tuple[Reader | Fixed, Reader | Fixed, Reader | Fixed],
    versions: LanguageVersions,
    languages: Callable[[Any], Sequence[str]] | None,
    skipped: Counter[SkipReason],
    chunk_size: int,
    extras_reader: ExtrasReader | None = None,
) -> EntryStream:
    """Every language version of each row: rows read once, located once per language.

    Each language's URIs for a whole chunk come from its own compiled URL (in
    bulk when the values are plain), with the language active for a custom
    ``location()``. ``languages`` is ``get_languages_for_item`` when it is
    overridden: called on the row already read, it costs no query. A row's
    images, videos and news (read once per chunk) go with every one of its
    language versions.
    """

    def count(reason: SkipReason) -> None:
        skipped[reason] += 1

    per_chunk = max(1, chunk_size // len(locators))
    all_codes = versions.codes
    while batch := list(islice(rows, per_chunk)):
        located: dict[str, list[str | Skip]] = {}
        for code, location, bulk in locators:
            with translation.override(code):
                uris: list[str | Skip] | None = bulk(batch) if bulk is not None else None  # type: ignore[assignment]
                if uris is None:
                    uris = [_located(location, row) for row in batch]
            located[code] = uris
        columns = [list(_column(reader, batch)) for reader in values]
        listed: list[tuple[list[tuple[str, str]], str | None, str | None, str | None]] = []
        listed_rows: list[Any] = []
        for index, (row, lastmod, changefreq, priority) in enumerate(
            zip(batch, *columns, strict=True)
        ):
            codes = all_codes if languages is None else versions.for_item(languages(row), count)
            found = versions.located(codes, located, index, count)
            if found:
                listed.append((found, lastmod, changefreq, priority))
                listed_rows.append(row)
        extensions: list[ItemExtras] = [None] * len(listed)
        if extras_reader is not None and listed_rows:
            extensions = extras_reader(listed_rows)
        chunk: list[EntryTuple] = []
        for (found, lastmod, changefreq, priority), extension in zip(
            listed, extensions, strict=True
        ):
            if isinstance(extension, SkipReason):
                count(extension)
            else:
                chunk += versions.entries(found, lastmod, changefreq, priority, extension)
        if chunk:
            yield chunk
        if skipped:
            yield from (Skipped(reason, number) for reason, number in skipped.items())
            skipped.clear()


def _located(location: Callable[[Any], str], row: Any) -> str | Skip:
    try:
        return location(row)
    except Skip as skip:
        return skip
