"""Counters of what the engine did: kernels launched and compiled, cache hits, bytes."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, fields

from numgrad.kernels import COMPILED, DISK, HIT, INTERPRETED

log = logging.getLogger("numgrad")
#: ``NUMGRAD_DEBUG=1`` logs each realization's counts and each compile;
#: ``NUMGRAD_DEBUG=fusion`` also logs why the scheduler cut each fusion group.
DEBUG = os.environ.get("NUMGRAD_DEBUG", "")
if DEBUG and not log.handlers:
    logging.basicConfig(format="numgrad: %(message)s")
    log.setLevel(logging.DEBUG)


@dataclass(eq=False)  # records are told apart by identity
class Record:
    """What realizing did while a `record()` block was open."""

    kernels_launched: int = 0
    kernels_compiled: int = 0
    cache_hits: int = 0
    disk_hits: int = 0
    #: launches run by the NumPy interpreter (``NUMGRAD_CPU_KERNELS=numpy``): nothing compiled
    kernels_interpreted: int = 0
    bytes_allocated: int = 0
    #: library primitives (scans, sorts, decompositions) on a device that ran them on the
    #: host, copying their inputs there and results back
    library_via_host: int = 0
    #: realizations whose schedule was reused from an earlier graph of the same
    #: structure (`numgrad.plan.schedules`) rather than planned again
    schedules_reused: int = 0
    #: graph nodes planned into new schedules, and the planner's steps doing so
    #: (nodes placed and visited while building kernels, hosts tried when merging
    #: them): the steps per node stay flat however large the graph
    nodes_scheduled: int = 0
    scheduler_steps: int = 0
    #: backward passes run as the plan of a step recorded as before
    #: (`numgrad.plan.step_plans`): no rule run, no graph made or walked
    steps_replayed: int = 0

    def __str__(self) -> str:
        return ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))


#: The records open in each thread: a `record()` counts only its own thread's work.
_local = threading.local()
#: Counts since the process started, from every thread (updated under `_total_lock`).
total = Record()
_total_lock = threading.Lock()


def _open() -> list[Record]:
    try:
        return _local.open
    except AttributeError:
        _local.open = []
        return _local.open


def count(**amounts: int) -> None:
    with _total_lock:
        _add(total, amounts)
    for rec in _open():
        _add(rec, amounts)


def _add(rec: Record, amounts: dict[str, int]) -> None:
    counts = rec.__dict__
    for name, amount in amounts.items():
        counts[name] += amount


_LAUNCH_COUNTER = {HIT: "cache_hits", DISK: "disk_hits", COMPILED: "kernels_compiled",
                   INTERPRETED: "kernels_interpreted"}


def count_launch(how: str, **amounts: int) -> None:
    """Count one generated kernel's launch, `how` its target obtained the kernel, and
    `amounts` of other counters."""
    count(kernels_launched=1, **{_LAUNCH_COUNTER[how]: 1}, **amounts)


@contextlib.contextmanager
def record() -> Iterator[Record]:
    """Count the engine's work inside the block, in this thread only (work that
    other threads do meanwhile is not counted here).

    Examples
    --------
    >>> import numgrad as ng
    >>> x = ng.tensor([1.0, 2.0, 3.0, 4.0])
    >>> with ng.engine.record() as rec:
    ...     _ = (x * 2 + 1).numpy()
    >>> rec.kernels_launched
    1
    """
    rec, records = Record(), _open()
    records.append(rec)
    try:
        yield rec
    finally:
        records.remove(rec)
