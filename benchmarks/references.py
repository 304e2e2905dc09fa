"""Plain-Python references: the same ``<urlset>`` pages with no library at all.

They mark the physical limit on this machine: the queries are the ones
django-sitemapx runs (published articles joined to their category, one fixed
key range of 50,000 per page, keys 1 to 50,000 on page 1, read in chunks),
the output is the same bytes, but nothing is escaped, checked or counted.
``values_page`` lets Django's ORM build tuples and formats the datetimes in
Python; ``cursor_page`` uses the DB-API cursor directly and has the database
format ``lastmod`` as text.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from django.db import connection
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from example_project.articles.models import Article

PAGE_SIZE = 50_000
CHUNK_SIZE = 2_000
CONTENT_TYPE = "application/xml; charset=utf-8"
OPEN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
)
CLOSE = "</urlset>\n"

_CURSOR_SQL = {
    "postgresql": (
        "SELECT c.slug, a.slug, to_char(a.updated_at AT TIME ZONE 'UTC', "
        '\'YYYY-MM-DD"T"HH24:MI:SS"+00:00"\') '
        "FROM articles_article a JOIN articles_category c ON c.id = a.category_id "
        "WHERE a.is_published AND a.id >= %s AND a.id <= %s ORDER BY a.id"
    ),
    "sqlite": (
        "SELECT c.slug, a.slug, strftime('%Y-%m-%dT%H:%M:%S+00:00', a.updated_at) "
        "FROM articles_article a JOIN articles_category c ON c.id = a.category_id "
        "WHERE a.is_published AND a.id >= ? AND a.id <= ? ORDER BY a.id"
    ),
}


def values_page(request: HttpRequest, page: int) -> StreamingHttpResponse:
    """``values_list(...).iterator()`` into an f-string loop."""
    prefix = f"{request.scheme}://{request.get_host()}/articles/"
    rows = (
        Article.objects.filter(
            is_published=True, pk__gte=(page - 1) * PAGE_SIZE + 1, pk__lte=page * PAGE_SIZE
        )
        .order_by("pk")
        .values_list("category__slug", "slug", "updated_at")
        .iterator(chunk_size=CHUNK_SIZE)
    )

    def stream() -> Iterator[bytes]:
        yield OPEN.encode()
        chunk: list[str] = []
        for category, slug, updated_at in rows:
            chunk.append(
                f"<url><loc>{prefix}{category}/{slug}/</loc>"
                f"<lastmod>{updated_at.isoformat()}</lastmod>"
                "<changefreq>weekly</changefreq><priority>0.6</priority></url>\n"
            )
            if len(chunk) == CHUNK_SIZE:
                yield "".join(chunk).encode()
                chunk = []
        yield ("".join(chunk) + CLOSE).encode()

    return StreamingHttpResponse(stream(), content_type=CONTENT_TYPE)


def cursor_page(request: HttpRequest, page: int) -> StreamingHttpResponse:
    """A raw DB-API cursor, ``lastmod`` formatted by the database, into the same loop."""
    prefix = f"{request.scheme}://{request.get_host()}/articles/"
    connection.ensure_connection()
    cursor = connection.connection.cursor()
    cursor.execute(_CURSOR_SQL[connection.vendor], ((page - 1) * PAGE_SIZE + 1, page * PAGE_SIZE))

    def stream() -> Iterator[bytes]:
        yield OPEN.encode()
        try:
            while rows := cursor.fetchmany(CHUNK_SIZE):
                yield "".join(
                    [
                        f"<url><loc>{prefix}{category}/{slug}/</loc><lastmod>{lastmod}</lastmod>"
                        "<changefreq>weekly</changefreq><priority>0.6</priority></url>\n"
                        for category, slug, lastmod in rows
                    ]
                ).encode()
        finally:
            cursor.close()
        yield CLOSE.encode()

    return StreamingHttpResponse(stream(), content_type=CONTENT_TYPE)


_trivial_body: bytes | None = None


def trivial(request: HttpRequest) -> HttpResponse:
    """The bytes of ``BENCH_TRIVIAL_FILE`` (a saved sitemap page), held in memory."""
    global _trivial_body
    if _trivial_body is None:
        _trivial_body = Path(os.environ["BENCH_TRIVIAL_FILE"]).read_bytes()
    return HttpResponse(_trivial_body, content_type=CONTENT_TYPE)
