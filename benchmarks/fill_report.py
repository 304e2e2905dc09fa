"""How full model sections' pages are: URLs and bytes per page, and the fill of each.

    BENCH_DATABASE_URL=sqlite:////tmp/fill.sqlite3 python benchmarks/fill_report.py
    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/DB \
        python benchmarks/fill_report.py --urls 200000

Seeds ``--urls`` published articles, each with five images of long CDN URLs and
a video with a long description, then lays out and crawls four sections of the
same rows (``benchmarks/fill_urls.py``): plain, images (``max_images = 5``),
videos and multilingual (five languages, alternates). Crawling is what fills the
pages: a page that goes over 50 MB is cut where it fits, as measured, and the
pages after it laid out again. Each section is crawled in key order, starting
from no page table, until a crawl changes no page; then every page is listed with
its URLs, its bytes and its fill: the larger of URLs / 50,000 and bytes / 50 MB
(the first limit it reaches). Every page but the last should be at least 90%.
Prints the load average before and after; no timing is asserted.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("plain", "images", "videos", "multilingual")
MAX_URLS = 50_000
MAX_BYTES = 50 * 1024 * 1024


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.fill_settings")
    import django

    django.setup()


def seed(count: int) -> None:
    from django.core.management import call_command
    from django.db import connection, transaction

    from example_project.articles.models import Article, ArticleImage, ArticleVideo, Category

    call_command("migrate", verbosity=0)
    if Article.objects.count() == count and ArticleVideo.objects.count() == count:
        return
    ArticleVideo.objects.all().delete()
    ArticleImage.objects.all().delete()
    Article.objects.all().delete()
    category, _ = Category.objects.get_or_create(slug="news", defaults={"name": "News"})
    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    cdn = "https://cdn.example.net/media/images/2024/01/originals/editorial/high-resolution/"
    words = "A long description of the video, as editors write them for search. " * 13
    for start in range(1, count + 1, 10_000):
        ids = range(start, min(start + 10_000, count + 1))
        with transaction.atomic():
            Article.objects.bulk_create(
                Article(
                    id=n,
                    category=category,
                    slug=f"article-{n}-a-headline-of-usual-length",
                    title=f"Article {n}",
                    updated_at=when,
                    is_published=True,
                )
                for n in ids
            )
            ArticleImage.objects.bulk_create(
                ArticleImage(
                    article_id=n,
                    url=f"{cdn}article-{n}-a-headline-of-usual-length-for-news/{k}-1920x1080-q90.jpg",
                    position=k,
                )
                for n in ids
                for k in range(5)
            )
            ArticleVideo.objects.bulk_create(
                ArticleVideo(
                    article_id=n,
                    title=f"Video {n}",
                    description=words[:900],
                    thumbnail_url=f"{cdn}article-{n}/thumbnail.jpg",
                    content_url=f"https://video.example.net/article-{n}.mp4",
                )
                for n in ids
            )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def crawl(section: str) -> tuple[list[tuple[int, int, int]], int, float]:
    """Crawl ``section`` in key order until the pages stay put: (number, URLs, bytes) per page."""
    from django.test import Client

    from benchmarks.fill_urls import registry
    from django_sitemapx.models import PageState

    PageState.objects.filter(section=section).delete()
    client = Client(HTTP_HOST="localhost")
    source = registry.get(section)
    started = time.perf_counter()
    crawls = 0
    pages: list[tuple[int, int, int]] = []
    while crawls < 10:
        crawls += 1
        before = list(PageState.objects.filter(section=section).values_list("number", "first"))
        pages = []
        for summary in source.page_summaries():
            response = client.get(f"/fill/sitemap-{section}-{summary.number}.xml")
            assert response.status_code == 200, (section, summary.number, response.status_code)
            body = b"".join(response.streaming_content) if response.streaming else response.content
            pages.append((summary.number, body.count(b"<url>"), len(body)))
        after = list(PageState.objects.filter(section=section).values_list("number", "first"))
        if sorted(after) == sorted(before):
            break
    return pages, crawls, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=200_000)
    parser.add_argument("--sections", default=",".join(SECTIONS))
    args = parser.parse_args()
    setup()
    from django.db import connection

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    seed(args.urls)
    print(f"{args.urls:,} articles on {connection.vendor}")
    for section in args.sections.split(","):
        pages, crawls, seconds = crawl(section)
        print(f"\n## {section}: {len(pages)} pages, {crawls} crawls, {seconds:.1f} s")
        print("| page | URLs | bytes | URLs % | bytes % | fill % |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        fills = []
        for number, urls, size in pages:
            url_share, byte_share = urls / MAX_URLS, size / MAX_BYTES
            fills.append(max(url_share, byte_share))
            print(
                f"| {number} | {urls:,} | {size:,} | {100 * url_share:.1f} | "
                f"{100 * byte_share:.1f} | {100 * fills[-1]:.1f} |"
            )
        over = [page for page in pages if page[1] > MAX_URLS or page[2] > MAX_BYTES]
        inner = fills[:-1]
        least = f"{100 * min(inner):.1f}%" if inner else "n/a (one page)"
        print(
            f"least fill but the last page: {least}; "
            f"pages over a limit: {len(over)}; URLs: {sum(page[1] for page in pages):,}"
        )
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
