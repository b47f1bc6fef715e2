"""``python -m numgrad info | demo | bench | cache info | cache clear``.

- ``info``: versions, the targets numgrad can run on (and whether CUDA would be
  Numba's simulator), and the kernel cache.
- ``demo``: train a small MLP on scikit-learn's digits, with a progress bar, then
  report held-out accuracy, time per step and the compile bill.
- ``bench``: numgrad next to NumPy (and PyTorch and JAX, when installed) on an
  elementwise chain, an MLP training step and a Hessian, as ratios.
- ``cache info`` / ``cache clear``: the on-disk kernel cache.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import importlib.util
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

import numgrad as ng
from numgrad.kernels import cache
from numgrad.workloads import (
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

# ---- info ---------------------------------------------------------------------------


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _numba_cuda() -> tuple[str | None, str]:
    """Numba's CUDA target: (where it comes from, or None when it cannot be imported, why)."""
    version = _version("numba-cuda")
    try:
        importlib.import_module("numba.cuda")
    except Exception as error:  # an ImportError, or a broken CUDA install
        return None, f"numba.cuda cannot be imported ({type(error).__name__}: {error})"
    if version:
        return f"numba-cuda {version}", ""
    return "Numba's built-in numba.cuda, deprecated in favour of numba-cuda", ""


def cuda_status() -> list[str]:
    """Lines on the 'cuda' device: whether numgrad can use it, and what Numba offers.

    ``NUMBA_ENABLE_CUDASIM=1`` makes Numba's CUDA target a simulator that runs on the
    CPU; this says so rather than claim a GPU.
    """
    simulator = os.environ.get("NUMBA_ENABLE_CUDASIM", "") == "1"
    source, why = _numba_cuda()
    if source is None:
        numba_line = f"numba cuda: not available: {why}; pip install -e '.[cuda]'"
    elif simulator:
        numba_line = (f"numba cuda: the CUDA simulator (NUMBA_ENABLE_CUDASIM=1, {source}): "
                      f"kernels run on the CPU, for testing; this is not a GPU")
    else:
        import numba.cuda

        try:
            gpus = [gpu.name.decode() if isinstance(gpu.name, bytes) else str(gpu.name)
                    for gpu in numba.cuda.gpus] if numba.cuda.is_available() else []
        except Exception:  # a driver that answers is_available() but not the list
            gpus = []
        numba_line = f"numba cuda: GPU {', '.join(gpus)} ({source})" if gpus else \
            f"numba cuda: no CUDA GPU found ({source}); NUMBA_ENABLE_CUDASIM=1 selects " \
            f"the simulator"
    if ng.device.cuda_is_available():
        what = "the CUDA simulator, not a GPU" if simulator else "a GPU"
        cuda_line = f"cuda: available ({what})"
    else:
        cuda_line = "cuda: not available (see the numba cuda line)"
    return [cuda_line, numba_line]


def _cache_line() -> str:
    entry = cache.info()
    return (f"kernel cache: {entry['path']} ({entry['kernels']} kernels, "
            f"{entry['bytes'] / 1e6:.1f} MB)")


def info() -> None:
    """Print versions, the targets available and the kernel cache."""
    import numba

    numba_cuda = _version("numba-cuda") or "not installed"
    print(f"numgrad {ng.__version__}  numpy {np.__version__}  numba {numba.__version__}  "
          f"numba-cuda {numba_cuda}  python {platform.python_version()}")
    print(f"targets: cpu ({numba.config.NUMBA_NUM_THREADS} threads)")
    for line in cuda_status():
        print(line)
    print(_cache_line())


# ---- cache --------------------------------------------------------------------------


def cache_command(action: str) -> None:
    """``cache info`` prints the cache folder and its size; ``cache clear`` empties it."""
    if action == "info":
        entry = cache.info()
        print(f"folder:  {entry['path']}")
        print(f"kernels: {entry['kernels']}")
        print(f"size:    {entry['bytes'] / 1e6:.1f} MB")
        print("set NUMGRAD_CACHE_DIR to use another folder")
    else:
        entry = cache.info()
        cache.clear()
        print(f"removed {entry['kernels']} kernels ({entry['bytes'] / 1e6:.1f} MB) from "
              f"{entry['path']}")


# ---- demo ---------------------------------------------------------------------------


def _demo_imports():
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
        from tqdm import tqdm
    except ImportError as error:
        raise SystemExit(
            f"python -m numgrad demo needs scikit-learn and tqdm ({error}); install them "
            f"with: pip install -e \".[demo]\"") from None
    return load_digits, train_test_split, tqdm


def demo(device: str = "cpu", epochs: int = 12, batch_size: int = 64, hidden: int = 128,
         lr: float = 3e-3, seed: int = 0, progress: bool = True) -> float:
    """Train a 64-`hidden`-10 MLP on scikit-learn's digits with Adam and cross-entropy.

    The data set (1797 8x8 images of handwritten digits) ships inside scikit-learn;
    a stratified fifth of it is held out. Returns the held-out accuracy.
    """
    load_digits, train_test_split, tqdm = _demo_imports()
    try:
        dev = ng.device.as_device(device)
    except (RuntimeError, ValueError) as error:
        raise SystemExit(f"python -m numgrad demo: {error}") from None

    images, labels = load_digits(return_X_y=True)
    x_train, x_test, y_train, y_test = train_test_split(
        (images / 16).astype(np.float32), labels, test_size=0.2, stratify=labels,
        random_state=seed)
    rng = np.random.default_rng(seed)

    def layer(n_in: int, n_out: int) -> list:
        weight = rng.normal(0, math.sqrt(2 / n_in), (n_in, n_out)).astype(np.float32)
        return [ng.tensor(weight, device=dev, requires_grad=True),
                ng.zeros(n_out, dtype=ng.float32, device=dev, requires_grad=True)]

    w1, b1 = layer(64, hidden)
    w2, b2 = layer(hidden, 10)
    params = [w1, b1, w2, b2]
    optimizer = ng.optim.Adam(params, lr=lr)

    def forward(x):
        return (x @ w1 + b1).relu() @ w2 + b2

    batches = math.ceil(len(x_train) / batch_size)
    n_steps = epochs * batches
    print(f"digits: {len(x_train)} training and {len(x_test)} held-out images; MLP "
          f"64-{hidden}-10, Adam lr={lr}, batch {batch_size}, {epochs} epochs on {dev}")
    bar = tqdm(total=n_steps, desc="training", unit="step", disable=not progress,
               file=sys.stdout, dynamic_ncols=True)
    step_times: list[float] = []
    with ng.engine.record() as rec:
        for epoch in range(epochs):
            order = rng.permutation(len(x_train))
            for b in range(batches):
                start = time.perf_counter()
                rows = order[b * batch_size:(b + 1) * batch_size]
                xb = ng.tensor(x_train[rows], device=dev)
                yb = ng.tensor(y_train[rows], device=dev)
                logits = forward(xb)
                loss = ng.nn.functional.cross_entropy(logits, yb)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                if b % 4 == 0 or b == batches - 1:
                    accuracy = (logits.argmax(axis=1) == yb).mean().item()
                    bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.4f}",
                                    acc=f"{accuracy:.3f}", refresh=False)
                step_times.append(time.perf_counter() - start)
                bar.update()
        bar.close()
        with ng.no_grad():
            predicted = forward(ng.tensor(x_test, device=dev)).argmax(axis=1).numpy()
    accuracy = float((predicted == y_test).mean())
    steady = step_times[batches:] or step_times
    print(f"held-out accuracy: {accuracy:.4f} ({int((predicted == y_test).sum())} of "
          f"{len(y_test)})")
    print(f"time per step: {statistics.median(steady) * 1e3:.2f} ms (median after the first "
          f"epoch; the first took {sum(step_times[:batches]):.2f} s, compiling or loading the "
          f"kernels)")
    print(f"kernels: {rec.kernels_compiled} compiled, {rec.disk_hits} loaded from the disk "
          f"cache ({cache.cache_dir()}), {rec.kernels_launched} launched")
    return accuracy


# ---- bench --------------------------------------------------------------------------

def _bench_numgrad(a, xs, ys, sizes, r0):
    x = ng.tensor(a, requires_grad=True)

    def chain():
        value = w1(x, ng.tanh, ng.sigmoid, ng.exp, ng.sqrt)
        (grad,) = ng.grad(value, x)
        ng.realize(value, grad)

    mlp = mlp_step(xs, ys, sizes=sizes)
    x0 = ng.tensor(r0)

    def hessian():
        ng.functional.hessian(rosenbrock, x0, vectorize=True).realize()

    return chain, mlp, hessian


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
    ("numgrad", "numgrad", _bench_numgrad, ""),
    ("NumPy", "numpy", _bench_numpy,
     "hand-written: forward plus the analytic gradient, backward and Adam, and the "
     "Hessian's closed form (no autodiff)"),
    ("PyTorch", "torch", _bench_torch, "eager autograd, torch.optim.Adam, "
     "torch.autograd.functional.hessian(vectorize=True)"),
    ("JAX", "jax", _bench_jax, "jax.jit of value_and_grad, of a hand-written Adam step, "
     "and of jax.hessian"),
]


def _time_together(fns: list[Callable[[], object]], budget: float) -> list[float]:
    """Median seconds per call of each of `fns`, timed in interleaved rounds.

    Each function is called twice first (numgrad and JAX compile then). Rounds call
    every function once, so a noisy stretch of the machine slows all of them alike.
    """
    for fn in fns:
        fn()
        fn()
    times: list[list[float]] = [[] for _ in fns]
    deadline = time.perf_counter() + budget
    while len(times[0]) < 3 or (time.perf_counter() < deadline and len(times[0]) < 200):
        for fn, spent in zip(fns, times):
            start = time.perf_counter()
            fn()
            spent.append(time.perf_counter() - start)
    return [statistics.median(spent) for spent in times]


def _format_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} us"


def _format_ratio(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2f}x" if ratio >= 0.1 \
        else f"{ratio:.2g}x"


def bench(quick: bool = False, budget: float | None = None) -> list[list[str]]:
    """Time numgrad and each importable peer on three workloads; print the table.

    Returns the table's rows (the peer's name, then one cell per workload).
    """
    size, n_samples, sizes, n_rosen = (10**6, 1797, MLP_SIZES, ROSEN_N) if not quick \
        else (10**4, 64, (64, 32, 32, 10), 10)
    budget = budget if budget is not None else (0.1 if quick else 2.0)
    rng = np.random.default_rng(0)
    a = rng.uniform(-2, 2, size)
    xs = (rng.integers(0, 17, (n_samples, sizes[0])) / 16).astype(np.float32)
    ys = rng.integers(0, sizes[-1], n_samples).astype(np.int64)
    r0 = rng.uniform(-1.5, 1.5, n_rosen)
    workloads = [f"chain + grad, n={size:,}",
                 f"MLP step {'-'.join(map(str, sizes))}, batch {n_samples}",
                 f"Hessian, Rosenbrock n={n_rosen}"]
    print(f"numgrad {ng.__version__} on {os.cpu_count()} cores; time per call (median; the "
          f"first calls, which compile, are not timed), and in brackets the peer's time over "
          f"numgrad's: above 1 means numgrad is faster")
    skipped: dict[str, str] = {}
    ready: dict[str, tuple] = {}
    notes: list[str] = []
    for name, module, setup, note in PEERS:
        if importlib.util.find_spec(module) is None:
            skipped[name] = (f"skipped: {module} is not installed (never a numgrad "
                             f"dependency; pip install {module} to compare)")
            continue
        try:
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
                times = _time_together([ready[name][w] for name in names], budget / 3)
            except Exception:  # time the peers one by one, to tell which one failed
                times = []
                for name in names:
                    try:
                        times.append(_time_together([ready[name][w]], budget / 3 / len(names)))
                    except Exception as error:
                        times.append(f"failed: {type(error).__name__}: {error}")
                times = [t[0] if isinstance(t, list) else t for t in times]
            for name, t in zip(names, times):
                results[name].append(t)
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


# ---- command line -------------------------------------------------------------------


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m numgrad", description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="versions, targets and the kernel cache")

    run = commands.add_parser("demo", help="train an MLP on scikit-learn's digits")
    run.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    run.add_argument("--epochs", type=int, default=12)
    run.add_argument("--batch-size", type=int, default=64)
    run.add_argument("--hidden", type=int, default=128)
    run.add_argument("--lr", type=float, default=3e-3)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    timing = commands.add_parser(
        "bench", help="numgrad vs NumPy (and PyTorch, JAX when installed), as ratios")
    timing.add_argument("--quick", action="store_true",
                        help="tiny sizes and short timings: a smoke test, not a measurement")

    kernels = commands.add_parser("cache", help="the on-disk kernel cache")
    kernels.add_argument("action", choices=["info", "clear"])

    args = parser.parse_args(argv)
    if args.command == "info":
        info()
    elif args.command == "demo":
        demo(args.device, args.epochs, args.batch_size, args.hidden, args.lr, args.seed,
             progress=not args.no_progress)
    elif args.command == "bench":
        bench(args.quick)
    else:
        cache_command(args.action)


if __name__ == "__main__":
    main()
