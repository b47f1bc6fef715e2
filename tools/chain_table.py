"""W1 and W1b (value and gradient) in one run: numgrad (eager and under ``ng.jit``),
the hand-fused Numba kernel (libm, parallel), NumPy and, where JAX is installed,
``jax.jit`` (in a process of its own: `benchmarks.peers`), medians of interleaved
rounds of warm batches in milliseconds, at the sizes given.

    python tools/chain_table.py [N ...]     (default: 1e5 1e6 1e7)

The functions are the asv benchmarks' (``asv_benchmarks/benchmarks/bench_fusion.py``);
this prints their ratios from one run, for notes and before/after checks.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "asv_benchmarks"))

import numpy as np  # noqa: E402
from benchmarks.bench_fusion import (  # noqa: E402
    w1_fused,
    w1_jit,
    w1_numgrad,
    w1b_fused,
    w1b_jit,
    w1b_numgrad,
    w1b_numpy,
)
from benchmarks.peers import PeerProcess, time_interleaved  # noqa: E402
from benchmarks.workloads import w1, w1_numpy, w1b  # noqa: E402

import numgrad as ng  # noqa: E402


def main(sizes: list[int]) -> None:
    has_jax = importlib.util.find_spec("jax") is not None
    print(f"{'workload':10} {'n':>8} {'numgrad':>9} {'ng.jit':>9} {'fused':>9} {'numpy':>9} "
          f"{'jax.jit':>9} {'fused/jit':>9}")
    for n in sizes:
        a = np.random.default_rng(0).uniform(-2, 2, n)
        x = ng.tensor(a, requires_grad=True)
        jax = PeerProcess("jax", "chain_table:jax_calls", n) if has_jax else None
        for index, (name, numgrad_fn, jitted, fused, numpy_fn) in enumerate([
                ("W1", w1_numgrad, w1_jit, w1_fused, w1_numpy),
                ("W1b", w1b_numgrad, w1b_jit, w1b_fused, w1b_numpy)]):
            entries = [lambda: _fresh_gradient(numgrad_fn, x),  # noqa: B023 - timed in this iteration
                       lambda: ng.realize(*jitted(x)),  # noqa: B023
                       lambda: fused(a),  # noqa: B023
                       lambda: numpy_fn(a)]  # noqa: B023
            ms = [t * 1e3 for t in time_interleaved(entries + ([(jax, index)] if jax else []),
                                                      budget=2.0)]
            ms += [float("nan")] * (5 - len(ms))
            print(f"{name:10} {n:8.0e} " + "".join(f"{t:9.2f} " for t in ms)
                  + f"{ms[2] / ms[1]:9.2f}")
        if jax:
            jax.close()


def jax_calls(n: int) -> list:
    """W1 and W1b's value and gradient under jax.jit (float64) on the table's data of
    size `n`: what the JAX process times."""
    import jax

    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    a = jnp.asarray(np.random.default_rng(0).uniform(-2, 2, n))
    w1_jax = jax.jit(jax.value_and_grad(lambda t: w1(t, jnp.tanh, jax.nn.sigmoid, jnp.exp,
                                                      jnp.sqrt)))
    w1b_jax = jax.jit(jax.value_and_grad(lambda t: w1b(t, jnp.where)))
    return [lambda: w1_jax(a)[1].block_until_ready(), lambda: w1b_jax(a)[1].block_until_ready()]


def _fresh_gradient(fn, x) -> None:
    x.grad = None
    fn(x)


if __name__ == "__main__":
    main([int(float(s)) for s in sys.argv[1:]] or [10**5, 10**6, 10**7])
