"""How a cost grows with its input, measured relative to itself, never against a clock budget.

A linear matcher given a text 16 times longer costs about 16 times more; a
quadratic one about 256 times. Comparing the two measurements of one machine
at one moment keeps the test independent of how fast or busy the machine is.
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

# A text GROWTH times longer may cost at most LIMIT times more: linear work stays
# near 16, quadratic work reaches about 256.
GROWTH = 16
LIMIT = 64


def cost(call: Callable[[str], object], text: str, number: int = 5) -> float:
    """The lowest of several timings of ``number`` calls (the least disturbed one)."""
    return min(timeit.repeat(lambda: call(text), number=number, repeat=3))


def growth(call: Callable[[str], object], short: str, long: str) -> float:
    """How many times more ``long`` costs than ``short``.

    Microsecond timings on a busy machine are noisy: a ratio over ``LIMIT`` from
    short timings is measured again with more calls, and the lowest ratio kept.
    A slow ``long`` (quadratic work) is not measured again: no noise explains it.
    """
    call(short)  # warm-up: nothing compiled or cached on the first call is measured
    ratio = float("inf")
    for number in (5, 50, 500):
        spent = cost(call, long, number)
        ratio = min(ratio, spent / max(cost(call, short, number), 1e-9))
        if ratio < LIMIT or spent > 0.02:
            break
    return ratio
