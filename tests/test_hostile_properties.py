"""Property test: whatever a source's entries hold, the views answer 200 with valid XML, or 404.

Hypothesis generates hostile entries (any text, huge and tiny dates with any
offset, any object as priority or changefreq, None, relative, other-host and
malformed URLs) for an ``ItemSource``; every document (index, page, gzip page)
is requested. No exception may escape a view, and every 200 body must validate
against the XSDs. The number of examples is bounded so CI stays well under a
minute.
"""

from __future__ import annotations

import datetime
import gzip
from decimal import Decimal
from typing import Any

import pytest
from django.core.cache import caches
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from django_sitemapx.registry import default_registry
from django_sitemapx.serving.cache import local_copies
from django_sitemapx.sources import ItemSource
from tests.conftest import validate_sitemap

pytestmark = pytest.mark.django_db

EXAMPLES = 40
PATHS = ("/sitemap.xml", "/sitemap-hostile-1.xml", "/sitemap-hostile-1.xml.gz")

offsets = st.integers(min_value=-23 * 3600 - 3599, max_value=23 * 3600 + 3599).map(
    lambda seconds: datetime.timezone(datetime.timedelta(seconds=seconds))
)
datetimes = st.one_of(
    st.datetimes(),  # naive: in the project's time zone
    st.datetimes(timezones=offsets),
    st.sampled_from([datetime.datetime.max, datetime.datetime.min, datetime.datetime(1900, 1, 1)]),
)
lastmods = st.one_of(
    st.none(),
    datetimes,
    st.dates(),
    st.text(max_size=40),
    st.sampled_from(
        ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+14:00", "2024-02-30", "10000-01-01"]
    ),
    datetimes.map(lambda value: value.isoformat()),
    st.integers(),
)
anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.binary(max_size=10),
    st.just(Decimal("0.5")),
    st.sampled_from(["daily", "never", "DAILY", " weekly", "0.5", "1.0001", "-0"]),
    st.lists(st.integers(), max_size=2),
    st.builds(object),
)
hosts = st.sampled_from(
    ["example.com", "EXAMPLE.com.", "example.com:80", "other.example", "[x", "", "exa mple.com"]
)
locations = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=60),
    st.text(max_size=60).map(lambda text: "/" + text),
    st.builds(lambda host, rest: f"http://{host}/{rest}", hosts, st.text(max_size=40)),
    st.builds(lambda host, rest: f"https://{host}{rest}", hosts, st.text(max_size=40)),
    st.sampled_from(
        [
            "http://[x/",
            "//example.com/a",
            "mailto:a@b",
            "/a%",
            "/%zz/[]",
            "/#a#b",
            "/" + "a" * 2100,
        ]
    ),
)
entries = st.lists(
    st.fixed_dictionaries(
        {"location": locations},
        optional={"lastmod": lastmods, "changefreq": anything, "priority": anything},
    ),
    min_size=1,
    max_size=8,
)


class HostileSource(ItemSource):
    entries: list[dict[str, Any]] = []

    def items(self) -> list[dict[str, Any]]:
        return self.entries

    def location(self, item: Any) -> Any:
        return item["location"]  # whatever it is: no str() to tidy it up


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(items=entries)
def test_hostile_entries_never_escape_the_view_and_every_200_validates(
    items: list[dict[str, Any]],
) -> None:
    with default_registry.temporarily_empty():
        default_registry.register("hostile", HostileSource, entries=items, limit=4)
        caches["default"].clear()
        local_copies.clear()
        client = Client(HTTP_HOST="example.com", raise_request_exception=True)
        for path in PATHS:
            response = client.get(path)
            assert response.status_code in (200, 404), (path, response.status_code)
            if response.status_code == 200:
                body = (
                    b"".join(response.streaming_content)
                    if response.streaming
                    else response.content
                )
                validate_sitemap(gzip.decompress(body) if path.endswith(".gz") else body)
                COUNTS["valid"] += 1
            else:
                COUNTS["404"] += 1
        COUNTS["examples"] += 1


COUNTS = {"examples": 0, "valid": 0, "404": 0}
