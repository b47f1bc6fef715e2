"""Run a schedule: bind its buffers, allocate outputs, launch each step, count.

`run` goes step by step: each launch makes its views of its inputs and outputs,
arranges its loop (`numgrad.kernels.layout`) and calls its kernel through the
backend. A plan run often is prepared instead (`numgrad.plan.prepared`), which
does that work once.
"""

from __future__ import annotations

import math

from numgrad.engine import counters
from numgrad.engine.steps import Call, Launch, Read, Schedule
from numgrad.kernels.layout import arrange, read_shape


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
        arrays[slot] = upload(plan, slot, host)
    return arrays


def upload(plan: Schedule, slot: int, host):
    """The gather index `host` (a host array of the plan's own, never changed) on its
    slot's device, broadcast to the slot's shape."""
    device = plan.slots[slot].device
    array = host if device.type == "cpu" else device.backend.from_numpy(host)
    shape = plan.slots[slot].shape
    return array if array.shape == shape else device.backend.expand(array, shape)


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
    views = [backend.as_strided(a, read_shape(program, i, late_shape if late else shape), s,
                                writeable=True)
             for i, (a, s, late) in enumerate(zip(ins, strides[n_out:], program.in_epilogue))]
    views += [arrays[t] for t in step.tables]
    variant = backend.variant(program, shape)
    kernel = backend.kernel(program, variant)
    if spy is not None:
        spy.append((kernel, variant, shape, targets, views))
    counters.count_launch(backend.launch(kernel, variant, targets, shape, views, list(step.args)),
                          bytes_allocated=allocated)
