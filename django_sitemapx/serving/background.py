"""Storing built documents off the request: one thread per process, a bounded queue.

A document built for a request is stored in the cache, then its build lock and
slot are released (``DocumentCache.put``). On a network cache that is most of
what a cold build adds to streaming: the backend pickles megabytes (a copy), sends
them and waits, then one more round trip for the lock. Here it runs on a thread
of the process while the request sends what it built, so a cold build answers
as soon as its last chunk is built.

What keeps this safe: the build lock is held until the document is stored, so
requests waiting for it find it stored, never build it again meanwhile; the key
holds the generations the build read, so a store that lands after an
invalidation is under a key no request asks for; a document is queued only once
built to its end, so a store cut short (the process killed) leaves no record,
and the lock expires by itself (``cache.LOCK_WAITS``). A store lost is a miss.
The queue holds ``QUEUED`` documents (each its bytes): when it is full, the
request stores its own document, as it would with no thread.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
import time
from collections.abc import Callable

logger = logging.getLogger("django_sitemapx")

# Built documents waiting to be stored, at most: each holds its bytes (megabytes).
QUEUED = 2
# At exit, how long the documents still queued may take to be stored.
EXIT_SECONDS = 5.0

Job = Callable[[], object]


class StoreThread:
    """A daemon thread running jobs in order, started on first use in each process.

    A process forked after the thread started (a pre-forking server) starts its
    own: the thread does not survive a fork, its queue's contents are the parent's.
    """

    def __init__(self, size: int = QUEUED) -> None:
        self._size = size
        self._queue: queue.Queue[Job] | None = None
        self._forget()

    def _forget(self) -> None:
        """Start afresh: in a forked child, whose copy of a lock another thread may hold."""
        self._guard = threading.Lock()
        # Jobs submitted and not finished, for drain().
        self._pending = 0
        self._idle = threading.Condition(self._guard)
        self._queue = None
        self._pid = 0

    def submit(self, job: Job) -> bool:
        """Queue ``job``; False when the queue is full (the caller runs it itself)."""
        with self._guard:
            if self._queue is None or self._pid != os.getpid():
                self._start()
            assert self._queue is not None
            try:
                self._queue.put_nowait(job)
            except queue.Full:
                return False
            self._pending += 1
            return True

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued job has run; False if ``timeout`` seconds passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._idle:
            while self._pending and self._pid == os.getpid():
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._idle.wait(remaining)
        return True

    def _start(self) -> None:
        self._queue = queue.Queue(self._size)
        self._pid = os.getpid()
        self._pending = 0
        thread = threading.Thread(
            target=self._run, args=(self._queue,), name="sitemapx-store", daemon=True
        )
        thread.start()

    def _run(self, jobs: queue.Queue[Job]) -> None:
        while True:
            job = jobs.get()
            try:
                job()
            except Exception:  # a store lost is a miss; the thread goes on
                logger.warning("Storing a sitemap document failed.", exc_info=True)
            finally:
                del job  # its bytes, before waiting for the next
                with self._idle:
                    if jobs is self._queue:
                        self._pending -= 1
                        if not self._pending:
                            self._idle.notify_all()


store_thread = StoreThread()
os.register_at_fork(after_in_child=store_thread._forget)


@atexit.register
def _store_queued() -> None:
    # A stopping server's documents built just before: stored if the cache is quick.
    store_thread.drain(EXIT_SECONDS)
