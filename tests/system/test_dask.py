"""Scaling out with Dask (numgrad[dask]): the two examples on a 2-worker LocalCluster,
and what the kernel cache costs per worker."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("dask.distributed")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import dask_data_parallel  # noqa: E402
import dask_sweep  # noqa: E402


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    # The compile bills below are the Numba target's, whatever the suite runs on.
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None,
                                       env={"NUMGRAD_CPU_KERNELS": "numba"})
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def _use_cache(client, folder_of):
    """Point each worker's kernel cache at ``folder_of(worker address)``."""
    for address in client.scheduler_info()["workers"]:
        client.run(os.environ.__setitem__, "NUMGRAD_CACHE_DIR", str(folder_of(address)),
                   workers=[address])


@pytest.mark.slow
def test_data_parallel_gradient_equals_the_single_process_one(client, capsys, monkeypatch):
    monkeypatch.setenv("NUMGRAD_EXAMPLES_QUICK", "1")
    difference = dask_data_parallel.main([], client=client)
    assert difference <= 1e-12  # float64: the shards' sums differ from one sum by rounding
    out = capsys.readouterr().out
    assert "2000 rows in 4 shards on 2 workers" in out


@pytest.mark.slow
def test_sweep_with_a_shared_cache_compiles_once_per_cluster(client, tmp_path, monkeypatch):
    monkeypatch.setenv("NUMGRAD_EXAMPLES_QUICK", "1")
    _use_cache(client, lambda address: tmp_path)  # one folder for the cluster
    results = dask_sweep.main(["--n", "5", "6", "--starts", "4", "--steps", "300"],
                              client=client)
    assert [r["n"] for r in results] == [5, 6]
    for r in results:
        known = dask_sweep.thomson_problem.KNOWN[r["n"]]
        assert abs(r["best"] - known) <= 1e-6 * known
    first, second = results
    assert first["compiled"] + first["loaded"] > 0  # loaded if this cache was warm already
    if second["worker"] != first["worker"]:  # the other worker loads, never compiles
        assert second["compiled"] == 0 and second["loaded"] > 0


@pytest.mark.xfail(strict=False, reason="open: in a worker that already compiled, switching "
                   "NUMGRAD_CACHE_DIR after the cache changes of issue 14 is not yet seen "
                   "as a fresh folder; the claim holds for fresh workers (see docs/dask.rst)")
def test_separate_caches_compile_once_per_worker(client, tmp_path):
    _use_cache(client, lambda address: tmp_path / address.replace(":", "_").replace("/", ""))
    first = client.run(_compile_bill)
    assert len(first) == 2 and all(compiled > 0 and loaded == 0
                                   for compiled, loaded in first.values())
    again = client.run(_compile_bill)  # as a restarted worker: each loads its own kernels
    assert all(compiled == 0 and loaded == first[w][0] for w, (compiled, loaded) in
               again.items())


def _compile_bill() -> tuple[int, int]:
    """Kernels compiled and loaded from disk for one program, as a fresh worker process
    (nothing in memory) would."""
    import numgrad as ng
    from numgrad.kernels import cache

    cache._memory.clear()
    x = ng.tensor(np.linspace(-1, 1, 7), requires_grad=True)
    with ng.engine.record() as rec:
        ((x * 1.75).tanh() * x).sum().backward()
    return rec.kernels_compiled, rec.disk_hits
