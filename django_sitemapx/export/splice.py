"""Pages made in blocks of rows, and spliced: an old page's bytes plus the blocks that changed.

A model section's page is a key range (``sources.pages``); the export cuts it
again into blocks of about ``BLOCK_ROWS`` rows (one ``ROW_NUMBER()`` query)
and writes each block's ``<url>`` elements from a keyset query over its key
range, with the page's one writer: the same elements as one query over the
page, since each element is written from its own row alone. The manifest
records each block's first key, size, URL count and digest (``Blocks``).

The next run reads the log of changed rows (``sources.changes``). A page
whose range and configuration are as recorded (``Blocks.base``) and whose
changes the log names row by row is spliced: the blocks holding a changed
key are queried and written again (cut again into blocks of ``BLOCK_ROWS``),
every other byte is copied from the previous file (``files.copy_range``:
``os.copy_file_range`` in a folder). The file's digest is a digest of its
segments' digests, so no byte copied is hashed again. Anything else makes the
page whole, in blocks: no record of blocks, a split or merge, a setting,
a log that cannot say (``ChangeLog.keys_in``), an entry left out or a page
over the byte limit (those make it the usual way, ``render_page``), gzip
copies, a dry run.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from django.db.models import F, Window
from django.db.models.functions import Mod, RowNumber

from ..conf import PROTOCOL_MAX_BYTES
from ..documents import _log_skips, read_chunks, stylesheet_url
from ..locations import LocationBuilder, Origin
from ..overrides import apply_overrides
from ..sources import ModelSource, Source
from ..sources.languages import alternate_hosts
from ..sources.rows import model_entries
from ..sources.summaries import Bounds, in_range
from ..writer import URLSET_CLOSE, DocumentWriter, urlset_open, urlset_writer
from .destinations import Blocks

# Rows per block: a spread change re-reads about this many rows per changed row;
# smaller blocks cost one more query each in a run that makes pages whole
# (docs/performance.md, "Incremental export").
BLOCK_ROWS = 500
# Key encodings whose text sorts in Python as the database sorts the keys.
_ORDERED_CODECS = frozenset({"int", "uuid"})


def digest(data: bytes) -> str:
    """A segment's digest, as ``Blocks.digests`` keeps it."""
    return hashlib.sha256(data).hexdigest()[:32]


def file_digest(digests: tuple[str, ...] | list[str]) -> str:
    """The digest of a page made in blocks: of its segments' digests, in order."""
    return "blocks:" + hashlib.sha256("".join(digests).encode()).hexdigest()


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
    """A page's key range in the page table, encoded (``high`` ``""``: no upper bound)."""

    low: str
    high: str
    base: str


def page_range(source: ModelSource, number: int, configuration: str) -> PageRange | None:
    """Page ``number``'s range as the page table holds it now (no page counted)."""
    table = source.page_table()
    states = table.states(set())
    for position, state in enumerate(states):
        if state.number == number:
            high = states[position + 1].first if position + 1 < len(states) else ""
            parts = [configuration, source.section, str(number), table.section_name]
            text = "|".join([*parts, table.fingerprint, state.first, high])
            return PageRange(state.first, high, hashlib.sha256(text.encode()).hexdigest())
    return None


@dataclass
class Made:
    """A page written in blocks: its ``Blocks`` (None: not to be spliced) and totals."""

    blocks: Blocks | None
    digest: str
    size: int
    urls: int


class NotInBlocks(Exception):
    """The page cannot be made in blocks (over the byte limit): make it the usual way."""


class BlockWriter:
    """Writes the blocks of one page of ``source`` with one ``DocumentWriter``."""

    def __init__(self, source: ModelSource, number: int, origin: Origin) -> None:
        self.source = source
        self.number = number
        self.origin = origin
        self.table = source.page_table()
        self.codec = self.table.codec
        self.writer: DocumentWriter = urlset_writer(
            max_urls=source.get_limit(),
            max_bytes=PROTOCOL_MAX_BYTES,
            namespaces=source.get_namespaces(),
            max_element_bytes=source.max_url_bytes(),
            stylesheet=stylesheet_url(),
        )
        # The opening tag is a segment of its own: blocks are elements only.
        self.head = urlset_open(source.get_namespaces(), stylesheet_url()).encode()
        self.tail = URLSET_CLOSE.encode()
        self.writer.started = True
        self.writer.stats.bytes = len(self.head)

    def _bounds(self, low: str, high: str) -> Bounds:
        decode = self.codec.decode
        return Bounds(decode(low) if low else None, decode(high) if high else None)

    def starts(self, low: str, high: str) -> list[str]:
        """The first key of each block of ``BLOCK_ROWS`` rows from ``low`` below ``high``."""
        key = self.source.key_name
        rows = in_range(self.source, self.source.listed_rows(), self._bounds(low, high))
        cuts = (
            rows.order_by()
            .annotate(sitemapx_rn=Window(RowNumber(), order_by=F(key).asc()))
            .annotate(sitemapx_cut=Mod(F("sitemapx_rn") - 1, BLOCK_ROWS))
            .filter(sitemapx_cut=0, sitemapx_rn__gt=1)
            .order_by(key)
            .values_list(key, flat=True)
        )
        return [low, *(self.codec.encode(cut) for cut in cuts)]

    def block(self, low: str, high: str) -> tuple[bytes, int]:
        """The ``<url>`` elements of the rows from ``low`` below ``high``, and their count."""
        source, writer = self.source, self.writer
        rows = in_range(source, source.listed_rows(), self._bounds(low, high))
        before = writer.stats.urls
        stream = model_entries(source, rows, LocationBuilder(self.origin), True)
        chunks: Iterator[Any] = read_chunks(stream, writer.stats.skipped)
        if source.overridable:
            chunks = apply_overrides(
                chunks, source.section, self.origin.host, alternate_hosts(source, self.origin)
            )
        data = b"".join([writer.render_entries(chunk) for chunk in chunks])
        if writer.overflowed:
            raise NotInBlocks
        return data, writer.stats.urls - before

    def finish(self) -> None:
        """What a page's rendering ends with: its skips logged, its size recorded."""
        stats = self.writer.stats
        stats.bytes += len(self.tail)
        _log_skips(self.source.section, self.number, stats)
        self.source.page_built(self.number, stats.urls, stats.bytes)


def make_whole(
    source: ModelSource, number: int, origin: Origin, where: PageRange, target: IO[bytes]
) -> Made | None:
    """Write page ``number`` to ``target`` in blocks; None when it has no URL.

    Raises ``NotInBlocks`` for a page to make the usual way (``target`` is then
    to be discarded).
    """
    blocks = BlockWriter(source, number, origin)
    starts = blocks.starts(where.low, where.high)
    highs = [*starts[1:], where.high]
    segments: list[tuple[int, int, str]] = []
    target.write(blocks.head)
    for low, high in zip(starts, highs, strict=True):
        data, urls = blocks.block(low, high)
        target.write(data)
        segments.append((len(data), urls, digest(data)))
    if not blocks.writer.stats.urls:
        return None
    target.write(blocks.tail)
    blocks.finish()
    return _made(blocks, where, starts, segments)


def _made(
    blocks: BlockWriter, where: PageRange, starts: list[str], segments: list[tuple[int, int, str]]
) -> Made:
    # An empty block's range goes to its neighbour (the first block keeps the page's low).
    kept_starts, kept = [], []
    for start, segment in zip(starts, segments, strict=True):
        if segment[0] == 0 and len(segments) > 1:
            continue
        kept_starts.append(start)
        kept.append(segment)
    if kept_starts and kept_starts[0] != where.low:
        kept_starts[0] = where.low
    head = (len(blocks.head), 0, digest(blocks.head))
    tail = (len(blocks.tail), 0, digest(blocks.tail))
    every = [head, *kept, tail]
    sizes = tuple(segment[0] for segment in every)
    urls = tuple(segment[1] for segment in every)
    digests = tuple(segment[2] for segment in every)
    # Entries left out are counted per page: a page with some is not spliced.
    spliced = None
    if not blocks.writer.stats.skipped:
        spliced = Blocks(where.base, tuple(kept_starts), sizes, urls, digests)
    return Made(spliced, file_digest(digests), sum(sizes), sum(urls))


def splice(
    source: ModelSource,
    number: int,
    origin: Origin,
    where: PageRange,
    before: Blocks,
    keys: list[str],
    old: IO[bytes],
    target: IO[bytes],
) -> Made | None:
    """Write page ``number`` to ``target``: ``old``'s bytes with the blocks holding ``keys`` anew.

    None when the page cannot be spliced so (an entry left out, the page
    emptied): it is then made whole. Raises ``NotInBlocks`` as :func:`make_whole`.
    """
    from .files import copy_range

    changed = sorted({bisect.bisect_right(before.starts, key) - 1 for key in keys})
    if not changed or changed[0] < 0:
        return None
    count = len(before.starts)
    blocks = BlockWriter(source, number, origin)
    stats = blocks.writer.stats
    # The writer counts the page's other blocks as written: its limits hold for the page.
    stats.urls = sum(before.urls) - sum(before.urls[index + 1] for index in changed)
    stats.bytes = sum(before.sizes[:-1]) - sum(before.sizes[index + 1] for index in changed)
    made: dict[int, list[tuple[str, bytes, int]]] = {}
    for index in changed:
        low = before.starts[index]
        high = before.starts[index + 1] if index + 1 < count else where.high
        starts = blocks.starts(low, high)
        highs = [*starts[1:], high]
        made[index] = [
            (start, *blocks.block(start, end)) for start, end in zip(starts, highs, strict=True)
        ]
    if stats.skipped or not stats.urls:
        return None
    offsets = [0]
    for size in before.sizes:
        offsets.append(offsets[-1] + size)
    new_starts: list[str] = []
    segments: list[tuple[int, int, str]] = []
    copy_from = 0  # the old bytes not copied yet start here
    for index in range(count):
        segment = index + 1
        if index not in made:
            new_starts.append(before.starts[index])
            segments.append((before.sizes[segment], before.urls[segment], before.digests[segment]))
            continue
        copy_range(old, target, copy_from, offsets[segment] - copy_from)
        for start, data, urls in made[index]:
            target.write(data)
            new_starts.append(start)
            segments.append((len(data), urls, digest(data)))
        copy_from = offsets[segment + 1]
    copy_range(old, target, copy_from, offsets[-1] - copy_from)
    blocks.finish()
    return _made(blocks, where, new_starts, segments)
