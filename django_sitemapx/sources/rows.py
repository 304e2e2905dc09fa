"""A model page's rows, streamed as entries: the hot path of a ``ModelSource``.

A page is written one of three ways, chosen once in :func:`model_entries`:

- **language versions** (``i18n``): every language version of each row, the
  rows read once and located once per language;
- **model instances** (no ``url_name`` and no ``location()``): the rows loaded
  as instances for ``get_absolute_url()``;
- **rows**: ``values_list()`` tuples, each ``fetchmany()`` list as it comes when
  no user code sees a row, and a ``PlainChunk`` (:func:`_plain_chunks`) where
  the values prove it can be one.

Entries are plain tuples built by ``zip()``, with no Python call per row.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC
from itertools import islice, repeat
from operator import attrgetter, countOf, itemgetter
from typing import TYPE_CHECKING, Any

from django.db import connections, models
from django.db.models import F
from django.db.models.sql.constants import MULTI

from .. import conf
from ..entries import (
    Chunk,
    ChunkStream,
    EntryTuple,
    PlainChunk,
    SkipCounter,
    Skipped,
    close_stream,
)
from ..exceptions import Skip, SkipReason
from ..locations.rows import RowLocations
from ..values import checked_reader, per_item_reader, static_value
from .extras import ExtrasReader, extras_reader, with_extras
from .languages import LanguageVersions, language_chunks
from .lastmods import (
    LASTMOD_ALIAS,
    LastmodInRange,
    is_postgresql,
    lastmod_in_sql,
    out_of_lastmod_range,
)

if TYPE_CHECKING:
    from ..locations import LocationBuilder
    from .querysets import ModelSource

# Reads one value of an entry from a row (or model instance).
Reader = Callable[[Any], str | None]
# The URIs of a whole chunk of rows, or None when it must go row by row.
BulkLocations = Callable[[list[Any]], list[str] | None]
# A page's readers of lastmod, changefreq and priority.
Values = tuple["Reader | Fixed", "Reader | Fixed", "Reader | Fixed"]
# A way of writing a page: its chunks, then whether it counted the rows whose
# SQL lastmod is out of range itself.
Strategy = Generator[Chunk | Skipped, None, bool]
# Given a batch's keys and, when the database wrote them as W3C text, their lastmods.
KeysCallback = Callable[[list[Any], list[str | None] | None], None]


def model_entries(
    source: ModelSource,
    page_rows: models.QuerySet[Any],
    builder: LocationBuilder,
    plain: bool = False,
    on_keys: KeysCallback | None = None,
) -> ChunkStream:
    """The entries of ``page_rows``, chunk by chunk, each followed by what it skipped.

    With ``plain``, a chunk that can be one comes as a ``PlainChunk``.
    ``on_keys`` is given the keys of each batch of rows before its chunk (the
    export cuts pages in blocks of rows by them), with their lastmods when the
    database wrote them as W3C text (else None), when the rows are read as
    plain rows (not instances, not language versions): else it is never called.
    """
    skipped = SkipCounter()
    extras = extras_reader(source, builder, skipped.count)
    strategy: Strategy
    if source.i18n:
        strategy = _language_versions(source, page_rows, builder, skipped, extras)
    elif source.uses_instances:
        strategy = _instances(source, page_rows, builder, skipped, extras)
    else:
        strategy = _rows(source, page_rows, builder, skipped, extras, plain, on_keys)
    counted = yield from strategy
    column = source.lastmod_column
    if not counted and column is not None and is_postgresql(page_rows.db):
        # The lastmods SQL turned to NULL (out of the lastmod range): one query.
        out_of_range = page_rows.filter(out_of_lastmod_range(column)).count()
        if out_of_range:
            yield Skipped(SkipReason.INVALID_LASTMOD, out_of_range)


def _rows(
    source: ModelSource,
    page_rows: models.QuerySet[Any],
    builder: LocationBuilder,
    skipped: SkipCounter,
    extras: ExtrasReader | None,
    plain: bool,
    on_keys: KeysCallback | None = None,
) -> Strategy:
    count = skipped.count
    chunk_size = conf.CHUNK_SIZE
    named = not _rows_are_private(source)
    fields = source.row_fields()
    if not named and extras is None and on_keys is None:
        # No one reads the key of these rows: only ORDER BY needs it.
        fields = _fields_without_key(source)
    queryset = source.rows_queryset(page_rows, named=named, fields=fields)
    queryset = queryset.order_by(source.key_name)
    lastmod = _row_lastmod(source, count, queryset.db, fields)
    values = _values(source, lastmod, count)
    batches: Iterator[list[Any]]
    if named:
        batches = _batched(queryset.iterator(chunk_size=chunk_size), chunk_size)
    else:
        # Plain tuples no user code sees: each fetchmany() list as it comes.
        batches = row_batches(queryset, chunk_size)
    if on_keys is not None:
        texts = lastmod if isinstance(lastmod, itemgetter) else None  # SQL text
        batches = _keys_told(batches, on_keys, texts)
    location, bulk = row_location(source, builder, fields=fields)
    plain_chunks = (
        _plain_chunks(source, builder, fields, values) if plain and extras is None else None
    )
    counted = False
    if (
        isinstance(lastmod, itemgetter)  # SQL text
        and is_postgresql(queryset.db)
        and not _lastmod_nullable(source)
    ):
        # NULL only where out of range: counted as the rows stream.
        batches = _counting_nulls(batches, lastmod, skipped)
        counted = True
    try:
        yield from _chunks(batches, location, bulk, values, skipped, extras, plain_chunks)
    finally:
        close_stream(batches)
    return counted


def _instances(
    source: ModelSource,
    page_rows: models.QuerySet[Any],
    builder: LocationBuilder,
    skipped: SkipCounter,
    extras: ExtrasReader | None,
) -> Strategy:
    count = skipped.count
    chunk_size = conf.CHUNK_SIZE
    rows, lastmod = _instance_rows(source, page_rows, count)
    values = _values(source, lastmod, count)
    location, bulk = row_location(source, builder)
    batches = _batched(rows, chunk_size)
    try:
        yield from _chunks(batches, location, bulk, values, skipped, extras)
    finally:
        close_stream(batches)
    return False


def _language_versions(
    source: ModelSource,
    page_rows: models.QuerySet[Any],
    builder: LocationBuilder,
    skipped: SkipCounter,
    extras: ExtrasReader | None,
) -> Strategy:
    count = skipped.count
    chunk_size = conf.CHUNK_SIZE
    if source.uses_instances:
        rows, lastmod = _instance_rows(source, page_rows, count)
    else:
        fields = source.row_fields()
        named = not _rows_are_private(source)
        queryset = source.rows_queryset(page_rows, named=named, fields=fields)
        queryset = queryset.order_by(source.key_name)
        rows = queryset.iterator(chunk_size=chunk_size)
        lastmod = _row_lastmod(source, count, queryset.db, fields)
    readers = _values(source, lastmod, count)
    versions = LanguageVersions(source, builder)
    # Each language's URIs for a whole batch come from its own compiled URL (in
    # bulk when the values are plain), with the language active for a custom
    # location(), on its language's host; get_languages_for_item() is called on
    # the row already read.
    locators = {
        code: row_location(source, versions.builders[code], code) for code in versions.codes
    }

    def locate(code: str, batch: list[Any]) -> Sequence[str | Skip]:
        location, bulk = locators[code]
        uris = bulk(batch) if bulk is not None else None
        if uris is not None:
            return uris
        return [_located(location, row) for row in batch]

    def values(listed: list[Any]) -> list[Iterable[str | None]]:
        return [_column(reader, listed) for reader in readers]

    yield from language_chunks(
        rows,
        locate,
        values,
        versions,
        source.get_languages_for_item if source.has_languages_per_item else None,
        skipped,
        extras,
        source.get_x_default_for_item if source.has_x_default_per_item else None,
    )
    # Out-of-range lastmods of language versions are not counted apart (as before
    # the split): each row stands for several URLs.
    return True


def _instance_rows(
    source: ModelSource, page_rows: models.QuerySet[Any], count: Callable[[SkipReason], None]
) -> tuple[Iterator[Any], Reader | Fixed]:
    """The page's model instances in key order, and their lastmod reader."""
    instances = page_rows.order_by(source.key_name)
    column = source.lastmod_column
    if column is not None and is_postgresql(instances.db):
        # Loading an instance reads every column, and psycopg raises on a
        # timestamp Python cannot hold: the lastmod comes through SQL.
        instances = instances.defer(column).annotate(**{LASTMOD_ALIAS: LastmodInRange(F(column))})
    rows = instances.iterator(chunk_size=conf.CHUNK_SIZE)
    return rows, _instance_lastmod(source, count, instances.db)


def _values(
    source: ModelSource, lastmod: Reader | Fixed, count: Callable[[SkipReason], None]
) -> Values:
    return (
        lastmod,
        _column_reader(source, "changefreq", count),
        _column_reader(source, "priority", count),
    )


def _fields_without_key(source: ModelSource) -> list[str]:
    """:meth:`row_fields` less the key, unless the URL or ``fields`` read it too."""
    names = source.row_fields()
    if names[0] in {*source.url_fields().values(), *source.fields} or len(names) < 2:
        return names
    return names[1:]


def _lastmod_nullable(source: ModelSource) -> bool:
    column = source.lastmod_column
    assert source.model is not None and column is not None
    return bool(source.model._meta.get_field(column).null)


def _rows_are_private(source: ModelSource) -> bool:
    """True when no user code sees a row, so plain tuples can replace named ones."""
    return (
        source.uses_url_name
        and not (source.i18n and (source.has_languages_per_item or source.has_x_default_per_item))
        and not any(
            callable(getattr(source, name))
            for name in ("lastmod", "changefreq", "priority", "images", "videos", "news")
        )
    )


def row_location(
    source: ModelSource,
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
    locations = _row_locations(source, builder, language, fields)
    if locations is None:
        return (lambda row: builder.absolute(source.location(row))), None
    return locations.one, locations.many


def _row_locations(
    source: ModelSource, builder: LocationBuilder, language: str | None, fields: list[str] | None
) -> RowLocations | None:
    if not source.uses_url_name:
        return None
    url = source.compiled_url_for(language)
    return RowLocations(builder.prefix, url, fields or source.row_fields())


def _plain_chunks(
    source: ModelSource, builder: LocationBuilder, fields: list[str], values: Values
) -> Callable[[list[Any]], PlainChunk | None] | None:
    """How a batch of rows becomes a ``PlainChunk``, or None when this page's cannot.

    The one proof the writer trusts (``entries.PlainChunk``): locations filled
    from the row by a plain template, every value XML-safe and the longest
    within the limit (``RowLocations.xml_columns``), lastmods SQL text or
    fixed and none missing, changefreq and priority fixed. A batch that fails
    it is written as entries.
    """
    lastmod, changefreq, priority = values
    if not (
        isinstance(lastmod, itemgetter | Fixed)
        and isinstance(changefreq, Fixed)
        and isinstance(priority, Fixed)
    ):
        return None
    locations = _row_locations(source, builder, None, fields)
    if locations is None or locations.literals is None:
        return None
    literals = locations.literals
    fixed = lastmod.value if isinstance(lastmod, Fixed) else None

    def chunk(rows: list[Any]) -> PlainChunk | None:
        # Every URL value plain and XML-safe, every location within the limit.
        columns = locations.xml_columns(rows)
        if columns is None:
            return None
        lastmods = None
        if not isinstance(lastmod, Fixed):
            lastmods = list(map(lastmod, rows))
            try:
                text = "".join(lastmods)
            except TypeError:  # None: no <lastmod> for those rows, the entries say so
                return None
            # The database's W3C text, proven in C: nothing to escape, nothing outside XML.
            if not text.isascii() or text.encode().translate(None, _W3C_CHARACTERS):
                return None
        # xml_columns() proved every column value made of a URI's characters: all legal.
        return PlainChunk(
            len(rows),
            literals,
            tuple(columns),
            lastmods,
            fixed,
            changefreq.value,
            priority.value,
            legal=True,
        )

    return chunk


# What a lastmod the database formats (``lastmods.lastmod_in_sql``) is made of.
_W3C_CHARACTERS = b"0123456789-:T+Z."


def _column_reader(
    source: ModelSource, name: str, count: Callable[[SkipReason], None]
) -> Reader | Fixed:
    per_item = per_item_reader(source, name, count)
    return per_item if per_item is not None else Fixed(static_value(source, name))


def _row_lastmod(
    source: ModelSource, count: Callable[[SkipReason], None], using: str, fields: list[str]
) -> Reader | Fixed:
    column = source.lastmod_column
    if column is None:
        return _column_reader(source, "lastmod", count)
    index = len(fields)  # rows_queryset() puts the lastmod column last
    if lastmod_in_sql(source, using):
        return itemgetter(index)  # already W3C text, formatted by the database
    return checked_reader(itemgetter(index), "lastmod", count)


def _instance_lastmod(
    source: ModelSource, count: Callable[[SkipReason], None], using: str
) -> Reader | Fixed:
    column = source.lastmod_column
    if column is None:
        return _column_reader(source, "lastmod", count)
    name = LASTMOD_ALIAS if is_postgresql(using) else column
    return checked_reader(attrgetter(name), "lastmod", count)


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
    batches: Iterator[list[Any]], read: itemgetter[Any], skipped: SkipCounter
) -> Iterator[list[Any]]:
    """``batches``, counting the rows whose SQL lastmod is NULL (out of the lastmod range)."""
    try:
        for batch in batches:
            missing = countOf(map(read, batch), None)  # in C, no list built
            if missing:
                skipped.count(SkipReason.INVALID_LASTMOD, missing)
            yield batch
    finally:
        close_stream(batches)


def _keys_told(
    batches: Iterator[list[Any]],
    on_keys: KeysCallback,
    lastmod: itemgetter[Any] | None,
) -> Iterator[list[Any]]:
    """``batches``, each one's keys (its rows' first column) given to ``on_keys`` first,
    with their lastmod texts (``lastmod``'s column) when there is one."""
    first = itemgetter(0)
    try:
        for batch in batches:
            on_keys(
                list(map(first, batch)), None if lastmod is None else list(map(lastmod, batch))
            )
            yield batch
    finally:
        close_stream(batches)


def _chunks(
    batches: Iterator[list[Any]],
    location: Callable[[Any], str],
    bulk: BulkLocations | None,
    values: Values,
    skipped: SkipCounter,
    extras_reader: ExtrasReader | None = None,
    plain: Callable[[list[Any]], PlainChunk | None] | None = None,
) -> ChunkStream:
    """Entries, one chunk per batch of rows, each followed by what it skipped.

    With ``plain``, a batch it takes comes as a ``PlainChunk`` instead.
    """
    for batch in batches:
        chunk: PlainChunk | list[EntryTuple] | None = plain(batch) if plain is not None else None
        if chunk is None:
            chunk = _entries_of(batch, location, bulk, values, skipped, extras_reader)
        if chunk:
            yield chunk
        yield from skipped.flush()


def _entries_of(
    batch: list[Any],
    location: Callable[[Any], str],
    bulk: BulkLocations | None,
    values: Values,
    skipped: SkipCounter,
    extras_reader: ExtrasReader | None,
) -> list[EntryTuple]:
    """The entries of a batch of rows, counting in ``skipped`` the rows left out."""
    uris = bulk(batch) if bulk is not None else None
    if uris is None:
        uris, kept = [], []
        for row in batch:
            try:
                uris.append(location(row))
            except Skip as skip:
                skipped.count(skip.reason)
                continue
            kept.append(row)
        batch = kept
    batch, uris, extras = with_extras(extras_reader, batch, uris)
    if not batch:
        return []
    columns = [_column(reader, batch) for reader in values]
    # Plain tuples are entries too: zip() builds them with no Python call per row.
    return list(zip(uris, *columns, extras, strict=True))


def _located(location: Callable[[Any], str], row: Any) -> str | Skip:
    try:
        return location(row)
    except Skip as skip:
        return skip


# ``QuerySet.iterator()`` hands rows over one at a time through generators: a
# few Python calls per row, which for a sitemap page costs more than building
# the row's ``<url>``. ``row_batches`` takes each ``fetchmany()`` list as it
# comes, with Django's own query, cursor and chunk size. When a column needs
# one of Django's converters (a backend parsing datetimes or UUIDs, say), the
# rows go through Django's ``results_iter()``, as ``iterator()`` sends them.


def row_batches(queryset: models.QuerySet[Any], size: int) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of ``values_list(...)`` query ``queryset`` as tuples, in lists of at most ``size``.

    What ``queryset.iterator(chunk_size=size)`` yields, batched: the same
    query on the same cursor (server-side where Django uses one, but on
    PostgreSQL: see below, which is why ``queryset`` must be bounded, one
    page). The cursor is closed when the batches end or are closed.
    """
    using = queryset.db
    compiler = queryset.query.get_compiler(using)
    connection = connections[using]
    # Not on PostgreSQL: outside a transaction Django declares a server-side
    # cursor WITH HOLD, so the server materialises the whole result at once
    # anyway, then hands it over one round trip per batch. A page is one key
    # range of at most SITEMAPX_LIMIT rows, so reading it in one go holds a
    # bounded amount; a 900,000-row crawl took 2.6 s instead of 3.0 to 3.7 s.
    chunked = connection.vendor != "postgresql" and not connection.settings_dict.get(
        "DISABLE_SERVER_SIDE_CURSORS"
    )
    with native_timestamps(using):
        results = compiler.execute_sql(MULTI, chunked_fetch=chunked, chunk_size=size)
    try:
        if compiler.select is None:  # an empty result known without a query
            return
        fields = [column[0] for column in compiler.select[: compiler.col_count]]
        composite = getattr(compiler, "has_composite_fields", None)
        if compiler.get_converters(fields) or (composite is not None and composite(fields)):
            rows = compiler.results_iter(results, tuple_expected=True)
            while batch := list(islice(rows, size)):
                yield batch
            return
        for batch in results:
            if len(batch) < size:
                # The last batch: the cursor goes now, as iterator() lets it go,
                # even if the caller never asks for the next one.
                close_stream(results)
            yield batch if type(batch[0]) is tuple else list(map(tuple, batch))
    finally:
        close_stream(results)


def native_timestamps(using: str) -> contextlib.AbstractContextManager[None]:
    """Within it, queries on ``using`` read ``timestamptz`` columns with psycopg's C loader.

    Django reads them with a Python subclass of psycopg's Python loader (to set
    the connection's time zone), about 6 microseconds a value against 0.6 for
    psycopg's C loader (``psycopg[binary]``). Where both give the same value
    (the connection's time zone and the session's are UTC, as Django sets them
    with ``USE_TZ`` and no database ``TIME_ZONE``: a datetime whose ``tzinfo`` is
    ``datetime.UTC``), the queries run within take the C one, on their own
    cursor only. Elsewhere (SQLite, psycopg 2, another zone, no C loader) it
    changes nothing.
    """
    connection = connections[using]
    if connection.vendor != "postgresql" or connection.timezone is not UTC:
        return contextlib.nullcontext()
    loader = _c_timestamptz_loader()
    if loader is None:
        return contextlib.nullcontext()
    return connection.execute_wrapper(functools.partial(_load_natively, loader))


def _load_natively(
    loader: tuple[int, type[Any]],
    execute: Callable[..., Any],
    sql: str,
    params: Any,
    many: bool,
    context: dict[str, Any],
) -> Any:
    cursor = context["cursor"].cursor
    if cursor.connection.info.timezone is UTC:  # the session's, as psycopg reads it
        cursor.adapters.register_loader(*loader)
    return execute(sql, params, many, context)


@functools.cache
def _c_timestamptz_loader() -> tuple[int, type[Any]] | None:
    """``timestamptz``'s OID and psycopg's C loader of its text; None without them."""
    from django.db.backends.postgresql.psycopg_any import is_psycopg3

    if not is_psycopg3:  # Django's PostgreSQL backend on psycopg 2
        return None
    import psycopg
    from psycopg.pq import Format

    info = psycopg.adapters.types.get("timestamptz")
    if info is None:
        return None
    loader = psycopg.adapters.get_loader(info.oid, Format.TEXT)
    if loader is None or loader.__module__.startswith("psycopg."):  # the Python one
        return None
    return info.oid, loader
