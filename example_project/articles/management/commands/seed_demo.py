"""``manage.py seed_demo --count N``: make sure N demo articles exist (bulk inserts)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from django_sitemapx import invalidate
from django_sitemapx.registry import default_registry
from example_project.articles.factories import CategoryFactory, DemoArticleFactory
from example_project.articles.models import Article, Category

CATEGORY_SLUGS = ["news", "guides", "reviews", "opinion", "culture"]
BATCH_SIZE = 5_000


class Command(BaseCommand):
    help = "Create demo categories and articles up to --count articles; safe to run again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--count", type=int, default=3_000, help="Articles wanted in total.")

    def handle(self, *args: Any, count: int, **options: Any) -> None:
        if count < 0:
            raise CommandError("--count must be zero or more.")
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
        if created:
            # bulk_create sends no post_save: without this, a cache shared between
            # processes would keep serving the sitemap as it was.
            invalidate()
        total = Article.objects.filter(slug__startswith="demo-article-").count()
        self.stdout.write(
            f"{created} articles created; {total} demo articles and "
            f"{Category.objects.count()} categories in the database "
            f"({len(default_registry.sections)} sitemap sections)."
        )
