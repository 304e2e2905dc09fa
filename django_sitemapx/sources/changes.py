"""The log of changed rows: which keys of which section changed since an export read it.

The page table says which pages changed (``PageState.changes``); this log says
which rows, so that an incremental export remakes only the blocks of a page
that hold them (``export.splice``). Each mark of the page table writes one
``ChangedKey`` row first (``sources.pages.mark_changed``), after the change
committed: one ``INSERT``, no lock on a row another save takes.

Why it can be trusted: an export reads :func:`change_cursor` (the greatest row
ID) before it reads any page's rows. A change committed after a page was read
is logged after that, under a greater ID, which the next export reads; a log
row with a smaller ID committed late is of a change committed before its ID
was taken, so before the page was read. An export also remakes a page whole
when the log cannot say what changed (:meth:`ChangeLog.keys_in`): a mark
with no key (``invalidate()``, an override, a related row), a section's or
every section's, or rows pruned (:func:`prune_changes`) that the export had
not read. Bulk changes that send no signal are logged by nothing, as the page
table is told of them by nothing: call ``invalidate()`` after them.

The log is written only with ``SITEMAPX_EXPORT_SPLICE`` on. A process with it
off marks the page table and logs nothing: the export then finds a page marked
more times since its blocks were recorded (``Blocks.changes``) than the log has
rows for it (:meth:`ChangeLog.marks`), and makes it whole.
"""

from __future__ import annotations

import bisect
import datetime
import time
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, router
from django.utils import timezone

from ..conf import app_settings

# Log rows older than this are pruned at the end of an export: an export reading
# the log from before them makes its changed pages whole.
KEEP = datetime.timedelta(days=7)
# An export reads at most this many log rows; past it, every changed page is made whole.
MAX_ROWS = 200_000
# ``ChangedKey.section`` of a row about every section.
EVERY_SECTION = ""


# A process prunes the log at most this often (seconds), exports or not: a site
# that never exports keeps a week of it.
PRUNE_INTERVAL = 3600.0
_next_prune = 0.0


def log_change(section: str | None, page: int | None, key: str | None, using: str) -> None:
    """Log a committed change: ``key`` of page ``page`` of ``section`` (None: any).

    Nothing with ``SITEMAPX_EXPORT_SPLICE`` off: no query at all.
    """
    global _next_prune
    if not app_settings.EXPORT_SPLICE:
        return
    from ..models import ChangedKey, table_exists

    if not table_exists(ChangedKey, using):
        return
    ChangedKey.objects.using(using).create(
        section=EVERY_SECTION if section is None else section,
        page=page if section is not None else None,
        key=key if page is not None else None,
    )
    now = time.monotonic()
    if now >= _next_prune:
        _next_prune = now + PRUNE_INTERVAL
        prune_changes()


def change_cursor() -> int | None:
    """Where the log ends now (read before any page is); None without the log."""
    from ..models import ChangedKey, table_exists

    using = router.db_for_read(ChangedKey)
    if not table_exists(ChangedKey, using):
        return None
    last = ChangedKey.objects.using(using).order_by("-id").values_list("id", flat=True).first()
    return 0 if last is None else last


@dataclass
class ChangeLog:
    """What the log says changed in each section since its export's cursor."""

    # The sections it can speak of (those with a cursor), and what changed in each.
    sections: set[str] = field(default_factory=set)
    whole_sections: set[str] = field(default_factory=set)
    whole_pages: set[tuple[str, int]] = field(default_factory=set)
    # Each section's changed keys (encoded), sorted.
    keys: dict[str, list[str]] = field(default_factory=dict)
    # How many rows name a key of each page: (section, page) to a count.
    counts: dict[tuple[str, int], int] = field(default_factory=dict)

    def marks(self, section: str, page: int) -> int:
        """How many changes of single rows of page ``page`` of ``section`` the log holds.

        Each is one mark of the page in the page table: a page marked more
        times since its blocks were recorded had changes the log does not name
        (a process with ``SITEMAPX_EXPORT_SPLICE`` off saved a row).
        """
        return self.counts.get((section, page), 0)

    def keys_in(self, section: str, page: int, low: str, high: str) -> list[str] | None:
        """The changed keys of page ``page`` of ``section`` (``low <= key < high``).

        ``high`` ``""``: no upper bound. None when the page may have changed
        elsewhere than at logged keys: it is made whole.
        """
        if section not in self.sections or section in self.whole_sections:
            return None
        if (section, page) in self.whole_pages:
            return None
        keys = self.keys.get(section, [])
        start = bisect.bisect_left(keys, low)
        end = len(keys) if not high else bisect.bisect_left(keys, high)
        return keys[start:end]

    def as_json(self) -> dict[str, object]:
        return {
            "sections": sorted(self.sections),
            "whole_sections": sorted(self.whole_sections),
            "whole_pages": sorted(self.whole_pages),
            "keys": self.keys,
            "counts": [[section, page, count] for (section, page), count in self.counts.items()],
        }

    @classmethod
    def from_json(cls, fields: dict[str, Any]) -> ChangeLog:
        return cls(
            set(fields["sections"]),
            set(fields["whole_sections"]),
            {(section, page) for section, page in fields["whole_pages"]},
            dict(fields["keys"]),
            {(section, page): count for section, page, count in fields.get("counts", [])},
        )


def changes_since(cursors: dict[str, int]) -> ChangeLog:
    """The changes logged after each section's cursor (:func:`change_cursor` of its export)."""
    from ..models import ChangedKey, table_exists

    using = router.db_for_read(ChangedKey)
    if not cursors or not table_exists(ChangedKey, using):
        return ChangeLog()
    logged = ChangedKey.objects.using(using)
    # Up to where the log ends now, read first: closed at both ends, the range is read on
    # the primary key whatever PostgreSQL's statistics say. Open at the top, it was planned
    # as a scan of the whole log (a week of saves) when they trailed the log's inserts.
    last = logged.order_by("-id").values_list("id", flat=True).first()
    low = min(cursors.values())
    rows = logged.filter(id__gt=low, id__lte=low if last is None else last).order_by()
    found = list(rows.values_list("id", "section", "page", "key")[: MAX_ROWS + 1])
    if len(found) > MAX_ROWS:
        return ChangeLog()
    log = ChangeLog(sections=set(cursors))
    keys: dict[str, set[str]] = {}
    for number, section, page, key in found:
        if section == EVERY_SECTION:
            # invalidate(), or the log pruned up to ``key``: rows a section's export had not read.
            last = number if key is None else int(key)
            log.whole_sections.update(name for name, cursor in cursors.items() if cursor < last)
            continue
        # A host's own pages (``section@host``), numbered their own way: the section is whole.
        name = section.partition("@")[0]
        if name not in cursors or number <= cursors[name]:
            continue
        if "@" in section or page is None:
            log.whole_sections.add(name)
        elif key is None:
            log.whole_pages.add((name, page))
        else:
            keys.setdefault(name, set()).add(key)
            log.counts[name, page] = log.counts.get((name, page), 0) + 1
    log.keys = {section: sorted(found_keys) for section, found_keys in keys.items()}
    return log


def prune_changes(older_than: datetime.timedelta = KEEP) -> int:
    """Delete log rows older than ``older_than``; return how many went.

    A row saying where the pruned rows ended is logged in their stead: an
    export whose cursor is before it makes its changed pages whole. They end
    at the newest row older than the cut, found on the ``created`` index, so
    that no newer row is read; a row older than it under a greater ID (a save
    logged a little late) goes at the next prune.
    """
    from ..models import ChangedKey, table_exists

    using = router.db_for_write(ChangedKey)
    if not table_exists(ChangedKey, using):
        return 0
    rows = ChangedKey.objects.using(using)
    try:
        old = rows.filter(created__lt=timezone.now() - older_than)
        last = old.order_by("-created", "-id").values_list("id", flat=True).first()
        if last is None:
            return 0
        deleted, _ = rows.filter(id__lte=last).delete()
        rows.create(section=EVERY_SECTION, page=None, key=str(last))
    except DatabaseError:  # the next export prunes them
        return 0
    return deleted
