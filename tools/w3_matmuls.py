"""The W3 MLP step's matrix products inside numgrad's eager step and inside the
hand-written NumPy step (``NumpyMLP``: the same 8 products, operands laid out alike),
each timed where it runs, the two steps interleaved; medians over the steps.

    python tools/w3_matmuls.py [STEPS]

Issue 12's matmul question: numgrad's products against NumPy's, each in its own step
(a product run back to back with itself finds BLAS's threads awake, as no step does).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "asv_benchmarks"))

import numpy as np  # noqa: E402
from benchmarks.workloads import NumpyMLP, digits_like, mlp_step  # noqa: E402

from numgrad.kernels import cpu, host  # noqa: E402

PRODUCTS = 8  # per step: 3 forward, 2 backward through activations, 3 weight gradients


def timed(matmul, times: list[float]):
    """`matmul`, appending the time of each call to `times`."""
    def call(a, b, *rest):
        start = time.perf_counter()
        out = matmul(a, b, *rest)
        times.append(time.perf_counter() - start)
        return out
    return call


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    data = digits_like()
    ours, theirs = [], []
    cpu.matmul = host.matmul = timed(host.matmul, ours)
    numgrad_step = mlp_step(*data)
    numpy_step = NumpyMLP(*data, matmul=timed(np.matmul, theirs)).step
    step_times: dict[str, list[float]] = {"numgrad": [], "NumPy": []}
    for i in range(steps + 3):  # (3 warm-up steps: tracing, compiles)
        for name, step in (("numgrad", numgrad_step), ("NumPy", numpy_step)):
            start = time.perf_counter()
            step()
            if i >= 3:
                step_times[name].append(time.perf_counter() - start)
    for name, times in (("numgrad", ours), ("NumPy", theirs)):
        per_step = np.reshape(times, (-1, PRODUCTS))[-steps:].sum(axis=1)
        print(f"{name}: step {np.median(step_times[name]) * 1e3:.2f} ms, its "
              f"{PRODUCTS} products {np.median(per_step) * 1e3:.2f} ms (medians of {steps})")


if __name__ == "__main__":
    main()
