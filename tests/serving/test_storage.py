"""``SITEMAPX_SERVE_FROM_STORAGE``: the views serve the exported files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client, override_settings

from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from tests.conftest import validate_sitemap

# Rendering a document reads the editors' overrides from the database.
pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(registry: SitemapRegistry, tmp_path: Path) -> Iterator[Path]:
    registry.register("news", ItemSource, items=lambda: [f"/news/{n}/" for n in range(5)], limit=2)
    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "sitemaps": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    with override_settings(STORAGES=storages, SITEMAPX_SERVE_FROM_STORAGE="sitemaps"):
        call_command(
            "sitemap_export", storage="sitemaps", base_url="https://example.com", verbosity=0
        )
        # From here on the registry no longer has the section: only files can answer.
        registry.unregister("news")
        yield tmp_path


def test_views_serve_the_exported_bytes(stored: Path) -> None:
    client = Client()
    for name in ("sitemap.xml", "sitemap-news-1.xml", "sitemap-news-3.xml"):
        response = client.get("/" + name)
        assert response.status_code == 200
        assert response["Content-Type"] == "application/xml; charset=utf-8"
        assert "Last-Modified" in response
        body = b"".join(response.streaming_content)
        assert body == (stored / name).read_bytes()
        validate_sitemap(body)


@pytest.mark.parametrize(
    "path", ["/sitemap-news-4.xml", "/sitemap-news-01.xml", "/sitemap-x-1.xml"]
)
def test_missing_or_non_canonical_files_are_404(stored: Path, path: str) -> None:
    assert Client().get(path).status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/sitemap-" + "s" * 300 + "-1.xml",  # over the 255 bytes of a file name: ENAMETOOLONG
        "/sitemap-" + "é" * 130 + "-1.xml.gz",
        "/sitemap-%00-1.xml",
    ],
)
def test_a_name_the_file_system_refuses_is_404_not_500(stored: Path, path: str) -> None:
    client = Client(raise_request_exception=False)
    assert client.get(path).status_code == 404


def test_no_index_exported_yet_is_404(registry: SitemapRegistry, tmp_path: Path) -> None:
    storages = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "sitemaps": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "none")},
        },
    }
    with override_settings(STORAGES=storages, SITEMAPX_SERVE_FROM_STORAGE="sitemaps"):
        assert Client().get("/sitemap.xml").status_code == 404


def test_asgi_requests_stream_the_file(stored: Path) -> None:
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    async def fetch() -> tuple[int, str, bytes]:
        response = await AsyncClient().get("/sitemap-news-2.xml")
        body = b"".join([chunk async for chunk in response])
        return response.status_code, response["Content-Length"], body

    status, length, body = async_to_sync(fetch)()
    expected = (stored / "sitemap-news-2.xml").read_bytes()
    assert (status, length, body) == (200, str(len(expected)), expected)


HOSTILE = b"<?xml version='1.0'?><urlset><url><loc>https://evil.example/</loc></url></urlset>"
# Folders of the default storage that hold a sitemap.xml but belong to no served host,
# and the Host headers that name them (any case, a trailing dot, a port).
FOLDERS = ["media", "uploads", "static", "cache"]
HOSTILE_HOSTS = [
    *FOLDERS,
    "MEDIA",
    "media.",
    "uploads:443",
    "evil.example",  # no folder at all
]


@pytest.fixture
def every_site_in_the_default_storage(registry: SitemapRegistry, tmp_path: Path) -> Iterator[Path]:
    """``sitemap_export --all-sites`` into the default storage, which also holds media."""
    registry.register("a", ItemSource, items=lambda: ["/a/"], sites=["example.com"])
    registry.register("b", ItemSource, items=lambda: ["/b/"], sites=["other.example"])
    storages = {
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    with override_settings(
        STORAGES=storages, SITEMAPX_SERVE_FROM_STORAGE="default", ALLOWED_HOSTS=["*"]
    ):
        call_command("sitemap_export", storage="default", all_sites=True, verbosity=0)
        for folder in FOLDERS:
            (tmp_path / folder).mkdir()
            for name in ("sitemap.xml", "sitemap-a-1.xml"):
                (tmp_path / folder / name).write_bytes(HOSTILE)
        yield tmp_path


@pytest.mark.parametrize("host", HOSTILE_HOSTS)
@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-a-1.xml"])
def test_the_host_header_reaches_only_the_folders_of_served_hosts(
    every_site_in_the_default_storage: Path, host: str, path: str
) -> None:
    response = Client(HTTP_HOST=host, secure=True).get(path)
    if response.streaming:  # the hostile file: read it, so that the test fails cleanly
        b"".join(response.streaming_content)

    assert response.status_code == 404


@pytest.mark.parametrize(
    ("host", "path"),
    [
        ("example.com", "/sitemap-a-1.xml"),
        ("EXAMPLE.com.", "/sitemap.xml"),
        ("other.example", "/sitemap-b-1.xml"),
    ],
)
def test_a_served_host_reaches_its_own_folder(
    every_site_in_the_default_storage: Path, host: str, path: str
) -> None:
    response = Client(HTTP_HOST=host, secure=True).get(path)

    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    folder = host.lower().rstrip(".")
    assert body == (every_site_in_the_default_storage / folder / path.lstrip("/")).read_bytes()
    assert b"evil.example" not in body


@override_settings(SITEMAPX_HOSTS=["www.example.com"])
def test_sitemapx_hosts_names_served_hosts_with_folders(
    every_site_in_the_default_storage: Path,
) -> None:
    folder = every_site_in_the_default_storage / "www.example.com"
    folder.mkdir()
    (folder / "sitemap.xml").write_bytes(b"<sitemapindex/>")

    response = Client(HTTP_HOST="www.example.com").get("/sitemap.xml")
    assert b"".join(response.streaming_content) == b"<sitemapindex/>"
    assert Client(HTTP_HOST="media").get("/sitemap.xml").status_code == 404
