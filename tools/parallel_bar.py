"""Time W1, W1b (eager, value and gradient), the jitted W4 Hessian and the jitted W3
step with the CPU target's parallel bar at a given thread wake-up cost, in ms.

    python tools/parallel_bar.py [WAKE_NS]     (default: the target's own)

Run it once per value, each in a fresh process (the choice of serial or parallel is
remembered per kernel), to calibrate ``numgrad.kernels.cpu.WAKE_NS``.
"""

from __future__ import annotations

import sys
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path[:0] = [str(here), str(here.parent / "asv_benchmarks")]

import numpy as np  # noqa: E402
from benchmarks.bench_fusion import w1_numgrad, w1b_numgrad  # noqa: E402
from benchmarks.bench_jit import ROSEN_N, w3, w4  # noqa: E402
from benchmarks.peers import time_batch  # noqa: E402
from chain_table import _fresh_gradient  # noqa: E402

import numgrad as ng  # noqa: E402
from numgrad.kernels import cpu  # noqa: E402


def best_of(call) -> float:
    """The best of 5 warm batches of `call`, in ms."""
    for _ in range(3):  # trace, retrace with new state, a replay
        call()
    return min(time_batch(call, 0.05) for _ in range(5)) * 1e3


def main() -> None:
    if len(sys.argv) > 1:
        cpu.WAKE_NS = float(sys.argv[1])
    cells = [f"WAKE_NS={cpu.WAKE_NS:g}"]
    for n in (10**4, 10**5, 10**6):
        x = ng.tensor(np.random.default_rng(0).uniform(-2, 2, n), requires_grad=True)
        for name, fn in (("W1", w1_numgrad), ("W1b", w1b_numgrad)):
            cells.append(f"{name}@{n:.0e} {best_of(lambda: _fresh_gradient(fn, x)):.3f}")  # noqa: B023
    hessian = ng.jit(w4)
    r = ng.tensor(np.random.default_rng(0).uniform(-1, 1, ROSEN_N))
    cells.append(f"W4 {best_of(lambda: ng.realize(hessian(r))):.3f}")
    cells.append(f"W3 {best_of(w3(ng.jit)):.2f}")
    print("  ".join(cells))


if __name__ == "__main__":
    main()
