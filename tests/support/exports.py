"""Helpers shared by the export and ``sitemap_export`` tests."""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Any

from django.core.management import call_command

from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource, ModelSource
from tests.conftest import validate_sitemap

BASE = "http://example.com"


class DatedArticleSource(ModelSource):
    """Articles (``example_project.articles``) by slug, their lastmod ``updated_at``: a
    column that is never NULL, written as W3C text by the database (not MariaDB)."""

    fields = ("slug",)
    lastmod_field = "updated_at"

    def location(self, row: Any) -> str:
        return f"/a/{row.slug}/"


def run(*args: str, **options: Any) -> tuple[str, str]:
    """``call_command("sitemap_export", ...)``; return (stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    call_command("sitemap_export", *args, stdout=out, stderr=err, **options)
    return out.getvalue(), err.getvalue()


def exported(folder: Path) -> dict[str, bytes]:
    """Every visible file under ``folder`` (the export's own hidden files left out)."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    }


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*") if p.is_file())


def document(name: str, data: bytes) -> bytes:
    """The XML of an exported or served file (a ``.gz`` one decompressed)."""
    return gzip.decompress(data) if name.endswith(".gz") else data


def validate_all(files: dict[str, bytes]) -> None:
    for name, data in files.items():
        validate_sitemap(document(name, data))


def pages(section: str, count: int) -> list[str]:
    return [f"/{section}/{n}/" for n in range(1, count + 1)]


def register_items(registry: SitemapRegistry) -> SitemapRegistry:
    """Two in-memory sections: ``news`` (7 URLs, 3 pages of 3) and ``docs`` (2 URLs)."""
    registry.register("news", ItemSource, items=lambda: pages("news", 7), limit=3)
    registry.register("docs", ItemSource, items=lambda: pages("docs", 2), priority=0.4)
    return registry
