"""``manage.py sitemap_export``: write the sitemap as files (see ``django_sitemapx.export``)."""

from __future__ import annotations

import os
import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_sitemapx.conf import app_settings
from django_sitemapx.exceptions import ExportError
from django_sitemapx.export import (
    Destination,
    ExportedFile,
    ExportResult,
    FolderDestination,
    export_every_site,
    export_sitemap,
    origin_from_sites_framework,
    origin_from_url,
    storage_destination,
)
from django_sitemapx.locations import Origin
from django_sitemapx.locations.origins import uses_sites_framework

BAR_WIDTH = 30


class Command(BaseCommand):
    help = (
        "Write the sitemap index and pages as files, the same bytes the views serve, "
        "atomically: the previous export stays readable until the new one is complete."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        where = parser.add_mutually_exclusive_group()
        where.add_argument("--output-dir", metavar="PATH", help="Local folder to write to.")
        where.add_argument(
            "--storage",
            metavar="ALIAS",
            help="STORAGES alias to write to (default: SITEMAPX_EXPORT_STORAGE).",
        )
        host = parser.add_mutually_exclusive_group()
        host.add_argument(
            "--base-url", metavar="URL", help="Scheme and host of the URLs: https://example.com"
        )
        host.add_argument(
            "--site", type=int, metavar="ID", help="Take the host from django.contrib.sites."
        )
        host.add_argument(
            "--all-sites",
            action="store_true",
            help="Export every site (django.contrib.sites and the hosts sections name), "
            "each into a folder named by its host, with only its own sections.",
        )
        parser.add_argument(
            "--files-base-url",
            metavar="URL",
            help="Where the files will be served, for the index (default: "
            "SITEMAPX_FILES_BASE_URL, else the base URL); with --all-sites, {host} stands "
            "for each site's folder.",
        )
        parser.add_argument(
            "--section",
            action="append",
            dest="sections",
            metavar="NAME",
            help="Export only this section's pages (repeatable); the index is always written.",
        )
        parser.add_argument(
            "--gzip",
            action="store_true",
            help="Also write .xml.gz files, and point the index at them.",
        )
        parser.add_argument(
            "--full",
            action="store_true",
            help="Make and write every file, even those the manifest proves unchanged.",
        )
        parser.add_argument(
            "--tasks",
            action="store_true",
            help="Split the export into tasks of page ranges on Django's Tasks framework "
            "(SITEMAPX_EXPORT_TASK_BACKEND), for any number of workers, to --output-dir or "
            "--storage.",
        )
        parser.add_argument(
            "--pages-per-task",
            type=int,
            default=None,
            metavar="N",
            help="With --tasks: pages each task makes (default: 20).",
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help="With --tasks: wait until the workers have published the export.",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="Say what would be written; write nothing."
        )

    def handle(
        self,
        *args: Any,
        output_dir: str | None,
        storage: str | None,
        base_url: str | None,
        site: int | None,
        all_sites: bool,
        files_base_url: str | None,
        sections: list[str] | None,
        gzip: bool,
        full: bool,
        dry_run: bool,
        verbosity: int,
        tasks: bool = False,
        pages_per_task: int | None = None,
        wait: bool = False,
        **options: Any,
    ) -> None:
        self.verbosity = verbosity
        self._bar_shown = 0.0
        self._started = time.monotonic()
        show_bar = verbosity >= 1 and self.stdout.isatty()
        options_: dict[str, Any] = {
            "files_base_url": files_base_url or app_settings.FILES_BASE_URL,
            "sections": sections,
            "gzip": gzip,
            "full": full,
            "dry_run": dry_run,
            "on_file": self._file_written if verbosity >= 2 else None,
            "on_pages": self._progress if show_bar else None,
        }
        if tasks:
            if all_sites or sections or dry_run:
                raise CommandError(
                    "--tasks exports every section; it takes no --all-sites, --section or "
                    "--dry-run."
                )
            self._in_tasks(
                output_dir, storage, base_url, site, options_, pages_per_task, wait=wait
            )
            return
        try:
            destination = _destination(output_dir, storage)
            if all_sites:
                results = self._every_site(destination, options_)
            else:
                results = [export_sitemap(destination, origin=_origin(base_url, site), **options_)]
        except ExportError as error:
            raise CommandError(str(error)) from error
        except OSError as error:
            raise CommandError(
                f"The export failed and the previous one is left in place: {error}"
            ) from error
        finally:
            if self._bar_shown:
                self.stdout.write("")
        for result in results:
            self._summary(result)

    def _in_tasks(
        self,
        output_dir: str | None,
        storage: str | None,
        base_url: str | None,
        site: int | None,
        options: dict[str, Any],
        pages_per_task: int | None,
        *,
        wait: bool,
    ) -> None:
        from django_sitemapx.export import parallel

        try:
            run = parallel.start_export(
                _destination(output_dir, storage),
                origin=_origin(base_url, site),
                files_base_url=options["files_base_url"],
                gzip=options["gzip"],
                full=options["full"],
                pages_per_task=pages_per_task or parallel.PAGES_PER_TASK,
            )
        except ExportError as error:
            raise CommandError(str(error)) from error
        if self.verbosity >= 1:
            self.stdout.write(f"Export run {run} enqueued.")
        if not wait:
            return
        while True:
            found = [found for found in parallel.running_exports() if found[0] == run]
            if not found:
                break
            _, _, done, parts = found[0]
            if self.verbosity >= 1 and self.stdout.isatty():
                self.stdout.write(f"\r{done:,}/{parts:,} tasks done\033[K", ending="")
                self.stdout.flush()
            time.sleep(0.5)
        if self.verbosity >= 1:
            if self.stdout.isatty():
                self.stdout.write("")
            self.stdout.write(
                f"Export run {run} published in {time.monotonic() - self._started:.1f} s."
            )

    def _every_site(self, destination: Destination, options: dict[str, Any]) -> list[ExportResult]:
        results = []
        for export in export_every_site(destination, **options):
            if export.result is None:
                if self.verbosity >= 1:
                    self.stdout.write(f"{export.origin.host}: no URL; nothing exported.")
                continue
            results.append(export.result)
        if not results:
            raise ExportError("No site has a sitemap section: nothing to export.")
        return results

    def _file_written(self, exported: ExportedFile) -> None:
        if self._bar_shown:
            self.stdout.write("\r\033[K", ending="")
        count = f"{exported.urls:,} {'URLs' if exported.page else 'pages'}"
        self.stdout.write(f"{exported.name}: {count}, {exported.bytes:,} bytes")

    def _progress(self, pages: int, total: int, urls: int, expected: int) -> None:
        now = time.monotonic()
        if pages < total and now - self._bar_shown < 0.2:
            return
        self._bar_shown = now
        line = progress_line(pages, total, urls, expected, now - self._started)
        self.stdout.write(f"\r{line}\033[K", ending="")
        self.stdout.flush()

    def _summary(self, result: ExportResult) -> None:
        for name in result.missing:
            self.stderr.write(
                f"Warning: the index lists {name}, which {result.destination} does not have; "
                "export its section too."
            )
        if self.verbosity < 1:
            return
        verb = "Would write" if result.dry_run else "Wrote"
        removed = "would remove" if result.dry_run else "removed"
        if self.verbosity >= 2 or result.dry_run:
            for name in result.removed:
                self.stdout.write(f"{name}: {removed} (stale)")
        # Pages remade from their previous file and the blocks that changed (written too).
        spliced = f"{result.spliced:,} spliced; " if app_settings.EXPORT_SPLICE else ""
        self.stdout.write(
            f"{verb} {len(result.files):,} files ({result.urls:,} URLs, {result.bytes:,} bytes) "
            f"to {result.destination} in {result.seconds:.1f} s; "
            f"{len(result.unchanged):,} unchanged; "
            f"{spliced}{removed} {len(result.removed):,} stale files."
        )


def progress_line(pages: int, total: int, urls: int, expected: int, seconds: float) -> str:
    """``[####....] 1,200/2,000 pages, 60,000,000/100,000,000 URLs, 410,000 URLs/s, 1m38s left``.

    The rate counts every URL done, written or proven unchanged; the time left
    assumes the pages still to do go at that rate.
    """
    filled = BAR_WIDTH * pages // max(total, 1)
    bar = "#" * filled + "." * (BAR_WIDTH - filled)
    line = f"[{bar}] {pages:,}/{total:,} pages, {urls:,}/{expected:,} URLs"
    if seconds > 0 and urls:
        rate = urls / seconds
        left = max(expected - urls, 0) / rate
        minutes, secs = divmod(round(left), 60)
        line += f", {rate:,.0f} URLs/s, {f'{minutes}m' if minutes else ''}{secs}s left"
    return line


def _destination(output_dir: str | os.PathLike[str] | None, alias: str | None) -> Destination:
    if output_dir is not None:
        # call_command() from code may pass a Path.
        output_dir = os.fspath(output_dir)
        if not output_dir.strip():
            raise ExportError("--output-dir is empty.")
        return FolderDestination(output_dir)
    alias = alias or app_settings.EXPORT_STORAGE
    if not alias:
        raise ExportError("Give --output-dir or --storage (or set SITEMAPX_EXPORT_STORAGE).")
    return storage_destination(alias)


def _origin(base_url: str | None, site_id: int | None) -> Origin:
    if base_url is not None:
        return origin_from_url(base_url)
    if site_id is not None or uses_sites_framework():
        return origin_from_sites_framework(site_id)
    raise ExportError("Give --base-url (e.g. https://example.com) or --site ID.")
