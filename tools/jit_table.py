"""Issue 11's workloads with ``ng.jit``, beside eager numgrad, PyTorch's eager autograd
and ``jax.jit`` in one run (medians of interleaved rounds of warm batches).

    python tools/jit_table.py          (PyTorch and JAX rows where importable)

W2: the Horner polynomial's value and derivative (398 recorded operations), time per
recorded operation. W3: the MLP training step of ``asv_benchmarks`` (64-256-256-10,
ReLU, cross-entropy, Adam, 1797 rows, float32). W4: Rosenbrock's Hessian, n = 100. The
empty plan: ten kernels on ten elements, what a replay costs with no work. Run it in
a separate environment that has torch and jax (CPU builds): numgrad never depends on
them. PyTorch and JAX each run in a process of their own (`benchmarks.peers`), with
their own threading defaults rather than the OpenMP policy numgrad sets.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "asv_benchmarks"))

import numpy as np  # noqa: E402
from benchmarks.bench_jit import empty_plan, w2, w3, w4  # noqa: E402
from benchmarks.bench_overhead import COEFFS, horner  # noqa: E402
from benchmarks.compare import _bench_jax, _bench_torch  # noqa: E402
from benchmarks.peers import PeerProcess, time_interleaved  # noqa: E402
from benchmarks.workloads import MLP_SIZES, ROSEN_N, digits_like  # noqa: E402

import numgrad as ng  # noqa: E402

OPS = 2 * (len(COEFFS) - 1)


def numgrad_calls(make):
    """W2, W3, W4 and the empty plan, each a function made with `make` (ng.jit or not)."""
    x = ng.tensor(0.7, requires_grad=True)
    r0 = ng.tensor(np.random.default_rng(0).uniform(-1.5, 1.5, ROSEN_N))
    ten = ng.tensor(np.ones(10))
    calls = []
    for fn, arg in ((w2, x), (w4, r0), (empty_plan, ten)):
        step = make(fn)
        calls.append(lambda step=step, arg=arg: ng.realize(*_tensors(step(arg))))
    calls.insert(1, w3(make))
    return calls


def peer_calls(name):
    """W2, W3, W4 for PyTorch (eager) or JAX (jax.jit)."""
    xs, ys = digits_like()
    r0 = np.random.default_rng(0).uniform(-1.5, 1.5, ROSEN_N)
    if name == "PyTorch":
        import torch
        _, mlp, hessian = _bench_torch(np.zeros(1), xs, ys, MLP_SIZES, r0)
        x = torch.tensor(0.7, requires_grad=True)

        def horner_grad():
            value = horner(x, tensor=torch.tensor)
            (grad,) = torch.autograd.grad(value, x)
            return value.item(), grad.item()
    else:
        import jax
        _, mlp, hessian = _bench_jax(np.zeros(1), xs, ys, MLP_SIZES, r0)
        fn = jax.jit(jax.value_and_grad(lambda t: horner(t, tensor=jax.numpy.asarray)))

        def horner_grad():
            return jax.block_until_ready(fn(0.7))
    return [horner_grad, mlp, hessian]


def _tensors(out):
    return out if isinstance(out, tuple) else (out,)


def main() -> None:
    rows = {"numgrad eager": numgrad_calls(lambda f: f), "numgrad ng.jit": numgrad_calls(ng.jit)}
    for name, module in (("PyTorch", "torch"), ("JAX", "jax")):
        if importlib.util.find_spec(module) is not None:  # each in a process of its own
            peer = PeerProcess(module, "jit_table:peer_calls", name)
            rows[f"{name} {'eager' if name == 'PyTorch' else 'jax.jit'}"] = [
                (peer, w) for w in range(peer.count)]
    names = list(rows)
    columns = ["W2 per op", "W3 step", "W4 Hessian", "empty plan (10 kernels)"]
    times = {n: [None] * 4 for n in names}
    for col in range(4):
        timed = [n for n in names if col < len(rows[n])]
        for n, t in zip(timed, time_interleaved([rows[n][col] for n in timed], budget=6.0)):
            times[n][col] = t / OPS if col == 0 else t
    print(f"{'':18}" + "".join(f"{c:>26}" for c in columns))
    jit = times["numgrad ng.jit"]
    for n in names:
        cells = []
        for col, t in enumerate(times[n]):
            if t is None:
                cells.append(f"{'':>26}")
            else:
                text = f"{t * 1e6:.3f} us" if col == 0 else f"{t * 1e3:.3f} ms"
                cells.append(f"{text + f' ({t / jit[col]:.2f}x)':>26}")
        print(f"{n:18}" + "".join(cells))
    print("(in brackets: time over ng.jit's; above 1 means ng.jit is faster; PyTorch and JAX "
          "each ran in a process of its own, with its own threading defaults)")


if __name__ == "__main__":
    main()
