"""Pages made in blocks of rows, and spliced: an old page's bytes plus the blocks that changed.

A model section's page is a key range (``sources.pages``). The export writes
it with one query, as a full page is written, reading each row's key with it
(``model_entries(on_keys=...)``): every ``BLOCK_ROWS``-th row starts a block,
and the elements (one per row, each written from its own row alone) are cut
there. Each block's first key, size, URL count, digest and greatest lastmod
(``Blocks``) go to a file beside the page (``destinations.blocks_name``), whose digest the
manifest records: the export holds one page's blocks at a time. All of this
only with ``SITEMAPX_EXPORT_SPLICE`` on; off, pages are made the usual way.

The next run reads the log of changed rows (``sources.changes``). A page
whose range and configuration are as recorded (``Blocks.base``) and whose
changes the log names row by row is spliced: a block holding a changed key
whose rows are the same rows has only those rows' elements written again, in
its old bytes (``_in_place``); the rows of any other such block are read
again (one query for all of them, shared out by their keys) and written with
the page's writer (a block grown past twice ``BLOCK_ROWS`` rows is cut
again); every other byte is copied from the previous file
(``files.write_spliced``: ``os.copy_file_range`` in a folder, in whole 4 KiB
blocks at the same offsets where it can, which XFS with reflinks and Btrfs
clone; when every run keeps its offset, the old file whole with the changed
bytes written over it: of a block written in place whose elements kept their
lengths, those elements alone, ``InPlace.patches``). Before the pages are
listed, the page table is told each such page's summary from its blocks
(:func:`settle`), so that it is not counted. The file's digest is a digest of
its segments' digests, so no byte copied is hashed again. Anything else makes
the page whole, in blocks: no record of blocks, a split or merge, a setting, a
log that cannot say (``ChangeLog.keys_in``), elements not one a row (an entry
left out, languages: the page is then written, not recorded in blocks), a page
over the byte limit (made the usual way, ``render_page``), gzip copies, a dry
run.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import hashlib
import io
import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from django.db import connections, transaction
from django.db.models import F, Lookup, QuerySet
from django.db.models.expressions import RawSQL

from ..conf import PROTOCOL_MAX_BYTES
from ..documents import _log_skips, read_chunks, stylesheet_url
from ..locations import LocationBuilder, Origin
from ..overrides import chunk_overrides
from ..sources import ModelSource, Source
from ..sources.changes import ChangeLog
from ..sources.codecs import KeyCodec, key_model_field
from ..sources.languages import alternate_hosts
from ..sources.lastmods import W3CDatetime, greatest_w3c_sql
from ..sources.pages import PageTable, State
from ..sources.rows import KeysCallback, model_entries
from ..sources.summaries import (
    Bounds,
    in_range,
    summarize_ranges,
    summary_of_rows,
    told_by_rows,
)
from ..writer import URLSET_CLOSE, DocumentWriter, urlset_open, urlset_writer
from .destinations import Blocks
from .files import Spans

# Rows per block: a spread change re-reads about this many rows per changed row;
# smaller blocks cost one more query each in a run that makes pages whole
# (docs/performance.md, "Incremental export").
BLOCK_ROWS = 100
# Key encodings whose text sorts in Python as the database sorts the keys.
_ORDERED_CODECS = frozenset({"int", "uuid"})


def digest(data: bytes) -> bytes:
    """A segment's digest, as ``Blocks.digests`` keeps it (SHA-256 cut to 128 bits)."""
    return hashlib.sha256(data).digest()[:_DIGEST_SIZE]


_DIGEST_SIZE = 16


def file_digest(digests: tuple[bytes, ...] | list[bytes]) -> str:
    """The digest of a page made in blocks: of its segments' digests (in hex), in order."""
    return "blocks:" + hashlib.sha256(b"".join(digests).hex().encode()).hexdigest()


def can_make_in_blocks(source: Source) -> bool:
    """Whether the export makes ``source``'s pages in blocks (a plain model section's)."""
    if not isinstance(source, ModelSource) or source.expires() is not None:
        return False
    # A subclass that makes its pages otherwise is made its own way.
    if type(source).page is not ModelSource.page:
        return False
    try:
        return source.page_table().codec.kind in _ORDERED_CODECS
    except ValueError:
        return False


@dataclass(frozen=True)
class PageRange:
    """A page's key range in the page table, encoded (``high`` ``""``: no upper bound).

    ``state`` is the page's row as read, for its count of changes and for
    recording its size as built (``ModelSource.page_measured``).
    """

    low: str
    high: str
    base: str
    state: State


def page_ranges(
    source: ModelSource, configuration: str, table: PageTable | None = None
) -> dict[int, PageRange]:
    """Every page's range as the page table holds it now (one query, no page counted).

    ``table``: the section's ``source.page_table()``, when made already.
    """
    table = table or source.page_table()
    states = table.states(set())
    ranges = {}
    for position, state in enumerate(states):
        high = states[position + 1].first if position + 1 < len(states) else ""
        parts = [configuration, source.section, str(state.number), table.section_name]
        text = "|".join([*parts, table.fingerprint, state.first, high])
        ranges[state.number] = PageRange(
            state.first, high, hashlib.sha256(text.encode()).hexdigest(), state
        )
    return ranges


@dataclass
class Made:
    """A page written in blocks: its ``Blocks`` (None: not to be spliced) and totals."""

    blocks: Blocks | None
    digest: str
    size: int
    urls: int
    # Its blocks written again since the file was last written whole (``copies_whole``).
    rewritten: int = 0
    # Spliced: the spans outside which it holds the old file's bytes, when known
    # (``files.write_spliced``), for that file to be kept as its spare.
    new_spans: Spans | None = None


# Blocks written again into a page's file since it was last written whole, past which
# its next splice copies every byte rather than share the unchanged ones with the old
# file. A file system that shares them (XFS with reflink, Btrfs) keeps each block written
# again as an extent of its own, and splits the shared ones around it; a clone costs per
# extent. Left to grow, a spread run of changed rows at new places each time was slower
# run after run (docs/performance.md, "Saves at new rows each run").
COPY_AFTER_REWRITTEN = 48


def copies_whole(number: int, rewritten: int) -> bool:
    """Whether page ``number``, its blocks ``rewritten`` since its file was last written
    whole, is copied whole when spliced (``files.write_spliced``'s ``share`` off).

    Between ``COPY_AFTER_REWRITTEN`` and twice that, by page: the pages that change
    at every run are not all copied at the same run.
    """
    return rewritten >= COPY_AFTER_REWRITTEN + number * 37 % COPY_AFTER_REWRITTEN


class NotInBlocks(Exception):
    """The page cannot be made in blocks (over the byte limit): make it the usual way."""


# What applies the rules and overrides to a chunk (None: nothing to apply).
Overrides = Callable[[Any], Any] | None


def section_overrides(source: ModelSource, origin: Origin) -> Overrides:
    """What applies ``source``'s rules and overrides on ``origin``, read once (two queries)."""
    if not source.overridable:
        return None
    return chunk_overrides(
        source.section, origin.host, alternate_hosts(source, origin), source.fallback_host()
    )


# What every ``<url>`` element starts with, and nothing else in a ``<urlset>``'s
# body does (a "<" in any value is escaped).
_ELEMENT = b"<url>"


@dataclass(frozen=True)
class PageFormat:
    """What every page of a section is written with: its limits, namespaces and opening tag.

    Read once per section by an export (``PageFormat.of``), not once per page:
    the longest location allowed is found by reversing the section's URL
    pattern, about a tenth of a millisecond a page (docs/performance.md,
    "Incremental export").
    """

    max_urls: int
    namespaces: Mapping[str, str] | None
    max_element_bytes: int | None
    stylesheet: str | None
    head: bytes
    # Whether each block's greatest lastmod is kept (``Blocks.lastmods``).
    told: bool

    @classmethod
    def of(cls, source: ModelSource) -> PageFormat:
        """``source``'s page format, as its settings and URL pattern give it now."""
        namespaces = source.get_namespaces()
        stylesheet = stylesheet_url()
        return cls(
            source.get_limit(),
            namespaces,
            source.max_url_bytes(),
            stylesheet,
            urlset_open(namespaces, stylesheet).encode(),
            told_by_rows(source, source.get_queryset().db),
        )


class BlockWriter:
    """Writes the blocks of one page of ``source`` with one ``DocumentWriter``.

    ``table`` is the section's ``source.page_table()`` when an export made it
    already: one for all its pages, not one (two queries compiled) per page;
    ``page_format`` likewise (``PageFormat.of``).
    """

    def __init__(
        self,
        source: ModelSource,
        number: int,
        origin: Origin,
        overrides: Overrides = None,
        table: PageTable | None = None,
        page_format: PageFormat | None = None,
    ) -> None:
        self.source = source
        self.number = number
        self.origin = origin
        self.table = table or source.page_table()
        self.codec = self.table.codec
        page_format = page_format or PageFormat.of(source)
        self.writer: DocumentWriter = urlset_writer(
            max_urls=page_format.max_urls,
            max_bytes=PROTOCOL_MAX_BYTES,
            namespaces=page_format.namespaces,
            max_element_bytes=page_format.max_element_bytes,
            stylesheet=page_format.stylesheet,
        )
        # The opening tag is a segment of its own: blocks are elements only.
        self.head = page_format.head
        self.tail = URLSET_CLOSE.encode()
        self.writer.started = True
        self.writer.stats.bytes = len(self.head)
        # The rules are read once for the page (or the export), not once per block.
        self.overrides = overrides or section_overrides(source, origin)
        self.told = page_format.told

    def _rows(self, low: str, high: str) -> QuerySet[Any]:
        bounds = _bounds(self.codec, low, high)
        return in_range(self.source, self.source.listed_rows(), bounds)

    def chunks(
        self,
        low: str,
        high: str,
        rows: QuerySet[Any] | None = None,
        on_keys: KeysCallback | None = None,
    ) -> Iterator[bytes]:
        """The ``<url>`` elements of the rows from ``low`` below ``high`` (or ``rows``),
        a chunk at a time; ``on_keys`` is given each batch's keys (``model_entries``)."""
        writer = self.writer
        if rows is None:
            rows = self._rows(low, high)
        builder = LocationBuilder(self.origin)
        stream = model_entries(self.source, rows, builder, True, on_keys)
        for chunk in read_chunks(stream, writer.stats.skipped):
            if self.overrides is not None:
                chunk = self.overrides(chunk)
            data = writer.render_entries(chunk)
            if writer.overflowed:
                raise NotInBlocks
            if data:
                yield data

    def cut(
        self, low: str, high: str, target: IO[bytes]
    ) -> tuple[list[tuple[str, int, int, bytes, str | None]], bool]:
        """Write the rows from ``low`` below ``high`` to ``target``, in blocks of ``BLOCK_ROWS``.

        One query: the rows' keys are read with them, every ``BLOCK_ROWS``-th
        starts a block, and the elements are cut at every ``BLOCK_ROWS``-th.
        Returns each block's (first key, size, URLs, digest, greatest lastmod),
        which cover every byte written, and whether they are the blocks of the
        keys: not when the elements are not one a row (an entry left out, a
        row with several URLs, rows read as instances).
        """
        encode = self.codec.encode
        starts, rows = [low], 0
        latest: list[str | None] = []

        def on_keys(keys: list[Any], lastmods: list[str | None] | None) -> None:
            nonlocal rows
            for index in range(-rows % BLOCK_ROWS, len(keys), BLOCK_ROWS):
                if rows + index:
                    starts.append(encode(keys[index]))
            if lastmods is not None:
                index = 0
                while index < len(keys):
                    block = (rows + index) // BLOCK_ROWS
                    end = min(len(keys), (block + 1) * BLOCK_ROWS - rows)
                    while len(latest) <= block:
                        latest.append(None)
                    latest[block] = _greatest(latest[block], lastmods[index:end])
                    index = end
            rows += len(keys)

        blocks: list[tuple[str, int, int, bytes, str | None]] = []
        size, urls, hasher = 0, 0, hashlib.sha256()
        writer = self.writer
        writer.sizes = []
        before = writer.stats.urls
        try:
            for data in self.chunks(low, high, on_keys=on_keys):
                target.write(data)
                # Each element's size, as the writer wrote it: hashed a block at a time.
                lengths, writer.sizes = writer.sizes, []
                view, offset, index = memoryview(data), 0, 0
                while index < len(lengths):
                    if urls == BLOCK_ROWS:
                        blocks.append(_block(starts, latest, len(blocks), size, urls, hasher))
                        size, urls, hasher = 0, 0, hashlib.sha256()
                    taken = min(BLOCK_ROWS - urls, len(lengths) - index)
                    length = sum(lengths[index : index + taken])
                    hasher.update(view[offset : offset + length])
                    offset += length
                    size += length
                    urls += taken
                    index += taken
                if offset != len(data):  # never: the sizes are the data's
                    raise NotInBlocks
        finally:
            writer.sizes = None
        if size:
            blocks.append(_block(starts, latest, len(blocks), size, urls, hasher))
        written = self.writer.stats.urls - before
        # One element a row (none left out), so that block i starts at row i * BLOCK_ROWS.
        exact = not self.writer.stats.skipped and written == rows and len(blocks) == len(starts)
        return blocks, exact

    def blocks(self, ranges: list[tuple[str, str]]) -> list[tuple[bytes, int, str | None]] | None:
        """The ``<url>`` elements of the rows of each key range (in order), their count
        and greatest lastmod.

        One query for the rows of all of them, their keys read with them: the
        elements are shared out by the ranges the keys fall in. None when the
        elements are not one a row (see :meth:`cut`).
        """
        encode = self.codec.encode
        lows = [low for low, _high in ranges]
        counts = [0] * len(ranges)
        latest: list[str | None] = [None] * len(ranges)

        def on_keys(keys: list[Any], lastmods: list[str | None] | None) -> None:
            for position, key in enumerate(keys):
                index = bisect.bisect_right(lows, encode(key)) - 1
                counts[index] += 1
                if lastmods is not None:
                    latest[index] = _greatest(latest[index], lastmods[position : position + 1])

        union = self.source.listed_rows().filter(_in_ranges(self.source, self.codec, ranges))
        elements = self._elements(union, on_keys, lambda: sum(counts))
        if elements is None:
            return None
        found, position = [], 0
        for count, greatest in zip(counts, latest, strict=True):
            part = elements[position : position + count]
            found.append((b"".join(_ELEMENT + element for element in part), count, greatest))
            position += count
        return found

    def elements_of(self, keys: list[str]) -> dict[str, bytes] | None:
        """Each row's ``<url>`` element (less its opening ``<url>``), by key.

        One query for the rows of ``keys`` still listed. None when the
        elements are not one a row (see :meth:`cut`).
        """
        decode, encode = self.codec.decode, self.codec.encode
        key = self.source.key_name
        rows = self.source.listed_rows().filter(**{f"{key}__in": [decode(k) for k in keys]})
        order: list[str] = []

        def on_keys(found: list[Any], _lastmods: list[str | None] | None) -> None:
            order.extend(encode(value) for value in found)

        elements = self._elements(rows, on_keys, lambda: len(order))
        return None if elements is None else dict(zip(order, elements, strict=True))

    def _elements(
        self, rows: QuerySet[Any], on_keys: KeysCallback, rows_read: Callable[[], int]
    ) -> list[bytes] | None:
        """The ``<url>`` elements (less their opening ``<url>``) of ``rows``, in key order.

        ``on_keys`` is given each batch's keys as it is read; ``rows_read`` says how
        many it was given in all. None when the elements are not one a row read
        (see :meth:`cut`) or a row was skipped.
        """
        before = self.writer.stats.urls
        pieces = b"".join(list(self.chunks("", "", rows, on_keys))).split(_ELEMENT)
        written = self.writer.stats.urls - before
        if pieces[0] or len(pieces) - 1 != written or written != rows_read():
            return None
        if self.writer.stats.skipped:
            return None
        return pieces[1:]

    def finish(self, where: PageRange) -> None:
        """What a page's rendering ends with: its skips logged, its size recorded.

        As ``ModelSource.page_built`` records a page built by ``page()``: a
        page built nearly empty is given more rows (the page table's refill).
        """
        stats = self.writer.stats
        stats.bytes += len(self.tail)
        _log_skips(self.source.section, self.number, stats)
        self.source.page_measured(
            where.state, stats.urls, stats.bytes, last=not where.high, table=self.table
        )


def _bounds(codec: KeyCodec, low: str, high: str) -> Bounds:
    """The key range from ``low`` below ``high`` (encoded; ``""``: no bound), decoded."""
    decode = codec.decode
    return Bounds(decode(low) if low else None, decode(high) if high else None)


def _in_ranges(source: ModelSource, codec: KeyCodec, ranges: list[tuple[str, str]]) -> KeyRanges:
    """The rows whose key lies in one of ``ranges`` (encoded)."""
    return KeyRanges(F(source.key_name), [_bounds(codec, low, high) for low, high in ranges])


class KeyRanges(Lookup):
    """A filter: the column (``lhs``) lies in one of the ranges of ``rhs`` (``Bounds``).

    ``(key >= %s AND key < %s) OR ...``, as a ``Q`` of one ``gte`` and one ``lt``
    lookup per range would write it, but written in one pass: Django builds and
    compiles each lookup of a ``Q`` apart, about 0.3 ms per range under the profiler, which for
    the hundreds of changed blocks of an incremental export cost more than the
    query (docs/performance.md, "Incremental export"). A lookup, so that every
    database takes it as a condition (MySQL compares other expressions with true).
    """

    lookup_name = "sitemapx_key_ranges"
    prepare_rhs = False

    def get_prep_lookup(self) -> Any:
        return self.rhs

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, tuple[Any, ...]]:
        column, column_params = self.process_lhs(compiler, connection)
        field = self.lhs.output_field
        parts: list[str] = []
        params: list[Any] = []
        for bounds in self.rhs:
            conditions = []
            for value, operator in ((bounds.low, ">="), (bounds.high, "<")):
                if value is not None:
                    conditions.append(f"{column} {operator} %s")
                    params.extend(column_params)
                    params.append(field.get_db_prep_value(value, connection, prepared=False))
            parts.append(f"({' AND '.join(conditions)})" if conditions else "(1 = 1)")
        return f"({' OR '.join(parts) or '1 = 0'})", tuple(params)


# Key ranges whose keys one query reads (``block_keys``): two parameters each.
_RANGES_PER_QUERY = 200


@dataclass(frozen=True)
class BlockRows:
    """A changed block's rows as read again: their count, the place (0 on) of each
    changed key asked for among them, and their greatest lastmod as the database
    writes it (None: none, or not kept, see ``Blocks.lastmods``)."""

    count: int
    places: dict[str, int]
    latest: str | None


def block_keys(
    source: ModelSource, ranges: list[tuple[str, str]], keys: list[list[str]] | None = None
) -> list[BlockRows]:
    """The rows of each key range (disjoint, in key order), over their rows alone:
    on PostgreSQL one query per ``_RANGES_PER_LATERAL`` ranges bounded at both
    ends (a lateral join on their arrays, ``_count_lateral``) and one per
    ``_RANGES_PER_QUERY`` others;
    elsewhere one per ``_RANGES_PER_QUERY`` ranges.

    ``keys`` are each range's changed keys (encoded, sorted, inside it), whose
    places are wanted. On PostgreSQL the rows are not sent: each range is cut
    at its changed keys and the pieces are counted in SQL (``width_bucket``),
    so that a key's place is the count of the rows before it, if it is one of
    the rows (the elements written in place are only of rows still listed).
    Elsewhere the keys are read and the places found among them.
    """
    if not ranges:
        return []
    wanted = keys if keys is not None else [[] for _ in ranges]
    codec = source.page_table().codec
    key, column = source.key_name, source.lastmod_column
    dated = column is not None and told_by_rows(source, source.get_queryset().db)
    using = source.get_queryset().db
    grouped = connections[using].vendor == "postgresql"
    if grouped:
        with _serial_plans(using):
            return _counted(source, codec, ranges, wanted, dated)
    found: list[BlockRows] = []
    for start in range(0, len(ranges), _RANGES_PER_QUERY):
        part = ranges[start : start + _RANGES_PER_QUERY]
        part_keys = wanted[start : start + _RANGES_PER_QUERY]
        rows = source.listed_rows().filter(_in_ranges(source, codec, part)).order_by(key)
        found.extend(_read_rows(source, rows, part, part_keys, dated, codec))
    return found


# Key ranges one lateral query counts (``_count_lateral``): three array parameters
# in all, one index range scan per range.
_RANGES_PER_LATERAL = 2_000


def _counted(
    source: ModelSource,
    codec: KeyCodec,
    ranges: list[tuple[str, str]],
    keys: list[list[str]],
    dated: bool,
) -> list[BlockRows]:
    """``block_keys`` on PostgreSQL: the ranges bounded at both ends (every block but
    a section's first and last) in one query (:func:`_count_lateral`), the others
    filtered on their ranges (:func:`_count_rows`)."""
    return _read_counts(_send_counts(source, codec, ranges, keys, dated), len(ranges))


@dataclass
class _Sent:
    """A counting query sent (``_send_counts``): the places of its ranges among those
    sent together, their changed keys, and the cursor holding its result."""

    places: list[int]
    keys: list[list[str]]
    cursor: Any


def _send_counts(
    source: ModelSource,
    codec: KeyCodec,
    ranges: list[tuple[str, str]],
    keys: list[list[str]],
    dated: bool,
) -> list[_Sent]:
    """Send the queries of :func:`_counted` (not waiting for them in pipeline mode).

    ``codec``: the section's key codec (``PageTable.codec``), made once by the caller.
    """
    sent = []
    bounded = [index for index, (low, high) in enumerate(ranges) if low and high]
    others = [index for index, (low, high) in enumerate(ranges) if not (low and high)]
    for start in range(0, len(bounded), _RANGES_PER_LATERAL):
        part = bounded[start : start + _RANGES_PER_LATERAL]
        part_keys = [keys[index] for index in part]
        part_ranges = [ranges[index] for index in part]
        cursor = _count_lateral(source, part_ranges, part_keys, dated, codec)
        sent.append(_Sent(part, part_keys, cursor))
    for start in range(0, len(others), _RANGES_PER_QUERY):
        part = others[start : start + _RANGES_PER_QUERY]
        part_ranges = [ranges[index] for index in part]
        part_keys = [keys[index] for index in part]
        rows = source.listed_rows().filter(_in_ranges(source, codec, part_ranges)).order_by()
        cursor = _count_rows(source, rows, part_ranges, part_keys, dated, codec)
        sent.append(_Sent(part, part_keys, cursor))
    return sent


def _read_counts(sent: list[_Sent], count: int) -> list[BlockRows]:
    """The ``count`` ranges' rows, from the results of the queries ``sent``, in order."""
    found: dict[int, BlockRows] = {}
    for query in sent:
        try:
            rows = query.cursor.fetchall()
        finally:
            query.cursor.close()
        found.update(zip(query.places, _pieces_read(rows, query.keys), strict=True))
    return [found[index] for index in range(count)]


# What the grouped queries of ``block_keys`` run with on PostgreSQL: no parallel workers, no JIT.
_SERIAL_PLANS = (
    "SELECT set_config('max_parallel_workers_per_gather', %s, true), set_config('jit', %s, true)"
)


@contextlib.contextmanager
def _serial_plans(using: str) -> Iterator[None]:
    """In a transaction on PostgreSQL: no parallel workers and no JIT for the queries inside.

    The planner's estimate for hundreds of key ranges is far above the rows they
    hold (about 100 each): it starts parallel workers and compiles the query,
    which cost several times the query itself (docs/performance.md,
    "Incremental export"). Set for the transaction only (``set_config(...,
    true)``), and set back after, for a caller whose transaction goes on.
    """
    with transaction.atomic(using=using), connections[using].cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('max_parallel_workers_per_gather'), current_setting('jit')"
        )
        before = cursor.fetchone()
        cursor.execute(_SERIAL_PLANS, ["0", "off"])
        yield
        cursor.execute(_SERIAL_PLANS, list(before))


def _read_rows(
    source: ModelSource,
    rows: QuerySet[Any],
    ranges: list[tuple[str, str]],
    keys: list[list[str]],
    dated: bool,
    codec: KeyCodec | None = None,
) -> list[BlockRows]:
    """``block_keys`` of ``ranges`` from their ``rows``' keys, read in key order.

    ``codec``: as :func:`_count_rows` takes it.
    """
    encode = (codec or source.page_table().codec).encode
    key, column = source.key_name, source.lastmod_column
    lows = [low for low, _high in ranges]
    found: list[list[str]] = [[] for _ in ranges]
    latest: list[str | None] = [None] * len(ranges)
    if not dated:
        for value in rows.values_list(key, flat=True):
            text = encode(value)
            found[bisect.bisect_right(lows, text) - 1].append(text)
    else:
        assert column is not None
        for value, lastmod in rows.values_list(key, W3CDatetime(F(column))):
            text = encode(value)
            index = bisect.bisect_right(lows, text) - 1
            found[index].append(text)
            if lastmod is not None and (latest[index] is None or lastmod > latest[index]):
                latest[index] = lastmod
    result = []
    for texts, wanted, greatest in zip(found, keys, latest, strict=True):
        asked = set(wanted)
        places = {text: place for place, text in enumerate(texts) if text in asked}
        result.append(BlockRows(len(texts), places, greatest))
    return result


def _count_rows(
    source: ModelSource,
    rows: QuerySet[Any],
    ranges: list[tuple[str, str]],
    keys: list[list[str]],
    dated: bool,
    codec: KeyCodec | None = None,
) -> Any:
    """``block_keys`` of the ranges ``rows`` is filtered on, counted in pieces (PostgreSQL):
    the cursor of the query sent, whose rows :func:`_pieces_read` reads. ``codec``: the
    section's key codec, when the caller made it (``PageTable.codec``).

    Each range is cut at its changed keys; ``width_bucket`` numbers the piece
    each row falls in (the pieces' lower bounds, but the first's, are its
    thresholds: the rows lie only in the ranges, so a row of piece *i* is at
    or above *i* of them); one row comes back per piece, with its count and
    greatest lastmod (``lastmods.greatest_w3c_sql``: the greatest of the rows'
    texts, formatted once).
    """
    key, column = source.key_name, source.lastmod_column
    # The column as stored: formatted once per piece (``_count_pieces``).
    inner = rows.values_list(key, column) if dated and column else rows.values_list(key)
    sql, params = inner.query.sql_with_params()
    codec = codec or source.page_table().codec
    return _count_pieces(codec, f"({sql})", list(params), rows.db, ranges, keys, dated)


def _count_lateral(
    source: ModelSource,
    ranges: list[tuple[str, str]],
    keys: list[list[str]],
    dated: bool,
    codec: KeyCodec | None = None,
) -> Any:
    """:func:`_count_rows` of ``ranges``, each bounded at both ends, in one query (PostgreSQL).

    The ranges go as two arrays, and the rows of each are joined to it
    laterally: one index range scan a range, planned once, where a filter on
    the ranges (``KeyRanges``, an ``OR`` of them) is planned range by range
    and written with two parameters each, in queries of ``_RANGES_PER_QUERY``
    (docs/performance.md, "Incremental export"). The same rows, counted the
    same way. ``codec``: as :func:`_count_rows` takes it.
    """
    codec = codec or source.page_table().codec
    key, column = source.key_name, source.lastmod_column
    using = source.get_queryset().db
    connection = connections[using]
    assert source.model is not None
    field = key_model_field(source.model, key)
    assert field is not None
    cast = field.cast_db_type(connection)
    lows, highs = [], []
    for low, high in ranges:
        bounds = _bounds(codec, low, high)
        lows.append(field.get_db_prep_value(bounds.low, connection, prepared=False))
        highs.append(field.get_db_prep_value(bounds.high, connection, prepared=False))
    each = source.listed_rows().filter(
        **{
            f"{key}__gte": RawSQL("sitemapx_ranges.low", (), output_field=field),
            f"{key}__lt": RawSQL("sitemapx_ranges.high", (), output_field=field),
        }
    )
    each = each.order_by()
    inner = each.values_list(key, column) if dated and column else each.values_list(key)
    sql, params = inner.query.sql_with_params()
    rows = (
        f"unnest(%s::{cast}[], %s::{cast}[]) AS sitemapx_ranges(low, high) "
        f"CROSS JOIN LATERAL ({sql})"
    )
    return _count_pieces(codec, rows, [lows, highs, *params], using, ranges, keys, dated)


def _count_pieces(
    codec: KeyCodec,
    rows: str,
    params: list[Any],
    using: str,
    ranges: list[tuple[str, str]],
    keys: list[list[str]],
    dated: bool,
) -> Any:
    """Send the count of the pieces of ``ranges`` cut at their ``keys`` among ``rows``
    (SQL giving each row's key, and lastmod when ``dated``, with ``params``): see
    :func:`_count_rows`. Returns the cursor, its result not read."""
    thresholds: list[Any] = []
    pieces = 0
    for (low, _high), wanted in zip(ranges, keys, strict=True):
        for text in [low, *wanted]:
            if pieces:
                thresholds.append(codec.decode(text))
            pieces += 1
    # The column as stored, formatted once per piece: to_char on every row was
    # half of the query's time (docs/performance.md, "Incremental export").
    latest = greatest_w3c_sql("sitemapx_rows.lastmod") if dated else "NULL"
    names = "key, lastmod" if dated else "key"
    bucket = "width_bucket(sitemapx_rows.key, %s)" if thresholds else "0"
    query = f"SELECT {bucket}, count(*), {latest} FROM {rows} AS sitemapx_rows({names}) GROUP BY 1"
    cursor = connections[using].cursor()
    try:
        cursor.execute(query, [thresholds, *params] if thresholds else params)
    except BaseException:
        cursor.close()
        raise
    return cursor


def _pieces_read(result: list[tuple[Any, ...]], keys: list[list[str]]) -> list[BlockRows]:
    """Each range's ``BlockRows`` from the rows of its pieces' count (``_count_pieces``)."""
    pieces = sum(len(wanted) + 1 for wanted in keys)
    counts = [0] * pieces
    greatest: list[str | None] = [None] * pieces
    for piece, count, lastmod in result:
        counts[piece] = count
        greatest[piece] = lastmod
    found = []
    piece = 0
    for wanted in keys:
        block = counts[piece : piece + len(wanted) + 1]
        places = {}
        before = block[0]
        for position, text in enumerate(wanted, 1):
            places[text] = before
            before += block[position]
        latest_text = _greatest(None, greatest[piece : piece + len(wanted) + 1])
        found.append(BlockRows(sum(block), places, latest_text))
        piece += len(wanted) + 1
    return found


class _Counting:
    """The changed blocks' rows (:func:`block_keys`), counted as :func:`settle` finds them.

    On PostgreSQL through psycopg 3, each ``_RANGES_PER_QUERY`` ranges found
    are sent at once, in pipeline mode: the database counts them while the next
    pages' blocks files are read, and the counts are read once all are sent
    (docs/performance.md, "Incremental export"). Elsewhere they are counted at
    the end. Only the first ``limit`` ranges are counted so.
    """

    def __init__(self, source: ModelSource, limit: int) -> None:
        self.source = source
        self.limit = limit
        self.ranges: list[tuple[str, str]] = []
        self.keys: list[list[str]] = []
        self._sent: list[_Sent] = []
        self._count = 0  # the ranges sent
        self._stack = contextlib.ExitStack()
        # Whether the queries go as the ranges are found: None until first asked.
        self._pipelined: bool | None = None
        column = source.lastmod_column
        self._dated = column is not None and told_by_rows(source, source.get_queryset().db)
        self._codec = source.page_table().codec

    def __enter__(self) -> _Counting:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for query in self._sent:
            query.cursor.close()
        self._stack.close()

    def add(self, bounds: tuple[str, str], keys: list[str]) -> None:
        """A changed block's range, and its changed keys (sorted), whose places are wanted."""
        self.ranges.append(bounds)
        self.keys.append(keys)
        found = min(len(self.ranges), self.limit)
        if found - self._count >= _RANGES_PER_QUERY and self._pipeline():
            self._send(found)

    def _pipeline(self) -> bool:
        """Whether the queries go as the ranges are found: in pipeline mode, entered once."""
        if self._pipelined is None:
            using = self.source.get_queryset().db
            self._pipelined = False
            if connections[using].vendor != "postgresql":
                return False
            try:
                from psycopg import Pipeline
            except ImportError:  # psycopg2: counted at the end
                return False
            if not Pipeline.is_supported():  # pragma: no cover - libpq before 14
                return False
            self._stack.enter_context(_serial_plans(using))
            self._stack.enter_context(connections[using].connection.pipeline())
            self._pipelined = True
        return self._pipelined

    def _send(self, end: int) -> None:
        start, self._count = self._count, end
        ranges, keys = self.ranges[start:end], self.keys[start:end]
        sent = _send_counts(self.source, self._codec, ranges, keys, self._dated)
        for query in sent:
            query.places = [start + place for place in query.places]
        self._sent.extend(sent)

    def rows(self) -> list[BlockRows]:
        """The rows of the first ``limit`` ranges added (all of them, if fewer)."""
        found = min(len(self.ranges), self.limit)
        if not self._pipelined:
            return block_keys(self.source, self.ranges[:found], self.keys[:found])
        if found > self._count:
            self._send(found)
        sent, self._sent = self._sent, []
        try:
            return _read_counts(sent, found)
        finally:
            # Out of pipeline mode and the planner's settings, for the queries after.
            self._stack.close()


@dataclass
class ReadBlocks:
    """A page's changed blocks as :func:`settle` read them, for :func:`splice` to write.

    ``keys``: each block's rows (:func:`block_keys`), by its range; ``changes``:
    the page's count of changes when its range was read, before those rows: a
    page marked since is read again.
    """

    changes: int
    keys: dict[tuple[str, str], BlockRows]


@dataclass
class InPlace:
    """A changed block written again in place (``_in_place``): its new bytes, its greatest
    lastmod, and where its elements changed, (offset in the block, new bytes), when
    each kept its length (else None: the block is written whole)."""

    data: bytes
    lastmod: str | None
    patches: list[tuple[int, bytes]] | None


def make_whole(
    source: ModelSource,
    number: int,
    origin: Origin,
    where: PageRange,
    target: IO[bytes],
    overrides: Overrides = None,
    table: PageTable | None = None,
    page_format: PageFormat | None = None,
) -> Made | None:
    """Write page ``number`` to ``target``, recording its blocks; None when it has no URL.

    Raises ``NotInBlocks`` for a page to make the usual way (``target`` is then
    to be discarded). ``table``, ``page_format``: as :class:`BlockWriter` takes them.
    """
    blocks = BlockWriter(source, number, origin, overrides, table, page_format)
    target.write(blocks.head)
    cut, exact = blocks.cut(where.low, where.high, target)
    if not blocks.writer.stats.urls:
        return None
    target.write(blocks.tail)
    blocks.finish(where)
    made = _made(
        blocks,
        where,
        [block[0] for block in cut],
        [block[1] for block in cut],
        [block[2] for block in cut],
        [block[3] for block in cut],
        [block[4] for block in cut],
    )
    if not exact:
        made.blocks = None
    return made


def _greatest(latest: str | None, lastmods: list[str | None]) -> str | None:
    """The greatest of ``latest`` and ``lastmods`` (None: none of them is a text)."""
    found = max(filter(None, lastmods), default=None)
    if latest is None or (found is not None and found > latest):
        return found
    return latest


def _block(
    starts: list[str],
    latest: list[str | None],
    index: int,
    size: int,
    urls: int,
    hasher: Any,
) -> tuple[str, int, int, bytes, str | None]:
    """Block ``index`` of :meth:`BlockWriter.cut`, as it returns them."""
    start = starts[index] if index < len(starts) else ""
    lastmod = latest[index] if index < len(latest) else None
    return start, size, urls, hasher.digest()[:16], lastmod


def _made(
    blocks: BlockWriter,
    where: PageRange,
    starts: list[str],
    sizes: list[int],
    urls: list[int],
    digests: list[bytes] | bytes,
    lastmods: list[str | None],
) -> Made:
    """The page's ``Made`` from its blocks' columns (the opening and closing tags added).

    ``digests``: a list, or the digests joined (a spliced page's, not cut apart).
    """
    if 0 in sizes and len(sizes) > 1:
        if not isinstance(digests, list):
            cut = _DIGEST_SIZE
            digests = [digests[start : start + cut] for start in range(0, len(digests), cut)]
        # An empty block's range goes to its neighbour (the first block keeps the page's low).
        kept = [index for index, size in enumerate(sizes) if size]
        starts = [starts[index] for index in kept]
        sizes = [sizes[index] for index in kept]
        urls = [urls[index] for index in kept]
        digests = [digests[index] for index in kept]
        lastmods = [lastmods[index] for index in kept]
    if starts and starts[0] != where.low:
        starts = [where.low, *starts[1:]]
    every_size = (len(blocks.head), *sizes, len(blocks.tail))
    every_urls = (0, *urls, 0)
    joined = digests if isinstance(digests, bytes) else b"".join(digests)
    # One bytes object, not one per segment (500 a page): joined as they are.
    every_digest = (digest(blocks.head) + joined + digest(blocks.tail),)
    # Entries left out are counted per page: a page with some is not spliced.
    spliced = None
    if not blocks.writer.stats.skipped:
        spliced = Blocks.of(
            where.base,
            starts,
            every_size,
            every_urls,
            every_digest,
            where.state.changes,
            lastmods if blocks.told else None,
        )
    return Made(spliced, file_digest(every_digest), sum(every_size), sum(every_urls))


# The blocks a spliced page made again, by the index of the old block each replaces:
# each one's start key, bytes, row count and greatest lastmod.
_Remade = dict[int, list[tuple[str, bytes, int, str | None]]]


def splice(
    source: ModelSource,
    number: int,
    origin: Origin,
    where: PageRange,
    before: Blocks,
    keys: list[str],
    old: IO[bytes],
    target: IO[bytes],
    overrides: Overrides = None,
    elements: dict[str, bytes] | None = None,
    read: ReadBlocks | None = None,
    table: PageTable | None = None,
    page_format: PageFormat | None = None,
    rewritten: int = 0,
    copied: bool = False,
    outdated: Spans | None = None,
) -> Made | None:
    """Write page ``number`` to ``target``: ``old``'s bytes with the blocks holding ``keys`` anew.

    Each changed block is one query over its key range; one that grew past
    twice ``BLOCK_ROWS`` rows is cut again (:meth:`BlockWriter.cut`).
    ``elements``: the changed rows' elements, rendered already
    (:func:`changed_elements`; else read here for this page); ``read``: the
    changed blocks' keys, read already (:func:`settle`; else read here). None
    when the page cannot be spliced so (an entry left out, the page emptied):
    it is then made whole. Raises ``NotInBlocks`` as :func:`make_whole`.
    ``table``, ``page_format``: as :class:`BlockWriter` takes them.
    ``rewritten``: ``old``'s blocks written again since it was written whole
    (``Made.rewritten`` counts on from there); past :func:`copies_whole`'s count,
    its unchanged bytes are copied, not shared (``files.write_spliced``), and the
    count starts again. ``copied``: ``target`` holds a copy of ``old`` already
    (``files.write_spliced``); ``outdated``: the copy is the page's spare, which
    holds other bytes at those spans, and is never copied whole (it is not a
    clone: the extents a clone costs by cost it nothing).
    """
    from .files import write_spliced

    changed = sorted({bisect.bisect_right(before.starts, key) - 1 for key in keys})
    if not changed or changed[0] < 0:
        return None
    blocks = BlockWriter(source, number, origin, overrides, table, page_format)
    stats = blocks.writer.stats
    # The writer counts the page's other blocks as written: its limits hold for the page.
    stats.urls = sum(before.urls) - sum(before.urls[index + 1] for index in changed)
    stats.bytes = sum(before.sizes[:-1]) - sum(before.sizes[index + 1] for index in changed)
    made: _Remade = {}
    offsets = [0, *itertools.accumulate(before.sizes)]
    highs = [*before.starts[1:], where.high]
    bounds = {index: (before.starts[index], highs[index]) for index in changed}
    if read is not None and read.changes != where.state.changes:
        read = None  # marked changed since its blocks were read
    in_place = _in_place(blocks, before, bounds, keys, old, offsets, elements, read)
    for index, block in in_place.items():
        made[index] = [(bounds[index][0], block.data, before.urls[index + 1], block.lastmod)]
    if stats.bytes + len(blocks.tail) > PROTOCOL_MAX_BYTES:
        raise NotInBlocks
    changed = [index for index in changed if index not in made]
    ranges = [bounds[index] for index in changed]
    rendered = blocks.blocks(ranges) if ranges else []
    if rendered is None:
        return None
    for index, (low, high), (data, urls, lastmod) in zip(changed, ranges, rendered, strict=True):
        if urls <= 2 * BLOCK_ROWS:
            made[index] = [(low, data, urls, lastmod)]
            continue
        # Grown: cut in blocks again, from the rows as they are now.
        stats.urls -= urls
        stats.bytes -= len(data)
        buffer = io.BytesIO()
        cut, exact = blocks.cut(low, high, buffer)
        if not exact:
            return None
        body, offset = buffer.getvalue(), 0
        made[index] = []
        for start, size, found, _digest, lastmod in cut:
            made[index].append((start, body[offset : offset + size], found, lastmod))
            offset += size
    if stats.skipped or not stats.urls:
        return None
    share = outdated is not None or not copies_whole(number, rewritten)
    pieces = _pieces(offsets, in_place, made)
    new_spans = write_spliced(
        old, target, pieces, share=share, copied=copied, outdated=outdated or ()
    )
    blocks.finish(where)
    # Every block made again kept its start, its length and its rows (a spread run's every
    # page): its blocks are the old ones but those blocks' digests and lastmods.
    same = _same_layout(before, made, blocks, where)
    made_now = (_made_on_old_layout if same else _made_from_runs)(blocks, where, before, made)
    made_now.rewritten = rewritten + len(made) if share else 0
    made_now.new_spans = new_spans
    return made_now


def _made_from_runs(
    blocks: BlockWriter,
    where: PageRange,
    before: Blocks,
    made: _Remade,
) -> Made:
    """:func:`_made` of a spliced page: its blocks as runs of ``before``'s (segment i + 1
    is block i) and the blocks ``made`` again."""
    count = len(before.starts)
    old_lastmods = before.lastmods or [None] * count
    new_starts: list[str] = []
    sizes: list[int] = []
    counts: list[int] = []
    # The digests joined, as the blocks file keeps them: not cut apart, segment by segment.
    digests = bytearray()
    lastmods: list[str | None] = []
    kept = 0  # the first old block not taken yet
    for index in [*sorted(made), count]:
        new_starts += before.starts[kept:index]
        sizes += before.sizes[kept + 1 : index + 1]
        counts += before.urls[kept + 1 : index + 1]
        digests += before.digests_of(kept + 1, index + 1)
        lastmods += old_lastmods[kept:index]
        if index == count:
            break
        for start, data, urls, lastmod in made[index]:
            new_starts.append(start)
            sizes.append(len(data))
            counts.append(urls)
            digests += digest(data)
            lastmods.append(lastmod)
        kept = index + 1
    made_now = _made(blocks, where, new_starts, sizes, counts, bytes(digests), lastmods)
    if made_now.blocks is not None and before.lastmods is None:
        # The unchanged blocks' lastmods are not known: none are kept.
        made_now.blocks = dataclasses.replace(made_now.blocks, lastmods_text=None)
    return made_now


def _same_layout(
    before: Blocks,
    made: _Remade,
    blocks: BlockWriter,
    where: PageRange,
) -> bool:
    """Whether the page's blocks are ``before``'s but the digests and lastmods of those
    ``made`` again: each made again one block of its old start, length and rows, the
    page's low and its opening and closing tags as before, and no block empty (which
    :func:`_made` would leave out)."""
    sizes, urls, starts = before.sizes, before.urls, before.starts
    if (sizes[0], sizes[-1]) != (len(blocks.head), len(blocks.tail)) or urls[0] or urls[-1]:
        return False
    if (starts and starts[0] != where.low) or (len(starts) > 1 and 0 in sizes[1:-1]):
        return False
    for index, found in made.items():
        if len(found) != 1:
            return False
        start, data, count, _lastmod = found[0]
        if (start, len(data), count) != (starts[index], sizes[index + 1], urls[index + 1]):
            return False
    return True


def _pieces(
    offsets: list[int],
    in_place: dict[int, InPlace],
    made: _Remade,
) -> list[bytes | tuple[int, int]]:
    """The new file as runs of the old one's bytes (offset, length) and the bytes written
    over them or between them: each block made again (segment i + 1 is block i), or only
    its changed elements where it kept its length and its elements their places
    (``InPlace.patches``: a few 4 KiB blocks written, not all)."""
    pieces: list[bytes | tuple[int, int]] = []
    copy_from = 0  # the old bytes not copied yet start here
    for index in sorted(made):
        segment = index + 1
        patches = in_place[index].patches if index in in_place else None
        if patches is None:
            pieces.append((copy_from, offsets[segment] - copy_from))
            pieces += [data for _start, data, _urls, _lastmod in made[index]]
            copy_from = offsets[segment + 1]
        for offset, element in patches or ():
            pieces.append((copy_from, offsets[segment] + offset - copy_from))
            pieces.append(element)
            copy_from = offsets[segment] + offset + len(element)
    pieces.append((copy_from, offsets[-1] - copy_from))
    return pieces


def _made_on_old_layout(
    blocks: BlockWriter,
    where: PageRange,
    before: Blocks,
    made: _Remade,
) -> Made:
    """:func:`_made_from_runs` of a page whose layout is ``before``'s (:func:`_same_layout`): its
    fields taken as the blocks file holds them, but the digests and lastmods of the
    blocks ``made`` again: the same blocks, byte for byte, without rebuilding them."""
    digests = bytearray(before.digests_data)
    digests[:_DIGEST_SIZE] = digest(blocks.head)
    digests[-_DIGEST_SIZE:] = digest(blocks.tail)
    lastmods = list(before.lastmods or [None] * len(before.starts))
    for index, found in made.items():
        _start, data, _count, lastmod = found[0]
        digests[_DIGEST_SIZE * (index + 1) : _DIGEST_SIZE * (index + 2)] = digest(data)
        lastmods[index] = lastmod
    every_digest = bytes(digests)
    spliced = None
    if not blocks.writer.stats.skipped:
        # The unchanged blocks' lastmods are not known unless kept: then none are.
        known = lastmods if blocks.told and before.lastmods is not None else None
        spliced = before.on_same_layout(where.base, every_digest, where.state.changes, known)
    return Made(spliced, file_digest((every_digest,)), sum(before.sizes), sum(before.urls))


# Changed rows whose elements an export renders at once for all of a section's
# pages (:func:`changed_elements`), and at most per query; past that, per page.
_ELEMENTS_AT_ONCE = 20_000
_ELEMENTS_PER_QUERY = 1_000


def changed_elements(
    source: ModelSource,
    origin: Origin,
    keys: list[str],
    overrides: Overrides = None,
    table: PageTable | None = None,
    page_format: PageFormat | None = None,
) -> dict[str, bytes] | None:
    """The ``<url>`` element (less its opening ``<url>``) of each of ``keys`` still listed.

    For every page of ``source`` that :func:`splice` writes in place: a
    query per ``_ELEMENTS_PER_QUERY`` keys, not two per page. An element is
    written from its row alone, so the same bytes as a page's own query.
    None when there are more than ``_ELEMENTS_AT_ONCE`` keys (each page
    then reads its own) or the elements are not one a row. ``table``,
    ``page_format``: as :class:`BlockWriter` takes them.
    """
    if len(keys) > _ELEMENTS_AT_ONCE:
        return None
    found: dict[str, bytes] = {}
    # At most a page's URLs per query: each query has a writer of its own, with a page's limits.
    size = min(_ELEMENTS_PER_QUERY, source.get_limit())
    for start in range(0, len(keys), size):
        writer = BlockWriter(source, 0, origin, overrides, table, page_format)
        try:
            part = writer.elements_of(keys[start : start + size])
        except NotInBlocks:
            return None
        if part is None:
            return None
        found.update(part)
    return found


def _in_place(
    blocks: BlockWriter,
    before: Blocks,
    bounds: dict[int, tuple[str, str]],
    keys: list[str],
    old: IO[bytes],
    offsets: list[int],
    elements: dict[str, bytes] | None,
    read: ReadBlocks | None,
) -> dict[int, InPlace]:
    """The changed blocks whose rows are still the same rows, written again in place.

    A block whose changed keys (``keys``) are all still listed and whose row
    count is its recorded one holds the rows it held (every change of its
    rows is a logged key: none came or went), so only the elements of those
    keys are written again, into the block's old bytes (read from ``old`` at
    ``offsets``), each at its row's place: one query for the keys (and the
    greatest lastmod) of the blocks (none for those ``read`` holds), one for
    the changed rows (none when ``elements`` holds them). Any other
    block is left out, to be written whole. Returns each block's bytes,
    greatest lastmod and changed elements (``InPlace``), by index; the
    writer's counts include them.
    """
    from .files import read_at

    changed = sorted(bounds)
    logged: dict[int, set[str]] = {}
    for key in keys:
        logged.setdefault(bisect.bisect_right(before.starts, key) - 1, set()).add(key)
    known = read.keys if read is not None else {}
    unread = [index for index in changed if bounds[index] not in known]
    read_now = block_keys(
        blocks.source,
        [bounds[index] for index in unread],
        [sorted(logged.get(index, ())) for index in unread],
    )
    known = {**known, **{bounds[i]: rows for i, rows in zip(unread, read_now, strict=True)}}
    kept: dict[int, tuple[dict[str, int], set[str]]] = {}
    greatest: dict[int, str | None] = {}
    for index in changed:
        found = known[bounds[index]]
        wanted = logged.get(index, set())
        if wanted and found.count == before.urls[index + 1] and wanted <= found.places.keys():
            kept[index] = (found.places, wanted)
            greatest[index] = found.latest
    if not kept:
        return {}
    needed = sorted(set().union(*(wanted for _, wanted in kept.values())))
    stats = blocks.writer.stats
    if elements is not None:
        rendered = {key: elements[key] for key in needed if key in elements}
    else:
        fresh = blocks.elements_of(needed)
        if fresh is None:
            return {}
        rendered = fresh
        # The rows written again are counted by the writer already; the rest of each block is not.
        stats.urls -= len(rendered)
        stats.bytes -= sum(len(_ELEMENT) + len(element) for element in rendered.values())
    result = {}
    for index, (places, wanted) in kept.items():
        segment = index + 1
        if not wanted <= rendered.keys():  # a row unlisted meanwhile
            continue
        pieces = read_at(old, offsets[segment], before.sizes[segment]).split(_ELEMENT)
        if pieces[0] or len(pieces) - 1 != before.urls[segment]:
            continue
        # Each changed element at its offset in the block (after its "<url>"), while
        # every one keeps its length: only their bytes are written over the old file.
        patches: list[tuple[int, bytes]] | None = []
        for key in sorted(wanted, key=places.__getitem__):
            place = places[key] + 1
            element = rendered[key]
            if patches is not None and len(element) != len(pieces[place]):
                patches = None
            elif patches is not None and element != pieces[place]:
                offset = place * len(_ELEMENT) + sum(map(len, pieces[1:place]))
                patches.append((offset, element))
            pieces[place] = element
        data = _ELEMENT.join(pieces)
        lastmod = greatest[index] if before.lastmods is not None else None
        result[index] = InPlace(data, lastmod, patches)
        stats.urls += before.urls[segment]
        stats.bytes += len(data)
    return result


# Changed blocks whose keys :func:`settle` reads and keeps for the pages written
# in place (about ``BLOCK_ROWS`` keys each); past that, one grouped query sums them up.
_BLOCKS_READ_AT_ONCE = 2_000


def settle(
    source: ModelSource,
    ranges: dict[int, PageRange],
    blocks_of: Callable[[int], Blocks | None],
    log: ChangeLog,
    read: dict[int, ReadBlocks] | None = None,
    on_plan: Callable[[int, Blocks, list[int]], None] | None = None,
) -> set[int]:
    """Tell the page table the summaries of ``source``'s changed pages: no page counted.

    A stale page whose blocks (``blocks_of``, the previous export's) stand on
    its range as it is (``Blocks.base``), keep each block's lastmod, and
    whose every change since the log names by key (as :func:`splice` asks)
    is summed up from its blocks: the unchanged ones as recorded, the changed
    ones read again, for every page of the section at once. With ``read``
    (the first ``_BLOCKS_READ_AT_ONCE`` blocks) their rows are counted
    (:func:`block_keys`, sent as the pages are planned: ``_Counting``) and
    kept there by page, so that :func:`splice` does not read them again; one
    grouped query sums up any others (``summaries.summarize_ranges``). ``ranges`` are the
    section's pages as loaded before the log was read (``page_ranges``). ``on_plan``
    is called with each page it plans, its blocks and the indexes of its changed
    blocks (the export reads their bytes ahead, ``Destination.read_soon``).
    The page table stores each summary as a count (``PageTable.settle``);
    the other pages are counted as usual. A page told or counted already since
    the log's changes (by another export, or a request serving it) is not told,
    but with ``read`` its changed blocks are read and kept as the others', and
    ``on_plan`` is called with it. Returns the pages told.
    """
    table = source.page_table()
    if not told_by_rows(source, source.get_queryset().db):
        return set()
    # Each page's unchanged blocks summed up (rows, greatest lastmod), how many changed,
    # and whether it is told (else only read): one page's blocks held at a time.
    plans: dict[int, _Plan] = {}
    # The changed blocks' ranges, and the changed keys of each, whose places are kept
    # for ``splice``: counted as they are found (the first ``_BLOCKS_READ_AT_ONCE``).
    counting = _Counting(source, _BLOCKS_READ_AT_ONCE if read is not None else 0)
    with counting:
        _plan_pages(source, ranges, blocks_of, log, plans, counting, on_plan)
        found = iter(list(_summarize_blocks(source, counting)))
    summaries = {}
    for number, (rows, latest, changed_count, tell) in plans.items():
        known = True
        for _index in range(changed_count):
            bounds, (block_rows, lastmod, undated), keys_read = next(found)
            rows += block_rows
            latest = _greatest(latest, [lastmod])
            # A lastmod out of range (or none) in a block read again: the page is counted.
            known = known and not undated and (lastmod is not None or not block_rows)
            if read is not None and keys_read is not None:
                state = ranges[number].state
                read.setdefault(number, ReadBlocks(state.changes, {})).keys[bounds] = keys_read
        if tell and (known or source.lastmod_column is None):
            summaries[number] = summary_of_rows(source, rows, latest)
    return table.settle([where.state for where in ranges.values()], summaries)


def _summarize_blocks(
    source: ModelSource, counting: _Counting
) -> Iterator[tuple[tuple[str, str], tuple[int, str | None, int], BlockRows | None]]:
    """Each range ``counting`` was given (encoded, in key order), its summary
    (``summaries.summarize``), and its rows (:func:`block_keys`, the places of
    its changed keys) when counted so: the first ``counting.limit``; one grouped
    query sums up the others (``summaries.summarize_ranges``).

    Only for a source :func:`told_by_rows` says so of: no row lacks a lastmod.
    """
    counted = counting.rows()
    for bounds, rows in zip(counting.ranges, counted, strict=False):
        yield bounds, summary_of_rows(source, rows.count, rows.latest), rows
    others = counting.ranges[len(counted) :]
    if not others:
        return
    codec = source.page_table().codec
    decoded = [_bounds(codec, low, high) for low, high in others]
    for bounds, summary in zip(others, summarize_ranges(source, decoded), strict=True):
        yield bounds, summary, None


# :func:`settle`'s plan of a page: its unchanged blocks' rows and greatest lastmod, how
# many of its blocks changed, and whether it is told (else its changed blocks are only read).
_Plan = tuple[int, str | None, int, bool]


def _plan_pages(
    source: ModelSource,
    ranges: dict[int, PageRange],
    blocks_of: Callable[[int], Blocks | None],
    log: ChangeLog,
    plans: dict[int, _Plan],
    counting: _Counting,
    on_plan: Callable[[int, Blocks, list[int]], None] | None = None,
) -> None:
    """:func:`settle`'s plan of each stale page it can tell, whose changed blocks' ranges
    go to ``counting``; and of each page told already whose changed blocks the log names,
    while ``counting`` reads the rows of all of them. One page's blocks held at a time."""
    table = source.page_table()
    for number, where in ranges.items():
        tell = table.is_stale(where.state)
        # Told already, yet changed since this destination's files: a request serving it
        # counted it, or an export to another destination told it. Its blocks are still
        # read here, with the others', not one query a page as it is spliced.
        if not tell and (
            len(counting.ranges) >= counting.limit or not log.marks(source.section, number)
        ):
            continue
        blocks = blocks_of(number)
        if blocks is None or blocks.base != where.base or blocks.lastmods is None:
            continue
        keys = log.keys_in(source.section, number, where.low, where.high)
        # Marked more often than the log names its rows: some change is not named.
        marks = where.state.changes - blocks.changes
        if keys is None or log.marks(source.section, number) < marks:
            continue
        in_block: dict[int, list[str]] = {}
        for key in keys:
            in_block.setdefault(bisect.bisect_right(blocks.starts, key) - 1, []).append(key)
        changed = sorted(in_block)
        if changed and changed[0] < 0:
            continue
        count = len(blocks.starts)
        if tell:
            urls, lastmods = blocks.urls, blocks.lastmods
            # The unchanged blocks, as the runs between the changed ones (a few of 500).
            rows = sum(urls[1 : count + 1]) - sum(urls[index + 1] for index in changed)
            kept: list[str | None] = []
            for start, end in zip([-1, *changed], [*changed, count], strict=True):
                kept += lastmods[start + 1 : end]
            plans[number] = (rows, _greatest(None, kept), len(changed), True)
        elif changed and len(counting.ranges) + len(changed) <= counting.limit:
            plans[number] = (0, None, len(changed), False)
        else:
            continue  # nothing to read, or not all of it read at once: read as it is spliced
        if on_plan is not None:
            on_plan(number, blocks, changed)
        for index in changed:
            high = blocks.starts[index + 1] if index + 1 < count else where.high
            counting.add((blocks.starts[index], high), sorted(in_block[index]))
