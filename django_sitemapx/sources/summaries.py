"""A model page's summary in SQL: its row count, greatest lastmod and undated rows.

One aggregate per page, or one grouped pass over consecutive pages
(:func:`summarize_pages`). The page table (``sources.pages``) decides which
pages to count; the pages' bounds are its.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db import models
from django.db.models import Case, Count, F, Func, Max, Value, When

from ..values import lastmod_text, lastmod_text_or_none
from .lastmods import LastmodInRange, W3CDatetime, is_postgresql, lastmod_in_sql

if TYPE_CHECKING:
    from .querysets import ModelSource

# The annotation naming a row's page in a grouped count (``summarize_pages``).
_PAGE_ALIAS = "sitemapx_page"


@dataclass(frozen=True)
class Bounds:
    """The key range of one page: ``low <= key < high`` (None: no bound)."""

    low: Any
    high: Any


def in_range(
    source: ModelSource, rows: models.QuerySet[Any], bounds: Bounds
) -> models.QuerySet[Any]:
    """``rows`` whose key lies in ``bounds`` (``low <= key < high``)."""
    return rows.filter(**_range_filters(source, bounds))


def summarize(source: ModelSource, bounds: Bounds) -> tuple[int, str | None, int]:
    """Row count, greatest lastmod (W3C text) and undated rows in ``bounds``: one aggregate."""
    rows = in_range(source, source.listed_rows(), bounds)
    latest, aggregates = _summary_aggregates(source, rows.db)
    return _summary_of(source, rows.order_by().aggregate(**aggregates), latest)


def summarize_pages(
    source: ModelSource, firsts: Sequence[Any], high: Any
) -> list[tuple[int, str | None, int]]:
    """:meth:`summarize` of consecutive pages, in one grouped pass over their rows.

    Page *i* holds the keys from ``firsts[i]`` (None: no lower bound) below
    ``firsts[i + 1]``, the last one below ``high`` (None: no upper bound).
    Each row's page is found by a binary search over the firsts in SQL (a
    nested ``CASE``, a dozen comparisons for hundreds of pages); the rows
    are read once, whatever the number of pages, instead of once per page.
    """
    if len(firsts) < 2:
        return [summarize(source, Bounds(firsts[0] if firsts else None, high))]
    rows = in_range(source, source.listed_rows(), Bounds(firsts[0], high))
    if firsts[0] is None and high is None:
        # As per page: a row whose key is NULL lies in no page's range.
        rows = rows.filter(**{f"{source.key_name}__isnull": False})
    latest, aggregates = _summary_aggregates(source, rows.db)
    found = {
        row[_PAGE_ALIAS]: row
        for row in rows.order_by()
        .annotate(**{_PAGE_ALIAS: _page_of_key(source.key_name, firsts, 0, len(firsts), rows.db)})
        .values(_PAGE_ALIAS)
        .annotate(**aggregates)
        .order_by()
    }
    return [
        _summary_of(source, found.get(index, {"rows": 0}), latest) for index in range(len(firsts))
    ]


# Key ranges summarized in one grouped query (``summarize_ranges``): two parameters
# each, and one more where a nested ``CASE`` finds a row's range.
_RANGES_PER_QUERY = 200


def summarize_ranges(
    source: ModelSource, ranges: Sequence[Bounds]
) -> list[tuple[int, str | None, int]]:
    """:func:`summarize` of each of ``ranges`` (disjoint, in key order).

    One grouped query per ``_RANGES_PER_QUERY`` ranges over their rows alone
    (not the rows between them): the export sums up a page's changed blocks
    of rows so (``export.splice.settle``), not the whole page. A row's range
    is found as :func:`summarize_pages` finds its page.
    """
    found: list[tuple[int, str | None, int]] = []
    for start in range(0, len(ranges), _RANGES_PER_QUERY):
        part = ranges[start : start + _RANGES_PER_QUERY]
        if len(part) == 1:
            found.append(summarize(source, part[0]))
            continue
        matching = models.Q()
        for bounds in part:
            matching |= models.Q(**_range_filters(source, bounds))
        rows = source.listed_rows().filter(matching)
        lows = [bounds.low for bounds in part]
        latest, aggregates = _summary_aggregates(source, rows.db)
        page = _page_of_key(source.key_name, lows, 0, len(lows), rows.db)
        grouped = {
            row[_PAGE_ALIAS]: row
            for row in rows.order_by()
            .annotate(**{_PAGE_ALIAS: page})
            .values(_PAGE_ALIAS)
            .annotate(**aggregates)
            .order_by()
        }
        found.extend(
            _summary_of(source, grouped.get(index, {"rows": 0}), latest)
            for index in range(len(part))
        )
    return found


def told_by_rows(source: ModelSource, using: str) -> bool:
    """Whether a summary of ``source``'s rows can be told from the rows as the export reads them.

    So when the lastmod is no column (the summary's is the source's constant),
    or a column that is never NULL whose W3C text the database writes
    (``lastmod_in_sql``): the greatest of the rows' texts is then the text of
    their greatest lastmod, as :func:`summarize` reads it (fixed-width UTC
    text sorts as the moments do). See :func:`summary_of_rows`.
    """
    column = source.lastmod_column
    if column is None:
        return True
    assert source.model is not None
    return lastmod_in_sql(source, using) and not source.model._meta.get_field(column).null


def summary_of_rows(
    source: ModelSource, rows: int, latest: str | None
) -> tuple[int, str | None, int]:
    """What :func:`summarize` reads of ``rows`` rows whose greatest lastmod text is ``latest``.

    Only for a source :func:`told_by_rows` says so of.
    """
    if source.lastmod_column is None:
        return _summary_of(source, {"rows": rows}, None)
    return rows, lastmod_text_or_none(latest), 0


def _range_filters(source: ModelSource, bounds: Bounds) -> dict[str, Any]:
    filters: dict[str, Any] = {}
    if bounds.low is not None:
        filters[f"{source.key_name}__gte"] = bounds.low
    if bounds.high is not None:
        filters[f"{source.key_name}__lt"] = bounds.high
    return filters


def _summary_aggregates(
    source: ModelSource, using: str
) -> tuple[Max | W3CDatetime | None, dict[str, Any]]:
    latest = _latest(source, using)
    aggregates: dict[str, Any] = {"rows": Count("pk")}
    if latest is not None:
        aggregates["latest"] = latest
    dated = _dated(source)
    if dated is not None:
        aggregates["dated"] = dated
    return latest, aggregates


def _summary_of(
    source: ModelSource, found: Mapping[str, Any], latest: Max | W3CDatetime | None
) -> tuple[int, str | None, int]:
    """Row count, lastmod text and undated rows from an aggregate's ``found`` values."""
    rows: int = found["rows"]
    if latest is None:  # no lastmod column: the source's constant, if any
        text = None if callable(source.lastmod) else lastmod_text(source.lastmod)
        return rows, text, 0 if text is not None else rows
    # Out of the lastmod range: the page has no lastmod.
    return rows, lastmod_text_or_none(found.get("latest")), rows - found.get("dated", rows)


def _latest(source: ModelSource, using: str) -> Max | W3CDatetime | None:
    """The aggregate of a page's greatest lastmod, or None when it is not a column."""
    column = source.lastmod_column
    if column is None:
        return None
    if lastmod_in_sql(source, using):
        # The same text the pages carry, not a re-formatting of it.
        return W3CDatetime(Max(column))
    return Max(LastmodInRange(F(column)))


def _dated(source: ModelSource) -> Count | None:
    """The aggregate counting a page's rows that have a lastmod; None if all have one."""
    column = source.lastmod_column
    if column is None:
        return None
    assert source.model is not None
    return Count(column) if source.model._meta.get_field(column).null else None


class _WidthBucket(Func):
    """PostgreSQL's ``width_bucket(key, thresholds)``: the index of the page holding the key."""

    function = "width_bucket"
    output_field = models.IntegerField()


def _page_of_key(key: str, firsts: Sequence[Any], low: int, high: int, using: str) -> Any:
    """The index of the page (of ``firsts[low:high]``) holding ``key``: a binary search in SQL.

    PostgreSQL has one built in (``width_bucket`` over an array of the firsts);
    elsewhere a nested ``CASE``, a dozen comparisons for hundreds of pages.
    """
    if is_postgresql(using) and low == 0 and high == len(firsts):
        return _WidthBucket(F(key), Value(list(firsts[1:])))
    if high - low == 1:
        return Value(low)
    middle = (low + high) // 2
    return Case(
        When(**{f"{key}__lt": firsts[middle]}, then=_page_of_key(key, firsts, low, middle, using)),
        default=_page_of_key(key, firsts, middle, high, using),
    )
