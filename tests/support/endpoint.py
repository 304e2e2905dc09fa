"""A real IndexNow endpoint for tests: an HTTP server on 127.0.0.1 that records every POST.

It answers each request with the next of the statuses it was given (then 200),
so a test scripts 429s, 5xx and 4xx and reads back exactly what arrived.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    """One request as the server read it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


# A scripted answer: a status, or (status, headers, body).
Script = int | tuple[int, dict[str, str], bytes]


class Endpoint:
    """The recording server; ``url`` is its ``/indexnow`` URL."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.answers: list[Script] = []
        self._lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # recorded too: a client following a redirect GETs
                self.do_POST()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                with endpoint._lock:
                    endpoint.received.append(
                        Received(self.command, self.path, dict(self.headers.items()), body)
                    )
                    answer = endpoint.answers.pop(0) if endpoint.answers else 200
                status, headers, reply = (answer, {}, b"") if isinstance(answer, int) else answer
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/indexnow"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def answer(self, *script: Script) -> None:
        """Answer the next requests with these, in order (then 200)."""
        self.answers.extend(script)

    @property
    def url_lists(self) -> list[list[str]]:
        return [request.json["urlList"] for request in self.received]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(5)


KEY = "0123abcd-test-key"


def unused_port_url() -> str:
    """An endpoint URL on 127.0.0.1 where nothing listens (connection refused)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = server.server_address[1]
    server.server_close()
    return f"http://127.0.0.1:{port}/indexnow"


def post_counts(server: Endpoint) -> Sequence[int]:
    return [len(urls) for urls in server.url_lists]
