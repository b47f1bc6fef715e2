"""The W3 MLP step and its matmuls: the step's time and the time its matrix products
take inside it (means over 5 steps), and the same products in plain NumPy (same
operands; best of 5 each).

    python tools/w3_matmuls.py

Issue 12's matmul question: numgrad's products inside the step against NumPy's.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "asv_benchmarks"))

import numpy as np  # noqa: E402
from benchmarks.workloads import digits_like, mlp_step  # noqa: E402

from numgrad.kernels import cpu, host  # noqa: E402

REPEATS = 5


def main() -> None:
    step = mlp_step(*digits_like())
    calls: list[tuple[float, np.ndarray, np.ndarray]] = []
    matmul = host.matmul

    def timed(a, b, arg=None):
        start = time.perf_counter()
        out = matmul(a, b, arg)
        calls.append((time.perf_counter() - start, a, b))
        return out

    cpu.matmul = host.matmul = timed
    for _ in range(3):
        step()
    per_step = len(calls) // 3
    calls.clear()
    steps = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        step()
        steps.append(time.perf_counter() - start)
    cpu.matmul = host.matmul = matmul
    inside = sum(t for t, _, _ in calls) / REPEATS
    alone = sum(min(_time(lambda: np.matmul(a, b)) for _ in range(REPEATS))  # noqa: B023
                for _, a, b in calls[-per_step:])
    mean = sum(steps) / REPEATS
    print(f"step {mean * 1e3:.2f} ms; its {per_step} matmuls {inside * 1e3:.2f} ms; "
          f"NumPy alone on the same operands {alone * 1e3:.2f} ms")


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
