"""Export the sitemap as files: the same documents the views serve, written atomically.

Call :func:`export_sitemap` from a cron job, Celery beat or a Django task; the
``sitemap_export`` management command is a thin shell around it::

    from django_sitemapx.export import FolderDestination, export_sitemap, origin_from_url

    export_sitemap(FolderDestination("/srv/sitemaps"), origin=origin_from_url("https://example.com"))

The export happens in three steps. Every document (pages first, then the index)
is written to a staging file; nothing at the destination changes while this
runs, so an export that fails or is killed leaves the previous one intact. Then
each file is put in place in one step, pages first and the index last, so the
index never lists a page that is not there yet. Only then are the files of the
previous export that the new one no longer has removed.

An export is incremental: the destination's manifest (written last) records
what each file holds, the digest of its bytes and what proves them current (the
export's configuration and the page's state in the page table, see
``Source.page_proofs``). A page whose proof is unchanged is not made at all; any
other page is made and written only if its bytes differ from the file's. The
files are then the same bytes a full export (``full=True``) writes. With
``SITEMAPX_EXPORT_SPLICE`` on, a changed page of a model section is spliced:
only the blocks of rows that changed are read again (see ``splice``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import hashlib
import importlib.metadata
import itertools
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from django.apps import apps
from django.conf import settings
from django.db import router

from ..compression import GZIP_SUFFIX
from ..conf import app_settings
from ..documents import (
    DocumentStream,
    index_part_path,
    index_parts,
    listed_pages,
    page_path,
    render_index,
    render_page,
)
from ..exceptions import ExportError, InvalidURL, NothingToExport
from ..locations import Origin
from ..locations.hosts import host_folder
from ..locations.origins import files_root_from_url, known_origins, scheme_for, site_origin
from ..locations.origins import origin_from_url as url_origin
from ..registry import SitemapRegistry, default_registry
from ..sources import ListedPage, ModelSource, Source
from ..sources.changes import ChangeLog, change_cursor, changes_since, prune_changes
from ..sources.pages import PageTable
from . import files, splice
from .destinations import (
    Blocks,
    Destination,
    FileRecord,
    FolderDestination,
    StagedFile,
    StorageDestination,
    blocks_digest,
    blocks_name,
    side_file,
    spare_name,
    storage_destination,
)
from .files import DocumentFile, Spans

__all__ = [
    "Destination",
    "ExportResult",
    "ExportedFile",
    "FolderDestination",
    "SiteExport",
    "StorageDestination",
    "export_every_site",
    "export_sitemap",
    "origin_from_sites_framework",
    "origin_from_url",
    "storage_destination",
]

logger = logging.getLogger("django_sitemapx")


@dataclass(frozen=True)
class ExportedFile:
    """One file an export wrote (or would write); ``section`` is ``""`` for the index."""

    name: str
    section: str
    page: int | None
    urls: int
    bytes: int


@dataclass
class ExportResult:
    """What an export wrote, left unchanged, removed, and found missing."""

    destination: str
    dry_run: bool
    # Files written (or, in a dry run, that would be).
    files: list[ExportedFile] = field(default_factory=list)
    # Files already holding the bytes this export made, or proven to: not written.
    unchanged: list[ExportedFile] = field(default_factory=list)
    # Pages the manifest and the page table proved unchanged: not made at all.
    proven: int = 0
    # Pages made from their previous file and the blocks of rows that changed.
    spliced: int = 0
    # Changed pages whose summary was told from their blocks, not counted (``splice.settle``).
    told: int = 0
    removed: list[str] = field(default_factory=list)
    # Pages of sections left out by ``sections`` that the index lists but the destination lacks.
    missing: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def urls(self) -> int:
        """URLs in the exported ``<urlset>`` documents (a gzip copy is not counted twice)."""
        return sum(f.urls for f in self.files if f.page and not f.name.endswith(GZIP_SUFFIX))

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)


def origin_from_url(url: str) -> Origin:
    """``https://example.com`` as an ``Origin``; anything more or less is an ``ExportError``."""
    with _as_export_error():
        return url_origin(url)


def origin_from_sites_framework(site_id: int | None = None) -> Origin:
    """The domain of ``django.contrib.sites`` site ``site_id`` (default: ``SITE_ID``).

    The scheme follows the views' rule (``SITEMAPX_PROTOCOL``, else https). Raises
    ``ExportError`` without the app, for an unknown ID, or for a domain that is no host.
    """
    if not apps.is_installed("django.contrib.sites"):
        raise ExportError("Using a site by ID needs django.contrib.sites in INSTALLED_APPS.")
    from django.contrib.sites.models import Site

    try:
        site = Site.objects.get_current() if site_id is None else Site.objects.get(pk=site_id)
    except Site.DoesNotExist:
        raise ExportError(f"No site with ID {site_id} in django.contrib.sites.") from None
    with _as_export_error():
        return site_origin(site.domain, site.pk)


@contextlib.contextmanager
def _as_export_error() -> Iterator[None]:
    """A malformed URL given to an export is an ``ExportError``, with the same message."""
    try:
        yield
    except InvalidURL as error:
        raise ExportError(str(error)) from error


# What the interpreter keeps frozen itself (CPython 3.12 starts with a few hundred
# objects so): past it, the process froze its own objects (``objects_before_frozen``).
_FROZEN_AT_START = gc.get_freeze_count()


@contextlib.contextmanager
def objects_before_frozen() -> Iterator[None]:
    """Keep the objects that exist now out of the garbage collector's sight until the end.

    An export makes many objects, and so sets off the collector's full passes,
    each of which went through every object of Django and the project too: one
    took 35 to 60 ms of a 0.35 s spread run (docs/performance.md, "A seventeenth
    machine"). They are given back afterwards (``gc.unfreeze()``), so that a
    process that goes on collects them as before. A process that froze its own
    objects since this module was imported (``gc.freeze()`` before forking
    workers) is left as it is.
    """
    if gc.get_freeze_count() > _FROZEN_AT_START:
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


FileCallback = Callable[[ExportedFile], None]
ProgressCallback = Callable[[int, int], None]
# (Pages done, pages to do, URLs done, URLs expected).
PagesCallback = Callable[[int, int, int, int], None]


@objects_before_frozen()
def export_sitemap(
    destination: Destination,
    *,
    origin: Origin,
    files_base_url: str | None = None,
    sections: Sequence[str] | None = None,
    gzip: bool = False,
    dry_run: bool = False,
    registry: SitemapRegistry | None = None,
    full: bool = False,
    on_file: FileCallback | None = None,
    on_progress: ProgressCallback | None = None,
    on_pages: PagesCallback | None = None,
) -> ExportResult:
    """Write the index and the pages of ``sections`` (default: all) to ``destination``.

    ``origin`` is the scheme and host of the URLs (see :func:`origin_from_url`);
    the scheme rule is the views': a source's ``protocol``, else
    ``SITEMAPX_PROTOCOL``, else ``origin``'s. The index lists the pages at
    ``files_base_url`` (default: the origin), pointing at the ``.xml.gz`` copies
    when ``gzip``. Only files whose bytes changed are written (see the module's
    docstring); ``full`` makes and writes every one. ``on_file`` is called per
    file written, ``on_progress`` with (URLs written, URLs expected) as they
    are written, ``on_pages`` with (pages done, pages, URLs done, URLs
    expected) after each page, written or not. Raises ``ExportError`` before
    writing anything if an argument or the destination is unusable.
    """
    started = time.monotonic()
    registry = registry if registry is not None else default_registry
    selected = _selected_sections(registry, sections)
    files_origin, files_prefix = files_root(origin, files_base_url)
    configuration = configuration_digest(registry, origin)
    told = 0
    read: dict[str, dict[int, splice.ReadBlocks]] = {}
    kept = KeptBlocks()
    # The files of the pages to splice over a copy made ahead, once the lock is held,
    # with the spans at which their spare differs (their records' ``spare``).
    copies: dict[str, Spans | None] = {}
    # Each page's path, reversed once for the run (it is asked for three times a page).
    paths = functools.cache(page_path)
    if app_settings.EXPORT_SPLICE and not (dry_run or full or gzip):
        # Before the index's pages are read: those told need no count.
        told = tell_changed_pages(
            destination, registry, selected, origin, configuration, read, paths, kept, copies
        )
    listed = listed_pages(registry, origin)
    if not listed:
        raise NothingToExport(f"The sitemap has no URL yet on {origin.host}: nothing to export.")
    destination.validate(dry_run=dry_run)
    result = ExportResult(destination.description, dry_run, told=told)
    run = _Run(destination, gzip=gzip, dry_run=dry_run, result=result)
    run.on_file, run.on_progress, run.on_pages = on_file, on_progress, on_pages
    run.read = read
    run.kept = kept
    run.paths = paths
    with contextlib.nullcontext() if dry_run else destination.lock():
        if not dry_run:
            refuse_while_split_export_runs(destination)
            destination.clean_leftovers(run.names_of(listed))
            spares = {name: spans for name, spans in copies.items() if spans is not None}
            destination.copy_soon(list(copies), spares if run.spares else {})
        state = destination.read_state()
        previous = state.files
        run.splicing = app_settings.EXPORT_SPLICE and not dry_run
        if run.splicing:
            # Where the log of changed rows ends, read before any page's rows are.
            run.cursor = change_cursor()
            run.cursors = state.changes
        if not full:
            run.previous = run.usable(state.records)
        # Recorded by a full export too, for the next run to compare with.
        run.configuration = configuration
        try:
            exported = [listed_page for listed_page in listed if listed_page.section in selected]
            written = run.stage_pages(registry, exported, origin)
            # A set: looked up in the list, each page was compared with every page before it.
            made = set(written)
            in_index = [
                listed_page
                for listed_page in listed
                if listed_page.section not in selected or listed_page in made
            ]
            run.stage_index(in_index, files_origin, files_prefix)
            result.missing = run.missing(
                [listed_page for listed_page in in_index if listed_page.section not in selected]
            )
            # A section that left the registry is stale too; another section's files are not.
            # So is one no longer served on this host (its sites changed).
            served = {source.section for source in registry if source.serves(origin)}
            scope = selected | {""} | (set(previous.values()) - served)
            run.name_side_files()
            stale = sorted(
                name
                for name, section in previous.items()
                if section in scope and name not in run.names
            )
            if not dry_run:
                run.commit(previous, stale, full=full, sections=selected)
        finally:
            run.discard()
        # Files readers see: a page's blocks file goes with it, uncounted.
        result.removed = [name for name in stale if not side_file(name)]
    if run.splicing:
        prune_changes()
    result.seconds = time.monotonic() - started
    return result


def tell_changed_pages(
    destination: Destination,
    registry: SitemapRegistry,
    sections: set[str],
    origin: Origin,
    configuration: str,
    read: dict[str, dict[int, splice.ReadBlocks]] | None = None,
    paths: Callable[[str, int], str] = page_path,
    files_read: KeptBlocks | None = None,
    copies: dict[str, Spans | None] | None = None,
) -> int:
    """Tell the page table the summaries of the pages changed since the last export.

    From the blocks the destination keeps of each page and the rows of the
    blocks that changed (``splice.settle``), so that listing the pages counts
    none of them again. With ``read``, the keys of those blocks are kept
    there by section and page, for the pages written in place: also for the
    changed pages told or counted before this export (``splice.settle``). ``paths``
    gives a page's path (``documents.page_path``); ``files_read`` keeps the blocks
    read, up to its bound, for the pages to splice; ``copies`` collects the
    files of the pages to splice over a copy of their file (all but those
    copied whole), with their records' ``spare``, for the export to copy ahead
    (``Destination.copy_soon``).
    Returns how many pages were told.
    """
    state = destination.read_state()
    if not state.records or not state.changes:
        return 0
    sources = [
        source
        for source in registry.for_origin(origin)
        if source.section in sections
        and isinstance(source, ModelSource)
        and splice.can_make_in_blocks(source)
    ]
    # Every section's pages before the log: a mark they hold has its log row by then.
    ranges = {source.section: splice.page_ranges(source, configuration) for source in sources}
    log = changes_since(state.changes)
    told = 0
    for source in sources:

        def blocks_of(number: int, section: str = source.section) -> Blocks | None:
            name = _file_name(paths(section, number))
            record = state.records.get(name)
            if record is None or record.blocks is None:
                return None
            blocks = read_blocks(destination, name, record.blocks)
            if blocks is None or not blocks.holds(record.size, record.urls):
                return None
            if files_read is not None:
                files_read.keep(name, record, blocks)
            return blocks

        def read_soon(
            number: int, blocks: Blocks, changed: list[int], section: str = source.section
        ) -> None:
            # The bytes splicing the page reads: its changed blocks (block i is segment
            # i + 1), and around them the partial 4 KiB blocks written with them; every
            # byte of a page to be copied whole.
            name = _file_name(paths(section, number))
            record = state.records.get(name)
            # A page with a spare splices over it, never copied whole (``splice.splice``).
            spare = record is not None and record.spare is not None
            if record is not None and not spare and splice.copies_whole(number, record.rewritten):
                destination.read_soon(name, [(0, record.size)])
                return
            if copies is not None:
                copies[name] = None if record is None else record.spare
            offsets = [0, *itertools.accumulate(blocks.sizes)]
            destination.read_soon(
                name, [(offsets[index + 1], blocks.sizes[index + 1]) for index in changed]
            )

        kept = read.setdefault(source.section, {}) if read is not None else None
        told += len(splice.settle(source, ranges[source.section], blocks_of, log, kept, read_soon))
    return told


# Blocks an export keeps, of the blocks files it read to tell their pages (``KeptBlocks``).
_KEPT_BLOCKS = 250_000


class KeptBlocks:
    """The blocks files an export read to tell their pages, kept to splice those pages.

    Up to ``limit`` blocks in all, kept as the file holds them, not parsed
    (about 70 bytes a block; the default, 250,000, is 500 pages of 50,000
    rows, about 17 MB), so that an export's memory does not grow with its
    changed pages: past that, a page's blocks file is read again when it is
    spliced (docs/performance.md, "Incremental export"). Only blocks checked to
    add up to their manifest record (``Blocks.holds``) are kept, with it.
    """

    def __init__(self, limit: int | None = None) -> None:
        self.limit = _KEPT_BLOCKS if limit is None else limit
        self.count = 0
        self._found: dict[str, tuple[FileRecord, Blocks]] = {}

    def keep(self, name: str, record: FileRecord, blocks: Blocks) -> None:
        """Keep the blocks of page ``name``, checked against ``record``, if they fit."""
        count = len(blocks.sizes_data) // 8
        if name not in self._found and self.count + count <= self.limit:
            # A copy holds the file's fields, not the lists parsed from them: a fifth of
            # the memory.
            self._found[name] = (record, dataclasses.replace(blocks))
            self.count += count

    def take(self, name: str, record: FileRecord) -> Blocks | None:
        """The blocks of page ``name`` if kept for the same ``record`` (then no longer kept):
        the file's blocks and the size and URLs they were checked to add up to."""
        found = self._found.pop(name, None)
        if found is None:
            return None
        kept_for, blocks = found
        self.count -= len(blocks.sizes_data) // 8
        return blocks if kept_for == record else None


def read_blocks(destination: Destination, name: str, digest: str) -> Blocks | None:
    """The blocks of page ``name`` from the file beside it; None unless it holds ``digest``."""
    data = destination.read_bytes(blocks_name(name))
    if data is None or blocks_digest(data) != digest:
        return None
    return Blocks.from_bytes(data)


def files_root(origin: Origin, files_base_url: str | None) -> tuple[Origin, str]:
    """Where the index says the files are: the origin (default) or ``files_base_url``."""
    if files_base_url is None:
        return Origin(scheme_for(None, origin.scheme), origin.host), ""
    with _as_export_error():
        return files_root_from_url(files_base_url)


def refuse_while_split_export_runs(destination: Destination) -> None:
    """Raise ``ExportError`` if an export split into tasks is running to ``destination``."""
    from ..models import ExportPart, table_exists

    using = router.db_for_read(ExportPart)
    if not table_exists(ExportPart, using):
        return
    found = (
        ExportPart.objects.using(using)
        .filter(destination=destination_key(destination), number=0)
        .values_list("run", flat=True)
        .first()
    )
    if found is not None:
        raise ExportError(
            f"An export to {destination.description} split into tasks is running (run {found})."
        )


def destination_key(destination: Destination) -> str:
    """The name of ``destination`` in the table of running exports (``ExportPart``)."""
    return hashlib.sha256(destination.description.encode()).hexdigest()[:40]


@dataclass(frozen=True)
class SiteExport:
    """One site of :func:`export_every_site`: its origin, folder and result (None: skipped)."""

    origin: Origin
    folder: str
    result: ExportResult | None


def export_every_site(
    destination: Destination,
    *,
    files_base_url: str | None = None,
    registry: SitemapRegistry | None = None,
    **options: Any,
) -> list[SiteExport]:
    """Export every site the project knows into its own folder of ``destination``.

    The sites are the ``django.contrib.sites`` sites (when installed), then the
    hosts the sections name (``Source.site_hosts``: a Wagtail section's sites);
    each is exported as :func:`export_sitemap` would, to a folder named by its
    host (:func:`host_folder`), with only its own sections. A site with no URL (no
    section, or only empty ones) is skipped. ``files_base_url`` may hold
    ``{host}``, replaced by each site's folder. ``options`` are
    :func:`export_sitemap`'s. Raises ``ExportError`` when no site is known, or
    when a site's domain is no host name.
    """
    registry = registry if registry is not None else default_registry
    with _as_export_error():
        origins = known_origins(registry.site_hosts())
    if not origins:
        raise ExportError(
            "No site to export: add sites to django.contrib.sites, or name hosts in the "
            "sections' sites option."
        )
    exports = []
    for origin in origins:
        folder = host_folder(origin.host)
        files_url = None if files_base_url is None else files_base_url.replace("{host}", folder)
        try:
            result = export_sitemap(
                destination.subfolder(folder),
                origin=origin,
                files_base_url=files_url,
                registry=registry,
                **options,
            )
        except NothingToExport:
            logger.info("The sitemap has no URL on %s; not exported.", origin.host)
            result = None
        exports.append(SiteExport(origin, folder, result))
    return exports


def configuration_digest(registry: SitemapRegistry, origin: Origin) -> str:
    """A digest of what every page's bytes depend on besides its rows.

    The origin, the package's version, every ``SITEMAPX_*`` setting and the
    settings of languages and time, and each section's class and limits: a
    change to any of them proves no page unchanged, and every page is made
    again (and compared). A value whose ``repr`` differs in each process (an
    object's address) makes every export made again in full: slower, never wrong.
    """
    try:
        version = importlib.metadata.version("django-sitemapx")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - not installed
        version = ""
    names = sorted(
        name
        for name in dir(settings)
        if name.startswith("SITEMAPX_")
        or name in {"LANGUAGE_CODE", "LANGUAGES", "USE_I18N", "USE_TZ", "TIME_ZONE", "SITE_ID"}
    )
    sections = [
        [
            source.section,
            f"{type(source).__module__}.{type(source).__qualname__}",
            source.get_limit(),
            source.rows_per_page(),
            sorted(source.get_namespaces().items()),
            source.get_languages(),
            source.scheme(origin.scheme),
        ]
        for source in registry.for_origin(origin)
    ]
    text = json.dumps(
        [
            version,
            origin.prefix,
            [[name, repr(getattr(settings, name))] for name in names],
            sections,
        ],
        default=repr,
    )
    return hashlib.sha256(text.encode()).hexdigest()


class _Run:
    """One export: documents written to staging files, then committed."""

    on_file: FileCallback | None = None
    on_progress: ProgressCallback | None = None
    on_pages: PagesCallback | None = None
    # What the destination's files hold (empty for a full export), and the digest
    # of this export's configuration (``configuration_digest``).
    previous: dict[str, FileRecord]
    configuration = ""
    # Where the log of changed rows ends now (read before any page is), and where
    # it ended when each section's files were made (the manifest's).
    cursor: int | None = None
    cursors: dict[str, int]
    # What changed since (read once the proofs are): None until read.
    changes: ChangeLog | None = None
    # Whether pages are made in blocks and spliced (``SITEMAPX_EXPORT_SPLICE``).
    splicing = False
    # A page's path (``documents.page_path``), memoized by the export for its run.
    paths: Callable[[str, int], str] = staticmethod(page_path)

    def __init__(
        self, destination: Destination, *, gzip: bool, dry_run: bool, result: ExportResult
    ) -> None:
        self.destination = destination
        self.gzip = gzip
        self.dry_run = dry_run
        self.result = result
        # Whether the files spliced pages replace, and copies of the pages written whole,
        # are kept as their spares.
        self.spares = app_settings.EXPORT_SPARES
        self.staged: list[StagedFile] = []
        # Every file name of this export, with its section ("" for the index).
        self.names: dict[str, str] = {}
        self.previous = {}
        # What each file of this export holds, and the names of those being written.
        self.records: dict[str, FileRecord] = {}
        self.written: set[str] = set()
        self.cursors = {}
        # Whether each section's pages are made in blocks (``splice``).
        self._in_blocks: dict[str, bool] = {}
        # Each section's page ranges, read once (a page split since is made whole).
        self._ranges: dict[str, dict[int, splice.PageRange]] = {}
        self._overrides: dict[str, splice.Overrides] = {}
        # Each section's page table, made once for its pages (``splice.BlockWriter``).
        self._tables: dict[str, PageTable] = {}
        # Each section's page format, read once for its pages (``splice.PageFormat``).
        self._formats: dict[str, splice.PageFormat] = {}
        # Each section's changed rows' elements, rendered once for its spliced pages.
        self._elements: dict[str, dict[str, bytes] | None] = {}
        # Each section's changed blocks' keys by page, read as their pages were told.
        self.read: dict[str, dict[int, splice.ReadBlocks]] = {}
        # The blocks files read as their pages were told (some of them).
        self.kept = KeptBlocks(0)

    def page_name(self, listed_page: ListedPage) -> str:
        return _file_name(self.paths(listed_page.section, listed_page.summary.number))

    def usable(self, records: dict[str, FileRecord]) -> dict[str, FileRecord]:
        """The manifest's ``records`` this run can use: without blocks when it splices none.

        A page kept as it is then names no blocks file, which goes as stale.
        """
        if self.splicing:
            return records
        return {
            name: record if record.blocks is None else dataclasses.replace(record, blocks=None)
            for name, record in records.items()
        }

    def name_side_files(self) -> None:
        """List the files beside the pages of this export, with their section.

        A page's blocks file, and its spare where it has one or may have one
        once committed (a staged page whose ``new_spans`` are known, or whose
        copy is being made: ``Destination.spare_soon``).
        """
        for name, record in self.records.items():
            if name not in self.names:
                continue
            if record.blocks is not None:
                self.names[blocks_name(name)] = self.names[name]
            if record.spare is not None:
                self.names[spare_name(name)] = self.names[name]
        for staged in self.staged:
            if (staged.new_spans is not None or staged.spare_copy) and staged.name in self.names:
                self.names[spare_name(staged.name)] = self.names[staged.name]

    def names_of(self, listed: Iterable[ListedPage]) -> list[str]:
        pages = list(listed)
        parts = range(1, max(len(index_parts(pages)), 1) + 1)
        return [
            *(_file_name(index_part_path(part)) for part in parts),
            *map(self.page_name, pages),
        ]

    def stage_pages(
        self,
        registry: SitemapRegistry,
        listed: list[ListedPage],
        origin: Origin,
        proofs: dict[tuple[str, int], str] | None = None,
    ) -> list[ListedPage]:
        """Write the pages of ``listed`` that changed; return those that have a URL.

        ``proofs`` are the pages' (``proofs()``), when read before already.
        """
        counts = [
            registry.get(listed_page.section).url_count(listed_page.summary)
            for listed_page in listed
        ]
        expected = sum(counts)
        # Read before any page is: a change committed after this gives a new proof.
        if proofs is None:
            proofs = self.proofs(registry, listed, origin)
        if self.changes is None:
            # After the proofs: a page marked changed has its row in the log by then.
            splicing = self.splicing and self.previous
            self.changes = changes_since(self.cursors) if splicing else ChangeLog()
        done = 0
        written = []
        for position, listed_page in enumerate(listed):
            name = self.page_name(listed_page)
            number = listed_page.summary.number
            proof = proofs.get((listed_page.section, number))
            if (
                proof is not None
                and self.previous
                and self._keep(name, listed_page.section, number, proof)
            ):
                done += counts[position]
                written.append(listed_page)
                self._page_done(position + 1, len(listed), done, expected)
                continue
            registered = registry.get(listed_page.section)
            source = registered.for_origin(origin)
            page_origin = source.origin
            assert page_origin is not None
            made = self._make_in_blocks(name, listed_page.section, number, source, proof)
            if made is not None:
                if made:
                    done += self.records[name].urls
                    written.append(listed_page)
                else:
                    logger.warning(
                        "Sitemap section %r page %s has no URL; not exported.",
                        listed_page.section,
                        number,
                    )
                if self.on_progress is not None:
                    self.on_progress(done, max(expected, done))
                self._page_done(position + 1, len(listed), done, max(expected, done))
                continue
            page = source.page(number, listed_page.summary)
            stream = None if page is None else render_page(source, page, page_origin)
            if stream is None:
                # Emptied since the index was read, or every entry skipped: leave it
                # out of the index rather than list a page that is not there.
                logger.warning(
                    "Sitemap section %r page %s has no URL; not exported.",
                    listed_page.section,
                    number,
                )
                self._page_done(position + 1, len(listed), done, expected)
                continue
            before = done
            for urls in self._write(name, listed_page.section, number, stream, proof):
                if before + urls == done:
                    continue  # a chunk with no URL (the closing tag): no progress
                done = before + urls
                if self.on_progress is not None:
                    self.on_progress(done, max(expected, done))
            written.append(listed_page)
            self._page_done(position + 1, len(listed), done, max(expected, done))
        return written

    def proofs(
        self, registry: SitemapRegistry, listed: list[ListedPage], origin: Origin
    ) -> dict[tuple[str, int], str]:
        """Each page's proof (``Source.page_proofs``) with this export's configuration."""
        proofs = {}
        for section in dict.fromkeys(listed_page.section for listed_page in listed):
            source = registry.get(section).for_origin(origin)
            if source.expires() is not None:
                continue  # its pages age by themselves: nothing proves one unchanged
            for number, token in source.page_proofs().items():
                text = f"{self.configuration}|{section}|{number}|{token}"
                proofs[section, number] = hashlib.sha256(text.encode()).hexdigest()
        return proofs

    def _make_in_blocks(
        self, name: str, section: str, number: int, source: Source, proof: str | None
    ) -> bool | None:
        """Write page ``number`` in blocks (spliced when it can be): True if it has a URL.

        None: the page is made the usual way (see ``splice``).
        """
        if not self.splicing or self.dry_run or self.gzip or not isinstance(source, ModelSource):
            return None
        if section not in self._in_blocks:
            self._in_blocks[section] = splice.can_make_in_blocks(source)
        if not self._in_blocks[section]:
            return None
        if section not in self._ranges:
            self._tables[section] = source.page_table()
            self._formats[section] = splice.PageFormat.of(source)
            self._ranges[section] = splice.page_ranges(
                source, self.configuration, self._tables[section]
            )
            # Read once for the section's pages, as they are for one page.
            assert source.origin is not None
            self._overrides[section] = splice.section_overrides(source, source.origin)
        overrides = self._overrides[section]
        where = self._ranges[section].get(number)
        if where is None or source.origin is None:
            return None
        # A copy of the old file made ahead, to splice the page over (``copy_soon``),
        # else its spare, taken now.
        copy = self.destination.take_copy(name)
        before = self.previous.get(name)
        if copy is None and self.spares and before is not None and before.spare is not None:
            copy = self.destination.take_spare(name, before.spare)
        staged = copy or self.destination.stage(name)
        try:
            with open(staged.path, "r+b" if copy else "wb", buffering=0) as target:
                made = self._spliced(
                    name,
                    section,
                    number,
                    source,
                    where,
                    target,
                    overrides,
                    staged.copy_of,
                    staged.outdated_spans,
                )
                if made is None:
                    target.seek(0)
                    target.truncate()
                    made = splice.make_whole(
                        source,
                        number,
                        source.origin,
                        where,
                        target,
                        overrides,
                        self._tables[section],
                        self._formats[section],
                    )
        except splice.NotInBlocks:
            staged.discard()
            return None
        except BaseException:
            staged.discard()
            raise
        if made is None:
            staged.discard()
            return False
        staged.new_spans = made.new_spans if self.spares else None
        self.staged.append(staged)
        blocks = self._stage_blocks(name, made.blocks)
        record = FileRecord(made.digest, made.size, made.urls, proof, blocks, made.rewritten)
        self._finish(ExportedFile(name, section, number, made.urls, made.size), record, staged)
        if (
            self.spares
            and made.blocks is not None
            and made.new_spans is None
            and name in self.written
        ):
            # Written whole: its next splice writes over this copy, not over a copy of
            # the whole file made then (on ext4, every byte of every page it splices).
            self.destination.spare_soon(staged)
        return True

    def _stage_blocks(self, name: str, blocks: Blocks | None) -> str | None:
        """Write the blocks file of page ``name`` unless it holds ``blocks``; its digest."""
        if blocks is None:
            return None
        data = blocks.to_bytes()
        digest = blocks_digest(data)
        before = self.previous.get(name)
        side = blocks_name(name)
        if (
            before is not None
            and before.blocks == digest
            and self.destination.size(side) == len(data)
        ):
            return digest
        staged = self.destination.put_aside(side, data)
        if staged is not None:
            self.staged.append(staged)
        return digest

    def _spliced(
        self,
        name: str,
        section: str,
        number: int,
        source: ModelSource,
        where: splice.PageRange,
        target: IO[bytes],
        overrides: splice.Overrides,
        copy_of: tuple[int, int] | None = None,
        outdated: Spans | None = None,
    ) -> splice.Made | None:
        """The page spliced from its previous file into ``target``; None: make it whole.

        ``copy_of``: ``target`` is a copy made ahead of the file of that (device,
        inode), but at the ``outdated`` spans, used if it is the file spliced, else
        emptied first.
        """
        before = self.previous.get(name)
        if before is None or before.blocks is None:
            return None
        blocks = self.kept.take(name, before)
        if blocks is None:
            blocks = read_blocks(self.destination, name, before.blocks)
            if blocks is not None and not blocks.holds(before.size, before.urls):
                return None
        if blocks is None or blocks.base != where.base:
            return None
        assert self.changes is not None and source.origin is not None
        keys = self.changes.keys_in(section, number, where.low, where.high)
        # No key logged, yet its proof changed: something the log does not name changed it.
        if not keys or self.destination.size(name) != before.size:
            return None
        # Marked more often than the log names its rows: a process not logging saved one.
        if self.changes.marks(section, number) < where.state.changes - blocks.changes:
            return None
        try:
            with self.destination.open_file(name) as old:
                copied = copy_of is not None and copy_of == files.identity(old)
                if copy_of is not None and not copied:
                    target.truncate(0)
                made = splice.splice(
                    source,
                    number,
                    source.origin,
                    where,
                    blocks,
                    keys,
                    old,
                    target,
                    overrides,
                    self._changed_elements(section, source, overrides),
                    self.read.get(section, {}).pop(number, None),
                    self._tables[section],
                    self._formats[section],
                    before.rewritten,
                    copied,
                    outdated if copied else None,
                )
        except OSError:
            logger.info("Cannot read %s to splice it; it is made whole.", name, exc_info=True)
            return None
        if made is not None:
            self.result.spliced += 1
        return made

    def _changed_elements(
        self, section: str, source: ModelSource, overrides: splice.Overrides
    ) -> dict[str, bytes] | None:
        """The elements of every row the log names in ``section`` (``splice.changed_elements``)."""
        if section not in self._elements:
            assert self.changes is not None and source.origin is not None
            keys = self.changes.keys.get(section, [])
            self._elements[section] = splice.changed_elements(
                source,
                source.origin,
                keys,
                overrides,
                self._tables.get(section),
                self._formats.get(section),
            )
        return self._elements[section]

    def _finish(self, exported: ExportedFile, record: FileRecord, staged: StagedFile) -> None:
        """Record a staged file; one holding the destination's bytes already is dropped."""
        self.names[exported.name] = exported.section
        self.records[exported.name] = record
        if self._holds(exported.name, record):
            self.result.unchanged.append(exported)
            staged.discard()
            self.staged.remove(staged)
        else:
            self.written.add(exported.name)
            self._report(exported)

    def _keep(self, name: str, section: str, page: int, proof: str) -> bool:
        """Whether ``name`` (and its gzip copy) holds what ``proof`` says: it is not made."""
        names = [name, name + GZIP_SUFFIX] if self.gzip else [name]
        records = [self.previous.get(file_name) for file_name in names]
        found = [record for record in records if record is not None and record.proof == proof]
        if len(found) != len(names):
            return False
        if any(self.destination.size(n) != r.size for n, r in zip(names, found, strict=True)):
            return False
        self.result.proven += 1
        for file_name, record in zip(names, found, strict=True):
            self.records[file_name] = record
            self.names[file_name] = section
            self.result.unchanged.append(
                ExportedFile(file_name, section, page, record.urls, record.size)
            )
        return True

    def _page_done(self, pages: int, total: int, urls: int, expected: int) -> None:
        if self.on_pages is not None:
            self.on_pages(pages, total, urls, expected)

    def stage_index(
        self, listed: list[ListedPage], files_origin: Origin, files_prefix: str
    ) -> None:
        suffix = GZIP_SUFFIX if self.gzip else ""

        def file_path(section: str, page: int) -> str:
            return files_prefix + self.paths(section, page) + suffix

        parts = index_parts(listed)
        if not parts:
            raise ExportError("No page of the sitemap has a URL: nothing to export.")
        # Past 50,000 pages, sitemap-index-2.xml and on: list each one in robots.txt.
        for number, part in enumerate(parts, 1):
            stream = render_index(part, files_origin, file_path)
            assert stream is not None
            name = _file_name(index_part_path(number))
            for _urls in self._write(name, "", None, stream, None):
                pass

    def missing(self, listed: list[ListedPage]) -> list[str]:
        """Listed pages of sections not exported this time that the destination lacks."""
        suffix = GZIP_SUFFIX if self.gzip else ""
        names = [self.page_name(listed_page) + suffix for listed_page in listed]
        return [name for name in names if not self.destination.exists(name)]

    def _write(
        self, name: str, section: str, page: int | None, stream: DocumentStream, proof: str | None
    ) -> Iterator[int]:
        """Write ``stream`` to ``name`` (and its gzip copy), yielding its URL count as it grows.

        A file that already holds these bytes (its manifest record says so, and
        its size agrees) is left as it is.
        """
        names = [name, name + GZIP_SUFFIX] if self.gzip else [name]
        staged = [] if self.dry_run else [self.destination.stage(n) for n in names]
        self.staged.extend(staged)
        with DocumentFile([s.path for s in staged], compress=self.gzip) as doc:
            for chunk in stream:
                doc.write(chunk)
                yield stream.stats.urls
        urls = stream.stats.urls
        made = [ExportedFile(name, section, page, urls, doc.size)]
        records = [FileRecord(doc.digest, doc.size, urls, proof)]
        if self.gzip:
            made.append(ExportedFile(name + GZIP_SUFFIX, section, page, urls, doc.gzip_size))
            records.append(FileRecord(doc.gzip_digest, doc.gzip_size, urls, proof))
        for position, (exported, record) in enumerate(zip(made, records, strict=True)):
            self.names[exported.name] = section
            self.records[exported.name] = record
            if self._holds(exported.name, record):
                self.result.unchanged.append(exported)
                if staged:
                    staged[position].discard()
                    self.staged.remove(staged[position])
            else:
                self.written.add(exported.name)
                self._report(exported)

    def _holds(self, name: str, record: FileRecord) -> bool:
        """Whether the destination's ``name`` holds the bytes of ``record`` already."""
        before = self.previous.get(name)
        return (
            before is not None
            and (before.digest, before.size) == (record.digest, record.size)
            and self.destination.size(name) == record.size
        )

    def _report(self, exported: ExportedFile) -> None:
        self.result.files.append(exported)
        if self.on_file is not None:
            self.on_file(exported)

    def commit(
        self,
        previous: dict[str, str],
        stale: list[str],
        *,
        full: bool,
        sections: set[str] | None = None,
    ) -> None:
        # Each section exported now was read from ``cursor`` on; the others keep theirs.
        cursors = dict(self.cursors)
        for section in set(self.names.values()) if sections is None else sections:
            if section and self.cursor is not None:
                cursors[section] = self.cursor
            elif section:
                cursors.pop(section, None)
        # Recorded before anything moves, so that a run killed from here on leaves
        # a manifest naming every file that may exist, for the next run to clean,
        # and proving nothing of the files being replaced.
        kept_records = {
            name: record
            for name, record in {**self.previous, **self.records}.items()
            if name not in self.written
        }
        # Every file durable before the first is put in place, as one by one: the
        # syncs started before that manifest is written, which they go along with. Not
        # as each page is staged: their threads then took the cores from the pages
        # being made (docs/performance.md, "Incremental export").
        self.destination.sync_soon(self.staged)
        self.destination.write_manifest({**previous, **self.names}, kept_records, cursors)
        self.destination.sync(self.staged)
        # Pages first, the index last: the index never lists a page not yet in place.
        # A page whose spare was not kept has none left (``Destination.commit``).
        gone = set(stale)
        while self.staged:
            staged = self.staged.pop(0)
            record = self.records.get(staged.name)
            spans = self.destination.commit(staged)
            if spans is not None and record is not None:
                self.records[staged.name] = dataclasses.replace(record, spare=spans)
            elif staged.new_spans is not None or staged.spare_copy:
                self.names.pop(spare_name(staged.name), None)
                gone.add(spare_name(staged.name))
        for name in stale:
            self.destination.delete(name)
        kept = {name: section for name, section in previous.items() if name not in gone}
        # Files of sections this export left out keep their records.
        records = {**({} if full else self.previous), **self.records}
        self.destination.write_manifest({**kept, **self.names}, records, cursors)

    def discard(self) -> None:
        for staged in self.staged:
            staged.discard()
        self.staged = []


def _selected_sections(registry: SitemapRegistry, sections: Sequence[str] | None) -> set[str]:
    if not sections:
        return set(registry.sections)
    unknown = [name for name in sections if not registry.is_registered(name)]
    if unknown:
        known = ", ".join(registry.sections) or "none"
        raise ExportError(
            f"Unknown sitemap section {', '.join(map(repr, unknown))} (known: {known})."
        )
    return set(sections)


def _file_name(path: str) -> str:
    """The file a document served at ``path`` is exported to."""
    return path.lstrip("/")
