"""Data-parallel gradients on Dask: a data set in shards, one gradient per shard.

A logistic-regression loss over a data set too large for one process (here: small,
made up) is a sum over rows, so its gradient is the sum of the shards' gradients.
Each worker holds some shards (scattered once), computes the loss and gradient of its
shards with numgrad, and the driver adds them up. The tensors travel pickled by value
(SPEC §8). The result equals the single-process gradient to rounding: float64 sums in
another order, well within 1e-12 relative.

    python examples/dask_data_parallel.py
    python examples/dask_data_parallel.py --rows 200000 --shards 8
"""

from __future__ import annotations

import argparse
import os
import sys

import cloudpickle
import numpy as np
from dask.distributed import Client, LocalCluster

import numgrad as ng

cloudpickle.register_pickle_by_value(sys.modules[__name__])


def make_data(rows: int, features: int, seed: int = 0):
    """Inputs, 0/1 labels and a parameter vector (with a bias), float64 tensors."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, features))
    truth = rng.standard_normal(features)
    y = (x @ truth + 0.5 * rng.standard_normal(rows) > 0).astype(np.float64)
    w = ng.tensor(rng.standard_normal(features + 1) * 0.1)
    return ng.tensor(x), ng.tensor(y), w


def loss_and_grad(x: ng.Tensor, y: ng.Tensor, w: ng.Tensor) -> tuple[float, ng.Tensor]:
    """The summed logistic loss of rows `x`, `y` at parameters `w`, and its gradient."""
    w = w.detach().requires_grad_()
    logits = x @ w[:-1] + w[-1]
    # log(1 + exp(z)) - y z, written so that exp cannot overflow
    loss = (logits.relu() + (-logits.abs()).exp().log1p() - y * logits).sum()
    (grad,) = ng.grad(loss, w)
    return loss.item(), grad


def shard_loss_and_grad(shard: tuple[ng.Tensor, ng.Tensor], w: ng.Tensor):
    return loss_and_grad(*shard, w)


def distributed_loss_and_grad(client: Client, shards, w: ng.Tensor):
    """The sums of every shard's loss and gradient, computed where the shards live."""
    parts = client.gather(client.map(shard_loss_and_grad, shards, w=w, pure=False))
    return sum(p[0] for p in parts), ng.stack([p[1] for p in parts]).sum(axis=0)


def main(argv=None, client: Client | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    quick = os.environ.get("NUMGRAD_EXAMPLES_QUICK") == "1"
    parser.add_argument("--rows", type=int, default=2000 if quick else 100_000)
    parser.add_argument("--features", type=int, default=8 if quick else 32)
    parser.add_argument("--shards", type=int, default=4)
    args = parser.parse_args(argv)
    x, y, w = make_data(args.rows, args.features)
    cluster = None
    if client is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
        client = Client(cluster)
    try:
        bounds = np.linspace(0, args.rows, args.shards + 1).astype(int)
        shards = client.scatter([(x[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])])
        loss, grad = distributed_loss_and_grad(client, shards, w)
        compiles = client.run(lambda: ng.engine.counters.total.kernels_compiled)
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
    single_loss, single_grad = loss_and_grad(x, y, w)
    difference = float(np.max(np.abs(grad.numpy() - single_grad.numpy()))
                       / np.max(np.abs(single_grad.numpy())))
    print(f"{args.rows} rows in {args.shards} shards on {len(compiles)} workers")
    print(f"loss: distributed {loss:.15g}, one process {single_loss:.15g}")
    print(f"gradient: max relative difference {difference:.1e}")
    print("kernels compiled per worker: " + ", ".join(str(c) for c in compiles.values()))
    return difference


if __name__ == "__main__":
    main()
