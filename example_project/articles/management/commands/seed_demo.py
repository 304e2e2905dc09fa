"""``manage.py seed_demo --count N``: make sure N demo articles exist (bulk inserts)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from django.utils import timezone

from django_sitemapx import invalidate
from django_sitemapx.registry import default_registry
from example_project.articles.factories import CategoryFactory, DemoArticleFactory
from example_project.articles.models import Article, ArticleImage, ArticleVideo, Category

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
                    _add_media([article.slug for article in batch])
                created += len(batch)
            if options["verbosity"] >= 2:
                self.stdout.write(f"{numbers[-1]} / {count}")
        recent = _refresh_news()
        if created or recent:
            # bulk_create sends no post_save: without this, a cache shared between
            # processes would keep serving the sitemap as it was.
            invalidate()
        total = Article.objects.filter(slug__startswith="demo-article-").count()
        self.stdout.write(
            f"{created} articles created; {total} demo articles and "
            f"{Category.objects.count()} categories, {ArticleImage.objects.count()} images, "
            f"{ArticleVideo.objects.count()} videos and {recent} news articles in the database "
            f"({len(default_registry.sections)} sitemap sections)."
        )


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
            Article.objects.filter(pk=pk).update(published_at=now - timedelta(hours=hours))
    return len(newest)
