"""What a deep loop's first backward pass compiles: the 300-step recurrence
``h = tanh(h * w + x)`` (two elements) of ``tests/system/test_processes.py``, value and
gradient, with an empty kernel cache (a new temporary folder, so nothing is read from
disk), in a fresh process per run.

    python tools/deep_table.py [STEPS ...]        (default: 300)

Prints, per run, the kernel structures the forward pass and the backward pass
compiled, the kernels they launched and the seconds each took. For old and new
code, run it in turns (``PYTHONPATH=<an old checkout> python tools/deep_table.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def run(steps: int) -> None:
    """One measurement, in this process (its kernel cache must be empty)."""
    import numgrad as ng

    times, records = [], []
    start = time.perf_counter()
    with ng.engine.record() as forward:
        w = ng.tensor(0.8, requires_grad=True)
        x = ng.tensor(np.array([0.3, -0.2]))
        h = ng.zeros(2)
        for _ in range(steps):
            h = (h * w + x).tanh()
        h.numpy()
    times.append(time.perf_counter() - start)
    records.append(forward)
    start = time.perf_counter()
    with ng.engine.record() as backward:
        h.sum().backward()
        w.grad.item()
    times.append(time.perf_counter() - start)
    records.append(backward)
    print(f"numgrad {os.path.dirname(ng.__file__)}, {steps} steps: " + "; ".join(
        f"{name} {rec.kernels_compiled} compiled, {rec.kernels_launched} launched, {t:.1f} s"
        for name, rec, t in zip(("forward", "backward"), records, times)), flush=True)


def main(args: list[str]) -> None:
    if args[:1] == ["--run"]:
        run(int(args[1]))
        return
    for steps in [int(a) for a in args] or [300]:
        with tempfile.TemporaryDirectory() as cache:
            subprocess.run([sys.executable, __file__, "--run", str(steps)], check=True,
                           env={**os.environ, "NUMGRAD_CACHE_DIR": cache})


if __name__ == "__main__":
    main(sys.argv[1:])
