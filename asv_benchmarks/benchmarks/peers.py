"""Other libraries timed in processes of their own, with their own threading defaults.

numgrad sets OpenMP's wait policy when it is imported (`numgrad.kernels.cpu.
OPENMP_DEFAULTS`), and a process has one OpenMP runtime: PyTorch timed in numgrad's
process runs under numgrad's policy (its W3 MLP step took 12.3 ms there, against
6.8-8.1 ms in a process of its own), and JAX's threads compete with numgrad's. So a
`PeerProcess` runs ``python -m benchmarks.peers MODULE SETUP`` with the environment
numgrad found: the child imports its library first, then calls ``SETUP``
(``module:function``, returning a list of callables), and times one of them whenever
the parent asks. The parent interleaves those requests with its own timings, so a
noisy stretch of the machine slows every library alike; the processes not being
timed are stopped meanwhile, and each batch waits `SETTLE` seconds for the threads
of the last one (OpenBLAS's spin for about 0.1 s after a product) to go idle.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import weakref
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Seconds between two batches: the threads of the library that ran last (OpenMP's
#: spin after a parallel region, JAX's pool) stop spinning before the next one runs.
SETTLE = 0.15
#: Seconds of calls timed together: a warm batch, as code that calls in a loop runs.
BATCH = 0.05
#: The clocks a batch can be timed by: elapsed time, or the CPU time of the thread that
#: calls (which leaves out what a shared host's other guests take from it: on a noisy
#: host, wall-clock medians moved by 20-40% where CPU time moved a few percent; it
#: leaves out a library's other threads too, so it suits work that runs in the
#: calling thread, such as small eager steps)
CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}
#: How the rounds' batches are summed up, per clock: the median of elapsed times; the
#: least CPU time (another guest's work, cold caches, a slower core only ever add to it)
SUMMARY = {"wall": statistics.median, "cpu": min}


class PeerProcess:
    """A library's callables, made by `setup` in a child process that imported
    `module` before anything else."""

    def __init__(self, module: str, setup: str, *args):
        from numgrad.kernels.cpu import OPENMP_DEFAULTS

        env = {k: v for k, v in os.environ.items() if OPENMP_DEFAULTS.get(k) != v}
        paths = [str(HERE.parent), str(HERE.parent.parent / "tools"), *sys.path]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        self._child = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.peers", module, setup, json.dumps(args)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        # (Let go of at exit too, however the parent ends: a stopped child would stay.)
        self._release = weakref.finalize(self, _release, self._child)
        self.count = self._answer()

    def time(self, index: int, batch: float, clock: str = "wall") -> float:
        """Seconds per call of callable `index`, timed by `clock` (`CLOCKS`) over a
        batch of calls lasting about `batch` seconds (warm, as in a loop)."""
        self._child.stdin.write(f"{index} {batch} {clock}\n")
        self._child.stdin.flush()
        return self._answer()

    def hold(self, held: bool) -> None:
        """Stop the process (`held`) or let it run again: a process that is not being
        timed is stopped, so that no thread of it takes a core from the one that is."""
        if hasattr(signal, "SIGSTOP"):
            os.kill(self._child.pid, signal.SIGSTOP if held else signal.SIGCONT)

    def close(self) -> None:
        self._release()

    def _answer(self):
        line = self._child.stdout.readline()
        if not line:
            raise RuntimeError(f"the peer process ended (exit code {self._child.wait()})")
        reply = json.loads(line)
        if isinstance(reply, str):
            raise RuntimeError(reply)
        return reply


def _release(child: subprocess.Popen) -> None:
    """Let `child` run and end: its input closes, so its loop ends."""
    if hasattr(signal, "SIGCONT"):
        child.send_signal(signal.SIGCONT)
    child.stdin.close()
    child.wait(timeout=60)


def numgrad_from(argv: list[str]) -> None:
    """For the tools that compare commits: with ``--numgrad-from DIR`` in `argv`, numgrad
    is imported from the checkout DIR (another commit: ``git worktree add /tmp/old
    <rev>``), ahead of an editable install's finder, which would otherwise win over
    ``PYTHONPATH``. Call it before numgrad is imported."""
    if "--numgrad-from" in argv:
        sys.meta_path[:] = [f for f in sys.meta_path
                            if "editable" not in getattr(f, "__name__", type(f).__module__)]
        sys.path.insert(0, argv[argv.index("--numgrad-from") + 1])


def time_interleaved(entries: list, budget: float, clock: str = "wall") -> list[float]:
    """Seconds per call of each entry, a callable (timed in this process) or a
    ``(PeerProcess, index)`` pair, timed by `clock` (`CLOCKS`) in rounds that take
    every entry in turn for a warm batch of `BATCH` seconds, for about `budget` seconds
    (at least 3 rounds, at most 200), summed up as `SUMMARY` says. Callables are
    called twice first (numgrad compiles then; a peer's process did so when it
    started)."""
    for entry in entries:
        if not isinstance(entry, tuple):
            entry()
            entry()
    processes = {entry[0] for entry in entries if isinstance(entry, tuple)}
    samples: list[list[float]] = [[] for _ in entries]
    deadline = time.perf_counter() + budget
    try:
        while len(samples[0]) < 3 or (time.perf_counter() < deadline and len(samples[0]) < 200):
            for entry, spent in zip(entries, samples):
                peer = entry[0] if isinstance(entry, tuple) else None
                for process in processes:
                    process.hold(process is not peer)
                time.sleep(SETTLE)
                spent.append(peer.time(entry[1], BATCH, clock) if peer else
                             time_batch(entry, BATCH, clock))
    finally:  # (a failing entry leaves no process stopped)
        for process in processes:
            process.hold(False)
    return [SUMMARY[clock](spent) for spent in samples]


def time_batch(fn, batch: float, clock: str = "wall") -> float:
    """Seconds per call of `fn` by `clock` (`CLOCKS`), over as many calls as last
    about `batch` seconds."""
    now = CLOCKS[clock]
    start = now()
    fn()
    calls = max(1, int(batch / max(now() - start, 1e-7)))
    start = now()
    for _ in range(calls):
        fn()
    return (now() - start) / calls


def _serve(module: str, setup: str, args: list) -> None:
    try:
        importlib.import_module(module)  # first: its runtime reads the environment as is
        where, name = setup.split(":")
        calls = getattr(importlib.import_module(where), name)(*args)
        for call in calls:  # compile (JAX traces at its first calls)
            call()
            call()
    except Exception as error:  # told to the parent, which reports it
        print(json.dumps(f"{type(error).__name__}: {error}"), flush=True)
        return
    print(json.dumps(len(calls)), flush=True)
    for line in sys.stdin:
        index, batch, clock = line.split()
        print(json.dumps(time_batch(calls[int(index)], float(batch), clock)), flush=True)


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
