"""Issue 13's eager workloads, numgrad beside PyTorch's eager autograd in one run
(medians of interleaved rounds of warm batches; PyTorch in a process of its own, see
`benchmarks.peers`), and the first result of a never-seen program.

    python tools/eager_table.py          (PyTorch rows where torch is importable)
    python tools/eager_table.py --numgrad-only

``--numgrad-only`` prints numgrad's times alone, for old and new code run in turns
(``python tools/eager_table.py --numgrad-only --numgrad-from <an old checkout>``
imports that checkout's numgrad). With ``--cpu-time`` every time is the least CPU time
of the thread that calls over the rounds' batches (`benchmarks.peers.CLOCKS`), PyTorch's
too: on a noisy host wall-clock medians moved by 20-40% where CPU time moved a few
percent. (These steps'
work runs in the calling thread, in both libraries: 64-row operations are below the
sizes either one splits among threads.)

W2 is ``asv_benchmarks``' Horner polynomial (398 recorded operations, value and
derivative, time per operation); W1 is the transcendental chain at N = 1e3 (value and
gradient); the MLP step is a 64-64-10 tanh network on 64 rows in float64 (loss,
backward, and SGD under no_grad), on one batch of labels and on a new one at every
step, with a learning rate that decays at every step, and with its loss read before
backward(). Run it in a separate environment that has torch (a CPU build): numgrad
never depends on it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "asv_benchmarks"))


from benchmarks.peers import numgrad_from  # noqa: E402

numgrad_from(sys.argv)

import numpy as np  # noqa: E402
from benchmarks.bench_overhead import eager_steps, first_result_ms  # noqa: E402
from benchmarks.peers import PeerProcess, time_interleaved  # noqa: E402

import numgrad as ng  # noqa: E402


def torch_steps() -> list:
    """`eager_steps` for PyTorch in float64: what the PyTorch process times."""
    import torch

    torch.set_default_dtype(torch.float64)
    return list(eager_steps(torch, torch.nn.functional, np.random.default_rng(0)))


def main(numgrad_only: bool = False, cpu_time: bool = False) -> None:
    names = ["W2 per op (398 ops)", "W1 value+grad, N=1e3", "MLP step 64-64-10",
             "MLP step, new labels", "MLP step, decaying lr", "MLP step, loss read first"]
    per = [398, 1, 1, 1, 1, 1]
    ours = eager_steps(ng, ng.nn.functional, np.random.default_rng(0))
    clock = "cpu" if cpu_time else "wall"
    if numgrad_only:
        times = [time_interleaved([step], budget=3.0, clock=clock)[0] for step in ours]
        print(f"numgrad {Path(ng.__file__).parent}: " + ", ".join(
            f"{name} {t / n * 1e6:.1f}us" for name, t, n in zip(names, times, per)))
        return
    pytorch = PeerProcess("torch", "eager_table:torch_steps") \
        if importlib.util.find_spec("torch") is not None else None
    print(f"{'eager, no jit (' + clock + ')':26} {'numgrad':>10} {'PyTorch':>10} {'ratio':>7}")
    for i, (name, n) in enumerate(zip(names, per)):
        a, b = time_interleaved([ours[i], (pytorch, i)], budget=3.0, clock=clock) \
            if pytorch else (*time_interleaved([ours[i]], budget=3.0, clock=clock), float("nan"))
        print(f"{name:26} {a / n * 1e6:8.1f}us {b / n * 1e6:8.1f}us {a / b:7.2f}")
    if pytorch:
        pytorch.close()
    for mode in ("numba", "tiered"):
        result, imported = first_result_ms(mode)
        print(f"first value+gradient of a new 20-op program, empty cache, {mode}: "
              f"{result:.0f} ms after import ({imported:.0f} ms to import)")


if __name__ == "__main__":
    main(numgrad_only="--numgrad-only" in sys.argv[1:], cpu_time="--cpu-time" in sys.argv[1:])
