"""The digits MLP, defined once: its parameters, forward pass and training step, and the
``python -m numgrad demo`` run built from them (also used by ``examples/mlp_digits.py``
and the MLP benchmarks)."""

from __future__ import annotations

import importlib.util
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import numgrad as ng
from numgrad.kernels import cache
from numgrad.nn.functional import cross_entropy


def init_mlp(sizes: list[int] | tuple[int, ...], rng: np.random.Generator,
             device=None) -> list[ng.Tensor]:
    """Parameters ``[W1, b1, W2, b2, ...]`` of an MLP with layer `sizes`, float32.

    Weights are drawn from `rng` with He initialisation (normal, variance
    ``2 / n_in``), layer by layer; biases are zero.

    Examples
    --------
    >>> import numpy as np
    >>> from numgrad.demo import init_mlp
    >>> [p.shape for p in init_mlp([64, 32, 10], np.random.default_rng(0))]
    [(64, 32), (32,), (32, 10), (10,)]
    """
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        weight = rng.normal(0, math.sqrt(2 / n_in), (n_in, n_out)).astype(np.float32)
        params.append(ng.tensor(weight, device=device, requires_grad=True))
        params.append(ng.zeros(n_out, dtype=ng.float32, device=device, requires_grad=True))
    return params


def mlp_logits(x: ng.Tensor, params: list[ng.Tensor]) -> ng.Tensor:
    """The MLP's logits: ``x @ W + b`` per layer, ReLU between layers.

    Examples
    --------
    >>> import numpy as np, numgrad as ng
    >>> from numgrad.demo import init_mlp, mlp_logits
    >>> params = init_mlp([4, 8, 3], np.random.default_rng(0))
    >>> mlp_logits(ng.ones((5, 4), dtype=ng.float32), params).shape
    (5, 3)
    """
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        if i < len(params) - 2:
            h = h.relu()
    return h


def train_step(x: ng.Tensor, y: ng.Tensor, params: list[ng.Tensor],
               optimizer: ng.optim.Optimizer) -> tuple[ng.Tensor, ng.Tensor]:
    """One training step on the batch `x`, `y` (class indices): forward, cross-entropy,
    backward and `optimizer`'s update of `params`. Returns ``(loss, logits)``.

    Examples
    --------
    >>> import numpy as np, numgrad as ng
    >>> from numgrad.demo import init_mlp, train_step
    >>> params = init_mlp([4, 8, 3], np.random.default_rng(0))
    >>> optimizer = ng.optim.Adam(params, lr=1e-2)
    >>> x, y = ng.ones((5, 4), dtype=ng.float32), ng.tensor([0, 1, 2, 0, 1])
    >>> loss, logits = train_step(x, y, params, optimizer)
    >>> logits.shape, loss.item() > 0
    ((5, 3), True)
    """
    logits = mlp_logits(x, params)
    loss = cross_entropy(logits, y)
    optimizer.zero_grad()  # backward() adds into .grad: clear it first
    loss.backward()
    optimizer.step()       # updates the parameters in place, under no_grad
    return loss, logits


def predict(x: ng.Tensor, params: list[ng.Tensor]) -> np.ndarray:
    """The predicted class of each row of `x`, as a NumPy array (no graph is recorded)."""
    with ng.no_grad():
        return mlp_logits(x, params).argmax(axis=1).numpy()


# ---- python -m numgrad demo -----------------------------------------------------------

def _demo_inputs():
    try:
        from tqdm import tqdm
        images, labels = _digits()
    except ImportError as error:
        raise SystemExit(
            f"python -m numgrad demo needs scikit-learn and tqdm ({error}); install them "
            f"with: pip install -e \".[demo]\"") from None
    return images, labels, tqdm


def _digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's digits: 1797 images of 64 pixels (float32, in [0, 1]) and their
    labels. Read from the file scikit-learn ships, as `load_digits` reads it, without
    importing scikit-learn (a second, most of the demo's start); through `load_digits`
    where the file is not where it was."""
    spec = importlib.util.find_spec("sklearn")
    path = Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz" \
        if spec is not None and spec.origin else None
    if path is not None and path.is_file():
        data = np.loadtxt(path, delimiter=",")
        images, labels = data[:, :-1], data[:, -1].astype(int)
    else:
        from sklearn.datasets import load_digits
        images, labels = load_digits(return_X_y=True)
    return (images / 16).astype(np.float32), labels


def held_out(labels: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Whether each sample is held out: every fifth of the samples ordered by class
    (within a class, in an order drawn by `rng`), so a fifth of each class.

    Examples
    --------
    >>> import numpy as np
    >>> from numgrad.demo import held_out
    >>> test = held_out(np.repeat([0, 1], 10), np.random.default_rng(0))
    >>> int(test[:10].sum()), int(test[10:].sum())
    (2, 2)
    """
    order = rng.permutation(len(labels))
    order = order[np.argsort(labels[order], kind="stable")]
    test = np.zeros(len(labels), dtype=bool)
    test[order[::5]] = True
    return test


def demo(device: str = "cpu", epochs: int = 12, batch_size: int = 64, hidden: int = 128,
         lr: float = 3e-3, seed: int = 0, progress: bool = True) -> float:
    """Train a 64-`hidden`-10 MLP on scikit-learn's digits with Adam and cross-entropy.

    The data set (1797 8x8 images of handwritten digits) ships inside scikit-learn;
    a stratified fifth of it is held out. Prints the run, returns the held-out accuracy.
    """
    images, labels, tqdm = _demo_inputs()
    try:
        dev = ng.device.as_device(device)
    except (RuntimeError, ValueError) as error:
        raise SystemExit(f"python -m numgrad demo: {error}") from None

    rng = np.random.default_rng(seed)
    test = held_out(labels, rng)
    x_train, x_test, y_train, y_test = images[~test], images[test], labels[~test], labels[test]
    params = init_mlp([64, hidden, 10], rng, device=dev)
    optimizer = ng.optim.Adam(params, lr=lr)

    batches = math.ceil(len(x_train) / batch_size)
    print(f"digits: {len(x_train)} training and {len(x_test)} held-out images; MLP "
          f"64-{hidden}-10, Adam lr={lr}, batch {batch_size}, {epochs} epochs on {dev}")
    bar = None  # (started after the first step, so that its compile time makes no ETA)
    # One call of `step` is a whole training step, traced once per batch shape and
    # replayed after (ng.jit; the parameters and Adam's state are captured).
    step = ng.jit(lambda x, y: train_step(x, y, params, optimizer))
    step_times: list[tuple[float, bool]] = []  # per step: seconds, whether interpreted
    with ng.engine.record() as rec:
        for epoch in range(epochs):
            order = rng.permutation(len(x_train))
            for b in range(batches):
                start, interpreted = time.perf_counter(), rec.kernels_interpreted
                rows = order[b * batch_size:(b + 1) * batch_size]
                yb = ng.tensor(y_train[rows], device=dev)
                loss, logits = step(ng.tensor(x_train[rows], device=dev), yb)
                shown = None
                if b % 4 == 0 or b == batches - 1:
                    accuracy = (logits.argmax(axis=1) == yb).mean().item()
                    shown = dict(epoch=epoch + 1, loss=f"{loss.item():.4f}",
                                 acc=f"{accuracy:.3f}")
                step_times.append((time.perf_counter() - start,
                                   rec.kernels_interpreted > interpreted))
                if bar is None:
                    _first_step(step_times[0][0], rec)
                    bar = tqdm(total=epochs * batches, desc="training", unit="step",
                               disable=not progress, file=sys.stdout, dynamic_ncols=True)
                if shown:
                    bar.set_postfix(refresh=False, **shown)
                bar.update()
        if bar is not None:
            bar.close()
        predicted = predict(ng.tensor(x_test, device=dev), params)
    accuracy = float((predicted == y_test).mean())
    print(f"held-out accuracy: {accuracy:.4f} ({int((predicted == y_test).sum())} of "
          f"{len(y_test)})")
    print(f"time per step: {_step_times(step_times)}")
    interpreted = f", {rec.kernels_interpreted} of them interpreted" \
        if rec.kernels_interpreted else ""
    print(f"kernels: {rec.kernels_compiled} compiled, {rec.disk_hits} loaded from the disk "
          f"cache ({cache.cache_dir()}), {rec.kernels_launched} launched{interpreted}")
    pending = getattr(dev.backend, "pending", lambda: 0)()  # (tiered: compiles under way)
    if pending:  # (the worker finishes them after this process exits)
        print(f"{pending} more kernels are compiling in the background, for the next run")
    return accuracy


def _first_step(seconds: float, rec) -> None:
    """Say what the first step waited for, if it took more than a second: compiling
    (or loading) its kernels, once."""
    if seconds > 1:
        print(f"the first step took {seconds:.1f} s: it compiled {rec.kernels_compiled} "
              f"kernels and loaded {rec.disk_hits} from the disk cache; later runs load "
              f"them all from there", flush=True)


def _step_times(step_times: list[tuple[float, bool]]) -> str:
    """The median time of a step after the first, on compiled kernels and on the
    interpreter (`NUMGRAD_CPU_KERNELS=numpy`, or `tiered` while they compile), and the
    first step's time."""
    first, *rest = step_times
    medians = []
    for interpreted, how in ((False, "compiled"), (True, "interpreted")):
        times = [t for t, i in rest if i == interpreted]
        if times:
            steps = f"{len(times)} steps" if len(times) > 1 else "1 step"
            medians.append(f"{statistics.median(times) * 1e3:.2f} ms {how} (median of "
                           f"{steps})")
    return "; ".join([", ".join(medians), f"the first step took {first[0]:.2f} s"]
                     if medians else [f"the first step took {first[0]:.2f} s"])
