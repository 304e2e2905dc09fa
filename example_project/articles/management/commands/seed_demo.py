"""``manage.py seed_demo --count N``: make sure N demo articles exist (bulk inserts).

``--authors M`` (default: one author per 10 articles) makes sure M demo authors exist:
UUID-keyed rows, derived from their number so a second run adds none.
"""

from __future__ import annotations

import datetime
import uuid
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from django_sitemapx import invalidate
from django_sitemapx.registry import default_registry
from example_project.articles.factories import CategoryFactory, DemoArticleFactory
from example_project.articles.models import Article, Author, Category

CATEGORY_SLUGS = ["news", "guides", "reviews", "opinion", "culture"]
BATCH_SIZE = 5_000


class Command(BaseCommand):
    help = "Create demo categories and articles up to --count articles; safe to run again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--count", type=int, default=3_000, help="Articles wanted in total.")
        parser.add_argument(
            "--authors", type=int, default=None, help="Authors wanted (default: count / 10)."
        )

    def handle(self, *args: Any, count: int, authors: int | None = None, **options: Any) -> None:
        if count < 0 or (authors is not None and authors < 0):
            raise CommandError("--count and --authors must be zero or more.")
        wanted_authors = count // 10 if authors is None else authors
        categories = [
            CategoryFactory(slug=slug, name=slug.capitalize()) for slug in CATEGORY_SLUGS
        ]
        created = 0
        for start in range(1, count + 1, BATCH_SIZE):
            numbers = range(start, min(start + BATCH_SIZE, count + 1))
            slugs = {f"demo-article-{n}": n for n in numbers}
            present = set(
                Article.objects.filter(slug__in=list(slugs)).values_list("slug", flat=True)
            )
            batch = [
                DemoArticleFactory.build(number=n, category=categories[n % len(categories)])
                for slug, n in slugs.items()
                if slug not in present
            ]
            if batch:
                with transaction.atomic():
                    Article.objects.bulk_create(batch, ignore_conflicts=True)
                created += len(batch)
            if options["verbosity"] >= 2:
                self.stdout.write(f"{numbers[-1]} / {count}")
        new_authors = self._authors(wanted_authors)
        if created or new_authors:
            # bulk_create sends no post_save: without this, a cache shared between
            # processes would keep serving the sitemap as it was.
            invalidate()
        total = Article.objects.filter(slug__startswith="demo-article-").count()
        self.stdout.write(
            f"{created} articles created; {total} demo articles and "
            f"{Category.objects.count()} categories and {Author.objects.count()} authors "
            "in the database "
            f"({len(default_registry.sections)} sitemap sections)."
        )

    def _authors(self, count: int) -> int:
        """Authors 1..count, each with a UUID derived from its number; the number created."""
        created = 0
        epoch = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
        for start in range(1, count + 1, BATCH_SIZE):
            numbers = range(start, min(start + BATCH_SIZE, count + 1))
            ids = {uuid.uuid5(uuid.NAMESPACE_URL, f"demo-author-{n}"): n for n in numbers}
            present = set(Author.objects.filter(id__in=list(ids)).values_list("id", flat=True))
            batch = [
                Author(
                    id=key, name=f"Demo author {n}", updated_at=epoch + datetime.timedelta(hours=n)
                )
                for key, n in ids.items()
                if key not in present
            ]
            if batch:
                with transaction.atomic():
                    Author.objects.bulk_create(batch, ignore_conflicts=True)
                created += len(batch)
        return created
