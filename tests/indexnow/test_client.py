"""One IndexNow POST against a real server on 127.0.0.1: the body, retries, and giving up."""

from __future__ import annotations

import json

import pytest

from django_sitemapx.indexnow.client import MAX_RETRY_AFTER, Outcome, Submission
from tests.support.endpoint import KEY, Endpoint, unused_port_url

URLS = ["https://example.com/a/", "https://example.com/b/"]
KEY_LOCATION = f"https://example.com/{KEY}.txt"


@pytest.fixture
def server() -> Endpoint:
    server = Endpoint()
    server.start()
    yield server
    server.stop()


def submission(
    url: str, retries: int = 3, backoff: float = 0.01
) -> tuple[Submission, list[float]]:
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # records the backoff; the waits are real but tiny
        waits.append(seconds)

    return Submission(url, KEY, retries, backoff, timeout=5, sleep=sleep), waits


def test_the_post_carries_the_protocols_json(server: Endpoint) -> None:
    sender, _ = submission(server.url)

    answer = sender.send("example.com", KEY_LOCATION, URLS)

    assert (answer.outcome, answer.status, answer.attempts) == (Outcome.SUBMITTED, 200, 1)
    [request] = server.received
    assert request.method == "POST"
    assert request.path == "/indexnow"
    assert request.headers["Content-Type"] == "application/json; charset=utf-8"
    assert request.json == {
        "host": "example.com",
        "key": KEY,
        "keyLocation": KEY_LOCATION,
        "urlList": URLS,
    }


def test_duplicates_are_sent_once_in_their_first_place(server: Endpoint) -> None:
    sender, _ = submission(server.url)

    sender.send("example.com", KEY_LOCATION, [URLS[1], URLS[0], URLS[1], URLS[0]])

    assert server.url_lists == [[URLS[1], URLS[0]]]


def test_a_batch_holds_at_most_10000_urls() -> None:
    sender, _ = submission("http://127.0.0.1:9/indexnow")
    urls = [f"https://example.com/{n}" for n in range(10_001)]

    assert (
        len(json.loads(sender.payload("example.com", KEY_LOCATION, urls[:10_000]))["urlList"])
        == 10_000
    )
    with pytest.raises(ValueError, match="10000"):
        sender.payload("example.com", KEY_LOCATION, urls)


def test_202_key_validation_pending_counts_as_submitted(server: Endpoint) -> None:
    server.answer(202)
    sender, _ = submission(server.url)

    assert sender.send("example.com", KEY_LOCATION, URLS).outcome == Outcome.SUBMITTED


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_429_and_5xx_are_retried_with_exponential_backoff(server: Endpoint, status: int) -> None:
    server.answer(status, status, status)
    sender, waits = submission(server.url, retries=3, backoff=0.01)

    answer = sender.send("example.com", KEY_LOCATION, URLS)

    assert (answer.outcome, answer.status, answer.attempts) == (Outcome.SUBMITTED, 200, 4)
    assert waits == [0.01, 0.02, 0.04]
    assert server.url_lists == [URLS] * 4


def test_retry_after_is_honoured(server: Endpoint) -> None:
    server.answer((429, {"Retry-After": "0.05"}, b"slow down"))
    sender, waits = submission(server.url)

    assert sender.send("example.com", KEY_LOCATION, URLS).outcome == Outcome.SUBMITTED
    assert waits == [0.05]


def test_a_retry_after_too_long_leaves_the_batch_for_the_next_run(server: Endpoint) -> None:
    server.answer((503, {"Retry-After": str(int(MAX_RETRY_AFTER) + 1)}, b""))
    sender, waits = submission(server.url)

    answer = sender.send("example.com", KEY_LOCATION, URLS)

    assert (answer.outcome, answer.status, answer.attempts) == (Outcome.UNAVAILABLE, 503, 1)
    assert waits == []


def test_after_the_last_retry_the_batch_is_unavailable(server: Endpoint) -> None:
    server.answer(500, 503, 429)
    sender, waits = submission(server.url, retries=2)

    answer = sender.send("example.com", KEY_LOCATION, URLS)

    assert (answer.outcome, answer.status, answer.attempts) == (Outcome.UNAVAILABLE, 429, 3)
    assert len(server.received) == 3
    assert len(waits) == 2


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, b"Invalid format"),
        (403, b"Key not valid"),
        (422, b"URLs do not belong to the host"),
        (404, b""),
    ],
)
def test_other_4xx_are_given_up_at_once_with_the_reason(
    server: Endpoint, status: int, body: bytes
) -> None:
    server.answer((status, {}, body))
    sender, waits = submission(server.url)

    answer = sender.send("example.com", KEY_LOCATION, URLS)

    assert (answer.outcome, answer.status, answer.attempts) == (Outcome.REJECTED, status, 1)
    assert str(status) in answer.reason
    assert body.decode() in answer.reason
    assert waits == []
    assert len(server.received) == 1


def test_no_answer_at_all_is_retried_then_unavailable() -> None:
    sender, waits = submission(unused_port_url(), retries=2)

    answer = sender.send("example.com", KEY_LOCATION, URLS)

    assert (answer.outcome, answer.status, answer.attempts) == (Outcome.UNAVAILABLE, None, 3)
    assert "refused" in answer.reason.lower()
    assert waits == [0.01, 0.02]


def test_real_sleeps_between_retries(server: Endpoint) -> None:
    server.answer(503)
    sender = Submission(server.url, KEY, retries=1, backoff=0.01, timeout=5)

    assert sender.send("example.com", KEY_LOCATION, URLS).attempts == 2


def test_the_test_suite_never_reaches_the_real_endpoint(settings) -> None:  # type: ignore[no-untyped-def]
    import urllib.request

    from django_sitemapx.conf import DEFAULT_INDEXNOW_ENDPOINT
    from tests.conftest import OffMachineTraffic

    assert settings.SITEMAPX_INDEXNOW_ENDPOINT.startswith("http://127.0.0.1:")
    sender, _ = submission(DEFAULT_INDEXNOW_ENDPOINT, retries=0)
    with pytest.raises(OffMachineTraffic):
        sender.send("example.com", KEY_LOCATION, URLS)
    with pytest.raises(OffMachineTraffic):
        urllib.request.urlopen("https://www.bing.com/indexnow", timeout=1)


REDIRECTS = [301, 302, 303, 307, 308]


@pytest.mark.parametrize("status", REDIRECTS)
def test_a_redirect_is_not_followed_and_keeps_the_batch(server: Endpoint, status: int) -> None:
    elsewhere = Endpoint()  # where the Location points: it must hear nothing
    elsewhere.start()
    try:
        server.answer((status, {"Location": elsewhere.url + "/moved"}, b""))
        sender, waits = submission(server.url)

        answer = sender.send("example.com", KEY_LOCATION, URLS)
    finally:
        elsewhere.stop()

    assert (answer.outcome, answer.status, answer.attempts) == (Outcome.UNAVAILABLE, status, 1)
    assert "not followed" in answer.reason
    assert elsewhere.url + "/moved" in answer.reason
    assert elsewhere.received == []
    assert [request.method for request in server.received] == ["POST"]
    assert waits == []
