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
from django.utils import timezone

from django_sitemapx import invalidate
from django_sitemapx.registry import default_registry
from example_project.articles.factories import CategoryFactory, DemoArticleFactory
from example_project.articles.models import (
    Article,
    ArticleImage,
    ArticleVideo,
    Author,
    Category,
)

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
                    _add_media([article.slug for article in batch])
                created += len(batch)
            if options["verbosity"] >= 2:
                self.stdout.write(f"{numbers[-1]} / {count}")
        new_authors = self._authors(wanted_authors)
        recent = _refresh_news()
        if created or new_authors or recent:
            # bulk_create sends no post_save: without this, a cache shared between
            # processes would keep serving the sitemap as it was.
            invalidate()
        total = Article.objects.filter(slug__startswith="demo-article-").count()
        self.stdout.write(
            f"{created} articles created; {total} demo articles and "
            f"{Category.objects.count()} categories, {Author.objects.count()} authors, "
            f"{ArticleImage.objects.count()} images, {ArticleVideo.objects.count()} videos and "
            f"{recent} news articles in the database "
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


# Images per demo article cycle through 0 to 3; one article in 25 has a video.
IMAGE_CYCLE = 4
VIDEO_EVERY = 25
# The most recent demo articles are "news": published within the last day and a half.
NEWS_ARTICLES = 36


def _number(slug: str) -> int:
    return int(slug.rsplit("-", 1)[1])


def _add_media(slugs: list[str]) -> None:
    """Images and videos for newly created demo articles (bulk, one query each)."""
    articles = Article.objects.filter(slug__in=slugs).values_list("pk", "slug")
    images, videos = [], []
    for pk, slug in articles:
        number = _number(slug)
        images += [
            ArticleImage(article_id=pk, url=f"/static/demo/{number}-{k}.jpg", position=k)
            for k in range(number % IMAGE_CYCLE)
        ]
        if number % VIDEO_EVERY == 0:
            videos.append(
                ArticleVideo(
                    article_id=pk,
                    title=f"Demo video {number}",
                    description=f"A short demo clip for article {number}.",
                    thumbnail_url=f"/static/demo/{number}-thumb.jpg",
                    content_url=f"/static/demo/{number}.mp4",
                    duration=30 + number % 600,
                )
            )
    ArticleImage.objects.bulk_create(images, batch_size=BATCH_SIZE)
    ArticleVideo.objects.bulk_create(videos, batch_size=BATCH_SIZE, ignore_conflicts=True)


def _refresh_news() -> int:
    """Date the newest published demo articles within the last two days; return how many."""
    newest = list(
        Article.objects.filter(slug__startswith="demo-article-", is_published=True)
        .order_by("-pk")
        .values_list("pk", flat=True)[:NEWS_ARTICLES]
    )
    now = timezone.now()
    with transaction.atomic():
        for hours, pk in enumerate(newest):
            Article.objects.filter(pk=pk).update(
                published_at=now - datetime.timedelta(hours=hours)
            )
    return len(newest)
