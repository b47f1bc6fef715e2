"""W1 and W1b (value and gradient) in one process: numgrad, the hand-fused Numba kernel
(libm, parallel) and NumPy, best of 7 in milliseconds, at the sizes given.

    python tools/chain_table.py [N ...]     (default: 1e5 1e6 1e7)

The functions are the asv benchmarks' (``asv_benchmarks/benchmarks/bench_fusion.py``);
this prints their ratios from one run, for notes and before/after checks.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "asv_benchmarks"))

import numpy as np  # noqa: E402
from benchmarks.bench_fusion import (  # noqa: E402
    w1_fused,
    w1_numgrad,
    w1b_fused,
    w1b_numgrad,
    w1b_numpy,
)
from benchmarks.workloads import w1_numpy  # noqa: E402

import numgrad as ng  # noqa: E402


def best_ms(fn, repeats: int = 7) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main(sizes: list[int]) -> None:
    print(f"{'workload':10} {'n':>8} {'numgrad':>9} {'fused':>9} {'numpy':>9} "
          f"{'fused/ng':>9}")
    for n in sizes:
        a = np.random.default_rng(0).uniform(-2, 2, n)
        x = ng.tensor(a, requires_grad=True)
        for name, numgrad_fn, fused, numpy_fn in [("W1", w1_numgrad, w1_fused, w1_numpy),
                                                  ("W1b", w1b_numgrad, w1b_fused, w1b_numpy)]:
            ms = [best_ms(lambda: _fresh_gradient(numgrad_fn, x)),  # noqa: B023
                  best_ms(lambda: fused(a)),  # noqa: B023 - called within this iteration
                  best_ms(lambda: numpy_fn(a))]  # noqa: B023
            print(f"{name:10} {n:8.0e} {ms[0]:9.2f} {ms[1]:9.2f} {ms[2]:9.2f} "
                  f"{ms[1] / ms[0]:9.2f}")


def _fresh_gradient(fn, x) -> None:
    x.grad = None
    fn(x)


if __name__ == "__main__":
    main([int(float(s)) for s in sys.argv[1:]] or [10**5, 10**6, 10**7])
