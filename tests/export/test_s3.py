"""The export to S3 through django-storages, against a real S3-protocol server on loopback.

The server is moto's standalone one (``moto_server``), started by the test as a
process on 127.0.0.1 and stopped after it; boto3 talks HTTP to it as to S3.
Skipped when moto, boto3 or django-storages is not installed, except in CI or
with ``SITEMAPX_REQUIRE_SERVICES``, where it fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import storages

from django_sitemapx.compat import tasks_module
from django_sitemapx.export import FolderDestination, export_sitemap, parallel, storage_destination
from django_sitemapx.locations import Origin
from django_sitemapx.models import ExportPart
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource
from tests.support.exports import exported, pages, run, validate_all

pytestmark = pytest.mark.django_db

ORIGIN = Origin("https", "example.com")
CDN = "https://cdn.example.com/maps/"
BUCKET = "sitemaps"


def _missing() -> list[str]:
    names = ("moto", "boto3", "storages")
    return [name for name in names if importlib.util.find_spec(name) is None]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def s3_server() -> Iterator[str]:
    """The endpoint of a moto S3 server on loopback, for this module's tests."""
    missing = _missing()
    if missing:
        reason = f"{', '.join(missing)} not installed (pip install -e '.[test]')"
        if os.environ.get("SITEMAPX_REQUIRE_SERVICES") or os.environ.get("CI"):
            pytest.fail(f"{reason}; the S3 test is required here (CI/SITEMAPX_REQUIRE_SERVICES).")
        pytest.skip(reason)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail("moto's S3 server did not start")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=10)


@pytest.fixture
def s3(s3_server: str, settings: Any) -> Iterator[Any]:
    """A new bucket, as the STORAGES alias ``s3``; yields a boto3 client on it."""
    import boto3

    options = {
        "bucket_name": BUCKET,
        "endpoint_url": s3_server,
        "access_key": "testing",
        "secret_key": "testing",
        "region_name": "us-east-1",
        "file_overwrite": True,
    }
    client = boto3.client(
        "s3",
        endpoint_url=s3_server,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    client.create_bucket(Bucket=BUCKET)
    storages_setting = {
        "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
        "s3": {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options},
    }
    # Through pytest-django's ``settings``, as the tests' own changes: undone in order.
    settings.STORAGES = storages_setting
    settings.SITEMAPX_FILES_BASE_URL = CDN
    yield client
    objects = client.list_objects_v2(Bucket=BUCKET).get("Contents", [])
    for found in objects:
        client.delete_object(Bucket=BUCKET, Key=found["Key"])
    client.delete_bucket(Bucket=BUCKET)


def _bucket(client: Any, *, hidden: bool = False) -> dict[str, bytes]:
    found = {}
    for listed in client.list_objects_v2(Bucket=BUCKET).get("Contents", []):
        key = listed["Key"]
        if hidden or not any(part.startswith(".") for part in key.split("/")):
            found[key] = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    return found


def _full(folder: Path) -> dict[str, bytes]:
    export_sitemap(
        FolderDestination(folder), origin=ORIGIN, files_base_url=CDN, gzip=True, full=True
    )
    return exported(folder)


def test_the_command_exports_to_s3_with_the_cdn_in_the_index(
    registry: SitemapRegistry, s3: Any, tmp_path: Path
) -> None:
    items = pages("static", 7)
    registry.register("static", ItemSource, items=lambda: items, limit=3)
    out, _ = run("--storage", "s3", "--base-url", "https://example.com", "--gzip")
    assert "Wrote 8 files" in out
    files = _bucket(s3)
    assert files == _full(tmp_path / "full-1")
    assert (
        b"<loc>https://cdn.example.com/maps/sitemap-static-1.xml.gz</loc>" in files["sitemap.xml"]
    )
    validate_all(files)
    # Incremental: nothing changed, nothing written; one page changed, its two files.
    out, _ = run("--storage", "s3", "--base-url", "https://example.com", "--gzip")
    assert "Wrote 0 files" in out
    items[4] = "/static/renamed/"
    out, _ = run("--storage", "s3", "--base-url", "https://example.com", "--gzip", "-v", "2")
    assert "Wrote 2 files" in out and "sitemap-static-2.xml.gz" in out
    assert _bucket(s3) == _full(tmp_path / "full-2")


@pytest.mark.skipif(tasks_module() is None, reason="needs Django's Tasks framework")
def test_an_export_split_into_tasks_publishes_to_s3_atomically(
    registry: SitemapRegistry, s3: Any, tmp_path: Path, settings: Any
) -> None:
    module = tasks_module()
    assert module is not None
    settings.TASKS = {"default": {"BACKEND": f"{module.__name__}.backends.dummy.DummyBackend"}}
    items = pages("static", 11)
    registry.register("static", ItemSource, items=lambda: items, limit=2)
    destination = storage_destination("s3")
    options: dict[str, Any] = {"origin": ORIGIN, "files_base_url": CDN, "gzip": True}
    run_id = parallel.start_export(destination, pages_per_task=2, **options)
    for number in (1, 2, 3):
        parallel.run_part(run_id, number)
    published = parallel.finish(run_id)
    assert published["state"] == "published" and published["written"] == 14
    assert parallel.finish(run_id) == {"state": "gone"}
    first = _bucket(s3)
    assert first == _full(tmp_path / "full-1")
    assert not any(key.startswith(".sitemapx-staging") for key in _bucket(s3, hidden=True))

    # The parts of the next run are in the bucket, hidden, while the previous export stays.
    items[0] = "/static/renamed/"
    del items[-3:]
    run_id = parallel.start_export(destination, pages_per_task=1, **options)
    for part in ExportPart.objects.filter(run=run_id, number__gt=0):
        parallel.run_part(run_id, part.number)
    hidden = _bucket(s3, hidden=True)
    assert any(key.startswith(f".sitemapx-staging/{run_id}/") for key in hidden)
    assert _bucket(s3) == first
    assert parallel.finish(run_id)["state"] == "published"
    assert _bucket(s3) == _full(tmp_path / "full-2")
    assert not any(key.startswith(".sitemapx-staging") for key in _bucket(s3, hidden=True))
    assert storages["s3"].exists(".sitemapx-manifest.json")
