"""An export split into tasks of page ranges, run by any number of workers.

:func:`start_export` plans the export in the calling process: it reads the
index (the page table), proves the pages that did not change (as an
incremental export does), and enqueues one task per range of the others on
Django's Tasks framework (``SITEMAPX_EXPORT_TASK_BACKEND``). Each task makes
its pages into staging files next to their targets, beating a heartbeat in the
``ExportPart`` table. The last task to finish enqueues the final step, which
writes the index and publishes, pages first and the index last, then the
manifest: until then the previous export is intact. The final step is also
enqueued when the export starts and again while parts are left; it runs again
the parts whose worker stopped beating for ``SITEMAPX_EXPORT_LEASE`` seconds
(a worker that died), up to ``MAX_ATTEMPTS`` times each.

One export runs to a destination at a time: a second one is refused while a
run's plan (part 0) exists, as is ``export_sitemap`` to the same destination.
A run that stopped beating for ``ABANDONED_LEASES`` leases is abandoned, and
the next export takes over. The workers share the database and the
destination: a folder (local or on the network; each worker stages its pages
next to their targets) or any Django storage named in ``STORAGES`` (each worker
uploads its pages under ``.sitemapx-staging/<run>/``, and the final step copies
them in place, then removes them).
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import secrets
import time
from collections.abc import Iterator
from typing import Any

from django.db import router, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from ..conf import app_settings
from ..documents import listed_pages
from ..exceptions import ExportError, NothingToExport
from ..locations import Origin
from ..models import ExportPart, SectionLock
from ..registry import default_registry
from ..sources import ListedPage, PageSummary
from ..sources.changes import ChangeLog, change_cursor, changes_since, prune_changes
from . import (
    ExportResult,
    _Run,
    _selected_sections,
    configuration_digest,
    destination_key,
    files_root,
    objects_before_frozen,
    refuse_while_split_export_runs,
    tell_changed_pages,
)
from .destinations import (
    Destination,
    FileRecord,
    FolderDestination,
    StorageDestination,
    side_file,
    spans_from_text,
    spans_text,
    storage_destination,
)

logger = logging.getLogger("django_sitemapx")

# Pages one task makes, by default: at 50,000 URLs a page, about a minute's work.
PAGES_PER_TASK = 20
# A part whose worker died is run again this many times at most; then the run is dropped.
MAX_ATTEMPTS = 3
# A run none of whose rows beat for this many leases is abandoned.
ABANDONED_LEASES = 4

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"


@objects_before_frozen()
def start_export(
    destination: str | Destination,
    *,
    origin: Origin,
    files_base_url: str | None = None,
    gzip: bool = False,
    full: bool = False,
    pages_per_task: int = PAGES_PER_TASK,
) -> str:
    """Plan an export of every section to ``destination``, enqueue its tasks; return the run ID.

    ``destination`` is a folder's path, a ``FolderDestination``, or the
    ``StorageDestination`` of a ``STORAGES`` alias (``storage_destination``):
    every worker rebuilds it, so a storage made by hand is refused. The options
    are :func:`~django_sitemapx.export.export_sitemap`'s. Raises ``ExportError``
    if the destination is unusable or taken by another export.
    """
    if pages_per_task < 1:
        raise ExportError("pages_per_task must be at least 1.")
    if not isinstance(destination, Destination):
        destination = FolderDestination(destination)
    spec = destination_spec(destination)
    files_root(origin, files_base_url)  # a malformed URL is refused before anything runs
    configuration = configuration_digest(default_registry, origin)
    told = 0
    if app_settings.EXPORT_SPLICE and not (full or gzip):
        # Before the pages are listed, as ``export_sitemap`` does: those told need no count.
        sections = _selected_sections(default_registry, None)
        told = tell_changed_pages(destination, default_registry, sections, origin, configuration)
    listed = listed_pages(default_registry, origin)
    if not listed:
        raise NothingToExport(f"The sitemap has no URL yet on {origin.host}: nothing to export.")
    destination.validate(dry_run=False)
    run_id = secrets.token_hex(16)
    key = destination_key(destination)
    using = router.db_for_write(ExportPart)
    result = ExportResult(destination.description, False)
    run = _Run(destination, gzip=gzip, dry_run=False, result=result)
    with destination.lock(), transaction.atomic(using=using):
        _take(key, using)
        refuse_while_split_export_runs(destination)
        destination.clean_leftovers(run.names_of(listed))
        state = destination.read_state()
        run.splicing = app_settings.EXPORT_SPLICE
        previous = run.usable(state.records) if not full else {}
        run.previous = previous
        run.configuration = configuration
        # Read before any page's rows are; the log after the proofs (see ``_Run.stage_pages``).
        cursor = change_cursor() if run.splicing else None
        cursors = state.changes if run.splicing else {}
        proofs = run.proofs(default_registry, listed, origin)
        changes = changes_since(cursors) if run.splicing and previous else ChangeLog()
        to_make: list[ListedPage] = []
        for listed_page in listed:
            proof = proofs.get((listed_page.section, listed_page.summary.number))
            name = run.page_name(listed_page)
            if (
                proof is None
                or not previous
                or not run._keep(name, listed_page.section, listed_page.summary.number, proof)
            ):
                to_make.append(listed_page)
        now = timezone.now()
        plan = {
            "destination": spec,
            "scheme": origin.scheme,
            "host": origin.host,
            "files_base_url": files_base_url,
            "gzip": gzip,
            "full": full,
            "listed": [_listed_json(listed_page) for listed_page in listed],
            "kept": {name: record.as_json() for name, record in run.records.items()},
            "proven": result.proven,
            "told": told,
            "started": time.time(),
            "configuration": run.configuration,
            "splice": run.splicing,
            "cursor": cursor,
            "cursors": cursors,
            "changes": changes.as_json(),
        }
        parts = [
            to_make[start : start + pages_per_task]
            for start in range(0, len(to_make), pages_per_task)
        ]
        rows = [ExportPart(run=run_id, destination=key, number=0, plan=plan, heartbeat=now)]
        for number, pages in enumerate(parts, 1):
            names = [run.page_name(listed_page) for listed_page in pages]
            if gzip:
                names += [name + ".gz" for name in names]
            part_plan = {
                "pages": [
                    [
                        *_listed_json(listed_page),
                        proofs.get((listed_page.section, listed_page.summary.number)),
                    ]
                    for listed_page in pages
                ],
                "previous": {name: previous[name].as_json() for name in names if name in previous},
            }
            rows.append(
                ExportPart(
                    run=run_id, destination=key, number=number, plan=part_plan, heartbeat=now
                )
            )
        ExportPart.objects.using(using).bulk_create(rows)
    from . import tasks

    for number in range(1, len(parts) + 1):
        tasks.enqueue_part(run_id, number)
    tasks.enqueue_finish(run_id, defer=bool(parts))
    return run_id


def _take(key: str, using: str) -> None:
    """Inside a transaction: lock the destination's row; refuse while another run is alive."""
    locks = SectionLock.objects.using(using)
    name = f"export:{key}"
    if not locks.filter(section=name).exists():
        locks.get_or_create(section=name)
    list(locks.select_for_update().filter(section=name).values_list("pk"))
    rows = ExportPart.objects.using(using).filter(destination=key)
    runs = set(rows.filter(number=0).values_list("run", flat=True))
    abandoned = timezone.now() - datetime.timedelta(
        seconds=app_settings.EXPORT_LEASE * ABANDONED_LEASES
    )
    for run in runs:
        if rows.filter(run=run, heartbeat__gte=abandoned).exists():
            raise ExportError(f"Another export to this destination is running (run {run}).")
        logger.warning("Export run %s stopped beating; abandoned.", run)
        rows.filter(run=run).delete()


def _listed_json(listed_page: ListedPage) -> list[Any]:
    summary = listed_page.summary
    return [listed_page.section, summary.number, summary.rows, summary.lastmod, summary.undated]


def _listed_from(fields: list[Any]) -> ListedPage:
    section, number, rows, lastmod, undated = fields[:5]
    return ListedPage(section, PageSummary(number, rows, lastmod, undated))


def destination_spec(destination: Destination) -> dict[str, Any]:
    """What a worker needs to rebuild ``destination`` (stored in the run's plan)."""
    spec: dict[str, Any] = {"description": destination.description}
    if isinstance(destination, FolderDestination):
        return {**spec, "folder": str(destination.root), "permissions": destination.permissions}
    if isinstance(destination, StorageDestination) and destination.alias:
        return {**spec, "storage": destination.alias, "subfolder": destination.folder}
    raise ExportError(
        "An export split into tasks writes to a folder or a storage named in STORAGES "
        f"(every worker opens it again); {destination.description} is neither."
    )


def _destination(plan: dict[str, Any]) -> Destination:
    # A run planned before storages were supported names its folder only.
    spec = plan.get("destination") or {
        "folder": plan["folder"],
        "permissions": None,
        "description": str(FolderDestination(plan["folder"]).root),
    }
    destination: Destination
    if "folder" in spec:
        destination = FolderDestination(spec["folder"], permissions=spec["permissions"])
    else:
        destination = storage_destination(spec["storage"])
        if spec["subfolder"]:
            destination = destination.subfolder(spec["subfolder"])
    # The same description, so the same key in ExportPart and SectionLock.
    destination.description = spec["description"]
    return destination


def _rows(run_id: str) -> QuerySet[ExportPart]:
    return ExportPart.objects.using(router.db_for_write(ExportPart)).filter(run=run_id)


def _origin(plan: dict[str, Any]) -> Origin:
    return Origin(plan["scheme"], plan["host"])


class _Superseded(Exception):
    """This worker's claim on a part was taken by another (it was taken as dead)."""


@objects_before_frozen()
def run_part(run_id: str, number: int) -> dict[str, int]:
    """Make the pages of part ``number`` of run ``run_id`` (a task calls this)."""
    rows = _rows(run_id)
    plan_row = rows.filter(number=0).first()
    part = rows.filter(number=number).first()
    if plan_row is None or part is None or part.state == DONE:
        return {"pages": 0}
    token = secrets.token_hex(16)
    claimed = rows.filter(pk=part.pk, token=part.token).exclude(state=DONE)
    if not claimed.update(
        state=RUNNING, token=token, heartbeat=timezone.now(), attempts=F("attempts") + 1
    ):
        return {"pages": 0}  # another worker claimed it first
    plan = plan_row.plan
    mine = rows.filter(pk=part.pk, token=token)
    destination = _destination(plan)
    with destination.workspace():
        return _make_part(run_id, number, plan, part, mine, destination)


def _make_part(
    run_id: str,
    number: int,
    plan: dict[str, Any],
    part: ExportPart,
    mine: QuerySet[ExportPart],
    destination: Destination,
) -> dict[str, int]:
    rows = _rows(run_id)
    run = _Run(
        destination,
        gzip=plan["gzip"],
        dry_run=False,
        result=ExportResult(destination.description, False),
    )
    run.previous = _records(part.plan["previous"])
    run.configuration = plan.get("configuration", "")
    run.splicing = bool(plan.get("splice"))
    run.changes = ChangeLog.from_json(plan["changes"]) if "changes" in plan else ChangeLog()
    listed = [_listed_from(fields) for fields in part.plan["pages"]]
    proofs = {
        (fields[0], fields[1]): fields[5] for fields in part.plan["pages"] if fields[5] is not None
    }

    def beat(*_: int) -> None:
        if not mine.update(heartbeat=timezone.now()):
            raise _Superseded

    run.on_pages = beat
    try:
        made = run.stage_pages(default_registry, listed, _origin(plan), proofs)
    except _Superseded:
        run.discard()
        return {"pages": 0}
    except Exception:
        run.discard()
        mine.update(state=FAILED)
        raise
    # Where each spliced page differs from the file it replaces: the final step keeps that
    # file as its spare (``Destination.commit``).
    spans = {
        staged.name: spans_text(staged.new_spans)
        for staged in run.staged
        if staged.new_spans is not None
    }
    try:
        shared = {staged.name: destination.share(staged, run_id) for staged in run.staged}
        # The copies of the pages written whole, for the final step to keep as their spares.
        spares = {
            staged.name: found
            for staged in run.staged
            if staged.spare_copy and (found := destination.share_spare(staged)) is not None
        }
    except Exception:
        run.discard()
        mine.update(state=FAILED)
        raise
    run.staged = [destination.shared(name, found) for name, found in shared.items()]
    result = {
        "records": {name: record.as_json() for name, record in run.records.items()},
        "written": sorted(run.written),
        "spliced": run.result.spliced,
        "staged": shared,
        "spans": spans,
        "spares": spares,
        "empty": [
            [listed_page.section, listed_page.summary.number]
            for listed_page in listed
            if listed_page not in made
        ],
    }
    if not mine.update(state=DONE, result=result, heartbeat=timezone.now()):
        run.discard()
        return {"pages": 0}
    if not rows.filter(number__gt=0).exclude(state=DONE).exists():
        from . import tasks

        tasks.enqueue_finish(run_id, defer=False)
    return {"pages": len(listed)}


def _records(fields: dict[str, Any]) -> dict[str, FileRecord]:
    records = {}
    for name, values in fields.items():
        record = FileRecord.from_json(values)
        if record is not None:
            records[name] = record
    return records


@objects_before_frozen()
def finish(run_id: str) -> dict[str, Any]:
    """Publish run ``run_id`` once every part is done; else run again the parts of dead workers.

    Returns what happened: ``{"state": "waiting"}``, ``{"state": "gone"}`` (published
    or dropped already), or the published export's counts.
    """
    rows = _rows(run_id)
    plan_row = rows.filter(number=0).first()
    if plan_row is None:
        return {"state": "gone"}
    parts = list(rows.filter(number__gt=0).order_by("number"))
    pending = [part for part in parts if part.state != DONE]
    from . import tasks

    if pending:
        dead = timezone.now() - datetime.timedelta(seconds=app_settings.EXPORT_LEASE)
        for part in pending:
            stopped = part.state == FAILED or (
                part.state == RUNNING and part.heartbeat is not None and part.heartbeat < dead
            )
            if not stopped:
                continue
            if part.attempts >= MAX_ATTEMPTS:
                _drop(run_id, plan_row.plan, f"part {part.number} failed {part.attempts} times")
                return {"state": "dropped"}
            if rows.filter(pk=part.pk, token=part.token, state=part.state).update(
                state=QUEUED, token=secrets.token_hex(16), heartbeat=timezone.now()
            ):
                logger.warning(
                    "Export run %s: part %s stopped (its worker died?); it runs again.",
                    run_id,
                    part.number,
                )
                tasks.enqueue_part(run_id, part.number)
        rows.filter(number=0).update(heartbeat=timezone.now())
        tasks.enqueue_finish(run_id, defer=True)
        return {"state": "waiting"}
    return _publish(run_id, plan_row.plan, parts)


def _publish(run_id: str, plan: dict[str, Any], parts: list[ExportPart]) -> dict[str, Any]:
    destination = _destination(plan)
    origin = _origin(plan)
    using = router.db_for_write(ExportPart)
    result = ExportResult(destination.description, False)
    run = _Run(destination, gzip=plan["gzip"], dry_run=False, result=result)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(destination.lock())
        except ExportError:
            return {"state": "publishing"}  # another worker's final step holds it
        stack.callback(run.discard)
        with transaction.atomic(using=using):
            list(
                SectionLock.objects.using(using)
                .select_for_update()
                .filter(section=f"export:{destination_key(destination)}")
                .values_list("pk")
            )
            if not _rows(run_id).filter(number=0).exists():
                return {"state": "gone"}
            state = destination.read_state()
            run.splicing = bool(plan.get("splice"))
            run.previous = run.usable(state.records) if not plan["full"] else {}
            run.cursor = plan.get("cursor")
            run.cursors = dict(plan.get("cursors") or {})
            previous_files = state.files
            run.records.update(_records(plan["kept"]))
            empty: set[tuple[str, int]] = set()
            for part in parts:
                done = part.result or {}
                run.records.update(_records(done.get("records", {})))
                run.written.update(done.get("written", []))
                for name, shared in done.get("staged", {}).items():
                    staged = destination.shared(name, shared)
                    record = run.records.get(name)
                    text = done.get("spans", {}).get(name)
                    if run.spares and record is not None and text is not None:
                        staged.new_spans = spans_from_text(text, record.size)
                    copy = done.get("spares", {}).get(name)
                    if run.spares and isinstance(copy, str):
                        destination.shared_spare(staged, copy)
                    run.staged.append(staged)
                empty.update((section, number) for section, number in done.get("empty", []))
            listed = [_listed_from(fields) for fields in plan["listed"]]
            in_index = [
                listed_page
                for listed_page in listed
                if (listed_page.section, listed_page.summary.number) not in empty
            ]
            for listed_page in in_index:
                name = run.page_name(listed_page)
                for file_name in [name, name + ".gz"] if plan["gzip"] else [name]:
                    run.names[file_name] = listed_page.section
            files_origin, files_prefix = files_root(origin, plan["files_base_url"])
            run.stage_index(in_index, files_origin, files_prefix)
            files = len(run.names)
            run.name_side_files()
            stale = sorted(name for name in previous_files if name not in run.names)
            run.commit(previous_files, stale, full=plan["full"])
            # Staging files of parts run twice (a worker taken as dead that was not).
            destination.clean_leftovers(list(run.names))
            _rows(run_id).delete()
    if plan.get("splice"):
        prune_changes()
    written = len(run.written)
    return {
        "state": "published",
        "written": written,
        "unchanged": files - written,
        "removed": len([name for name in stale if not side_file(name)]),
        "proven": plan["proven"],
        "spliced": sum((part.result or {}).get("spliced", 0) for part in parts),
        "told": plan.get("told", 0),
        "seconds": round(time.time() - plan["started"], 3),
    }


def _drop(run_id: str, plan: dict[str, Any], why: str) -> None:
    """Give a run up: its staging files go, the previous export stays."""
    destination = _destination(plan)
    logger.error("Export run %s to %s dropped: %s.", run_id, destination.description, why)
    for part in _rows(run_id).filter(number__gt=0):
        for name, shared in ((part.result or {}).get("staged") or {}).items():
            destination.shared(name, shared).discard()
    _rows(run_id).delete()


def running_exports() -> Iterator[tuple[str, str, int, int]]:
    """(run, destination, parts done, parts) of every export split into tasks now running."""
    rows = ExportPart.objects.using(router.db_for_read(ExportPart))
    for plan_row in rows.filter(number=0):
        parts = rows.filter(run=plan_row.run, number__gt=0)
        done = parts.filter(state=DONE).count()
        where = plan_row.plan.get("destination", {}).get("description", "")
        yield plan_row.run, where, done, parts.count()
