"""``manage.py sitemap_audit``: ask the site for every URL its sitemap lists; report problems."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_sitemapx.audit import AuditReport, audit_sitemap, store_report
from django_sitemapx.audit.fetch import DEFAULT_ROBOTS_TOKEN, DEFAULT_USER_AGENT
from django_sitemapx.exceptions import InvalidURL
from django_sitemapx.locations import Origin
from django_sitemapx.locations.origins import origin_from_url


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


def _rate(value: str) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Render every URL the sitemap lists through Django, in this process, as a crawler "
        "asks for it, and report what a search engine would flag: a status other than 200, "
        "a redirect, noindex, another canonical URL, a robots.txt rule, a URL in two "
        "sections, an alternate that fails. Exits with status 1 when it finds anything."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--section",
            action="append",
            dest="sections",
            default=[],
            metavar="SECTION",
            help="Only the URLs of this section (repeatable).",
        )
        parser.add_argument(
            "--sample", type=_positive, metavar="N", help="Only N URLs drawn at random."
        )
        parser.add_argument("--seed", type=int, help="Seed of the --sample draw (repeatable).")
        parser.add_argument(
            "--base-url",
            action="append",
            dest="base_urls",
            default=[],
            metavar="URL",
            help="Audit this origin (https://example.com; repeatable) instead of every "
            "served host (SITEMAPX_HOSTS, the Sites framework's, else ALLOWED_HOSTS).",
        )
        parser.add_argument(
            "--format",
            choices=["text", "json", "csv"],
            default="text",
            help="The report's form (default: text).",
        )
        parser.add_argument(
            "--concurrency",
            type=_positive,
            default=1,
            help="Requests at once, each in its own thread and database connection (default: 1).",
        )
        parser.add_argument(
            "--rate", type=_rate, help="At most this many requests a second (default: no limit)."
        )
        parser.add_argument("--user-agent", default=DEFAULT_USER_AGENT)
        parser.add_argument(
            "--robots-token",
            default=DEFAULT_ROBOTS_TOKEN,
            help="The crawler robots.txt rules are read for (default: Googlebot).",
        )
        parser.add_argument(
            "--no-store",
            action="store_true",
            help="Do not keep the report for the admin's overview.",
        )

    def handle(
        self,
        *args: Any,
        sections: list[str],
        sample: int | None,
        seed: int | None,
        base_urls: list[str],
        format: str,
        concurrency: int,
        rate: float | None,
        user_agent: str,
        robots_token: str,
        no_store: bool,
        verbosity: int,
        **options: Any,
    ) -> None:
        origins: list[Origin] | None = None
        if base_urls:
            try:
                origins = [origin_from_url(url) for url in base_urls]
            except InvalidURL as error:
                raise CommandError(str(error)) from None
        progress = self._progress if verbosity >= 1 and self.stderr.isatty() else None
        try:
            report = audit_sitemap(
                origins=origins,
                sections=sections,
                sample=sample,
                seed=seed,
                concurrency=concurrency,
                rate=rate,
                user_agent=user_agent,
                robots_token=robots_token,
                progress=progress,
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        if progress is not None:
            self.stderr.write("")
        if not report.hosts:
            raise CommandError(
                "No host to audit: give --base-url, or set SITEMAPX_HOSTS "
                "(ALLOWED_HOSTS names no public host)."
            )
        if not no_store:
            store_report(report)
        self.stdout.write(self._render(report, format), ending="")
        if not report.ok:
            raise CommandError(
                f"The sitemap audit found {len(report.findings)} problems.", returncode=1
            )

    def _render(self, report: AuditReport, format: str) -> str:
        if format == "json":
            return report.as_json()
        if format == "csv":
            return report.as_csv()
        return report.as_text()

    def _progress(self, done: int, total: int) -> None:
        self.stderr.write(f"\rChecked {done:,} of {total:,} URLs", ending="")
        self.stderr.flush()
