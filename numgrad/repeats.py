"""Where a recorded program repeats itself: the period of a sequence of its parts (a
loop's step), found where it repeats around the sequence's middle."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def codes(keys: Iterable, count: int) -> np.ndarray:
    """The `count` hashable `keys` as integers, equal where the keys are equal."""
    ids: dict = {}
    number = ids.setdefault
    return np.fromiter((number(k, len(ids)) for k in keys), dtype=np.int64, count=count)


def period(codes: np.ndarray, repeats: int, longest: int) -> int | None:
    """The shortest period, at most `longest`, with which `codes` repeat at least
    `repeats` times on each side of their middle; None if none does.

    The candidates are the distances from a code near the middle (the rarest of the
    next `longest`) to its next occurrences, so a sequence that does not repeat costs
    a few comparisons."""
    n = len(codes)
    middle = n // 2
    longest = min(longest, middle // repeats)
    if longest < 1:
        return None
    at = middle + int(np.argmin(np.bincount(codes)[codes[middle:middle + longest]]))
    for step in np.flatnonzero(codes[at + 1:at + longest + 1] == codes[at]) + 1:
        step = int(step)
        low, high = at - repeats * step, at + (repeats - 1) * step
        if low >= 0 and high + step <= n and \
                np.array_equal(codes[low:high], codes[low + step:high + step]):
            return step
    return None
