"""Run a schedule: bind its buffers, allocate outputs, launch each step, count.

Realizing is serialized by one engine lock, `LOCK`: scheduling, running and
`LazyBuffer.set_realized` happen under it, so two threads that realize graphs
sharing pending buffers never compute a buffer twice or see one half-realized, and
the kernel caches, the device pools and Numba's compilation are only used by one
thread at a time. Recording takes no lock (it only creates new objects), and reading
a realized value takes none either (a realized buffer never changes).
"""

from __future__ import annotations

import contextlib
import math
import threading
import weakref

from numgrad import tracing
from numgrad.engine import counters
from numgrad.engine.schedule import schedule
from numgrad.engine.steps import Call, Launch, Read, Schedule
from numgrad.kernels.layout import arrange
from numgrad.lazy import LazyBuffer

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
    if tensor._buf.realized is None and not (tracing.ACTIVE and tracing.current()):
        with _rebound_lock:
            _rebound[id(tensor)] = weakref.ref(tensor)


def realize(*bufs: LazyBuffer) -> None:
    """Compute every unrealized buffer in `bufs` (and what they need), and the values
    of tensors changed in place since the last realization.

    Safe to call from several threads at once: each buffer is computed once, by the
    first thread to take the engine lock; the others find it realized. While this
    thread traces a function for ``ng.jit``, nothing is computed: the trace plans
    everything at its end.
    """
    if tracing.ACTIVE and tracing.current() is not None:
        return
    if _rebound:
        with _rebound_lock:
            state = [ref() for ref in _rebound.values()]
            _rebound.clear()
        bufs += tuple(t._buf for t in state if t is not None and t._buf.realized is None)
    if all(b.is_realized for b in bufs):
        return
    with LOCK:
        # Checked again under the lock: another thread may have realized them.
        pending = [b for b in bufs if not b.is_realized]
        if not pending:
            return
        # (A record of this realization is kept only to be logged.)
        with counters.record() if counters.DEBUG else contextlib.nullcontext() as rec:
            plan, slots = schedule(pending)
            arrays = run(plan, [slots[s].realized for s in plan.sources])
            for buf, array in zip(slots, arrays):
                if not buf.is_realized and buf.op.name != "load":
                    buf.set_realized(array)
    if counters.DEBUG:
        counters.log.debug("realized %d buffers: %s", len(pending), rec)


def run(plan: Schedule, sources: list, spy: list | None = None) -> list:
    """Run `plan` with `sources` (buffers of their slots' devices) bound to its source
    slots; returns the buffer of every slot. A `spy` list receives, per launch, the
    kernel, its variant, the loop's shape and the arrays passed as its outputs and
    inputs (what ``ng.jit`` prepares its replays from)."""
    arrays = bind(plan, sources)
    for step in plan.steps:
        if isinstance(step, Launch):
            _launch(step, plan, arrays, spy)
        else:
            run_call(step, plan, arrays)
    return arrays


def bind(plan: Schedule, sources: list) -> list:
    """A list with a place per slot of `plan`: `sources` at its source slots, and its
    uploads (gather indices) copied to their devices."""
    arrays: list = [None] * len(plan.slots)
    for slot, array in zip(plan.sources, sources):
        arrays[slot] = array
    for slot, host in plan.uploads:
        backend = plan.slots[slot].device.backend
        arrays[slot] = backend.expand(backend.from_numpy(host), plan.slots[slot].shape)
    return arrays


def run_call(step: Call, plan: Schedule, arrays: list) -> None:
    """Run a movement, matmul or library step into `arrays`."""
    out = plan.slots[step.output]
    backend = out.device.backend
    if step.op == "full":
        result = backend.full(out.shape, step.arg, out.dtype)
    else:
        result = getattr(backend, step.op)(*(arrays[s] for s in step.inputs), step.arg)
    if not backend.is_view(result):
        counters.count(kernels_launched=1, bytes_allocated=result.nbytes)
    if step.op == "library" and backend.name != "cpu":
        counters.count(library_via_host=1)
    arrays[step.output] = result


def region_view(backend, array, read: Read, shape: tuple[int, ...]):
    """`array` seen through the read's fused movements, shaped as where it is read."""
    for name, arg in reversed(read.views):
        array = getattr(backend, name)(array, arg)
    return array if tuple(array.shape) == shape else backend.reshape(array, shape)


def _launch(step: Launch, plan: Schedule, arrays: list, spy: list | None) -> None:
    outputs = [plan.slots[s] for s in step.outputs]
    backend = outputs[0].device.backend
    results = [backend.empty(o.shape, o.dtype) for o in outputs]
    allocated = sum(o.dtype.itemsize * math.prod(o.shape) for o in outputs)
    for slot, array in zip(step.outputs, results):
        arrays[slot] = array
    if not allocated:  # nothing to compute
        if spy is not None:
            spy.append(None)
        return
    ins = [region_view(backend, arrays[r.slot], r, step.region(i))
           for i, r in enumerate(step.inputs)]
    program, shape, strides = arrange(step.program, step.loop, step.reduced,
                                      [o.dtype.itemsize for o in outputs],
                                      [backend.strides(a) for a in ins])
    n_out, kept = len(outputs), program.kept_rank
    targets = [backend.as_strided(a, shape, s, writeable=True)
               for a, s in zip(results, strides[:n_out])]
    if program.reduce:
        targets[0] = backend.as_strided(results[0], shape[:kept], strides[0][:kept],
                                        writeable=True)
    # The epilogue reads its inputs at index 0 of the reduced dimensions, which may be
    # empty: they span one element there.
    late_shape = shape[:kept] + (1,) * (len(shape) - kept)
    # Inputs are as writable as their arrays (kernels never write them), so a kernel
    # sees one array type whatever made the array (a broadcast, a new buffer) and
    # ng.jit's prepared plans can call the function compiled here.
    views = [backend.as_strided(a, late_shape if late else shape, s, writeable=True)
             for a, s, late in zip(ins, strides[n_out:], program.in_epilogue)]
    views += [arrays[t] for t in step.tables]
    variant = backend.variant(program, shape)
    kernel = backend.kernel(program, variant)
    if spy is not None:
        spy.append((kernel, variant, shape, targets, views))
    counters.count_launch(backend.launch(kernel, variant, targets, shape, views, list(step.args)),
                          bytes_allocated=allocated)
