"""What a kernel's width costs to compile, and what a value used many times compiles.

    python tools/width_table.py arrays [K ...]     (default: 8 16 32 64 128)
    python tools/width_table.py uses [N ...]       (default: 400 800)

``arrays``: the seconds Numba takes to compile one generated kernel summing K arrays (K
inputs, K - 1 additions, shape (64, 32); the bound on kernel width lifted), from an
empty cache (a new temporary folder), after a first kernel has paid for starting the
compiler. ``uses``: ``ng.jit`` of the
gradient of ``sum_i tanh((x * c_i) @ w).sum()`` for i < N (a weight used N times, each
gradient term an array of its own), from an empty cache, runs one after the other in
one process: seconds, kernels compiled, and the final plan's launches, widest kernel
(arrays read or written) and distinct programs. For old and new code, run it in turns
(``PYTHONPATH=<an old checkout> python tools/width_table.py ...``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

os.environ["NUMGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="numgrad_width_")
os.environ.setdefault("NUMGRAD_CPU_KERNELS", "numba")

import numgrad as ng  # noqa: E402
from numgrad.engine.steps import Launch  # noqa: E402


def arrays(widths: list[int]) -> None:
    sys.modules["numgrad.engine.schedule"].MAX_KERNEL_ARRAYS = 10**6  # one kernel each
    rng = np.random.default_rng(0)
    (ng.tensor(rng.random((64, 32))) * 2.0 + 1.0).numpy()  # starts the compiler
    for k in widths:
        total = ng.tensor(rng.random((64, 32)))
        for _ in range(k - 1):
            total = total + ng.tensor(rng.random((64, 32)))
        start = time.perf_counter()
        with ng.engine.record() as rec:
            total.numpy()
        print(f"{k:4d} arrays: {time.perf_counter() - start:6.2f} s "
              f"({rec.kernels_compiled} compiled, {rec.kernels_launched} launched)")


def uses(counts: list[int]) -> None:
    trace = sys.modules["numgrad.capture.trace"]
    plans, schedule = [], trace.schedule

    def final_schedule(targets, final=False):
        plan, slots = schedule(targets, final)
        plans.append(plan)
        return plan, slots

    trace.schedule = final_schedule
    rng = np.random.default_rng(3)
    x, w = ng.tensor(rng.standard_normal((3, 4))), rng.standard_normal((4, 2))
    (ng.tensor(1.0) * 2.0).numpy()  # starts the compiler
    for n in counts:
        def gradient(w, n=n):
            loss = 0.0
            for i in range(n):
                loss = loss + ((x * (1.0 + i / n)) @ w).tanh().sum()
            return ng.grad(loss, w)[0]

        start = time.perf_counter()
        with ng.engine.record() as rec:
            ng.jit(gradient)(ng.tensor(w, requires_grad=True)).numpy()
        launches = [s for s in plans[-1].steps if isinstance(s, Launch)]
        widest = max(len(s.inputs) + len(s.outputs) + len(s.tables) for s in launches)
        print(f"{n:4d} uses: {time.perf_counter() - start:6.2f} s, "
              f"{rec.kernels_compiled} compiled; plan: {len(launches)} launches, widest "
              f"{widest} arrays, {len({s.program for s in launches})} programs")


if __name__ == "__main__":
    what, *sizes = sys.argv[1:] or ["arrays"]
    if what == "arrays":
        arrays([int(k) for k in sizes] or [8, 16, 32, 64, 128])
    else:
        uses([int(n) for n in sizes] or [400, 800])
