"""numgrad next to NumPy, PyTorch and JAX on three workloads, as a table of ratios:
what ``python -m numgrad bench`` prints (from a source checkout).

Each peer has an adapter that returns three callables (W1's chain and gradient, an MLP
training step, Rosenbrock's Hessian); a peer whose module is missing, or whose adapter
fails, is a row that says why. The callables are timed in interleaved rounds;
PyTorch's and JAX's run in processes of their own (`benchmarks.peers`).
"""

from __future__ import annotations

import importlib.util
import os

import numpy as np

import numgrad as ng

from .peers import PeerProcess, time_interleaved
from .workloads import (
    ADAM,
    MLP_SIZES,
    ROSEN_N,
    NumpyMLP,
    mlp_logits,
    mlp_step,
    mlp_weights,
    rosenbrock,
    rosenbrock_hessian_numpy,
    w1,
    w1_numpy,
)


def _bench_numgrad(a, xs, ys, sizes, r0):
    """Each workload as a jitted function (``ng.jit``), as code that runs it in a loop
    would write it; JAX's are jitted too."""
    x = ng.tensor(a, requires_grad=True)

    @ng.jit
    def value_and_grad(x):
        value = w1(x, ng.tanh, ng.sigmoid, ng.exp, ng.sqrt)
        (grad,) = ng.grad(value, x)
        return value, grad

    mlp = mlp_step(xs, ys, sizes=sizes, make=ng.jit)
    x0 = ng.tensor(r0)
    hessian = ng.jit(lambda x: ng.functional.hessian(rosenbrock, x, vectorize=True))
    return (lambda: ng.realize(*value_and_grad(x))), mlp, (lambda: hessian(x0).realize())


def _bench_numpy(a, xs, ys, sizes, r0):
    model = NumpyMLP(xs, ys, sizes)
    return (lambda: w1_numpy(a)), model.step, (lambda: rosenbrock_hessian_numpy(r0))


def _bench_torch(a, xs, ys, sizes, r0):
    import torch

    x = torch.tensor(a, requires_grad=True)

    def chain():
        value = w1(x, torch.tanh, torch.sigmoid, torch.exp, torch.sqrt)
        (grad,) = torch.autograd.grad(value, x)
        return value.item(), grad

    data, target = torch.tensor(xs), torch.tensor(ys)
    params = [torch.tensor(w, requires_grad=True) for w in mlp_weights(sizes)]
    optimizer = torch.optim.Adam(params, **ADAM)

    def mlp():
        loss = torch.nn.functional.cross_entropy(mlp_logits(data, params, torch.relu), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    x0 = torch.tensor(r0)

    def hessian():
        return torch.autograd.functional.hessian(rosenbrock, x0, vectorize=True)

    return chain, mlp, hessian


def _bench_jax(a, xs, ys, sizes, r0):
    import jax

    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    x = jnp.asarray(a)
    chain_fn = jax.jit(jax.value_and_grad(
        lambda t: w1(t, jnp.tanh, jax.nn.sigmoid, jnp.exp, jnp.sqrt)))

    def chain():
        return jax.block_until_ready(chain_fn(x))

    data, target = jnp.asarray(xs), jnp.asarray(ys)
    (beta1, beta2), lr, eps = ADAM["betas"], ADAM["lr"], ADAM["eps"]

    def loss_fn(params):
        log_p = jax.nn.log_softmax(mlp_logits(data, params, jax.nn.relu), axis=1)
        return -jnp.take_along_axis(log_p, target[:, None], axis=1).mean()

    @jax.jit
    def step(params, m, v, t):
        grads = jax.grad(loss_fn)(params)
        m = [beta1 * mi + (1 - beta1) * g for mi, g in zip(m, grads)]
        v = [beta2 * vi + (1 - beta2) * g * g for vi, g in zip(v, grads)]
        step_size = lr / (1 - beta1 ** t)
        root = jnp.sqrt(1 - beta2 ** t)
        params = [p - step_size * mi / (jnp.sqrt(vi) / root + eps)
                  for p, mi, vi in zip(params, m, v)]
        return params, m, v

    state = {"params": [jnp.asarray(w) for w in mlp_weights(sizes)], "t": 0}
    state["m"] = [jnp.zeros_like(p) for p in state["params"]]
    state["v"] = [jnp.zeros_like(p) for p in state["params"]]

    def mlp():
        state["t"] += 1
        state["params"], state["m"], state["v"] = jax.block_until_ready(
            step(state["params"], state["m"], state["v"], state["t"]))

    hessian_fn = jax.jit(jax.hessian(rosenbrock))
    x0 = jnp.asarray(r0)

    def hessian():
        return jax.block_until_ready(hessian_fn(x0))

    return chain, mlp, hessian


#: name, importable module, setup function, and what the reference computes.
PEERS = [
    ("numgrad", "numgrad", _bench_numgrad, "ng.jit of each workload"),
    ("NumPy", "numpy", _bench_numpy,
     "hand-written: forward plus the analytic gradient, backward and Adam, and the "
     "Hessian's closed form (no autodiff)"),
    ("PyTorch", "torch", _bench_torch, "eager autograd, torch.optim.Adam, "
     "torch.autograd.functional.hessian(vectorize=True)"),
    ("JAX", "jax", _bench_jax, "jax.jit of value_and_grad, of a hand-written Adam step, "
     "and of jax.hessian"),
]


def _format_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} us"


def _format_ratio(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2f}x" if ratio >= 0.1 \
        else f"{ratio:.2g}x"


#: Peers timed in processes of their own (`benchmarks.peers`): they share OpenMP's
#: runtime, or run threads of their own, which numgrad's process would change.
SEPARATE = ("PyTorch", "JAX")


def inputs(quick: bool) -> tuple:
    """The workloads' data: W1's array, the digits-like rows and labels, the MLP's
    layer sizes, Rosenbrock's point (smaller with `quick`)."""
    size, n_samples, sizes, n_rosen = (10**6, 1797, MLP_SIZES, ROSEN_N) if not quick \
        else (10**4, 64, (64, 32, 32, 10), 10)
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, size)
    xs = (rng.integers(0, 17, (n_samples, sizes[0])) / 16).astype(np.float32)
    ys = rng.integers(0, sizes[-1], n_samples).astype(np.int64)
    r0 = rng.uniform(-1.5, 1.5, n_rosen)
    return a, xs, ys, sizes, r0


def peer_calls(setup: str, quick: bool) -> list:
    """The callables of adapter `setup` (a function's name here) on `inputs(quick)`: what
    a peer's own process times."""
    return globals()[setup](*inputs(quick))


def bench(quick: bool = False, budget: float | None = None) -> list[list[str]]:
    """Time numgrad and each importable peer on three workloads; print the table.

    Returns the table's rows (the peer's name, then one cell per workload).
    """
    budget = budget if budget is not None else (0.1 if quick else 2.0)
    a, xs, ys, sizes, r0 = inputs(quick)
    size, n_samples, n_rosen = len(a), len(xs), len(r0)
    workloads = [f"chain + grad, n={size:,}",
                 f"MLP step {'-'.join(map(str, sizes))}, batch {n_samples}",
                 f"Hessian, Rosenbrock n={n_rosen}"]
    print(f"numgrad {ng.__version__} on {os.cpu_count()} cores; time per call (median; the "
          f"first calls, which compile, are not timed), and in brackets the peer's time over "
          f"numgrad's: above 1 means numgrad is faster")
    skipped: dict[str, str] = {}
    ready: dict[str, tuple] = {}
    notes: list[str] = []
    processes: list[PeerProcess] = []
    for name, module, setup, note in PEERS:
        if importlib.util.find_spec(module) is None:
            skipped[name] = (f"skipped: {module} is not installed (never a numgrad "
                             f"dependency; pip install {module} to compare)")
            continue
        try:
            if name in SEPARATE:
                peer = PeerProcess(module, "benchmarks.compare:peer_calls", setup.__name__, quick)
                processes.append(peer)
                ready[name] = [(peer, w) for w in range(peer.count)]
            else:
                ready[name] = setup(a, xs, ys, sizes, r0)
        except Exception as error:  # a peer that fails here is reported, not fatal
            skipped[name] = f"skipped: {type(error).__name__}: {error}"
            continue
        if note:
            notes.append(f"{name}: {note}")
    results: dict[str, list] = {name: [] for name in ready}
    with ng.engine.record() as rec:
        for w in range(len(workloads)):
            names = list(ready)
            try:
                times = time_interleaved([ready[name][w] for name in names], budget / 3)
            except Exception:  # time the peers one by one, to tell which one failed
                times = []
                for name in names:
                    try:
                        times.append(time_interleaved([ready[name][w]], budget / 3 / len(names)))
                    except Exception as error:
                        times.append(f"failed: {type(error).__name__}: {error}")
                times = [t[0] if isinstance(t, list) else t for t in times]
            for name, t in zip(names, times):
                results[name].append(t)
    for peer in processes:
        peer.close()
    ours = results["numgrad"]
    rows: list[list[str]] = []
    for name, _, _, _ in PEERS:
        if name in skipped:
            rows.append([name, skipped[name]])
            continue
        cells = []
        for t, mine in zip(results[name], ours):
            if isinstance(t, str):
                cells.append(t)
            elif name == "numgrad" or isinstance(mine, str):
                cells.append(_format_time(t))
            else:
                cells.append(f"{_format_time(t)} ({_format_ratio(t / mine)})")
        rows.append([name, *cells])
    _print_table(["", *workloads], rows)
    for line in notes:
        print(line)
    print(f"numgrad kernels: {rec.kernels_compiled} compiled, {rec.disk_hits} loaded from the "
          f"disk cache, {rec.kernels_launched} launched")
    return rows


def _print_table(header: list[str], rows: list[list[str]]) -> None:
    full = [r for r in rows if len(r) == len(header)]
    widths = [max(len(r[i]) for r in [header, *full]) for i in range(len(header))]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    for row in rows:
        if len(row) == len(header):
            print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        else:
            print(f"{row[0].ljust(widths[0])}  {row[1]}")
