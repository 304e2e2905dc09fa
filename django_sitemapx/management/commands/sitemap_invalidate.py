"""``manage.py sitemap_invalidate [SECTION ...] [--page N]``: mark sitemaps stale."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from django_sitemapx.invalidation import invalidate
from django_sitemapx.registry import default_registry


class Command(BaseCommand):
    help = (
        "Mark cached sitemap documents stale after changes no signal reports "
        "(QuerySet.update, bulk_create, raw SQL, a deploy that changes sections). "
        "With no section, every document is."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("sections", nargs="*", metavar="SECTION", help="Sections to mark.")
        parser.add_argument(
            "--page", type=int, help="Only this page of the one SECTION given (1, 2, ...)."
        )

    def handle(self, *args: Any, sections: list[str], page: int | None, **options: Any) -> None:
        unknown = [name for name in sections if not default_registry.is_registered(name)]
        if unknown:
            raise CommandError(
                f"Unknown sitemap section(s): {', '.join(unknown)}. "
                f"Registered: {', '.join(default_registry.sections) or 'none'}."
            )
        if page is not None and (len(sections) != 1 or page < 1):
            raise CommandError("--page needs exactly one SECTION and a page number from 1.")
        targets: list[str | None] = list(sections) or [None]
        for section in targets:
            if not invalidate(section, page):
                raise CommandError(
                    "The sitemap cache could not be reached; nothing was invalidated "
                    "(see the django_sitemapx log)."
                )
        if options["verbosity"] >= 1:
            self.stdout.write(f"Invalidated {_described(sections, page)}.")


def _described(sections: list[str], page: int | None) -> str:
    if not sections:
        return "every sitemap document"
    if page is not None:
        return f"page {page} of {sections[0]}"
    return "sections " + ", ".join(sections)
