"""A soak crawler: reads the index and its pages, again and again, until told to stop.

    python -m tests.soak.reader BASE_URL SECONDS SEED OUT.json

With an even ``SEED`` it reads the index and one page it lists, at random, in
each round; with an odd one, the index and every page. Writes what it saw to
``OUT.json``: answers by status, and every failure with its start and end
(``time.monotonic()``, one clock for every process of the machine), so that the
test can tell a failure caused by a worker it killed from one the application
caused.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

from tests.soak.crawl import crawl

# Failures kept with their times: enough to attribute them, bounded in size.
KEPT = 2_000


def main(argv: list[str]) -> int:
    base, seconds, seed, out = argv[0], float(argv[1]), int(argv[2]), Path(argv[3])
    shuffle = random.Random(seed)
    deadline = time.monotonic() + seconds
    statuses: Counter[int] = Counter()
    failures: list[dict[str, object]] = []
    crawls = 0
    while time.monotonic() < deadline:
        # Every other crawler reads the index and one page of it, again and again: the
        # index is where the pages are counted, split and merged.
        done = crawl(base, shuffle, pages=None if seed % 2 else 1)
        crawls += 1
        for answer in done.answers():
            statuses[answer.status] += 1
            if answer.failure and len(failures) < KEPT:
                failures.append(
                    {
                        "url": answer.url,
                        "kind": answer.failure,
                        "status": answer.status,
                        "detail": answer.detail[:300],
                        "started": answer.started,
                        "ended": answer.ended,
                    }
                )
    report = {
        "crawls": crawls,
        "statuses": {str(status): count for status, count in statuses.items()},
        "failures": failures,
    }
    out.write_text(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
