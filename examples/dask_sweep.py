"""A parameter sweep on Dask: the Thomson problem for several N, one task per N.

Each task is an independent numgrad experiment (``thomson_problem.minimise``); Dask's
workers run them in parallel and the driver gathers the results. The kernels compile
once per cluster when the workers share one kernel cache folder (``NUMGRAD_CACHE_DIR``,
the default when they run on one machine): the first task runs alone and compiles the
kernels, and the other workers load them from the disk cache. The table says, per
task, how many kernels its worker compiled and how many it loaded.

    python examples/dask_sweep.py                      # a 2-worker LocalCluster
    python examples/dask_sweep.py --scheduler tcp://host:8786   # an existing cluster
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import cloudpickle
from dask.distributed import Client, LocalCluster, get_worker

sys.path.insert(0, str(Path(__file__).resolve().parent))
import thomson_problem  # noqa: E402 - beside this file

# Workers import numgrad, not the examples: ship this code to them by value.
cloudpickle.register_pickle_by_value(thomson_problem)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def solve(n: int, starts: int, steps: int) -> dict:
    """One task: the lowest energy of `n` charges, and this worker's compile bill."""
    import numgrad as ng

    with ng.engine.record() as rec:
        best, _ = thomson_problem.minimise(n, starts, steps)
    return {"n": n, "best": best, "worker": get_worker().name,
            "compiled": rec.kernels_compiled, "loaded": rec.disk_hits}


def sweep(client: Client, ns, starts: int, steps: int) -> list[dict]:
    """Every N as one task; the results in the order of `ns`.

    The first task runs alone: it fills the shared kernel cache, so the other workers
    load its kernels rather than compile them too (tasks that start together would
    each compile a kernel that neither has written yet).
    """
    first = client.submit(solve, ns[0], starts=starts, steps=steps, pure=False).result()
    rest = client.map(solve, ns[1:], starts=starts, steps=steps, pure=False)
    return [first, *client.gather(rest)]


def main(argv=None, client: Client | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    quick = os.environ.get("NUMGRAD_EXAMPLES_QUICK") == "1"
    parser.add_argument("--n", type=int, nargs="+", default=[5, 6, 7, 8] if quick
                        else [6, 8, 10, 12, 14, 16])
    parser.add_argument("--starts", type=int, default=4 if quick else 8)
    parser.add_argument("--steps", type=int, default=300 if quick else 2000)
    parser.add_argument("--scheduler", help="address of a running Dask scheduler")
    args = parser.parse_args(argv)
    cluster = None
    if client is None:
        if args.scheduler:
            client = Client(args.scheduler)
        else:
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True)
            client = Client(cluster)
    try:
        results = sweep(client, args.n, args.starts, args.steps)
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
    print(f"{'N':>3}  {'best energy':>14}  {'known':>14}  {'worker':>6}  {'compiled':>8}  "
          f"{'loaded':>6}")
    for r in results:
        known = thomson_problem.KNOWN.get(r["n"], float("nan"))
        print(f"{r['n']:3d}  {r['best']:14.9f}  {known:14.9f}  {r['worker']!s:>6}  "
              f"{r['compiled']:8d}  {r['loaded']:6d}")
    return results


if __name__ == "__main__":
    main()
