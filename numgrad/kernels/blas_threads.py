"""BLAS's threads while the compile worker compiles (`numgrad.kernels.tiered`): one
core fewer.

A BLAS or LAPACK call split over every core waits for its slowest thread, and while
the worker compiles, one core is the worker's: from an empty cache a Gaussian
process's 60 x 60 triangular solves (OpenBLAS splits them over two threads on 2 cores)
made its value and gradient 16 ms a call against 2 ms on one thread, until its kernels
were compiled. So while the worker has jobs, the BLAS libraries loaded in this process
run on at most one thread fewer than this process's cores (`lower`; a library set to
fewer keeps its setting), and get their own setting back once the worker has answered
them all (`restore`). A library loaded later (SciPy's, at the first triangular solve)
is lowered at the next job sent after the import that brought it.

The counts are set through threadpoolctl where it is installed (numgrad does not
depend on it: without it BLAS keeps its threads), from the thread that launches
numgrad's work: a library's setting is not changed under a call of it by another of
numgrad's launches.
"""

from __future__ import annotations

import os
import sys

#: each library lowered and its own thread count, while lowered
_lowered: list[tuple[object, int]] = []
#: ``len(sys.modules)`` when the libraries loaded were last looked at (0: look again)
_looked_at = 0


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def lower() -> None:
    """The worker has a job: run the BLAS libraries loaded by now on at most one thread
    fewer than `cores` (looked for again only after an import: libraries come with
    modules)."""
    global _looked_at
    if _looked_at == len(sys.modules):
        return
    _looked_at = len(sys.modules)
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return
    most = max(1, cores() - 1)
    for library in ThreadpoolController().select(user_api="blas").lib_controllers:
        threads = library.num_threads
        if threads > most:  # (one lowered before now has `most`)
            library.set_num_threads(most)
            _lowered.append((library, threads))


def lowered() -> bool:
    """Whether a library runs on fewer threads than its own setting."""
    return bool(_lowered)


def restore() -> None:
    """The worker has answered every job: give each library lowered its own thread
    count back."""
    global _looked_at
    while _lowered:
        library, threads = _lowered.pop()
        library.set_num_threads(threads)
    _looked_at = 0
