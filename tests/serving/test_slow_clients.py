"""A slow or vanished client costs one build, against a real server on 127.0.0.1.

The first request for a cold document builds it into the cache at the server's
pace: the requests arriving meanwhile wait for the stored copy, not for the
first client to read its response.
"""

from __future__ import annotations

import socket
import threading
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import override_settings

from django_sitemapx.entries import EntryStream
from django_sitemapx.locations import LocationBuilder
from django_sitemapx.registry import SitemapRegistry
from django_sitemapx.sources import ItemSource, Page, PageSummary
from tests.conftest import locs, validate_sitemap

pytestmark = pytest.mark.django_db(transaction=True)

URLS = 50_000
WAITING = 12


class CountingSource(ItemSource):
    """50,000 URLs (a full page, several MB); counts how often a page is built."""

    builds = 0
    lock = threading.Lock()

    def items(self) -> list[str]:
        return [f"/item/{n}/with/a/longer/path/" for n in range(URLS)]

    def max_location_bytes(self) -> int:
        # Short ASCII paths: declared, so one page holds all 50,000 (the default
        # worst-case bound would size pages at about 4,200 URLs).
        return 200

    def page(self, number: int, summary: PageSummary | None = None) -> Page | None:
        page = super().page(number, summary)
        if page is None:
            return None
        entries = page.entries

        def counted(builder: LocationBuilder) -> EntryStream:
            with CountingSource.lock:
                CountingSource.builds += 1
            yield from entries(builder)

        return Page(page.summary, counted)


@pytest.fixture
def big(registry: SitemapRegistry, live_server: Any) -> Iterator[tuple[str, int]]:
    registry.register("big", CountingSource)
    CountingSource.builds = 0
    parts = urlsplit(live_server.url)
    assert parts.hostname is not None and parts.port is not None
    # Waiters wait long enough for any build on a busy machine: if the first
    # client held the build, each would give up after this and build the
    # document itself.
    with override_settings(SITEMAPX_CACHE_WAIT=30):
        yield parts.hostname, parts.port


def _request(host: str, port: int, path: str) -> bytes:
    # The Host header urllib sends too: the same host, the same document.
    head = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
    return head.encode()


def _fetch(host: str, port: int, path: str) -> tuple[int, bytes]:
    with urllib.request.urlopen(f"http://{host}:{port}{path}", timeout=60) as response:
        return response.status, response.read()


def _slow_reader(host: str, port: int, path: str) -> socket.socket:
    """A client that sends its request, then reads (almost) nothing."""
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.settimeout(60)
    client.connect((host, port))
    client.sendall(_request(host, port, path))
    return client


def _read_to_end(client: socket.socket, head: bytes = b"") -> tuple[bytes, bytes]:
    data = bytearray(head)
    while chunk := client.recv(65536):
        data += chunk
    client.close()
    headers, _, body = bytes(data).partition(b"\r\n\r\n")
    return headers, body


@pytest.mark.parametrize("path", ["/sitemap-big-1.xml", "/sitemap-big-1.xml.gz"])
def test_a_slow_reader_costs_one_build_and_holds_no_one_up(
    big: tuple[str, int], path: str
) -> None:
    host, port = big
    slow = _slow_reader(host, port, path)
    try:
        head = slow.recv(64)  # its response has started, and it reads no further
        assert head.startswith(b"HTTP/1.1 200")

        with ThreadPoolExecutor(WAITING) as pool:
            results = list(pool.map(lambda _: _fetch(host, port, path), range(WAITING)))

        # Every other request got the whole document while the slow one still reads.
        assert [status for status, _ in results] == [200] * WAITING
        assert len({body for _, body in results}) == 1
        assert CountingSource.builds == 1
    except BaseException:
        slow.close()
        raise
    _headers, body = _read_to_end(slow, head)
    assert body == results[0][1]
    if path.endswith(".gz"):
        import gzip

        body = gzip.decompress(body)
    assert len(locs(validate_sitemap(body))) == URLS


def test_clients_gone_before_reading_cost_one_build(big: tuple[str, int]) -> None:
    host, port = big
    for _ in range(20):
        gone = socket.create_connection((host, port), timeout=60)
        gone.sendall(_request(host, port, "/sitemap-big-1.xml"))
        gone.close()  # vanished before reading a byte
    status, body = _fetch(host, port, "/sitemap-big-1.xml")
    assert status == 200
    assert len(locs(validate_sitemap(body))) == URLS
    assert CountingSource.builds == 1
