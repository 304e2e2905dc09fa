"""``manage.py sitemap_indexnow``: submit the URLs waiting for IndexNow (from cron)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_sitemapx.indexnow import Batch, Outcome, add_pending, is_enabled, submit_pending


class Command(BaseCommand):
    help = (
        "Submit the URLs waiting for IndexNow, in batches of at most 10,000 per host: "
        "for cron, or to flush what the task backend has not sent."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url",
            action="append",
            dest="urls",
            default=[],
            metavar="URL",
            help="Queue this absolute URL first (repeatable): for pages no model change reports.",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Show the batches that would be sent; send and remove nothing.",
        )

    def handle(
        self, *args: Any, urls: list[str], dry_run: bool, verbosity: int, **options: Any
    ) -> None:
        if not is_enabled():
            raise CommandError("IndexNow is off: set SITEMAPX_INDEXNOW_KEY.")
        self.verbosity = verbosity
        if urls and not dry_run:
            add_pending(urls)
        report = submit_pending(dry_run=dry_run, on_batch=self._batch)
        if dry_run and urls:
            self.stdout.write(f"Would queue first: {', '.join(urls)}")
        if verbosity >= 1:
            counts = report.as_dict()
            if dry_run:
                self.stdout.write(
                    f"Would submit {sum(len(b.urls) for b in report.batches):,} URLs in "
                    f"{len(report.batches)} batches (dry run: nothing sent)."
                )
            else:
                self.stdout.write(
                    f"Submitted {counts['submitted']:,} URLs in {counts['batches']} batches; "
                    f"{counts['rejected']:,} refused and given up; {counts['pending']:,} pending."
                )
        if report.count(Outcome.UNAVAILABLE):
            raise CommandError(
                "The IndexNow endpoint did not take every batch; the rest stays pending "
                "for the next run."
            )

    def _batch(self, batch: Batch) -> None:
        if self.verbosity < 2:
            return
        answer = batch.answer
        state = (
            "would send"
            if answer is None
            else f"{answer.outcome} ({answer.status or answer.reason})"
        )
        self.stdout.write(f"{batch.host}: {len(batch.urls):,} URLs, {state}")
        if self.verbosity >= 3:
            for url in batch.urls:
                self.stdout.write(f"  {url}")
