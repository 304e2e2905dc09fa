"""Dense, stable pages of a model section on any unique, orderable key.

A model section's pages are ranges of its key, kept in the ``PageState`` table:
page *n* holds the rows whose key is at least its first key and below the next
page's first key. Where page state lives, and why (see docs/guide/pages.md):

- **in the database, not the cache**: a cache flush must never move a row to
  another page (which would shift every page after it); the table survives it;
- each page's **summary** (row count, greatest lastmod) is kept with what says
  whether it still holds: the index counts again only the pages changed since.
  With a cache, that is the digest of the cache generations it was computed
  under (a saved row replaces its page's generation, ``invalidate()`` a
  section's or everyone's); a flushed cache gives every page a new generation:
  every page is counted again, the pages themselves stay put. With no cache
  configured, it is the page's change count in the table (a committed save or
  delete marks its page, ``invalidate()`` a section's or every page, see
  ``mark_changed``): the save pays one ``UPDATE`` after commit, which a cached
  site does not.

The rule, with ``capacity = source.rows_per_page()``: every page but the last
holds at least ``ceil(capacity / 2)`` rows and no page more than ``capacity``.
When a count breaks it, only that page and at most one neighbour change:

- a page over capacity splits: the last page at ``capacity`` rows (appends fill
  pages), any other page in equal parts;
- a page under half (not the last) gives its range to its previous neighbour
  (the next one for the first page) when both fit in one page, else the two
  share their rows equally; an empty page always goes.

New pages take new numbers, so no other page is renumbered. Serving a page is
``WHERE key >= first AND key < next_first ORDER BY key``: the last page costs
what the first costs. The first count of a section cuts full pages with one
``ROW_NUMBER()`` query.

Keys are stored encoded as text that the database orders as it orders the
keys: integers as 20 zero-padded digits (64-bit keys included), UUIDs as hex
(in MariaDB's own UUID order on MariaDB), strings as they are (up to 255
characters). Finding the page of a saved row is then one indexed query.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import IntegrityError, models, router, transaction
from django.db.models import F, Max, Window
from django.db.models.functions import Mod, RowNumber

from ..conf import app_settings
from ..generations import (
    SitemapCache,
    global_generation,
    index_generation,
    page_generation,
    section_generation,
)
from .codecs import codec_for, key_model_field
from .summaries import Bounds, in_range, summarize, summarize_pages

if TYPE_CHECKING:
    from .querysets import ModelSource

# A page's generation digest after a count with no cache.
UNCACHED = "-"
# Neighbouring stale pages counted in one grouped query (its parameters: one per page).
_PAGES_PER_PASS = 500
# Rebalancing converges in one pass; concurrent writers may need another.
_MAX_PASSES = 4


def _query_shape(source: ModelSource) -> tuple[str, str]:
    """The SQL (and parameters) of the keys ``source`` lists: what its pages depend on."""
    sql, params = source.listed_rows().order_by().values("pk").query.sql_with_params()
    return sql, repr(params)


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
    key = f"{source.section}@{origin.host}"
    if len(key) > 100:
        key = f"{source.section[:50]}@{hashlib.sha256(origin.host.encode()).hexdigest()[:32]}"
    return key


def has_host_tables(section: str, using: str) -> bool:
    """Whether some host of ``section`` has pages of its own (see ``table_section``)."""
    from ..models import PageState

    return PageState.objects.using(using).filter(section__startswith=f"{section}@").exists()


def mark_changed(section: str | None = None, page: int | None = None) -> None:
    """Mark pages changed in the page table: the next index counts them again.

    Every page of every section with no argument; every page of ``section``
    (its hosts' pages too) without ``page``; else page ``page`` of the
    section's shared pages. Called once a change is committed, when no cache
    is configured (see ``invalidation.invalidate``): in every process, the
    index then counts only what changed.
    """
    from ..models import PageState, table_exists

    using = router.db_for_write(PageState)
    if not table_exists(PageState, using):
        return
    pages = PageState.objects.using(using)
    if section is not None:
        if page is None:
            pages = pages.filter(
                models.Q(section=section) | models.Q(section__startswith=f"{section}@")
            )
        else:
            pages = pages.filter(section=section, number=page)
    pages.update(changes=F("changes") + 1)


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


class PageTable:
    """The pages of one model section, kept fresh: counted again only where they changed."""

    def __init__(self, source: ModelSource) -> None:
        from ..models import PageState

        self.source = source
        self.section = source.section
        # The table's rows: the section's, or one host's when the rows depend on the host.
        self.section_name = table_section(
            source, self._shape if source.origin is not None else None
        )
        self.capacity = source.rows_per_page()
        self.minimum = math.ceil(self.capacity / 2)
        self.using = router.db_for_write(PageState)
        self.table = PageState.objects.using(self.using)
        # No cache configured: the page table's change counts say what changed.
        self.uncached = app_settings.CACHE_ALIAS is None
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
            try:
                states = self._build()
            except IntegrityError:  # another process laid the section out meanwhile
                states = self._load() or []
        counted: set[int] = set()
        targets = numbers
        for _ in range(_MAX_PASSES):
            digests = self._digests([state.number for state in states])
            stale = [
                state
                for state in states
                if (targets is None or state.number in targets)
                and state.number not in counted
                and self._is_stale(state, digests, everything=numbers is None)
            ]
            if stale:
                self._count(states, stale, digests)
                counted.update(state.number for state in stale)
            try:
                changed = self._rebalance(states, counted)
            except IntegrityError:
                # Another process split or merged the same pages meanwhile: start
                # again from what it stored.
                states = self._load() or []
                counted.clear()
                continue
            if not changed:
                break
            states = self._load() or []
            counted -= changed
            targets = changed
            self._replace(changed)
        return states

    def _is_stale(self, state: State, digests: dict[int, str] | None, *, everything: bool) -> bool:
        if digests is not None:
            return state.generation != digests[state.number]
        if self.uncached:
            # Counted with no cache, and not marked changed since. A summary
            # computed under a cache is counted again once (no mark was kept).
            return state.counted != state.changes or state.generation != UNCACHED
        # A cache configured but failing: nothing says which page changed, so
        # the index counts every page; a page alone keeps its last count.
        return everything or state.counted is None

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
        rows = list(
            self.table.filter(section=self.section_name)
            .order_by("first")
            .values_list(
                "number",
                "first",
                "rows",
                "lastmod",
                "generation",
                "fingerprint",
                "undated",
                "changes",
                "counted",
            )
        )
        if not rows or rows[0][5] != self.fingerprint:
            return None
        if any(row[5] != rows[0][5] for row in rows):
            return None
        return [State(*row[:5], undated=row[6], changes=row[7], counted=row[8]) for row in rows]

    def _build(self) -> list[State]:
        """Cut the section into full pages: one ``ROW_NUMBER()`` query over the keys."""
        key = self.source.key_name
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
        fingerprint = self.fingerprint
        model = self.table.model
        with transaction.atomic(using=self.using):
            replaced, _ = self.table.filter(section=self.section_name).delete()
            self.table.bulk_create(
                model(
                    section=self.section_name,
                    number=number,
                    first=first,
                    rows=0,
                    lastmod=None,
                    generation="",
                    fingerprint=fingerprint,
                )
                for number, first in enumerate(firsts, 1)
            )
        if replaced:
            # Another fingerprint's pages were cached: none of them holds.
            self._replace_section()
        return [State(number, first, 0, None, "") for number, first in enumerate(firsts, 1)]

    def _count(
        self, states: list[State], stale: list[State], digests: dict[int, str] | None
    ) -> None:
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
                state.rows, state.lastmod, state.undated = summary
                state.generation = digests[state.number] if digests is not None else UNCACHED
                # The count read the rows after ``changes`` was loaded: a change
                # committed meanwhile raised it, and the page stays stale.
                state.counted = state.changes
                if self._stored(state) != before:
                    changed.append(state)
        if len(changed) == 1:
            self._store(changed[0])
        elif changed:
            # One transaction (one commit, not one per page), rows locked in number order.
            with transaction.atomic(using=self.using):
                for state in sorted(changed, key=lambda found: found.number):
                    self._store(state)

    @staticmethod
    def _stored(state: State) -> tuple[Any, ...]:
        """What ``_store`` writes of a page."""
        return (state.rows, state.lastmod, state.undated, state.generation, state.counted)

    def _store(self, state: State) -> None:
        self.table.filter(section=self.section_name, number=state.number).update(
            rows=state.rows,
            lastmod=state.lastmod,
            undated=state.undated,
            generation=state.generation,
            counted=state.counted,
        )

    def _summarize(
        self, states: list[State], run: list[State], position: dict[int, int]
    ) -> list[tuple[int, str | None, int]]:
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

    def _rebalance(self, states: list[State], counted: set[int]) -> set[int]:
        """Split or merge the counted pages that break the rule; the pages whose range moved."""
        changed: set[int] = set()
        last = len(states) - 1
        for position, state in enumerate(states):
            if state.number not in counted or state.number in changed:
                continue
            if state.rows > self.capacity:
                changed |= self._split(states, position, last=position == last)
            elif len(states) > 1 and (
                state.rows == 0 or (state.rows < self.minimum and position != last)
            ):
                neighbour = position - 1 if position > 0 else position + 1
                if states[neighbour].number in changed:
                    continue
                changed |= self._merge(states, position, neighbour)
        return changed

    def _split(self, states: list[State], position: int, *, last: bool) -> set[int]:
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
        next_number = (
            self.table.filter(section=self.section_name).aggregate(n=Max("number"))["n"] or 0
        ) + 1
        model = self.table.model
        created = []
        with transaction.atomic(using=self.using):
            for offset, cut in enumerate(cuts):
                created.append(
                    model(
                        section=self.section_name,
                        number=next_number + offset,
                        first=self.codec.encode(cut),
                        fingerprint=self.fingerprint,
                    )
                )
            self.table.bulk_create(created)
            self._touch({state.number})
        return {state.number, *(page.number for page in created)}

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
        with transaction.atomic(using=self.using):
            if together <= self.capacity or state.rows == 0:
                # The small page goes; its neighbour takes its range.
                self.table.filter(section=self.section_name, number=state.number).delete()
                if neighbour > position:  # the next page starts where this one did
                    self.table.filter(section=self.section_name, number=other.number).update(
                        first=state.first
                    )
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
            self._touch({state.number, other.number})
        return {state.number, other.number}

    def _touch(self, numbers: set[int]) -> None:
        """Mark pages whose key range moved as changed: each is counted again."""
        self.table.filter(section=self.section_name, number__in=sorted(numbers)).update(
            changes=F("changes") + 1
        )

    # -- generations ----------------------------------------------------------------------

    def _digests(self, numbers: list[int]) -> dict[int, str] | None:
        """Each page's generation digest now; None when there is no cache to say."""
        names = [global_generation(), section_generation(self.section)]
        names += [page_generation(self.section, number) for number in numbers]
        tokens = SitemapCache().tokens(names)
        if tokens is None:
            return None
        whole, section, *pages = tokens
        return {
            number: hashlib.sha256(f"{whole}|{section}|{token}".encode()).hexdigest()[:40]
            for number, token in zip(numbers, pages, strict=True)
        }

    def _replace(self, numbers: set[int]) -> None:
        names = [page_generation(self.section, number) for number in sorted(numbers)]
        SitemapCache().replace([*names, index_generation()])

    def _replace_section(self) -> None:
        SitemapCache().replace([section_generation(self.section), index_generation()])
