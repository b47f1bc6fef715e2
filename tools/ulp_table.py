"""Accuracy and speed of numgrad's vector math (`numgrad.kernels.vecmath`), as markdown tables.

    python tools/ulp_table.py [--points N] [--speed]

The ulp table: for each function and dtype, N points (default 10**6) spread over the whole
domain (uniform in magnitude on a log scale from the smallest subnormal to the largest
float, both signs where defined, plus a dense uniform sample of the usual range), compared
with a wider reference: NumPy in float64 for float32, and in long double (64-bit mantissa
where the machine has it, which this script checks) for float64. The error is
``|ours - reference| / ulp(reference)``, the ulp of the reference rounded to the dtype
(the subnormal spacing below the normal range). Points where the reference overflows or
is nan must give NumPy's inf or nan exactly; those mismatches are counted separately.

``--speed`` adds, for 10**6 elements on one thread, the nanoseconds per element of a
Numba loop ``out[i] = vm.f(a[i])``, of the same loop with ``math.f`` (libm), and of
NumPy's ufunc, and the widest vector type in the loop's LLVM IR.
"""

from __future__ import annotations

import argparse
import math
import re
import time
from functools import partial

import numba
import numpy as np

from numgrad.kernels import vecmath as vm

WIDE = {np.float64: np.longdouble, np.float32: np.float64}


def sigmoid_reference(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """1 / (1 + e**-a), as e**a / (1 + e**a) for a < 0 (no overflow), with NumPy's ufuncs."""
    e = np.exp(-np.abs(a))
    return np.divide(np.where(a >= 0, 1, e).astype(a.dtype), 1 + e, out=out)


#: NumPy's function (run in the wider type) and the libm expression Numba compiles today
REFERENCES = {
    "exp": (np.exp, "math.exp(x)"), "expm1": (np.expm1, "math.expm1(x)"),
    "log": (np.log, "math.log(x)"), "log1p": (np.log1p, "math.log1p(x)"),
    "sin": (np.sin, "math.sin(x)"), "cos": (np.cos, "math.cos(x)"),
    "tan": (np.tan, "math.tan(x)"), "tanh": (np.tanh, "math.tanh(x)"),
    "sigmoid": (sigmoid_reference,
                "1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))"),
    "power": (np.power, "x ** y"),
}


def spread(rng: np.random.Generator, dtype: type, n: int, usual: float) -> np.ndarray:
    """Half log-uniform magnitudes over the whole finite range, half uniform in
    [-usual, usual]; random signs."""
    info = np.finfo(dtype)
    lo, hi = math.log2(float(info.smallest_subnormal)), math.log2(float(info.max))
    wide = np.exp2(rng.uniform(lo, hi, n // 2)) * rng.choice([-1.0, 1.0], n // 2)
    usual_part = rng.uniform(-usual, usual, n - n // 2)
    return np.concatenate([wide, usual_part]).astype(dtype)


def samples(name: str, dtype: type, n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """The arguments of `name` for the table (one array, or two for power)."""
    rng = np.random.default_rng(seed)
    usual = {"exp": 750.0, "expm1": 750.0, "tanh": 20.0, "sigmoid": 750.0,
             "sin": 100.0, "cos": 100.0, "tan": 100.0, "log": 10.0, "log1p": 10.0}
    if dtype == np.float32:
        usual.update(exp=110.0, expm1=110.0, sigmoid=110.0)
    if name == "power":
        x = np.abs(spread(rng, dtype, n, 10.0))
        # exponents that keep y log x mostly within the finite range, some integers with
        # negative bases
        y = rng.uniform(-1, 1, n) * 800 / np.maximum(np.abs(np.log(x.astype(float))), 1e-3)
        whole = rng.random(n) < 0.25
        y[whole] = np.round(y[whole] / 64)
        x[whole] *= rng.choice([-1, 1], whole.sum()).astype(dtype)
        return x, y.astype(dtype)
    a = spread(rng, dtype, n, usual.get(name, 100.0))
    if name == "log":
        a = np.abs(a)
    elif name == "log1p":
        a = np.where(a < -1, -a, a).astype(dtype)
    return (a,)


@numba.njit(error_model="numpy")
def _unary_loop(f, a, out):
    for i in range(a.size):
        out[i] = f(a[i])


@numba.njit(error_model="numpy")
def _binary_loop(f, a, b, out):
    for i in range(a.size):
        out[i] = f(a[i], b[i])


def run(f, args: tuple[np.ndarray, ...], out: np.ndarray):
    """``out[i] = f(*args[i])`` in a Numba loop; returns the loop's dispatcher."""
    loop = _unary_loop if len(args) == 1 else _binary_loop
    loop(f, *args, out)
    return loop


def ours(name: str, args: tuple[np.ndarray, ...]) -> np.ndarray:
    out = np.empty_like(args[0])
    run(vm.IMPLEMENTATIONS[args[0].dtype.name][name], args, out)
    return out


def ulp_errors(name: str, args: tuple[np.ndarray, ...]) -> tuple[np.ndarray, int]:
    """Per-point ulp errors where the reference is finite in the dtype, and the number of
    points where it is not and ours differs from NumPy's."""
    dtype = args[0].dtype.type
    got = ours(name, args)
    with np.errstate(all="ignore"):
        ref = REFERENCES[name][0](*(a.astype(WIDE[dtype]) for a in args))
        rounded = ref.astype(dtype)
        numpy_value = REFERENCES[name][0](*args)
    finite = np.isfinite(rounded)
    same = (got == numpy_value) | (np.isnan(got) & np.isnan(numpy_value))
    bad_special = int(np.count_nonzero(~finite & ~same))
    ulp = np.spacing(np.abs(rounded[finite])).astype(ref.dtype)
    return np.abs(got[finite].astype(ref.dtype) - ref[finite]) / ulp, bad_special


def ulp_table(points: int) -> list[str]:
    rows = ["| function | dtype | points | max ulp | mean ulp | special mismatches |",
            "| --- | --- | --- | --- | --- | --- |"]
    for name in REFERENCES:
        for dtype in (np.float64, np.float32):
            errors, bad = ulp_errors(name, samples(name, dtype, points))
            rows.append(f"| {name} | {np.dtype(dtype).name} | {errors.size} | "
                        f"{float(errors.max()):.2f} | {float(errors.mean()):.3f} | {bad} |")
    return rows


def _libm_functions(dtype: type) -> dict:
    """Numba functions of today's libm expressions (in `dtype`)."""
    cast = f"np.{np.dtype(dtype).name}"
    namespace = {"math": math, "np": np, "numba": numba}
    for name, (_, expr) in REFERENCES.items():
        params = "x, y" if name == "power" else "x"
        exec(f"@numba.njit(error_model='numpy')\ndef {name}({params}):\n"
             f"    return {cast}({expr})\n", namespace)
    return {name: namespace[name] for name in REFERENCES}


def _time(run, repeats: int = 5) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def _widest_vector(loop, *values) -> str:
    """The widest float vector in the LLVM IR of `loop` compiled for `values`."""
    ir = loop.inspect_llvm(tuple(numba.typeof(v) for v in values))
    widths = re.findall(r"<(\d+) x (double|float)>", ir)
    return max(widths, key=lambda w: int(w[0]), default=("scalar", ""))[0]


def speed_table(n: int = 10**6) -> list[str]:
    """ns per element on one thread, over the usual range of each function."""
    numba.set_num_threads(1)
    rows = ["| function | dtype | vm ns/el | libm ns/el | NumPy ns/el | vector width |",
            "| --- | --- | --- | --- | --- | --- |"]
    for dtype in (np.float64, np.float32):
        libm = _libm_functions(dtype)
        for name, (numpy_function, _) in REFERENCES.items():
            args = tuple(a[n:] for a in samples(name, dtype, 2 * n))  # the usual range
            out = np.empty_like(args[0])
            f = vm.IMPLEMENTATIONS[np.dtype(dtype).name][name]
            loop = run(f, args, out)
            run(libm[name], args, out)  # compiled before it is timed
            with np.errstate(all="ignore"):
                ns = [_time(partial(loop, f, *args, out)),
                      _time(partial(loop, libm[name], *args, out)),
                      _time(partial(numpy_function, *args, out=out))]
            cells = " | ".join(f"{t / n * 1e9:.2f}" for t in ns)
            rows.append(f"| {name} | {np.dtype(dtype).name} | {cells} | "
                        f"{_widest_vector(loop, f, *args, out)} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=10**6)
    parser.add_argument("--speed", action="store_true")
    options = parser.parse_args()
    long_double = np.finfo(np.longdouble)
    print(f"float64 reference: np.longdouble, {long_double.nmant} mantissa bits "
          f"({'wider than' if long_double.nmant > 52 else 'NOT wider than'} float64)\n")
    print("\n".join(ulp_table(options.points)))
    if options.speed:
        print()
        print("\n".join(speed_table()))


if __name__ == "__main__":
    main()
