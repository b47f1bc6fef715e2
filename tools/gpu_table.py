"""Measure numgrad's CUDA target and print one markdown table (no asv needed).

    python tools/gpu_table.py

Rows: device copy bandwidth, W1 (value and gradient) at n = 1e8 and 1e6, the MLP's
Adam step on cuda and on cpu, and a 4096 x 4096 float32 matmul next to CuPy's.
Each is warmed up twice (the first run compiles), then timed as the best of five
wall-clock runs, with ``ng.cuda.synchronize()`` before the clock is read. A row
that fails says so in the table (traceback on stderr) and the script exits 1.
"""

from __future__ import annotations

import math
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np

import numgrad as ng

# The reference workloads live with the asv suite (benchmarks/workloads.py), as for asv.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "asv_benchmarks"))
from benchmarks.workloads import digits_like, mlp_step, w1  # noqa: E402

BIG, SMALL = 10**8, 10**6
MATMUL_N = 4096


def best_ms(fn, warmup=2, repeat=5):
    """Best wall-clock milliseconds of `fn` over `repeat` runs, after `warmup` runs."""
    for _ in range(warmup):
        fn()
        ng.cuda.synchronize()
    best = math.inf
    for _ in range(repeat):
        ng.cuda.synchronize()
        start = time.perf_counter()
        fn()
        ng.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def uniform_float32(n, seed=0):
    a = np.random.default_rng(seed).random(n, dtype=np.float32)
    a *= 4
    a -= 2
    return a


def gbps(n_bytes, ms):
    return n_bytes / (ms * 1e-3) / 1e9


# ---- measurements: best milliseconds, and a rate where there is one -----------------

def copy_bandwidth(n):
    x = ng.tensor(uniform_float32(n), device="cuda")
    ms = best_ms(lambda: (x * 1).realize())  # one read, one write
    return ms, gbps(2 * n * 4, ms)


def w1_step(n):
    x = ng.tensor(uniform_float32(n), device="cuda", requires_grad=True)

    def run():
        x.grad = None
        y = w1(x, ng.tanh, ng.sigmoid, ng.exp, ng.sqrt)
        y.backward()
        y.item()
        x.grad.realize()

    ms = best_ms(run)
    return ms, gbps(2 * n * 4, ms)  # reads x once, writes its gradient once


def mlp_step_ms(device):
    return best_ms(mlp_step(*digits_like(), device=device))


def matmul_inputs(n):
    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, n), dtype=np.float32),
            rng.standard_normal((n, n), dtype=np.float32))


def matmul_numgrad(n):
    a, b = (ng.tensor(m, device="cuda") for m in matmul_inputs(n))
    ms = best_ms(lambda: (a @ b).realize())
    return ms, 2 * n**3 / (ms * 1e-3) / 1e12


def matmul_cupy(n):
    import cupy

    a, b = (cupy.asarray(m) for m in matmul_inputs(n))

    def run():
        cupy.matmul(a, b)
        cupy.cuda.Device().synchronize()

    ms = best_ms(run)
    return ms, 2 * n**3 / (ms * 1e-3) / 1e12


# ---- the table --------------------------------------------------------------------------

def main():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        sys.exit("gpu_table: NUMBA_ENABLE_CUDASIM=1 (Numba's simulator): timings would mean "
                 "nothing; unset it and run on a machine with an NVIDIA GPU")
    if not ng.cuda.is_available():
        sys.exit("gpu_table: no CUDA device (ng.cuda.is_available() is False); "
                 "run this on a machine with an NVIDIA GPU and numba-cuda installed")

    print(f"numgrad {ng.__version__} on {ng.cuda.device_name()}: best of 5, after 2 warm-ups\n",
          flush=True)
    rows = []  # (measurement, ms, rate, note)
    failed = False

    def row(name, measure):
        nonlocal failed
        try:
            rows.append((name, *measure()))
        except Exception as e:  # one broken row should not hide the others
            failed = True
            traceback.print_exc()
            message = " ".join(str(e).replace("|", "/").split())[:80]  # one table cell
            rows.append((name, "error", "", f"{type(e).__name__}: {message}"))

    def fmt_ms(ms):
        return ms if isinstance(ms, str) else f"{ms:.3f}"

    copy = {}

    def measure_copy():
        copy["ms"], copy["gbps"] = copy_bandwidth(BIG)
        return copy["ms"], f"{copy['gbps']:.1f} GB/s", "reference: one read + one write"

    def measure_w1(n):
        ms, rate = w1_step(n)
        note = f"{100 * rate / copy['gbps']:.0f}% of copy bandwidth" if copy else ""
        return ms, f"{rate:.1f} GB/s", note

    mlp = {}

    def measure_mlp(device):
        mlp[device] = mlp_step_ms(device)
        note = ""
        if device == "cpu" and "cuda" in mlp:
            note = f"cuda speed-up: {mlp['cpu'] / mlp['cuda']:.1f}x"
        return mlp[device], "", note

    def measure_matmul():
        ms, tflops = matmul_numgrad(MATMUL_N)
        return ms, f"{tflops:.2f} TFLOP/s", ""

    def measure_cupy():
        try:
            import cupy  # noqa: F401
        except ImportError:
            return "not installed", "", ""
        ms, tflops = matmul_cupy(MATMUL_N)
        return ms, f"{tflops:.2f} TFLOP/s", "cuBLAS"

    row("device copy `x * 1`, n = 1e8 float32 (cuda)", measure_copy)
    row("W1 value + grad, n = 1e8 float32 (cuda)", lambda: measure_w1(BIG))
    row("W1 value + grad, n = 1e6 float32 (cuda)", lambda: measure_w1(SMALL))
    row("MLP Adam step, 64-256-256-10, 1797 rows (cuda)", lambda: measure_mlp("cuda"))
    row("MLP Adam step, 64-256-256-10, 1797 rows (cpu)", lambda: measure_mlp("cpu"))
    row(f"matmul {MATMUL_N}x{MATMUL_N} float32, numgrad (cuda)", measure_matmul)
    row(f"matmul {MATMUL_N}x{MATMUL_N} float32, cupy.matmul", measure_cupy)

    print("| measurement | ms | rate | note |")
    print("|---|---:|---:|---|")
    for name, ms, rate, note in rows:
        print(f"| {name} | {fmt_ms(ms)} | {rate} | {note} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
