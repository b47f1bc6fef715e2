"""Classify handwritten digits with a two-hidden-layer MLP: a full training run.

scikit-learn's digits (1797 images of 8x8 pixels, shipped inside the package,
nothing downloaded) are split into training, validation and test sets. The
network trains with minibatch Adam and cross-entropy; the epoch with the best
validation accuracy is kept (early stopping) and evaluated once on the test set.
The network and its training step are numgrad's own (``numgrad.demo``: ``init_mlp``,
``train_step``, ``predict``), the same ones ``python -m numgrad demo`` and the MLP
benchmarks run. Needs scikit-learn: ``pip install -e ".[demo]"``.

    python examples/mlp_digits.py
    python examples/mlp_digits.py --epochs 3 --hidden 32
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import numgrad as ng
from numgrad.demo import init_mlp, predict, train_step


def accuracy(params: list, x: np.ndarray, y: np.ndarray) -> float:
    return float((predict(ng.tensor(x), params) == y).mean())


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    quick = os.environ.get("NUMGRAD_EXAMPLES_QUICK") == "1"
    parser.add_argument("--epochs", type=int, default=3 if quick else 20)
    parser.add_argument("--hidden", type=int, default=32 if quick else 128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    images, labels = load_digits(return_X_y=True)
    images = (images / 16).astype(np.float32)  # pixel values 0..16 -> 0..1
    x_rest, x_test, y_rest, y_test = train_test_split(
        images, labels, test_size=0.2, stratify=labels, random_state=args.seed)
    x_train, x_val, y_train, y_val = train_test_split(
        x_rest, y_rest, test_size=0.15, stratify=y_rest, random_state=args.seed)

    rng = np.random.default_rng(args.seed)
    params = init_mlp([64, args.hidden, args.hidden, 10], rng)  # He initialisation
    optimizer = ng.optim.Adam(params, lr=args.lr)
    best = (-1.0, None, 0)  # validation accuracy, parameter values, epoch

    # The whole training step, traced once per batch shape and replayed (ng.jit).
    step = ng.jit(lambda x, y: train_step(x, y, params, optimizer))
    print(f"train {len(x_train)}, validation {len(x_val)}, test {len(x_test)} images; "
          f"MLP 64-{args.hidden}-{args.hidden}-10")
    for epoch in range(1, args.epochs + 1):
        start, losses = time.perf_counter(), []
        order = rng.permutation(len(x_train))
        for i in range(0, len(order), args.batch_size):
            rows = order[i:i + args.batch_size]
            loss, _ = step(ng.tensor(x_train[rows]), ng.tensor(y_train[rows]))
            losses.append(loss.item())
        val = accuracy(params, x_val, y_val)
        print(f"epoch {epoch:3d}  loss {np.mean(losses):.4f}  validation accuracy {val:.4f}  "
              f"({time.perf_counter() - start:.2f} s)")
        if val > best[0]:
            best = (val, [p.numpy() for p in params], epoch)

    for p, value in zip(params, best[1]):
        with ng.no_grad():
            p[...] = value  # in place under no_grad: the same parameter objects
    test = accuracy(params, x_test, y_test)
    print(f"test accuracy {test:.4f} (weights from epoch {best[2]}, validation {best[0]:.4f})")
    return test


if __name__ == "__main__":
    main()
