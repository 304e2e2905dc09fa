"""Shared fixtures: temporary registries, a client, and XSD validation."""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone
from lxml import etree

from django_sitemapx.registry import SitemapRegistry, default_registry
from django_sitemapx.serving.background import store_thread

ROOT = Path(__file__).resolve().parent.parent
XSD_DIR = Path(os.environ.get("SITEMAPX_XSD_DIR", ROOT.parent / "shared" / "xsd"))
NS = {"sm": "http://www.sitemaps.org/schemas/sitemap/0.9"}
# The sections the test apps' and the example's sitemapx modules register, in order.
EXAMPLE_SECTIONS = ["article", "category", "author", "pages", "article-images", "news", "videos"]

_WRAPPER = """<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:import namespace="http://www.w3.org/XML/1998/namespace" schemaLocation="xml.xsd"/>
  <xs:import namespace="http://www.sitemaps.org/schemas/sitemap/0.9" schemaLocation="{main}"/>
  <xs:import namespace="http://www.google.com/schemas/sitemap-image/1.1"
             schemaLocation="sitemap-image.xsd"/>
  <xs:import namespace="http://www.google.com/schemas/sitemap-video/1.1"
             schemaLocation="sitemap-video.xsd"/>
  <xs:import namespace="http://www.google.com/schemas/sitemap-news/0.9"
             schemaLocation="sitemap-news.xsd"/>
  <xs:import namespace="http://www.w3.org/1999/xhtml" schemaLocation="xhtml1-strict.xsd"/>
</xs:schema>"""

_schemas: dict[str, etree.XMLSchema] = {}


class OffMachineTraffic(RuntimeError):
    """A test tried to reach an address that is not this machine's loopback."""


def _is_local(host: Any) -> bool:
    if not isinstance(host, str):
        return True  # not an internet address (a Unix socket path is bytes or str, see below)
    host = host.strip("[]")
    if host in ("localhost", "") or host == socket.gethostname():
        return True
    try:
        return ipaddress.ip_address(host.partition("%")[0]).is_loopback
    except ValueError:
        return False


def _loopback_only(event: str, args: tuple[Any, ...]) -> None:
    """Refuse any URL, connection or name lookup off the machine (IndexNow's real endpoint)."""
    if event == "urllib.Request":
        host = urlsplit(args[0]).hostname
    elif event == "socket.connect":
        address = args[1]
        if not isinstance(address, tuple):  # a Unix socket
            return
        host = address[0]
    elif event == "socket.getaddrinfo":
        host = args[0].decode() if isinstance(args[0], bytes) else args[0]
    else:
        return
    if not _is_local(host):
        raise OffMachineTraffic(f"Tests never leave the machine: {event} {host!r} refused.")


sys.addaudithook(_loopback_only)


def _schema(main: str) -> etree.XMLSchema:
    if main not in _schemas:
        if not (XSD_DIR / main).is_file():
            raise FileNotFoundError(
                f"{XSD_DIR / main} is missing: the tests validate against shared/xsd "
                "(set SITEMAPX_XSD_DIR to point elsewhere)."
            )
        document = etree.fromstring(
            _WRAPPER.format(main=main).encode(), base_url=XSD_DIR.as_uri() + "/"
        )
        _schemas[main] = etree.XMLSchema(document)
    return _schemas[main]


def validate_sitemap(data: bytes) -> etree._Element:
    """Parse ``data`` as a ``<urlset>`` or ``<sitemapindex>``, validate it, return the root.

    ``sitemap.xsd`` takes extension elements through ``xsd:any`` with
    ``processContents="strict"``, and the wrapper imports the image, video, news
    and xhtml schemas: an extension element is validated against its own schema
    (tests/test_extensions.py shows invalid ones fail).
    """
    root = etree.fromstring(data)
    tag = etree.QName(root).localname
    schema = _schema("sitemap.xsd" if tag == "urlset" else "siteindex.xsd")
    if not schema.validate(root):
        raise AssertionError(f"invalid {tag}: {schema.error_log}")
    assert data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n')
    return root


def locs(root: etree._Element) -> list[str]:
    """Every ``<loc>`` text of a parsed document."""
    return [el.text for el in root.iterfind(".//sm:loc", NS)]


def lastmod_day(text: str | None) -> str:
    """The day a lastmod falls on in the current time zone, or ``""`` for none.

    Contrib's and Wagtail's templates write ``lastmod|date:"Y-m-d"``: the day in
    the current time zone. We write the instant with its offset, so comparing
    the first ten characters would disagree whenever that zone and the offset
    are on different days (an hour around midnight in Paris, say).
    """
    if not text:
        return ""
    if "T" not in text:
        return text
    return timezone.localtime(datetime.datetime.fromisoformat(text)).date().isoformat()


def content(response) -> bytes:  # type: ignore[no-untyped-def]
    """The body of a plain or streaming response, once what it built is stored.

    On a network cache a built document is stored by the store thread
    (``serving.background``); a test reads the cache after the response, as a
    later request would after that store.
    """
    body = b"".join(response.streaming_content) if response.streaming else response.content
    store_thread.drain(10)
    return body


@pytest.fixture(autouse=True)
def _stores_done() -> Iterator[None]:
    """No test's document is stored under the next test's settings (``content``)."""
    yield
    store_thread.drain(10)


@pytest.fixture(autouse=True, scope="session")
def _overrides_table_found() -> None:
    """pytest-django migrates the test database: skip the one-off lookup of the table.

    Otherwise the first test to serve a document would count one more query.
    ``tests/test_overrides.py`` covers the lookup itself.
    """
    from django_sitemapx import models

    models._FOUND_TABLES.add((DEFAULT_DB_ALIAS, models.Override._meta.db_table))


@pytest.fixture(autouse=True)
def _empty_cache() -> Iterator[None]:
    """Every test starts with an empty cache (Redis keeps keys between tests)."""
    from django.core.cache import caches

    from django_sitemapx.serving.cache import local_copies

    for alias in caches:
        caches[alias].clear()
    local_copies.clear()
    yield


@pytest.fixture(autouse=True)
def _no_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sitemap views look for owed generations once a second: not in the middle of a test.

    Tests that count queries would otherwise see one more, depending on the
    clock; tests of the sweep call ``settle_owed(force=True)``.
    """
    from django_sitemapx.sources import pages

    monkeypatch.setattr(pages, "_next_sweep", float("inf"), raising=False)


@pytest.fixture(autouse=True)
def _keys_from_one(request: pytest.FixtureRequest) -> None:
    """On PostgreSQL, restart the example's key sequences for each database test.

    A rolled-back test leaves its sequences advanced, so factory-made rows of
    later tests get ever larger keys; pages are key ranges sized by the
    longest URL a section can write (about 14,700 articles), and a test that
    reads page 1 must find its rows there, as it does on SQLite.
    """
    if request.node.get_closest_marker("django_db") is None:
        return
    from django.core.management.color import no_style
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    from example_project.articles.models import Article, Category

    django_db_blocker = request.getfixturevalue("django_db_blocker")
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), [Article, Category]):
            cursor.execute(statement)


def close_thread_connections() -> None:
    """Close the calling thread's database connections, in-memory SQLite ones too.

    Django leaves an in-memory SQLite connection open on ``close()`` (closing
    would drop the database); a test thread's own connection must still go, or
    Python 3.13 reports it unclosed when it is garbage-collected.
    """
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        raw = connection.connection
        connection.close()
        if raw is not None and connection.vendor == "sqlite" and connection.is_in_memory_db():
            raw.close()
            connection.connection = None


@pytest.fixture
def registry() -> Iterator[SitemapRegistry]:
    """The default registry, emptied for one test and restored afterwards."""
    with default_registry.temporarily_empty():
        yield default_registry


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``SITEMAPX_TEST_BROWSER=0``: the Chromium tests skipped before their live server starts.

    scripts/test sets it in the legs whose Django release another leg drives the browser on
    (tests/admin/test_browser.py says why).
    """
    if os.environ.get("SITEMAPX_TEST_BROWSER") != "0":
        return
    skip = pytest.mark.skip(
        reason="SITEMAPX_TEST_BROWSER=0: another leg of this Django release drives Chromium"
    )
    for item in items:
        if "browser_page" in getattr(item, "fixturenames", ()):
            item.add_marker(skip)
