"""Dense, stable pages of a model section on any unique, orderable key.

A model section's pages are ranges of its key, kept in the ``PageState`` table:
page *n* holds the rows whose key is at least its first key and below the next
page's first key. Where page state lives, and why (see docs/guide/pages.md):

- **in the database, not the cache**: a cache flush must never move a row to
  another page (which would shift every page after it); the table survives it;
- each page's **summary** (row count, greatest lastmod) is kept with what says
  whether it still holds: the index counts again only the pages changed since.
  That is the page's change count in the table against the count it was
  counted at (a committed save or delete marks its page, ``invalidate()`` a
  section's or every page, see ``mark_changed``; a split or merge the pages it
  moves), with a cache as without one: the save pays one ``UPDATE`` after
  commit, and a cache flush, which loses the documents and their generations,
  loses nothing of what changed: no page is counted again for it. The index
  reads one row a page and no cache generation.

The rule, with ``capacity = source.rows_per_page()``: every page but the last
holds at least ``ceil(capacity / 2)`` rows and no page more than ``capacity``.
When a count breaks it, only that page and at most one neighbour change:

- a page over capacity splits: the last page at ``capacity`` rows (appends fill
  pages), any other page in equal parts;
- a page under half (not the last) gives its range to its previous neighbour
  (the next one for the first page) when both fit in one page, else the two
  share their rows equally; an empty page always goes.

The protocol's 50 MB is kept as a page is built: a page that goes over it keeps
the rows measured to fit in ``SPLIT_SHARE`` of it, and the rows after them are
laid out again with the following pages not measured yet (``_recut``); a page
cut so whose rows were shorter takes more (``refill``). Each page's size is
recorded as measured (``record_size``).

New pages take new numbers, so no other page is renumbered. Serving a page is
``WHERE key >= first AND key < next_first ORDER BY key``: the last page costs
what the first costs. The first count of a section cuts full pages with one
``ROW_NUMBER()`` query.

Every process of a site maintains the table during requests. One process at
a time changes a section's pages (the transaction that cuts, splits or merges
locks its ``SectionLock`` row, then reads the pages again and goes ahead only
if they are as it counted them); every such change raises ``changes`` on each
page whose range it moves, and a count is stored only on a page whose
``first`` and ``changes`` are those it was counted under; the generations a
change must replace are written in its transaction (``OwedGeneration``) and
replaced after its commit, by the next sitemap request if its process died
(``settle_owed``); rows are locked in number order and a deadlock is run again
(``retrying``). See docs/contributing/architecture.md.

Keys are stored encoded as text that the database orders as it orders the
keys: integers as 20 zero-padded digits (64-bit keys included), UUIDs as hex
(in MariaDB's own UUID order on MariaDB), strings as they are (up to 255
characters). Finding the page of a saved row is then one indexed query.
"""

from __future__ import annotations

import copy
import datetime
import functools
import hashlib
import logging
import math
import random
import re
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from django.db import (
    DatabaseError,
    IntegrityError,
    OperationalError,
    connections,
    models,
    router,
    transaction,
)
from django.db.models import F, Max, Window
from django.db.models.functions import Mod, RowNumber
from django.utils import timezone

from ..conf import PROTOCOL_MAX_BYTES, app_settings
from ..generations import (
    SitemapCache,
    index_generation,
    page_generation,
    section_generation,
)
from .changes import log_change
from .codecs import codec_for, key_model_field
from .summaries import Bounds, in_range, summarize, summarize_pages

if TYPE_CHECKING:
    from .querysets import ModelSource

logger = logging.getLogger("django_sitemapx")
_T = TypeVar("_T")

# A page's ``generation`` once counted under the change marks (``counted`` and
# ``changes``); any other value is a summary of an older release, counted under
# a cache's generations when the marks were not kept with one: counted again once.
MARKED = "-"
# Neighbouring stale pages counted in one grouped query (its parameters: one per page).
_PAGES_PER_PASS = 500
# Rebalancing converges in one pass; concurrent writers may need another.
_MAX_PASSES = 4
# The columns ``_store_many`` writes or matches on.
_STORED = (
    "section",
    "number",
    "first",
    "rows",
    "lastmod",
    "undated",
    "generation",
    "changes",
    "counted",
)
# A transaction the database aborted to break a deadlock is run again this many times.
_ATTEMPTS = 4
# PostgreSQL's deadlock_detected and serialization_failure; MySQL's deadlock and lock wait timeout.
_DEADLOCK_STATES = frozenset({"40P01", "40001"})
_DEADLOCK_ERRNOS = frozenset({1213, 1205})
# A process looks for generations a dead process owed at most this often (seconds),
SWEEP_INTERVAL = 1.0
# and leaves alone those written this recently: a live process is replacing them.
OWED_GRACE = 1.0
_next_sweep = 0.0
# The protocol's byte limit for a page (a test lowers it).
PAGE_BYTES = PROTOCOL_MAX_BYTES
# A page of at least this share of PAGE_BYTES is full by its size: it is never
# merged for having few rows (its size is recorded as it is built); two pages
# merge only if their sizes (at most this share each when not recorded) fit
# MERGED_SHARE.
FULL_SHARE = 0.4
MERGED_SHARE = 0.8
# Pages cut for their size hold the rows measured to fit in SPLIT_SHARE of
# PAGE_BYTES (the rest is room to grow); a page built under MIN_FILL of both
# limits whose size was an estimate takes more rows when that adds at least
# REFILL_GAIN of them or brings it to MIN_FILL. A re-cut reaches at most MAX_RUN
# unmeasured pages on.
SPLIT_SHARE = 0.95
MIN_FILL = 0.9
REFILL_GAIN = 1.05
MAX_RUN = 16


def is_deadlock(error: OperationalError) -> bool:
    """Whether the database aborted the transaction to break a deadlock (run it again)."""
    cause = error.__cause__
    state = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    if state in _DEADLOCK_STATES:
        return True
    args = error.args or getattr(cause, "args", ())
    return bool(args) and args[0] in _DEADLOCK_ERRNOS


def retrying(using: str, operation: Callable[[], _T], default: _T, what: str) -> _T:
    """``operation()``, run again when a deadlock aborts it; ``default`` once it never succeeds.

    Inside the caller's transaction nothing can be run again (the database
    aborted all of it): the error is raised.
    """
    for attempt in range(_ATTEMPTS):
        try:
            return operation()
        except OperationalError as error:
            if not is_deadlock(error) or connections[using].in_atomic_block:
                raise
            logger.info("Deadlock while %s (attempt %d), running it again.", what, attempt + 1)
            time.sleep(random.uniform(0.005, 0.05) * (attempt + 1))
    logger.warning("Deadlocks kept %s from completing; it is done at a later request.", what)
    return default


def settle_owed(*, force: bool = False) -> None:
    """Replace the cache generations a page change owes and delete the owed rows.

    A process that splits or merges pages, or saves a row in a transaction,
    does it itself after its commit; one that died in between left the rows.
    Sitemap views call this on each request: at most once per
    ``SWEEP_INTERVAL`` per process (``force``: now), one query on a table that
    is empty but for such leftovers (and rows of the last ``OWED_GRACE``
    seconds, which their process is settling).
    """
    global _next_sweep
    now = time.monotonic()
    if not force and now < _next_sweep:
        return
    _next_sweep = now + SWEEP_INTERVAL
    from ..models import OwedGeneration, table_exists

    using = router.db_for_write(OwedGeneration)
    cache = SitemapCache()
    if cache.alias is None or not table_exists(OwedGeneration, using):
        return
    owed = OwedGeneration.objects.using(using)
    settled = timezone.now() - datetime.timedelta(seconds=OWED_GRACE)
    try:
        found = list(
            owed.filter(created__lt=settled).order_by("id").values_list("id", "name")[:500]
        )
        if found and cache.replace(sorted({name for _, name in found} | {index_generation()})):
            owed.filter(id__in=[number for number, _ in found]).delete()
    except DatabaseError:  # the request goes on; the next sweep tries again
        logger.warning("Replacing owed cache generations failed.", exc_info=True)


_MOMENTS = (datetime.date, datetime.time, datetime.timedelta)
# A date or time as a database adapter passes it (SQLite and MySQL take them as text).
_MOMENT_TEXT = re.compile(r"\d{4}-\d\d-\d\d([ T]\d\d:\d\d(:\d\d(\.\d+)?)?)?([+-]\d\d:?\d\d|Z)?")


def _is_moment(param: Any) -> bool:
    return isinstance(param, _MOMENTS) or (
        isinstance(param, str) and _MOMENT_TEXT.fullmatch(param) is not None
    )


def _query_shape(source: ModelSource) -> tuple[str, str]:
    """The SQL (and parameters) of the keys ``source`` lists: what its pages depend on.

    A date or time parameter is left out (``timezone.now()`` differs on every
    call): two queries that differ only by the moment they were made select
    the same kind of rows, and share pages (a news section on every host).
    """
    sql, params = source.listed_rows().order_by().values("pk").query.sql_with_params()
    kept = ["<moment>" if _is_moment(param) else param for param in params]
    return sql, repr(kept)


def table_section(source: ModelSource, shape: tuple[str, str] | None = None) -> str:
    """The page table's name for the pages of ``source``.

    The section's name, shared by every host, unless the source bound to a host
    (``Source.for_origin``) selects other rows than the unbound one: then that
    host has its own pages, ``section@host`` (a digest of the host when long).
    ``shape`` is ``_query_shape(source)`` when already known.
    """
    origin = source.origin
    if origin is None:
        return source.section
    unbound = copy.copy(source)
    unbound.origin = None
    if _query_shape(unbound) == (shape or _query_shape(source)):
        return source.section
    return host_section(source.section, origin.host)


def host_section(section: str, host: str) -> str:
    """The name of ``host``'s own pages of ``section``: ``section@host`` (a digest when long)."""
    key = f"{section}@{host}"
    if len(key) > 100:
        key = f"{section[:50]}@{hashlib.sha256(host.encode()).hexdigest()[:32]}"
    return key


def has_host_tables(section: str, using: str) -> bool:
    """Whether some host of ``section`` has pages of its own (see ``table_section``)."""
    from ..models import PageState

    return PageState.objects.using(using).filter(section__startswith=f"{section}@").exists()


def page_numbers(section: str) -> list[int]:
    """The numbers of the pages the page table holds for ``section`` (a host's own too)."""
    from ..models import PageState, table_exists

    using = router.db_for_read(PageState)
    if not table_exists(PageState, using):
        return []
    rows = PageState.objects.using(using).filter(section=section).order_by("number")
    return list(rows.values_list("number", flat=True))


def mark_changed(
    section: str | None = None, page: int | None = None, key: str | None = None
) -> None:
    """Mark pages changed in the page table: the next index counts them again.

    Every page of every section with no argument; every page of ``section``
    (its hosts' pages too) without ``page``; else page ``page`` of the
    section's shared pages and of each host's own (``host_section``), as
    ``invalidate(section, page)`` replaces that page's generation on every
    host. Called once a change is committed, with a cache or without (see
    ``invalidation.invalidate``): in every process, the index then counts only
    what changed, and a cache flush changes nothing here.

    ``key`` (encoded as the table encodes keys) is the changed row's, for the
    export's log of changed rows (``sources.changes``), which is written first:
    a mark is never seen before the row that says what it was for.
    """
    from ..models import PageState, table_exists

    using = router.db_for_write(PageState)
    if not table_exists(PageState, using):
        return
    log_change(section, page, key, using)
    pages = PageState.objects.using(using)
    if section is not None:
        pages = pages.filter(
            models.Q(section=section) | models.Q(section__startswith=f"{section}@")
        )
        if page is not None:
            pages = pages.filter(number=page)

    def mark() -> None:
        if page is not None:
            # One row, or one per host with pages of its own; a deadlock with a
            # writer locking them in order is retried (``retrying``).
            pages.update(changes=F("changes") + 1)
            return
        # Many rows: locked in (section, number) order, as every writer of pages locks them.
        with transaction.atomic(using=using):
            list(pages.select_for_update().order_by("section", "number").values_list("pk"))
            pages.update(changes=F("changes") + 1)

    retrying(using, mark, None, "marking pages changed")


# The page table's columns a ``State`` is made of, in ``_states_from``'s order.
_COLUMNS = (
    "number",
    "first",
    "rows",
    "lastmod",
    "generation",
    "fingerprint",
    "undated",
    "changes",
    "counted",
    "bytes",
    "measured",
)


@dataclass
class State:
    """One page as the table holds it (plain values, no model instance per request)."""

    number: int
    first: str
    rows: int
    lastmod: str | None
    generation: str
    # Rows without a lastmod: a page's Last-Modified is known only when it is 0.
    undated: int = 0
    # Changes to the page's rows so far, and how many there were when it was counted.
    changes: int = 0
    counted: int | None = None
    # The page's size in bytes as last built, or estimated by a split.
    bytes: int | None = None
    # Whether ``bytes`` was measured over the page's current range (not an estimate).
    measured: bool = False


# A page's summary: its row count, greatest lastmod (W3C text) and undated rows.
Summary = tuple[int, str | None, int]


def _counted(state: State, summary: Summary) -> None:
    """Give ``state`` the summary counted (or told) of its rows as loaded."""
    state.rows, state.lastmod, state.undated = summary
    state.generation = MARKED
    # The summary read the rows after ``changes`` was loaded: a change committed
    # meanwhile raised it, and the page stays stale.
    state.counted = state.changes


def _full_by_size(state: State) -> bool:
    """Whether a page is full by its recorded size, whatever its row count."""
    return state.bytes is not None and state.bytes >= FULL_SHARE * PAGE_BYTES


def _sizes_fit(*pages: State) -> bool:
    """Whether ``pages`` merged stay well within ``PAGE_BYTES`` (an unrecorded size is small)."""
    unrecorded = FULL_SHARE * PAGE_BYTES
    total = sum(page.bytes if page.bytes is not None else unrecorded for page in pages)
    return total <= MERGED_SHARE * PAGE_BYTES


@dataclass(frozen=True)
class _Recut:
    """A page cut by its size: it holds ``keep`` rows of about ``row_bytes`` each."""

    keep: int
    row_bytes: float
    # The page holds at least this many rows (its stored count may be older).
    at_least: int = 0


def plan_pieces(total: int, keep: int, room: int | None) -> tuple[list[int], int]:
    """How ``total`` rows, from a page cut by its size on, are laid out again.

    Returns each page's rows, in order, and how many rows go to the measured
    page after them. ``keep`` is the most rows a page holds. ``room`` is None
    when the rows run to the section's end: pages of ``keep`` rows, the rest on
    the last; else the rows the measured page after them can take: the rest
    goes there if it fits, otherwise the rows are shared equally by as few
    pages as hold them, so that no page in the middle is left nearly empty.
    """
    if total <= keep:
        return [total], 0
    whole, rest = divmod(total, keep)
    if room is None:
        return [keep] * whole + ([rest] if rest else []), 0
    if rest <= room:
        return [keep] * whole, rest
    count = whole + 1
    base, extra = divmod(total, count)
    return [base + 1] * extra + [base] * (count - extra), 0


class PageTable:
    """The pages of one model section, kept fresh: counted again only where they changed."""

    def __init__(self, source: ModelSource) -> None:
        from ..models import PageState

        self.source = source
        self.section = source.section
        # The name its pages' cache generations go by (per host for some sources).
        self.generations = source.generations_name()
        # The table's rows: the section's, or one host's when the rows depend on the host.
        self.section_name = table_section(
            source, self._shape if source.origin is not None else None
        )
        self.capacity = source.rows_per_page()
        self.minimum = math.ceil(self.capacity / 2)
        self.using = router.db_for_write(PageState)
        self.table = PageState.objects.using(self.using)
        assert source.model is not None
        codec = codec_for(key_model_field(source.model, source.key_name), source.get_queryset().db)
        if codec is None:
            raise ValueError(f"Section {self.section!r}: its key cannot page (see check E104).")
        self.codec = codec

    # -- what the source asks -----------------------------------------------------------

    def states(self, numbers: set[int] | None = None) -> list[State]:
        """Every page in key order; fresh for ``numbers`` (None: every page)."""
        states = self._load()
        if states is None:
            states = self._build()
        counted: set[int] = set()
        targets = numbers
        for _ in range(_MAX_PASSES):
            stale = [
                state
                for state in states
                if (targets is None or state.number in targets)
                and state.number not in counted
                and self._is_stale(state)
            ]
            if stale:
                self._count(states, stale)
                counted.update(state.number for state in stale)
            changed, others = self._rebalance(states, counted)
            if not changed and not others:
                break
            # Pages this process split or merged, or another one did first: from the
            # table as it is now, count again each page whose range moved.
            before = {state.number: (state.first, state.changes) for state in states}
            states = self._load() or []
            moved = {
                state.number
                for state in states
                if before.get(state.number) != (state.first, state.changes)
            }
            counted -= changed | moved
            if targets is not None:
                targets = targets | changed | moved
        return states

    def is_stale(self, state: State) -> bool:
        """Whether page ``state``'s summary is not known to hold (see ``_is_stale``)."""
        return self._is_stale(state)

    def settle(self, states: list[State], summaries: dict[int, Summary]) -> set[int]:
        """Store summaries of stale pages told otherwise than by counting their rows.

        The export tells them from the blocks of rows it keeps (``export.splice``),
        having read only the blocks that changed. ``states`` are the section's
        pages as loaded before those rows were read. Each is stored as a count
        is (``_store``: only while the page's ``first`` and ``changes`` are as
        loaded), and only for a page that keeps the rule with it: a page that
        must split or merge stays stale, for the next count to change it.
        Returns the pages whose summary was stored.
        """
        told = []
        for position, state in enumerate(states):
            summary = summaries.get(state.number)
            if summary is None or not self._is_stale(state):
                continue
            candidate = copy.copy(state)
            _counted(candidate, summary)
            if self._keeps_rule(candidate, position, len(states)):
                told.append(candidate)
        self._store_counted(told)
        return {state.number for state in told}

    def _keeps_rule(self, state: State, position: int, pages: int) -> bool:
        """Whether page ``state``, at ``position`` of ``pages``, needs no split or merge."""
        if state.rows > self.capacity:
            return False
        last = position == pages - 1
        return pages == 1 or not (
            state.rows == 0
            or (state.rows < self.minimum and not last and not _full_by_size(state))
        )

    def _is_stale(self, state: State) -> bool:
        """Whether the page was marked changed since it was counted (or never counted).

        The marks are in this table, cache or not (``mark_changed``, at each
        committed change): a cache flush or a failing cache says nothing of the
        rows, and no page is counted again for it.
        """
        return state.counted != state.changes or state.generation != MARKED

    def proofs(self) -> dict[int, str]:
        """A token per page that changes whenever the page's rows may have changed.

        For the export (``Source.page_proofs``): a page whose token is the one
        recorded with its file was not changed since, as far as the page table
        knows (saves, deletes, ``invalidate()``, splits and merges: each marks
        the pages it changes, in every process, with any cache or none). A page
        is left out (no proof) when it was changed since it was last counted.
        A cache flush changes no token: the marks are in the database. Read
        before the pages are: a change committed after this call gives a new
        token at the next call.
        """
        states = self._load()
        if states is None:
            return {}
        proofs = {}
        for position, state in enumerate(states):
            # Marked changed since counted (the marks, also where a subclass counts every page).
            if PageTable._is_stale(self, state):
                continue
            high = states[position + 1].first if position + 1 < len(states) else ""
            proofs[state.number] = "|".join(
                [self.section_name, self.fingerprint, state.first, high, str(state.changes)]
            )
        return proofs

    def bounds(self, states: Sequence[State], number: int) -> tuple[State, Bounds] | None:
        """Page ``number``'s state and key range, or None if there is no such page."""
        for state in states:
            if state.number == number:
                bounds = self._bounds_from([(s.number, s.first) for s in states], number)
                assert bounds is not None
                return state, bounds
        return None

    def page_of(self, key: Any) -> int | None:
        """The page holding ``key`` (one indexed query); None before the section's first count."""
        try:
            text = self.codec.encode(key)
        except (TypeError, ValueError, AttributeError):
            return None
        from ..models import table_exists

        if not table_exists(self.table.model, self.using):  # a data migration before 0002
            return None
        found = (
            self.table.filter(section=self.section_name, first__lte=text)
            .order_by("-first")
            .values_list("number", flat=True)[:1]
        )
        return next(iter(found), None)

    # -- the table ------------------------------------------------------------------------

    @functools.cached_property
    def _shape(self) -> tuple[str, str]:
        # Compiled once a request: the table's section name and its fingerprint both read it.
        return _query_shape(self.source)

    @functools.cached_property
    def fingerprint(self) -> str:
        """What the pages depend on: model, key, capacity and the shape of the section's query.

        The query's parameters are left out: a filter on ``timezone.now()`` must
        not cut the section again on every request. A deploy that changes only a
        filter's value calls for ``invalidate(section)``, as any bulk change does:
        every page is counted again, and split or merged where the rule asks.
        """
        source = self.source
        assert source.model is not None
        sql = self._shape[0]
        text = "|".join(
            [
                source.model._meta.label,
                source.key_name,
                self.codec.kind,
                str(self.capacity),
                str(source.lastmod_column),
                sql,
            ]
        )
        return hashlib.sha256(text.encode()).hexdigest()[:40]

    def _load(self) -> list[State] | None:
        return self._states_from(
            list(
                self.table.filter(section=self.section_name)
                .order_by("first")
                .values_list(*_COLUMNS)
            )
        )

    def _states_from(self, rows: list[tuple[Any, ...]]) -> list[State] | None:
        """The pages of ``rows`` (``_COLUMNS``) in key order.

        None when there is none, or when some are of another fingerprint.
        """
        if not rows or any(row[5] != self.fingerprint for row in rows):
            return None
        states = [
            State(row[0], row[1], row[2], row[3], row[4], row[6], row[7], row[8], row[9], row[10])
            for row in rows
        ]
        return sorted(states, key=lambda state: state.first)

    def _build(self) -> list[State]:
        """Cut the section into full pages: one ``ROW_NUMBER()`` query over the keys.

        Under the section's lock: a process that waited for another one cutting
        the same section takes its pages instead.
        """
        key = self.source.key_name
        fingerprint = self.fingerprint
        model = self.table.model
        batch = secrets.token_hex(16)
        owed: list[str] = []
        self._ensure_lock()

        def build() -> tuple[list[State], bool]:
            with transaction.atomic(using=self.using):
                self._lock()
                found = self._load()
                if found is not None:  # another process cut it meanwhile
                    return found, False
                cuts = list(
                    self.source.listed_rows()
                    .order_by()
                    .annotate(sitemapx_rn=Window(RowNumber(), order_by=F(key).asc()))
                    .annotate(sitemapx_cut=Mod(F("sitemapx_rn") - 1, self.capacity))
                    .filter(sitemapx_cut=0, sitemapx_rn__gt=1)
                    .order_by(key)
                    .values_list(key, flat=True)
                )
                firsts = ["", *(self.codec.encode(cut) for cut in cuts)]
                old = self._lock_pages()
                # Pages of the new cut start above every change count the old ones
                # had: a count of an old range is never stored on a new page (_store).
                start = max((row[7] for row in old), default=-1) + 1
                if old:
                    self.table.filter(section=self.section_name).delete()
                    # Another fingerprint's pages were cached: none of them holds.
                    owed[:] = self._owe([section_generation(self.section)], batch)
                self.table.bulk_create(
                    model(
                        section=self.section_name,
                        number=number,
                        first=first,
                        rows=0,
                        lastmod=None,
                        generation="",
                        fingerprint=fingerprint,
                        changes=start,
                    )
                    for number, first in enumerate(firsts, 1)
                )
                built = [
                    State(number, first, 0, None, "", changes=start)
                    for number, first in enumerate(firsts, 1)
                ]
                return built, bool(old)

        try:
            nothing: tuple[list[State], bool] = ([], False)
            states, replaced = retrying(self.using, build, nothing, "cutting a section")
        except IntegrityError:  # a database without row locks: another process cut it
            return self._load() or []
        if replaced:
            self._settle(owed, batch)
        return states

    def _count(self, states: list[State], stale: list[State]) -> None:
        """Count each stale page again and store its summary.

        Neighbouring stale pages are counted together, one grouped pass over
        their rows per ``_PAGES_PER_PASS`` of them (a flushed cache: the whole
        section in a few queries); a lone page with one aggregate.
        """
        position = {state.number: index for index, state in enumerate(states)}
        runs: list[list[State]] = []
        for state in sorted(stale, key=lambda found: position[found.number]):
            run = runs[-1] if runs else None
            if (
                run is not None
                and position[state.number] == position[run[-1].number] + 1
                and len(run) < _PAGES_PER_PASS
            ):
                run.append(state)
            else:
                runs.append([state])
        changed: list[State] = []
        for run in runs:
            for state, summary in zip(run, self._summarize(states, run, position), strict=True):
                before = self._stored(state)
                _counted(state, summary)
                if self._stored(state) != before:
                    changed.append(state)
        self._store_counted(changed)

    def _store_counted(self, changed: list[State]) -> None:
        """Store the summaries of ``changed`` (``_store``): one page alone, many in batches."""
        if len(changed) == 1:
            retrying(self.using, lambda: self._store(changed[0]), None, "storing a page's count")
        elif changed:

            def store() -> None:
                # One transaction (one commit, not one per page), rows locked in
                # number order, as every writer of several pages locks them,
                # then one UPDATE per batch of pages (not one per page).
                ordered = sorted(changed, key=lambda found: found.number)
                batch = self._store_batch()
                with transaction.atomic(using=self.using):
                    list(
                        self.table.filter(
                            section=self.section_name, number__in=[s.number for s in ordered]
                        )
                        .select_for_update()
                        .order_by("number")
                        .values_list("pk")
                    )
                    for start in range(0, len(ordered), batch):
                        self._store_many(ordered[start : start + batch])

            retrying(self.using, store, None, "storing pages' counts")

    @staticmethod
    def _stored(state: State) -> tuple[Any, ...]:
        """What ``_store`` writes of a page."""
        return (state.rows, state.lastmod, state.undated, state.generation, state.counted)

    def _store(self, state: State) -> None:
        """Store a page's summary if its range is still the one it was counted over.

        Every split or merge raises ``changes`` on each page whose range it
        moves, in the same transaction: a page whose ``first`` and ``changes``
        are as loaded has the range the count read. Otherwise another process
        changed it meanwhile (and replaced its generation after): nothing is
        stored, and the page is counted again at the next request.
        """
        self.table.filter(
            section=self.section_name,
            number=state.number,
            first=state.first,
            changes=state.changes,
        ).update(
            rows=state.rows,
            lastmod=state.lastmod,
            undated=state.undated,
            generation=state.generation,
            counted=state.counted,
        )

    def _store_many(self, states: list[State]) -> None:
        """``_store`` of several pages in one ``UPDATE``, each on the same condition.

        Only the rows whose ``first`` and ``changes`` are as loaded match; each
        takes its own values through a ``CASE`` on its number. ``counted`` is
        the ``changes`` the row matched on. Written as SQL, not built with
        ``Case``/``When``, whose expressions cost Django more than the statement
        costs the database (docs/performance.md, "Counted in pieces, written as
        SQL"); the statement is the same.
        """
        connection = connections[self.using]
        if connection.vendor == "postgresql":
            self._store_many_joined(states)
            return
        quote = connection.ops.quote_name
        model = self.table.model
        column = {}
        for name in _STORED:
            field = model._meta.get_field(name)
            assert isinstance(field, models.Field) and field.column
            column[name] = quote(field.column)
        number = column["number"]
        params: list[Any] = []
        assignments = []
        # State's fields of the same names.
        for name in ("rows", "lastmod", "undated", "generation"):
            whens = []
            for state in states:
                whens.append("WHEN %s THEN %s")
                params.extend([state.number, getattr(state, name)])
            assignments.append(
                f"{column[name]} = CASE {number} {' '.join(whens)} ELSE {column[name]} END"
            )
        assignments.append(f"{column['counted']} = {column['changes']}")
        matching = []
        for state in states:
            matching.append(
                f"({number} = %s AND {column['first']} = %s AND {column['changes']} = %s)"
            )
            params.extend([state.number, state.first, state.changes])
        params.append(self.section_name)
        sql = (
            f"UPDATE {quote(model._meta.db_table)} SET {', '.join(assignments)} "
            f"WHERE ({' OR '.join(matching)}) AND {column['section']} = %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, params)

    def _store_many_joined(self, states: list[State]) -> None:
        """``_store_many`` on PostgreSQL: the pages' values as arrays, joined to their rows.

        The same rows match (number, ``first`` and ``changes`` as loaded) and take
        the same values; seven array parameters, not eleven per page, and no
        ``CASE`` of a branch per page to plan for each column: 2 to 4 ms for the
        184 pages of a spread run, against 8 to 11 (docs/performance.md,
        "Incremental export").
        """
        connection = connections[self.using]
        quote = connection.ops.quote_name
        model = self.table.model
        column, cast = {}, {}
        for name in _STORED:
            field = model._meta.get_field(name)
            assert isinstance(field, models.Field) and field.column
            column[name] = quote(field.column)
            cast[name] = field.cast_db_type(connection)
        # The pages' values, by the names of State's fields (and of the columns).
        joined = ("number", "first", "changes", "rows", "lastmod", "undated", "generation")
        arrays = ", ".join(f"%s::{cast[name]}[]" for name in joined)
        values = [[getattr(state, name) for state in states] for name in joined]
        assignments = [
            f"{column[name]} = sitemapx_pages.{name}"
            for name in ("rows", "lastmod", "undated", "generation")
        ]
        assignments.append(f"{column['counted']} = sitemapx_stored.{column['changes']}")
        matching = " AND ".join(
            f"sitemapx_stored.{column[name]} = sitemapx_pages.{name}"
            for name in ("number", "first", "changes")
        )
        sql = (
            f"UPDATE {quote(model._meta.db_table)} AS sitemapx_stored "
            f"SET {', '.join(assignments)} "
            f"FROM unnest({arrays}) AS sitemapx_pages({', '.join(joined)}) "
            f"WHERE sitemapx_stored.{column['section']} = %s AND {matching}"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [*values, self.section_name])

    def _store_batch(self) -> int:
        """Pages one ``UPDATE`` of ``_store_many`` stores, within the database's parameters.

        Eleven parameters a page. Django says 999 for SQLite, the oldest
        builds' limit; the library in use says its own.
        """
        connection = connections[self.using]
        most = connection.features.max_query_params
        if connection.vendor == "sqlite":
            import sqlite3

            connection.ensure_connection()
            most = connection.connection.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
        return max(1, min(_PAGES_PER_PASS, (most or 65535) // 12))

    def _summarize(
        self, states: list[State], run: list[State], position: dict[int, int]
    ) -> list[Summary]:
        """The summaries of ``run``, neighbouring pages of ``states``."""
        decode = self.codec.decode
        start = position[run[0].number]
        end = start + len(run)
        high = decode(states[end].first) if end < len(states) else None
        firsts = [decode(states[index].first) if index else None for index in range(start, end)]
        if len(run) > 1 and self.source._counts_pages_together():
            return summarize_pages(self.source, firsts, high)
        highs = [*firsts[1:], high]
        return [
            summarize(self.source, Bounds(low, top))
            for low, top in zip(firsts, highs, strict=True)
        ]

    def _bounds_from(self, firsts: list[tuple[int, str]], number: int) -> Bounds | None:
        decode = self.codec.decode
        for position, (found, first) in enumerate(firsts):
            if found == number:
                return Bounds(
                    decode(first) if position else None,
                    decode(firsts[position + 1][1]) if position + 1 < len(firsts) else None,
                )
        return None

    # -- keeping the rule -----------------------------------------------------------------

    def _rebalance(self, states: list[State], counted: set[int]) -> tuple[set[int], bool]:
        """Split or merge the counted pages that break the rule.

        Returns the pages whose range this process moved, and whether another
        process changed some of these pages first (each change runs only if the
        pages it reads are still as loaded, see ``_change``).
        """
        changed: set[int] = set()
        moved = False
        for position, state in enumerate(states):
            if state.number not in counted or state.number in changed:
                continue
            if self._keeps_rule(state, position, len(states)):
                continue
            if state.rows > self.capacity:
                pages = [state]
            else:
                neighbour = states[position - 1 if position > 0 else position + 1]
                if neighbour.number in changed:
                    continue
                if state.rows and _full_by_size(neighbour) and not _sizes_fit(state, neighbour):
                    continue  # sharing rows equally would empty a page full by its size
                pages = [state, neighbour]
            done = self._change(states, pages)
            if done is None:
                moved = True
            else:
                changed |= done
        return changed, moved

    def split_over(self, number: int, fitted: int, size: int, keep: int | None = None) -> bool:
        """Cut page ``number``, which went over ``PAGE_BYTES`` after ``fitted`` rows.

        ``size`` is the bytes those rows took; ``keep`` the rows measured to fit
        in ``SPLIT_SHARE`` of ``PAGE_BYTES`` (by default estimated from ``size``).
        The page keeps ``keep`` rows and the rows after them are cut again with
        the unmeasured pages that follow (``_recut``). Returns whether the page
        was cut (False: one row is over the limit alone, or another process
        changed the page first and it is counted again).
        """
        if keep is None:
            keep = math.floor(fitted * SPLIT_SHARE * PAGE_BYTES / max(size, 1))
        keep = min(keep, fitted)
        if keep < 1:
            return False
        return self._recut_from(number, keep, size / fitted, at_least=fitted + 1)

    def refill(self, number: int, rows: int, size: int) -> bool:
        """Give page ``number``, built with ``rows`` rows in ``size`` bytes, more rows.

        For a page built under ``MIN_FILL`` of both limits whose size was an
        estimate: it takes as many rows as ``SPLIT_SHARE`` of ``PAGE_BYTES``
        holds at the bytes per row measured (at most ``capacity``), from the
        unmeasured pages after it. Nothing changes unless that adds at least
        ``REFILL_GAIN`` of its rows or brings it to ``MIN_FILL`` (False): where a
        row is a large share of a page, 5% more rows may not fit in
        ``SPLIT_SHARE`` though one or two more would make it full enough.
        """
        if rows < 1 or size < 1:
            return False
        keep = min(self.capacity, math.floor(rows * SPLIT_SHARE * PAGE_BYTES / size))
        filled = keep * size / rows >= MIN_FILL * PAGE_BYTES or keep >= MIN_FILL * self.capacity
        if keep <= rows or (keep < rows * REFILL_GAIN and not filled):
            return False
        return self._recut_from(number, keep, size / rows)

    def _recut_from(self, number: int, keep: int, row_bytes: float, at_least: int = 0) -> bool:
        states = self._load()
        state = next((s for s in states or [] if s.number == number), None)
        if states is None or state is None:
            return False
        plan = _Recut(keep=keep, row_bytes=row_bytes, at_least=at_least)
        return bool(self._change(states, [state], recut=plan))

    def record_size(self, state: State, size: int) -> None:
        """Record page ``state``'s size as built, measured (one query, none if known).

        Stored only while the page's range is the one built (``first`` and
        ``changes`` as loaded).
        """
        if state.measured and state.bytes == size:
            return
        pages = self.table.filter(
            section=self.section_name,
            number=state.number,
            first=state.first,
            changes=state.changes,
        )
        retrying(
            self.using,
            lambda: pages.update(bytes=size, measured=True),
            0,
            "recording a page's size",
        )

    def _change(
        self,
        states: list[State],
        pages: list[State],
        *,
        recut: _Recut | None = None,
    ) -> set[int] | None:
        """Split ``pages[0]`` (alone) or merge it with ``pages[1]``, under the section's lock.

        With ``recut``, ``pages[0]`` is cut by its size instead (``_recut``).

        The pages are read again under the lock: if one of them no longer
        starts where it did or has changed since (another process split or
        merged it), nothing is done and None is returned. Otherwise the change
        commits with the generations it owes (``OwedGeneration``), which are
        then replaced. Returns the pages whose range moved.
        """
        self._ensure_lock()
        batch = secrets.token_hex(16)
        owed: list[str] = []

        def change() -> set[int] | None:
            with transaction.atomic(using=self.using):
                self._lock()
                current = self._states_from(self._lock_pages()) or []
                by_number = {state.number: state for state in current}
                for page in pages:
                    found = by_number.get(page.number)
                    if found is None or (found.first, found.changes) != (page.first, page.changes):
                        return None
                # The table as it is, with the counts this process just made.
                counts = {page.number: page for page in pages}
                fresh = [counts.get(state.number, state) for state in current]
                position = next(i for i, s in enumerate(fresh) if s.number == pages[0].number)
                if recut is not None:
                    done = self._recut(fresh, position, recut)
                elif len(pages) == 1:
                    done = self._split(fresh, position, last=position == len(fresh) - 1)
                else:
                    neighbour = next(i for i, s in enumerate(fresh) if s.number == pages[1].number)
                    if abs(neighbour - position) != 1:
                        return None
                    done = self._merge(fresh, position, neighbour)
                if done:
                    names = [page_generation(self.generations, number) for number in sorted(done)]
                    owed[:] = self._owe(names, batch)
                return done

        done = retrying(self.using, change, None, "splitting or merging pages")
        if done:
            self._settle(owed, batch)
        return done

    def _ensure_lock(self) -> None:
        """Create the section's lock row once (outside any transaction that locks it)."""
        from ..models import SectionLock

        locks = SectionLock.objects.using(self.using)
        if not locks.filter(section=self.section_name).exists():
            try:
                with transaction.atomic(using=self.using):
                    locks.create(section=self.section_name)
            except IntegrityError:  # another process created it meanwhile
                pass

    def _lock(self) -> None:
        """Inside a transaction: wait for the section's lock, and hold it until commit.

        SQLite has no row locks; it runs one writing transaction at a time.
        """
        from ..models import SectionLock

        locks = SectionLock.objects.using(self.using)
        list(locks.select_for_update().filter(section=self.section_name).values_list("pk"))

    def _lock_pages(self) -> list[tuple[Any, ...]]:
        """Inside a transaction: lock the section's page rows in number order; the rows.

        Every transaction that writes several page rows locks them in number
        order, so two of them never wait for each other in a cycle.
        """
        return list(
            self.table.filter(section=self.section_name)
            .select_for_update()
            .order_by("number")
            .values_list(*_COLUMNS)
        )

    def _owe(self, names: list[str], batch: str) -> list[str]:
        """Record, in the current transaction, generations to replace once it commits."""
        from ..models import OwedGeneration

        owed = [*names, index_generation()]
        if app_settings.CACHE_ALIAS is not None:
            OwedGeneration.objects.using(self.using).bulk_create(
                OwedGeneration(name=name, batch=batch) for name in owed
            )
        return owed

    def _settle(self, names: list[str], batch: str) -> None:
        """Replace the generations a change owes once it is committed, then forget them.

        Inside the caller's transaction (``ATOMIC_REQUESTS``) they are replaced
        at once too, which covers this process, as a save inside one does
        (``handlers.row_changed``).
        """
        from ..models import OwedGeneration

        if app_settings.CACHE_ALIAS is None:
            return
        if connections[self.using].in_atomic_block:
            SitemapCache().replace(names)

        def committed() -> None:
            if SitemapCache().replace(names):
                OwedGeneration.objects.using(self.using).filter(batch=batch).delete()

        transaction.on_commit(committed, using=self.using)

    def _split(self, states: list[State], position: int, *, last: bool) -> set[int]:
        """Cut page ``position``, over capacity, into parts by the rule."""
        state = states[position]
        bounds = self._bounds_from([(s.number, s.first) for s in states], state.number)
        assert bounds is not None
        if last:
            step = self.capacity
        else:
            step = math.ceil(state.rows / math.ceil(state.rows / self.capacity))
        cuts = self._cuts(bounds, step)
        if not cuts:
            return set()
        # Under the section's lock: no other process takes a number meanwhile.
        next_number = (
            self.table.filter(section=self.section_name).aggregate(n=Max("number"))["n"] or 0
        ) + 1
        model = self.table.model
        created = [
            model(
                section=self.section_name,
                number=next_number + offset,
                first=self.codec.encode(cut),
                fingerprint=self.fingerprint,
            )
            for offset, cut in enumerate(cuts)
        ]
        self.table.bulk_create(created)
        self._touch({state.number})
        return {state.number, *(page.number for page in created)}

    def _recut(self, states: list[State], position: int, recut: _Recut) -> set[int]:
        """Lay out again page ``position`` and the unmeasured pages after it, by size.

        The page and the pages after it not built since their range last moved
        (at most ``MAX_RUN``) are cut into pages of ``recut.keep`` rows
        (``plan_pieces``); what is left goes to the measured page after them
        when it has room, by rows and by its measured bytes. Pages keep their
        numbers where they can; each part's size is estimated from
        ``recut.row_bytes`` until it is built. Returns the pages whose range moved.
        """
        state = states[position]
        end = position + 1
        while end < len(states) and not states[end].measured and end - position <= MAX_RUN:
            end += 1
        run = states[position:end]
        after = states[end] if end < len(states) else None
        total = max(state.rows, recut.at_least) + sum(page.rows for page in run[1:])
        room: int | None = None
        if after is not None:
            room = 0
            if after.measured and after.bytes is not None:
                by_bytes = (SPLIT_SHARE * PAGE_BYTES - after.bytes) / recut.row_bytes
                room = max(0, math.floor(min(self.capacity - after.rows, by_bytes)))
        pieces, given = plan_pieces(total, recut.keep, room)
        firsts = [(s.number, s.first) for s in states]
        low = self._bounds_from(firsts, state.number)
        assert low is not None
        high = self.codec.decode(after.first) if after is not None else None
        keys = self._keys_after(Bounds(low.low, high), pieces if given else pieces[:-1])
        moved_to = None
        if given and len(keys) == len(pieces):
            moved_to = self.codec.encode(keys.pop())
        new_firsts = [state.first, *(self.codec.encode(key) for key in keys)]
        if new_firsts == [page.first for page in run] and moved_to is None:
            return set()
        sizes = [round(rows * recut.row_bytes) for rows in pieces]
        pages = self.table.filter(section=self.section_name)
        kept, gone = run[: len(new_firsts)], run[len(new_firsts) :]
        pages.filter(number__in=[page.number for page in gone]).delete()
        # (section, first) is unique: pages whose first moves back are moved in key
        # order, then those whose first moves on in reverse, so no two meet.
        back = [index for index, page in enumerate(kept) if new_firsts[index] < page.first]
        on = [index for index, page in enumerate(kept) if new_firsts[index] > page.first]
        for index in [*back, *reversed(on)]:
            pages.filter(number=kept[index].number).update(first=new_firsts[index])
        for index, page in enumerate(kept):
            pages.filter(number=page.number).update(bytes=sizes[index])
        next_number = (pages.aggregate(n=Max("number"))["n"] or 0) + 1
        start = max(page.changes for page in states) + 1
        created = [
            self.table.model(
                section=self.section_name,
                number=next_number + offset,
                first=first,
                fingerprint=self.fingerprint,
                bytes=sizes[len(kept) + offset],
                changes=start,
            )
            for offset, first in enumerate(new_firsts[len(kept) :])
        ]
        self.table.bulk_create(created)
        touched = {page.number for page in kept}
        if moved_to is not None and after is not None:
            pages.filter(number=after.number).update(
                first=moved_to, bytes=(after.bytes or 0) + round(given * recut.row_bytes)
            )
            touched.add(after.number)
        self._touch(touched)
        return touched | {page.number for page in gone} | {page.number for page in created}

    def _keys_after(self, bounds: Bounds, steps: list[int]) -> list[Any]:
        """The keys that start each next part within ``bounds``, the parts of ``steps`` rows.

        One query per part, an OFFSET bounded by the part's rows; fewer keys
        when the rows run out first.
        """
        key = self.source.key_name
        keys: list[Any] = []
        low = bounds.low
        for step in steps:
            part = in_range(self.source, self.source.listed_rows(), Bounds(low, bounds.high))
            found = list(part.order_by(key).values_list(key, flat=True)[step : step + 1])
            if not found:
                break
            keys.append(found[0])
            low = found[0]
        return keys

    def _cuts(self, bounds: Bounds, step: int) -> list[Any]:
        """The keys that start each next part of ``step`` rows within ``bounds``.

        Each cut is the row ``step`` rows after the previous one: an OFFSET
        bounded by the page size, never by the section's.
        """
        key = self.source.key_name
        cuts: list[Any] = []
        low = bounds.low
        while True:
            part = in_range(self.source, self.source.listed_rows(), Bounds(low, bounds.high))
            found = list(part.order_by(key).values_list(key, flat=True)[step : step + 1])
            if not found:
                return cuts
            cuts.append(found[0])
            low = found[0]

    def _merge(self, states: list[State], position: int, neighbour: int) -> set[int]:
        state, other = states[position], states[neighbour]
        together = state.rows + other.rows
        low_position = min(position, neighbour)
        low_state, high_state = states[low_position], states[low_position + 1]
        known = [page.bytes for page in (state, other) if page.bytes is not None]
        size = sum(known) if known else None
        if (together <= self.capacity and _sizes_fit(state, other)) or state.rows == 0:
            # The small page goes; its neighbour takes its range.
            self.table.filter(section=self.section_name, number=state.number).delete()
            update: dict[str, Any] = {"bytes": size}
            if neighbour > position:  # the next page starts where this one did
                update["first"] = state.first
            self.table.filter(section=self.section_name, number=other.number).update(**update)
            self._touch({other.number})
            return {state.number, other.number}
        # Share the rows of both equally: move the boundary between them.
        firsts = [(s.number, s.first) for s in states]
        low_bounds = self._bounds_from(firsts, low_state.number)
        high_bounds = self._bounds_from(firsts, high_state.number)
        assert low_bounds is not None and high_bounds is not None
        key = self.source.key_name
        both = in_range(
            self.source, self.source.listed_rows(), Bounds(low_bounds.low, high_bounds.high)
        )
        found = list(
            both.order_by(key).values_list(key, flat=True)[together // 2 : together // 2 + 1]
        )
        if not found:
            return set()
        self.table.filter(section=self.section_name, number=high_state.number).update(
            first=self.codec.encode(found[0])
        )
        if size is not None:  # each has about half the rows: about half the bytes
            self.table.filter(
                section=self.section_name, number__in=[state.number, other.number]
            ).update(bytes=size // 2)
        self._touch({state.number, other.number})
        return {state.number, other.number}

    def _touch(self, numbers: set[int]) -> None:
        """Mark pages whose key range moved as changed: each is counted again.

        A summary counted before is then never stored over the new range
        (``_store``), and a size measured before is no longer a measure of it.
        """
        self.table.filter(section=self.section_name, number__in=sorted(numbers)).update(
            changes=F("changes") + 1, measured=False
        )
