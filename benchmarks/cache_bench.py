"""Cold miss, warm hit and 304 for one 50,000-URL sitemap page, in one run.

Compares django-sitemapx's own cache with ``django.contrib.sitemaps`` wrapped in
``cache_page`` on the same cache, and with a trivial view returning the same
bytes (the floor for a hit). Requests go through Django's test client, so the
figures are the application's cost without a network or a WSGI server.

    python benchmarks/cache_bench.py                       # SQLite + local memory
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench \\
    CACHE_URL=rediscache://127.0.0.1:6379/3 python benchmarks/cache_bench.py

The database named by DATABASE_URL is not touched: a ``test_`` copy is created
and dropped. The cache alias is cleared.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

URLS = 50_000


def configure() -> None:
    import django
    import environ
    from django.conf import settings

    env = environ.Env()
    settings.configure(
        DEBUG=False,
        SECRET_KEY="benchmark-only",
        ALLOWED_HOSTS=["testserver"],
        INSTALLED_APPS=[
            "django.contrib.auth",
            "django.contrib.contenttypes",
            "django.contrib.sitemaps",
            "django_sitemapx",
            "example_project.articles",
        ],
        MIDDLEWARE=["django.middleware.common.CommonMiddleware"],
        TEMPLATES=[
            {"BACKEND": "django.template.backends.django.DjangoTemplates", "APP_DIRS": True}
        ],
        ROOT_URLCONF=__name__,
        DATABASES={"default": env.db("DATABASE_URL", default="sqlite:///:memory:")},
        CACHES={"default": env.cache("CACHE_URL", default="locmemcache://")},
        USE_TZ=True,
        TIME_ZONE="UTC",
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        SITEMAPX_CACHE_WAIT=1.0,
        SITEMAPX_CACHE_LOCAL_BYTES=env.int(
            "SITEMAPX_CACHE_LOCAL_BYTES", default=app_settings_default_local_bytes()
        ),
    )
    django.setup()


def app_settings_default_local_bytes() -> int:
    from django_sitemapx.conf import DEFAULT_CACHE_LOCAL_BYTES

    return DEFAULT_CACHE_LOCAL_BYTES


def _urlpatterns() -> list[Any]:
    from django.contrib.sitemaps import Sitemap
    from django.contrib.sitemaps import views as contrib_views
    from django.http import HttpRequest, HttpResponse
    from django.urls import include, path
    from django.views.decorators.cache import cache_page

    from example_project.articles.models import Article

    class ContribArticles(Sitemap):  # type: ignore[type-arg]
        limit = URLS
        changefreq = "weekly"
        priority = 0.6

        def items(self) -> Any:
            return Article.objects.filter(is_published=True).select_related("category")

        def lastmod(self, item: Article) -> datetime.datetime:
            return item.updated_at

    def trivial(request: HttpRequest) -> HttpResponse:
        return HttpResponse(TRIVIAL_BODY, content_type="application/xml; charset=utf-8")

    from example_project.articles import views

    return [
        path("articles/<slug:category>/<str:slug>/", views.article_detail, name="article-detail"),
        path("articles/<slug:category>/", views.category_detail, name="category-detail"),
        path("", views.home, name="home"),
        path("about/", views.about, name="about"),
        path(
            "contrib-sitemap.xml",
            cache_page(3600)(contrib_views.sitemap),
            {"sitemaps": {"article": ContribArticles}},
        ),
        path("trivial.xml", trivial),
        path("", include("django_sitemapx.urls")),
    ]


TRIVIAL_BODY = b""
urlpatterns: list[Any] = []


def seed() -> None:
    from example_project.articles.models import Article, Category

    category = Category.objects.create(name="News", slug="news")
    start = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    Article.objects.bulk_create(
        (
            Article(
                id=n,
                category=category,
                slug=f"article-{n}",
                title=f"Article {n}",
                updated_at=start + datetime.timedelta(minutes=n),
                is_published=True,
            )
            for n in range(1, URLS + 1)
        ),
        batch_size=5_000,
    )


def body(response: Any) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return bytes(response.content)


def timed(runs: int, action: Callable[[], Any]) -> tuple[float, Any]:
    """Median seconds of ``runs`` calls, and the last result."""
    from django_sitemapx.serving.background import store_thread

    times = []
    result = None
    for _ in range(runs):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
        # A miss's store (the store thread's, on Redis and Memcached) comes after
        # its response: untimed, and done before the next run starts.
        store_thread.drain(60)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="Runs of each warm measurement.")
    parser.add_argument("--cold-runs", type=int, default=3, help="Runs of each cold miss.")
    args = parser.parse_args()

    configure()
    from django.core.cache import caches
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    global urlpatterns, TRIVIAL_BODY
    urlpatterns = _urlpatterns()
    original_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        seed()
        cache = caches["default"]
        client = Client()
        rows: list[tuple[str, float, str]] = []

        def cold(path: str) -> Callable[[], Any]:
            def run() -> Any:
                cache.clear()
                response = client.get(path)
                return response, body(response)

            return run

        def warm(path: str, **headers: str) -> Callable[[], Any]:
            def run() -> Any:
                response = client.get(path, headers=headers)
                return response, body(response)

            return run

        ours = "/sitemap-article-1.xml"
        seconds, (response, data) = timed(args.cold_runs, cold(ours))
        assert response.status_code == 200 and data.count(b"<url>") == URLS
        TRIVIAL_BODY = data
        rows.append(("sitemapx cold miss", seconds, f"{len(data):,} bytes"))
        body(client.get(ours))
        seconds, (response, _) = timed(args.runs, warm(ours))
        rows.append(("sitemapx warm hit", seconds, f"streaming={response.streaming}"))
        etag = response["ETag"]
        seconds, (response, _) = timed(args.runs * 3, warm(ours, if_none_match=etag))
        with CaptureQueriesContext(connection) as queries:
            client.get(ours, headers={"if-none-match": etag})
        rows.append(("sitemapx 304", seconds, f"{response.status_code}, {len(queries)} queries"))
        seconds, (response, packed) = timed(args.runs, warm(ours + ".gz"))
        rows.append(("sitemapx warm hit .xml.gz", seconds, f"{len(packed):,} bytes"))

        contrib = "/contrib-sitemap.xml"
        seconds, (response, data) = timed(args.cold_runs, cold(contrib))
        assert data.count(b"<url>") == URLS
        rows.append(("contrib+cache_page cold miss", seconds, f"{len(data):,} bytes"))
        seconds, (response, _) = timed(args.runs, warm(contrib))
        rows.append(("contrib+cache_page warm hit", seconds, ""))
        last_modified = response.get("Last-Modified", "")
        seconds, (response, _) = timed(args.runs, warm(contrib, if_modified_since=last_modified))
        with CaptureQueriesContext(connection) as queries:
            client.get(contrib, headers={"if-modified-since": last_modified})
        rows.append(
            (
                "contrib+cache_page conditional",
                seconds,
                f"{response.status_code}, {len(queries)} queries",
            )
        )

        seconds, _ = timed(args.runs, warm("/trivial.xml"))
        rows.append(("trivial view, same bytes", seconds, ""))

        print(f"database {connection.vendor}, cache {type(cache).__name__}, {URLS:,} URLs")
        for name, value, note in rows:
            print(f"{name:32} {value * 1000:10.2f} ms  {note}")
        by_name = {name: value for name, value, _ in rows}
        trivial = by_name["trivial view, same bytes"]
        print()
        warm_ratio = by_name["sitemapx warm hit"] / trivial
        print(f"warm hit / trivial view:            {warm_ratio:6.2f}x")
        print(
            "contrib cold / sitemapx cold:       "
            f"{by_name['contrib+cache_page cold miss'] / by_name['sitemapx cold miss']:6.2f}x"
        )
        print(
            "contrib warm / sitemapx warm:       "
            f"{by_name['contrib+cache_page warm hit'] / by_name['sitemapx warm hit']:6.2f}x"
        )
        print(
            "contrib conditional / sitemapx 304: "
            f"{by_name['contrib+cache_page conditional'] / by_name['sitemapx 304']:6.2f}x"
        )
    finally:
        cache.clear()
        connection.creation.destroy_test_db(original_name, verbosity=0)


if __name__ == "__main__":
    os.environ.pop("DJANGO_SETTINGS_MODULE", None)
    main()
