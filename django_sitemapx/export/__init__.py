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
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps

from ..compression import GZIP_SUFFIX
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
from ..sources import ListedPage
from .destinations import (
    Destination,
    FolderDestination,
    StagedFile,
    StorageDestination,
    storage_destination,
)
from .files import DocumentFile

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
    """What an export wrote, removed, and found missing."""

    destination: str
    dry_run: bool
    files: list[ExportedFile] = field(default_factory=list)
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


FileCallback = Callable[[ExportedFile], None]
ProgressCallback = Callable[[int, int], None]


def export_sitemap(
    destination: Destination,
    *,
    origin: Origin,
    files_base_url: str | None = None,
    sections: Sequence[str] | None = None,
    gzip: bool = False,
    dry_run: bool = False,
    registry: SitemapRegistry | None = None,
    on_file: FileCallback | None = None,
    on_progress: ProgressCallback | None = None,
) -> ExportResult:
    """Write the index and the pages of ``sections`` (default: all) to ``destination``.

    ``origin`` is the scheme and host of the URLs (see :func:`origin_from_url`);
    the scheme rule is the views': a source's ``protocol``, else
    ``SITEMAPX_PROTOCOL``, else ``origin``'s. The index lists the pages at
    ``files_base_url`` (default: the origin), pointing at the ``.xml.gz`` copies
    when ``gzip``. ``on_file`` is called per file written, ``on_progress`` with
    (URLs written, URLs expected). Raises ``ExportError`` before writing
    anything if an argument or the destination is unusable.
    """
    started = time.monotonic()
    registry = registry if registry is not None else default_registry
    selected = _selected_sections(registry, sections)
    if files_base_url is None:
        files_origin, files_prefix = Origin(scheme_for(None, origin.scheme), origin.host), ""
    else:
        with _as_export_error():
            files_origin, files_prefix = files_root_from_url(files_base_url)
    listed = listed_pages(registry, origin)
    if not listed:
        raise NothingToExport(f"The sitemap has no URL yet on {origin.host}: nothing to export.")
    destination.validate(dry_run=dry_run)
    result = ExportResult(destination.description, dry_run)
    run = _Run(destination, gzip=gzip, dry_run=dry_run, result=result)
    run.on_file, run.on_progress = on_file, on_progress
    with contextlib.nullcontext() if dry_run else destination.lock():
        if not dry_run:
            destination.clean_leftovers(run.names_of(listed))
        previous = destination.read_manifest()
        try:
            exported = [listed_page for listed_page in listed if listed_page.section in selected]
            written = run.stage_pages(registry, exported, origin)
            in_index = [
                listed_page
                for listed_page in listed
                if listed_page.section not in selected or listed_page in written
            ]
            run.stage_index(in_index, files_origin, files_prefix)
            result.missing = run.missing(
                [listed_page for listed_page in in_index if listed_page.section not in selected]
            )
            # A section that left the registry is stale too; another section's files are not.
            # So is one no longer served on this host (its sites changed).
            served = {source.section for source in registry if source.serves(origin)}
            scope = selected | {""} | (set(previous.values()) - served)
            stale = sorted(
                name
                for name, section in previous.items()
                if section in scope and name not in run.names
            )
            if not dry_run:
                run.commit(previous, stale)
        finally:
            run.discard()
        result.removed = stale
    result.seconds = time.monotonic() - started
    return result


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
    host names the sections' ``sites`` options name; each is exported as
    :func:`export_sitemap` would, to a folder named by its host
    (:func:`host_folder`), with only its own sections. A site with no URL (no
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


class _Run:
    """One export: documents written to staging files, then committed."""

    on_file: FileCallback | None = None
    on_progress: ProgressCallback | None = None

    def __init__(
        self, destination: Destination, *, gzip: bool, dry_run: bool, result: ExportResult
    ) -> None:
        self.destination = destination
        self.gzip = gzip
        self.dry_run = dry_run
        self.result = result
        self.staged: list[StagedFile] = []
        # Every file name of this export, with its section ("" for the index).
        self.names: dict[str, str] = {}

    def page_name(self, listed_page: ListedPage) -> str:
        return _file_name(page_path(listed_page.section, listed_page.summary.number))

    def names_of(self, listed: Iterable[ListedPage]) -> list[str]:
        pages = list(listed)
        parts = range(1, max(len(index_parts(pages)), 1) + 1)
        return [
            *(_file_name(index_part_path(part)) for part in parts),
            *map(self.page_name, pages),
        ]

    def stage_pages(
        self, registry: SitemapRegistry, listed: list[ListedPage], origin: Origin
    ) -> list[ListedPage]:
        """Write the pages of ``listed``; return those that had a URL."""
        expected = sum(
            registry.get(listed_page.section).url_count(listed_page.summary)
            for listed_page in listed
        )
        done = 0
        written = []
        for listed_page in listed:
            registered = registry.get(listed_page.section)
            source = registered.for_origin(origin)
            page_origin = source.origin
            assert page_origin is not None
            page = source.page(listed_page.summary.number, listed_page.summary)
            stream = None if page is None else render_page(source, page, page_origin)
            if stream is None:
                # Emptied since the index was read, or every entry skipped: leave it
                # out of the index rather than list a page that is not there.
                logger.warning(
                    "Sitemap section %r page %s has no URL; not exported.",
                    listed_page.section,
                    listed_page.summary.number,
                )
                continue
            before = done
            for urls in self._write(
                self.page_name(listed_page),
                listed_page.section,
                listed_page.summary.number,
                stream,
            ):
                if before + urls == done:
                    continue  # a chunk with no URL (the closing tag): no progress
                done = before + urls
                if self.on_progress is not None:
                    self.on_progress(done, max(expected, done))
            written.append(listed_page)
        return written

    def stage_index(
        self, listed: list[ListedPage], files_origin: Origin, files_prefix: str
    ) -> None:
        suffix = GZIP_SUFFIX if self.gzip else ""

        def file_path(section: str, page: int) -> str:
            return files_prefix + page_path(section, page) + suffix

        parts = index_parts(listed)
        if not parts:
            raise ExportError("No page of the sitemap has a URL: nothing to export.")
        # Past 50,000 pages, sitemap-index-2.xml and on: list each one in robots.txt.
        for number, part in enumerate(parts, 1):
            stream = render_index(part, files_origin, file_path)
            assert stream is not None
            for _urls in self._write(_file_name(index_part_path(number)), "", None, stream):
                pass

    def missing(self, listed: list[ListedPage]) -> list[str]:
        """Listed pages of sections not exported this time that the destination lacks."""
        suffix = GZIP_SUFFIX if self.gzip else ""
        names = [self.page_name(listed_page) + suffix for listed_page in listed]
        return [name for name in names if not self.destination.exists(name)]

    def _write(
        self, name: str, section: str, page: int | None, stream: DocumentStream
    ) -> Iterator[int]:
        """Write ``stream`` to ``name`` (and its gzip copy), yielding its URL count as it grows."""
        names = [name, name + GZIP_SUFFIX] if self.gzip else [name]
        staged = [] if self.dry_run else [self.destination.stage(n) for n in names]
        self.staged.extend(staged)
        with DocumentFile([s.path for s in staged], compress=self.gzip) as doc:
            for chunk in stream:
                doc.write(chunk)
                yield stream.stats.urls
        urls = stream.stats.urls
        self._report(ExportedFile(name, section, page, urls, doc.size))
        if self.gzip:
            self._report(ExportedFile(name + GZIP_SUFFIX, section, page, urls, doc.gzip_size))
        for file_name in names:
            self.names[file_name] = section

    def _report(self, exported: ExportedFile) -> None:
        self.result.files.append(exported)
        if self.on_file is not None:
            self.on_file(exported)

    def commit(self, previous: dict[str, str], stale: list[str]) -> None:
        # Recorded before anything moves, so that a run killed from here on leaves
        # a manifest naming every file that may exist, for the next run to clean.
        self.destination.write_manifest({**previous, **self.names})
        # Pages first, the index last: the index never lists a page not yet in place.
        while self.staged:
            self.destination.commit(self.staged.pop(0))
        for name in stale:
            self.destination.delete(name)
        kept = {name: section for name, section in previous.items() if name not in stale}
        self.destination.write_manifest({**kept, **self.names})

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
