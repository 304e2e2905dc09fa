"""An image sitemap of 1,000,000 URLs with three images each: django-sitemapx against contrib.

    python benchmarks/images_bench.py                 # 1,000,000 articles, SQLite file
    python benchmarks/images_bench.py --urls 100000   # smaller
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/DB python benchmarks/images_bench.py

Seeds ``--urls`` articles and three ``ArticleImage`` rows each (absolute image
URLs, so both sides write the same bytes), then, each in a fresh process so
its peak memory is its own, fetches the index and every page through the views
(Django's test client, no network, no cache) of:

- django-sitemapx: a ``ModelSource`` with ``RelatedImages`` (one image query
  per chunk of rows), pages sized so the largest URLs fit 50 MB;
- contrib: ``django.contrib.sitemaps`` with a custom template over
  ``url.item.images.all`` (contrib's documented way for extra elements), its
  ``items()`` given ``select_related`` and ``prefetch_related("images")`` so it
  makes one image query per page, not one per article (with pages of 30,000
  URLs: a 50,000-item prefetch exceeds SQLite's query parameter limit).

A full contrib pass over 1,000,000 URLs takes ten minutes or more: ``--contrib-pages K``
(default 2) fetches its index, its first K pages and its last one, and the
ratio compares URLs per second (said so in the output); ``--contrib-pages 0``
fetches every page.

Prints wall time, URLs and images per second, bytes, peak RSS and the ratio;
``--output FILE`` also writes the figures as JSON.
The machine's noise applies: run it on a quiet machine and repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES_PER_URL = 3


def setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.images_settings")
    import django

    django.setup()


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def seed(count: int) -> None:
    setup()
    from django.core.management import call_command
    from django.db import connection, transaction

    from example_project.articles.models import Article, ArticleImage, Category

    call_command("migrate", verbosity=0)
    if Article.objects.count() == count and ArticleImage.objects.count() == count * 3:
        return
    ArticleImage.objects.all().delete()
    Article.objects.all().delete()
    category, _ = Category.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    batch = 20_000
    import datetime

    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    for start in range(1, count + 1, batch):
        ids = range(start, min(start + batch, count + 1))
        with transaction.atomic():
            Article.objects.bulk_create(
                [
                    Article(
                        id=n,
                        category=category,
                        slug=f"bench-{n}",
                        title=f"Bench {n}",
                        updated_at=when,
                        is_published=True,
                    )
                    for n in ids
                ],
                batch_size=5_000,
            )
            ArticleImage.objects.bulk_create(
                [
                    ArticleImage(
                        article_id=n,
                        url=f"https://cdn.example.net/img/{n}/{k}.jpg",
                        position=k,
                    )
                    for n in ids
                    for k in range(IMAGES_PER_URL)
                ],
                batch_size=5_000,
            )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def child(side: str, pages_wanted: int = 0) -> dict[str, object]:
    setup()
    from django.test import Client

    from django_sitemapx.models import PageState

    # Cold for django-sitemapx too: no page table stored yet, so the index lays
    # the section out (cuts and counts its pages) within the timed run.
    PageState.objects.all().delete()
    base = rss_mb()
    client = Client(HTTP_HOST="localhost")
    index_path = "/sitemap.xml" if side == "sitemapx" else "/contrib/sitemap.xml"
    started = time.perf_counter()
    response = client.get(index_path)
    index = b"".join(response.streaming_content) if response.streaming else response.content
    pages = [
        loc.split("localhost", 1)[1].replace("&amp;", "&")
        for loc in re.findall(rb"<loc>([^<]+)</loc>", index)
        for loc in [loc.decode()]
    ]
    listed = len(pages)
    if pages_wanted > 0 and listed > pages_wanted + 1:
        pages = [*pages[:pages_wanted], pages[-1]]
    urls = images = size = 0
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, (page, response.status_code)
        chunks = response.streaming_content if response.streaming else [response.content]
        for chunk in chunks:
            size += len(chunk)
            urls += chunk.count(b"<url>")
            images += chunk.count(b"<image:image>")
    seconds = time.perf_counter() - started
    return {
        "side": side,
        "pages": len(pages),
        "pages_listed": listed,
        "urls": urls,
        "images": images,
        "bytes": size,
        "seconds": seconds,
        "base_rss_mb": round(base, 1),
        "peak_rss_mb": round(rss_mb(), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--sides", default="sitemapx,contrib")
    parser.add_argument("--contrib-pages", type=int, default=2, help="0: every contrib page.")
    parser.add_argument("--output", type=Path, help="Write the figures as JSON.")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        pages_wanted = args.contrib_pages if args.child == "contrib" else 0
        print(json.dumps(child(args.child, pages_wanted)))
        return 0
    env = dict(os.environ)
    if "DATABASE_URL" not in env:
        env["DATABASE_URL"] = (
            f"sqlite:///{Path(tempfile.gettempdir()) / 'sitemapx-images.sqlite3'}"
        )
    env["PYTHONPATH"] = str(ROOT)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", f"from benchmarks.images_bench import seed; seed({args.urls})"],
        env=env,
        cwd=ROOT,
        check=True,
    )
    print(f"data ready in {time.perf_counter() - started:.0f} s ({args.urls} articles)")
    results = {}
    for side in args.sides.split(","):
        out = subprocess.run(
            [sys.executable, __file__, "--child", side, f"--contrib-pages={args.contrib_pages}"],
            env=env,
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        result = json.loads(out.strip().splitlines()[-1])
        results[side] = result
        print(
            f"{side:9} {result['urls']:>9} URLs {result['images']:>9} images "
            f"{result['pages']:>5}/{result['pages_listed']} pages {result['bytes'] / 1e6:8.1f} MB "
            f"{result['seconds']:7.1f} s {result['urls'] / result['seconds']:>9.0f} URLs/s "
            f"peak RSS {result['peak_rss_mb']} MB (after start-up {result['base_rss_mb']} MB)"
        )
    summary: dict[str, object] = {"articles": args.urls, "results": results}
    if "sitemapx" in results and "contrib" in results:
        ours, theirs = results["sitemapx"], results["contrib"]
        ratio = (ours["urls"] / ours["seconds"]) / (theirs["urls"] / theirs["seconds"])  # type: ignore[operator]
        summary["ratio"] = ratio
        partial = theirs["pages"] != theirs["pages_listed"]
        how = (
            f"contrib timed on {theirs['pages']} of its {theirs['pages_listed']} pages"
            if partial
            else "every page of both"
        )
        print(f"django-sitemapx is {ratio:.1f}x contrib's URLs/s (same run, same data; {how})")
    if args.output:
        args.output.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
