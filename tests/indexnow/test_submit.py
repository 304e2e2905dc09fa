"""Submitting pending URLs: batches per host, what is removed, what waits for the next run."""

from __future__ import annotations

import logging

import pytest
from django.test import override_settings

from django_sitemapx import indexnow
from django_sitemapx.indexnow import Outcome, queue_urls, submit_pending
from django_sitemapx.models import PendingUrl
from tests.support.endpoint import KEY, Endpoint, post_counts

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _cron_only(settings) -> None:  # type: ignore[no-untyped-def]
    """Runs are started by the tests here, not by a task."""
    settings.SITEMAPX_INDEXNOW_TASK_BACKEND = None


def pending(host: str, *paths: str) -> list[str]:
    urls = [f"https://{host}{path}" for path in paths]
    PendingUrl.objects.bulk_create(PendingUrl(url=url, host=host) for url in urls)
    return urls


def test_each_host_is_posted_with_its_own_host_and_key_location(endpoint: Endpoint) -> None:
    first = pending("example.com", "/a/", "/b/")
    second = pending("other.example", "/c/")

    report = submit_pending()

    assert [request.json for request in endpoint.received] == [
        {
            "host": "example.com",
            "key": KEY,
            "keyLocation": f"https://example.com/{KEY}.txt",
            "urlList": first,
        },
        {
            "host": "other.example",
            "key": KEY,
            "keyLocation": f"https://other.example/{KEY}.txt",
            "urlList": second,
        },
    ]
    assert report.as_dict() == {
        "batches": 2,
        "submitted": 3,
        "rejected": 0,
        "unavailable": 0,
        "pending": 0,
    }
    assert not PendingUrl.objects.exists()


def test_batches_hold_at_most_10000_urls(endpoint: Endpoint) -> None:
    urls = pending("example.com", *(f"/p/{n}/" for n in range(20_001)))

    submit_pending()

    assert post_counts(endpoint) == [10_000, 10_000, 1]
    assert [url for batch in endpoint.url_lists for url in batch] == urls
    assert not PendingUrl.objects.exists()


def test_a_url_queued_twice_is_sent_once_per_batch(endpoint: Endpoint) -> None:
    pending("example.com", "/a/", "/b/", "/a/", "/a/", "/b/")

    submit_pending()

    assert endpoint.url_lists == [["https://example.com/a/", "https://example.com/b/"]]
    assert not PendingUrl.objects.exists()


def test_an_unavailable_endpoint_leaves_everything_for_the_next_run(
    endpoint: Endpoint,
    monkeypatch: pytest.MonkeyPatch,
    caplog,  # type: ignore[no-untyped-def]
) -> None:
    monkeypatch.setattr(indexnow, "RETRIES", 1)
    pending("example.com", "/a/")
    pending("other.example", "/b/")
    endpoint.answer(503, 503)

    with caplog.at_level(logging.WARNING, "django_sitemapx.indexnow"):
        report = submit_pending()

    # The run stopped at the first host: the second was not even tried.
    assert len(endpoint.received) == 2
    assert report.count(Outcome.UNAVAILABLE) == 1
    assert report.pending == 2
    assert "stay pending" in caplog.text

    again = submit_pending()

    assert again.count(Outcome.SUBMITTED) == 2
    assert not PendingUrl.objects.exists()


def test_a_refused_batch_is_given_up_and_logged_with_the_reason(
    endpoint: Endpoint,
    caplog,  # type: ignore[no-untyped-def]
) -> None:
    pending("example.com", "/a/")
    pending("other.example", "/b/")
    endpoint.answer((403, {}, b"Key not valid"))

    with caplog.at_level(logging.ERROR, "django_sitemapx.indexnow"):
        report = submit_pending()

    assert report.count(Outcome.REJECTED) == 1
    assert report.count(Outcome.SUBMITTED) == 1
    assert "403" in caplog.text and "Key not valid" in caplog.text
    assert not PendingUrl.objects.exists()


def test_a_host_the_site_no_longer_serves_is_dropped_not_sent(
    endpoint: Endpoint,
    caplog,  # type: ignore[no-untyped-def]
) -> None:
    pending("gone.example", "/a/")

    with caplog.at_level(logging.WARNING, "django_sitemapx.indexnow"):
        submit_pending()

    assert endpoint.received == []
    assert not PendingUrl.objects.exists()
    assert "no longer serves" in caplog.text


def test_a_dry_run_sends_and_removes_nothing(endpoint: Endpoint) -> None:
    pending("example.com", "/a/", "/a/")
    pending("gone.example", "/b/")

    report = submit_pending(dry_run=True)

    assert [(batch.host, batch.urls, batch.answer) for batch in report.batches] == [
        ("example.com", ["https://example.com/a/"], None)
    ]
    assert endpoint.received == []
    assert PendingUrl.objects.count() == 3


def test_rows_queued_during_a_run_wait_for_their_own_run(endpoint: Endpoint) -> None:
    pending("example.com", "/a/")
    seen = []

    def queue_more(batch) -> None:  # type: ignore[no-untyped-def]
        seen.append(batch.urls)
        if len(seen) == 1:
            pending("example.com", "/late/")

    submit_pending(on_batch=queue_more)

    assert seen == [["https://example.com/a/"]]
    assert list(PendingUrl.objects.values_list("url", flat=True)) == ["https://example.com/late/"]


def test_queue_urls_keeps_only_hosts_the_site_serves(
    endpoint: Endpoint,
    caplog,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    with (
        caplog.at_level(logging.WARNING, "django_sitemapx.indexnow"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        queue_urls(
            [
                "https://example.com/a/",
                "https://example.com/a/",
                "http://other.example/b/",
                "https://evil.example/c/",
                "https://localhost/d/",
                "ftp://example.com/e/",
            ]
        )

    assert sorted(PendingUrl.objects.values_list("host", "url")) == [
        ("example.com", "https://example.com/a/"),
        ("other.example", "http://other.example/b/"),
    ]
    assert caplog.text.count("left out") == 3


def test_queued_urls_wait_for_the_commit(
    endpoint: Endpoint, django_capture_on_commit_callbacks
) -> None:  # type: ignore[no-untyped-def]
    with django_capture_on_commit_callbacks(execute=True):
        queue_urls(["https://example.com/a/"])
        assert not PendingUrl.objects.exists()

    assert PendingUrl.objects.count() == 1


def test_nothing_happens_while_indexnow_is_off(endpoint: Endpoint) -> None:
    pending("example.com", "/a/")
    with override_settings(SITEMAPX_INDEXNOW_KEY=None):
        queue_urls(["https://example.com/b/"])
        report = submit_pending()

    assert report.batches == []
    assert endpoint.received == []
    assert PendingUrl.objects.count() == 1


@override_settings(SITEMAPX_HOSTS=["www.example.com"], ALLOWED_HOSTS=["*"])
def test_sitemapx_hosts_names_the_hosts_when_allowed_hosts_cannot(
    endpoint: Endpoint,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        queue_urls(["https://www.example.com/a/", "https://example.com/b/"])
    submit_pending()

    assert [request.json["host"] for request in endpoint.received] == ["www.example.com"]


@pytest.mark.parametrize(
    ("queued", "sent"),
    [
        ("https://EXAMPLE.COM/A/", "https://example.com/A/"),  # the path keeps its case
        ("https://Example.Com./a/", "https://example.com/a/"),
        ("https://example.com:443/a/", "https://example.com/a/"),
        ("HTTPS://example.com/a/#top", "https://example.com/a/"),
    ],
)
def test_a_host_is_queued_and_sent_in_canonical_form(
    endpoint: Endpoint,
    queued: str,
    sent: str,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        queue_urls([queued])
    submit_pending()

    assert [(r.json["host"], r.json["urlList"]) for r in endpoint.received] == [
        ("example.com", [sent])
    ]


def test_a_row_queued_with_an_upper_case_host_is_sent_in_canonical_form(
    endpoint: Endpoint,
) -> None:
    PendingUrl.objects.create(url="https://EXAMPLE.com/a/", host="example.com")
    PendingUrl.objects.create(url="https://example.com/a/", host="example.com")

    submit_pending()

    assert endpoint.url_lists == [["https://example.com/a/"]]
    assert not PendingUrl.objects.exists()


def test_a_url_already_pending_is_not_queued_again(
    endpoint: Endpoint,
    django_capture_on_commit_callbacks,  # type: ignore[no-untyped-def]
) -> None:
    for _ in range(300):
        with django_capture_on_commit_callbacks(execute=True):
            queue_urls(["https://example.com/a/", "https://EXAMPLE.com/b/"])

    assert sorted(PendingUrl.objects.values_list("url", flat=True)) == [
        "https://example.com/a/",
        "https://example.com/b/",
    ]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirecting_endpoint_keeps_the_batch_and_is_logged(
    endpoint: Endpoint,
    caplog,
    status: int,  # type: ignore[no-untyped-def]
) -> None:
    elsewhere = Endpoint()
    elsewhere.start()
    try:
        endpoint.answer((status, {"Location": elsewhere.url}, b""))
        pending("example.com", "/a/")
        with caplog.at_level(logging.WARNING, "django_sitemapx.indexnow"):
            report = submit_pending()
    finally:
        elsewhere.stop()

    assert elsewhere.received == []
    assert len(endpoint.received) == 1
    assert report.count(Outcome.SUBMITTED) == 0
    assert report.count(Outcome.UNAVAILABLE) == 1
    assert report.pending == 1
    assert PendingUrl.objects.count() == 1
    assert "not followed" in caplog.text
