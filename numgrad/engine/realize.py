"""Realize lazy buffers: schedule what they need and run it, under the engine lock.

Realizing is serialized by one engine lock, `LOCK`: scheduling, running and
`LazyBuffer.set_realized` happen under it, so two threads that realize graphs
sharing pending buffers never compute a buffer twice or see one half-realized, and
the kernel caches, the device pools and Numba's compilation are only used by one
thread at a time. Recording takes no lock (it only creates new objects), and reading
a realized value takes none either (a realized buffer never changes).
"""

from __future__ import annotations

import contextlib
import threading
import weakref

from numgrad.engine import counters
from numgrad.engine.schedule import schedule
from numgrad.lazy import LazyBuffer
from numgrad.ops import TABLE
from numgrad.plan import recorder, tracing
from numgrad.plan.prepared import run_reused

_LOAD = TABLE["load"]
#: The engine lock. Reentrant: realizing may record (and so realize) again.
LOCK = threading.RLock()


#: Tensors changed in place to values not yet computed (`Tensor._rebind`): state such
#: as parameters, which the next realization computes and stores too, so that a loop's
#: updates never pile up into a chain recomputed at each use.
#: (By id: tensors compare elementwise, so they cannot be set members.)
_rebound: dict[int, weakref.ref] = {}
_rebound_lock = threading.Lock()


def rebound(tensor) -> None:
    """Note that `tensor` (anything with a ``_buf``) was changed in place. (A trace
    keeps its own account of what it changed.)"""
    if tensor._buf.realized is None and not tracing.current():
        with _rebound_lock:
            _rebound[id(tensor)] = weakref.ref(tensor)


def rebound_state() -> list:
    """The tensors changed in place that the next realization computes (a look: they
    stay noted)."""
    with _rebound_lock:
        return [t for t in (ref() for ref in _rebound.values()) if t is not None]


def forget_rebound(tensors) -> None:
    """Take `tensors` off the tensors changed in place (their values were computed)."""
    with _rebound_lock:
        for t in tensors:
            _rebound.pop(id(t), None)


def realize(*bufs: LazyBuffer):
    """Compute every unrealized buffer in `bufs` (and what they need), and the values
    of tensors changed in place since the last realization: with them, when something
    is computed (reading a computed value computes nothing), and always when `bufs` is
    empty. While this thread's recorder's `ran` is a list (a backward pass that may become a
    step plan), each realization appends its schedule, the buffer of each of its slots
    and the buffers its steps' arguments came from (`numgrad.engine.schedule.schedule`).

    Safe to call from several threads at once: each buffer is computed once, by the
    first thread to take the engine lock; the others find it realized. While this
    thread traces a function for ``ng.jit``, nothing is computed: the trace plans
    everything at its end.
    """
    if tracing.current() is not None:
        return
    if bufs and all(b.realized is not None for b in bufs):
        return  # nothing to compute: state changed in place waits for a realization
    if _rebound:
        with _rebound_lock:
            state = [ref() for ref in _rebound.values()]
            _rebound.clear()
        bufs += tuple(t._buf for t in state if t is not None and t._buf.realized is None)
    if all(b.is_realized for b in bufs):
        return
    thread = recorder.current()
    if thread.active:  # (what this thread recorded since is computed now: a new
        thread.realizing()  # tape, unless the realization is a cut for depth)
    with LOCK:
        # Checked again under the lock: another thread may have realized them.
        pending = [b for b in bufs if not b.is_realized]
        if not pending:
            return
        # (A record of this realization is kept only to be logged.)
        with counters.record() if counters.DEBUG else contextlib.nullcontext() as rec:
            ran = thread.ran
            constants = [] if ran is not None else None
            plan, slots = schedule(pending, constants=constants)
            if thread.unstored is not None:
                thread.computing(slots)
            arrays = run_reused(plan, [slots[s].realized for s in plan.sources])
            for buf, array in zip(slots, arrays):
                if buf.realized is None and buf.op is not _LOAD:  # (not an upload's)
                    buf.set_realized(array)
            if ran is not None:
                ran.append((plan, slots, constants))
    if counters.DEBUG:
        counters.log.debug("realized %d buffers: %s", len(pending), rec)
