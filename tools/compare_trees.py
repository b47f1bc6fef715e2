"""Time numgrad's asv workloads in one source tree, for before/after comparisons.

    python tools/compare_trees.py TREE [TREE ...]

asv's ``"existing"`` environment times only the installed numgrad, so to compare two
commits, check one out beside the other (``git worktree add /tmp/base <commit>``) and
run this with both trees: each tree is timed in its own process (its numgrad and its
``asv_benchmarks`` first on ``sys.path``), alternating, twice. It prints one row per
workload with the median seconds of each run, so the spread between runs of one tree
shows the noise.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

WORKLOADS = [("bench_fusion", "W1", "time_numgrad", n) for n in (10**3, 10**5, 10**7)] + \
    [("bench_fusion", "W1b", "time_numgrad", n) for n in (10**3, 10**5, 10**7)] + \
    [("bench_transforms", "MLPTrainingStep", "time_numgrad", None),
     ("bench_overhead", "Horner", "time_forward_backward", None)]


def time_tree(tree: str) -> dict[str, float]:
    """Median seconds of each workload, in this process, with `tree`'s numgrad."""
    sys.path[:0] = [tree, os.path.join(tree, "asv_benchmarks")]
    import importlib

    results = {}
    for module, cls, method, n in WORKLOADS:
        bench = getattr(importlib.import_module(f"benchmarks.{module}"), cls)()
        args = () if n is None else (n,)
        bench.setup(*args)  # compiles (or loads) the kernels
        fn = getattr(bench, method)
        times, deadline = [], time.perf_counter() + 2.0
        while len(times) < 5 or time.perf_counter() < deadline and len(times) < 100:
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
        results[f"{cls}.{method}" + (f"({n:.0e})" if n else "")] = statistics.median(times)
    return results


def main(trees: list[str]) -> None:
    runs: dict[str, list[dict]] = {tree: [] for tree in trees}
    for _ in range(2):
        for tree in trees:
            cache = tempfile.mkdtemp(prefix="numgrad-compare-")
            out = subprocess.run([sys.executable, __file__, "--one", tree], text=True,
                                 capture_output=True, check=True,
                                 env=dict(os.environ, NUMGRAD_CACHE_DIR=cache)).stdout
            runs[tree].append(json.loads(out))
    names = list(runs[trees[0]][0])
    print("| workload | " + " | ".join(trees) + " |")
    print("|---|" + "---:|" * len(trees))
    for name in names:
        cells = [" / ".join(f"{r[name] * 1e3:.3g} ms" for r in runs[tree]) for tree in trees]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(time_tree(sys.argv[2])))
    else:
        main(sys.argv[1:])
