"""Python's cyclic garbage collector, paused while numgrad differentiates.

numgrad's graphs hold no reference cycles: reference counting frees each node, buffer
and saved value as soon as nothing uses it. But a program's graph is tens of thousands
of container objects alive at once, and CPython's collector, counting their
allocations, walks them again and again and, once enough have survived into its oldest
generation, walks every object of the process (Numba's alone are about 130,000). With
it paused the recurrent programs of ``asv_benchmarks`` take 0.83-0.89 of their time
(docs/decisions.md). So the transforms and backward passes run with it paused, as
`timeit` runs, and it resumes, as it was, when the outermost of them returns.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator

#: ``NUMGRAD_PAUSE_GC=0`` leaves the collector running
PAUSE = os.environ.get("NUMGRAD_PAUSE_GC", "1") != "0"

_lock = threading.Lock()
_depth = 0  # transforms running, in any thread
_resume = False  # whether the collector was running when the first of them began


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the body with the cyclic collector off; the last of the bodies running
    together (nested, or in other threads) turns it back on if it was on. The
    collector is process-wide: other threads' code runs without it meanwhile, and its
    cyclic garbage waits until then."""
    global _depth, _resume
    if not PAUSE:
        yield
        return
    with _lock:
        if not _depth:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if not _depth and _resume:
                gc.enable()
