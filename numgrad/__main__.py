"""``python -m numgrad info | demo``: versions and targets, and a short training run."""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import numgrad as ng
from numgrad.engine.counters import total
from numgrad.kernels import cache


def info() -> None:
    """Print versions, the targets available and the kernel cache."""
    import numba

    entry = cache.info()
    print(f"numgrad {ng.__version__}  numpy {np.__version__}  numba {numba.__version__}  "
          f"python {platform.python_version()}")
    print(f"targets: cpu{', cuda' if ng.device.cuda_is_available() else ''}")
    print(f"kernel cache: {entry['path']} ({entry['kernels']} kernels, "
          f"{entry['bytes'] / 1e6:.1f} MB)")


def demo(steps: int = 300, seed: int = 0) -> float:
    """Fit a two-layer network to a noisy 2-D spiral with plain gradient descent.

    Returns the final training accuracy.
    """
    rng = np.random.default_rng(seed)
    n = 300
    t = rng.uniform(0.25, 3.0, n)
    label = rng.integers(0, 2, n)
    angle = 2.5 * t + np.pi * label
    points = np.stack([t * np.cos(angle), t * np.sin(angle)], 1) + rng.normal(0, 0.1, (n, 2))
    x, y = ng.tensor(points), ng.tensor(label.astype(np.float64))

    w1 = ng.tensor(rng.normal(0, 1.0, (2, 32)), requires_grad=True)
    b1 = ng.zeros(32, requires_grad=True)
    w2 = ng.tensor(rng.normal(0, 0.3, (32, 1)), requires_grad=True)
    b2 = ng.zeros(1, requires_grad=True)
    params = [w1, b1, w2, b2]

    def loss_fn():
        logits = ((x @ w1 + b1).tanh() @ w2 + b2).reshape(-1)
        # Binary cross-entropy from logits, stable for large |logits|.
        loss = (logits.relu() - logits * y + (-logits.abs()).exp().log1p()).mean()
        return loss, logits

    compiled_before, disk_before = total.kernels_compiled, total.disk_hits
    start = time.perf_counter()
    for step in range(steps + 1):
        loss, logits = loss_fn()
        for p in params:
            p.grad = None
        loss.backward()
        with ng.no_grad():
            for p in params:
                p -= 0.3 * p.grad
        if step % (steps // 5) == 0:
            accuracy = ((logits > 0) == (y > 0.5)).mean().item()
            print(f"step {step:4d}  loss {loss.item():.4f}  accuracy {accuracy:.3f}")
    elapsed = time.perf_counter() - start
    print(f"{elapsed / (steps + 1) * 1e3:.2f} ms per step (first steps include compiling); "
          f"kernels compiled: {total.kernels_compiled - compiled_before}, "
          f"loaded from the disk cache: {total.disk_hits - disk_before}")
    x_check = ng.tensor(points[:5])
    layer = w1.detach().requires_grad_()
    check = ng.gradcheck(lambda w: ((x_check @ w).tanh() ** 2).sum(), (layer,))
    print(f"gradcheck of a layer against finite differences: {check}")
    return accuracy


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m numgrad", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("info", help="versions, targets and the kernel cache")
    run = commands.add_parser("demo", help="train a small network on a 2-D spiral")
    run.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    if args.command == "info":
        info()
    else:
        demo(args.steps)


if __name__ == "__main__":
    main()
