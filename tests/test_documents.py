"""Exported files sit at the paths the views serve them at."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client, override_settings

from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from tests.conftest import locs, validate_sitemap

# Rendering a document reads the editors' overrides from the database.
pytestmark = pytest.mark.django_db


@pytest.fixture
def news(registry: SitemapRegistry) -> SitemapRegistry:
    registry.register("news", ItemSource, items=lambda: ["/a/", "/b/", "/c/"], limit=2)
    return registry


def export(folder: Path) -> None:
    call_command(
        "sitemap_export", output_dir=str(folder), base_url="https://example.com", verbosity=0
    )


@override_settings(ROOT_URLCONF="tests.layout_urls")
def test_a_url_prefix_becomes_a_folder(news: SitemapRegistry, tmp_path: Path) -> None:
    export(tmp_path)
    client = Client(HTTP_HOST="example.com")
    names = ["maps/sitemap.xml", "maps/sitemap-news-1.xml", "maps/sitemap-news-2.xml"]
    for name in names:
        served = b"".join(client.get("/" + name, secure=True).streaming_content)
        assert (tmp_path / name).read_bytes() == served
    assert locs(validate_sitemap((tmp_path / names[0]).read_bytes())) == [
        "https://example.com/maps/sitemap-news-1.xml",
        "https://example.com/maps/sitemap-news-2.xml",
    ]


@override_settings(ROOT_URLCONF="tests.bare_urls")
def test_without_the_views_the_default_names_are_used(
    news: SitemapRegistry, tmp_path: Path
) -> None:
    export(tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.xml")) == [
        "sitemap-news-1.xml",
        "sitemap-news-2.xml",
        "sitemap.xml",
    ]
    assert locs(validate_sitemap((tmp_path / "sitemap.xml").read_bytes()))[1] == (
        "https://example.com/sitemap-news-2.xml"
    )
