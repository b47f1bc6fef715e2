"""What numgrad remembers of recorded programs, to skip deriving it again when a program
of the same structure comes back.

- `numgrad.plan.keys`: one description of a recorded node by its structure, which
  every key below is made of;
- `numgrad.plan.tape` and `numgrad.plan.tracing`: the recorders (a thread's operations
  since its last realization; ``ng.jit``'s tracer);
- `numgrad.plan.bound`: a `Plan`, a schedule bound to one graph, sharing what its runs
  taught with the schedule's other plans;
- `numgrad.plan.schedules`: a graph's schedule, rebound to a new graph of its structure;
- `numgrad.plan.prepared` and `numgrad.plan.runner`: a schedule run again, prepared
  (its buffers and typed steps bound once) and, replayed often, written out as one
  function;
- `numgrad.plan.recipes`, `numgrad.plan.scalar_pass` and `numgrad.plan.stage`: a
  backward pass's gradients rebuilt without its VJP rules, and its realizations by
  position;
- `numgrad.plan.step_plans`: an eager training step's backward pass and realizations run
  as one plan;
- ``ng.jit``'s traces (`numgrad.capture`) are kept per jitted function.

Each keeps what it remembers in a `Cache` (`numgrad.plan.cache`); `clear` empties them
all, `caches` shows their counters. None of them may change a value (SPEC §9). With
``NUMGRAD_REMEMBER=0`` in the environment (or `ON` set to False) none of them keeps or
uses anything: every program is scheduled, differentiated and traced afresh, which is
what the tests compare them with, and a way to rule them out when a result looks
wrong. Compiled kernels are still cached: they are functions of their structure alone.
"""

from __future__ import annotations

import os

from numgrad.plan.cache import Cache, caches

__all__ = ["ON", "Cache", "caches", "clear"]

#: Whether the layers that remember programs keep and use what they remember (read at
#: each use: tests switch it).
ON = os.environ.get("NUMGRAD_REMEMBER", "1") != "0"


def clear() -> None:
    """Forget every remembered schedule, prepared plan, recipe, step plan and trace: each
    program is derived afresh when it comes back (compiled kernels stay cached)."""
    for cache in caches():
        cache.clear()
