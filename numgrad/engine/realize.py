"""Run a schedule: allocate outputs, look kernels up in the cache, launch, count."""

from __future__ import annotations

import math

from numgrad.dtypes import NAMES as _DTYPE_NAMES
from numgrad.engine import counters
from numgrad.engine.schedule import BackendOp, Kernel, schedule
from numgrad.kernels import cache
from numgrad.kernels.codegen import Program
from numgrad.kernels.layout import collapse, contiguous_strides
from numgrad.lazy import LazyBuffer


def realize(*bufs: LazyBuffer) -> None:
    """Compute every unrealized buffer in `bufs` (and what they need)."""
    pending = [b for b in bufs if not b.is_realized]
    if not pending:
        return
    with counters.record() as rec:
        for item in schedule(pending):
            if isinstance(item, Kernel):
                _run_kernel(item)
            else:
                _run_backend_op(item)
    if counters.DEBUG:
        counters.log.debug("realized %d buffers: %s", len(pending), rec)


def plan(kernel: Kernel, strides: list) -> tuple[Program, tuple, list]:
    """The program, collapsed loop shape and per-operand strides of a kernel launch.

    `strides` gives each input's strides in bytes, as an array of its region shape
    (`Kernel.region_shape`); a None entry (an input not computed yet, for
    `explain`) is taken as contiguous. The loop nest puts the reduced axes last;
    operands that do not vary along a loop dimension (the reduction's output and
    epilogue inputs along reduced ones) have stride 0 there. Operands are the
    outputs (`Kernel.outputs`, all new contiguous arrays) then the inputs.
    """
    loop, reduced = kernel.loop_shape, kernel.reduced_axes
    kept = [d for d in range(len(loop)) if d not in reduced]
    order = kept + list(reduced)
    padding = (0,) * len(reduced)
    operand_strides = []
    if kernel.reduce:
        operand_strides.append(contiguous_strides(kernel.kept_shape, kernel.out.dtype.itemsize)
                               + padding)
    for buf, _ in kernel.stores:
        full = contiguous_strides(loop, buf.dtype.itemsize)
        operand_strides.append(tuple(full[d] for d in order))
    for i, (buf, s) in enumerate(zip(kernel.inputs, strides)):
        if s is None:
            s = contiguous_strides(kernel.region_shape(i), buf.dtype.itemsize)
        operand_strides.append(tuple(s) + padding if kernel.in_epilogue[i]
                               else tuple(s[d] for d in order))
    shape, operand_strides, kept_rank = collapse(
        tuple(loop[d] for d in order), operand_strides, len(kept))
    # A reduction whose data is contiguous along a kept dimension (a column sum)
    # runs its reduced loops outermost.
    n_out = len(kernel.outputs)
    body = [s for s, late in zip(operand_strides[n_out:], kernel.in_epilogue) if not late]
    walk = [min((abs(x), d) for d, x in enumerate(s) if x) for s in body if any(s)]
    outer = bool(kernel.reduce) and bool(walk) and min(walk)[1] < kept_rank
    program = Program(
        code=tuple(kernel.code),
        dtypes=tuple(kernel.dtypes),
        stores=tuple(pos for _, pos in kernel.stores),
        folded=kernel.folded,
        in_dtypes=tuple(_DTYPE_NAMES[b.dtype] for b in kernel.inputs),
        arg_dtypes=tuple(type(a).__name__ for a in kernel.args),
        reduce=kernel.reduce.op.name if kernel.reduce else None,
        epilogue=tuple(kernel.epilogue),
        epilogue_dtypes=tuple(kernel.epilogue_dtypes),
        in_epilogue=tuple(kernel.in_epilogue),
        table_dtypes=tuple(_DTYPE_NAMES[t.dtype] for t in kernel.tables),
        kept_rank=kept_rank,
        reduced_rank=len(shape) - kept_rank,
        reduce_outer=outer,
    )
    return program, shape, operand_strides


def _region_view(kernel: Kernel, i: int, backend):
    """Input `i`'s array seen through its fused movements, shaped as where it is read."""
    array, shape = kernel.inputs[i].realized, kernel.region_shape(i)
    for movement in reversed(kernel.views[i]):
        array = getattr(backend, movement.op.name)(array, movement.arg)
    return array if tuple(array.shape) == shape else backend.reshape(array, shape)


def _run_kernel(kernel: Kernel) -> None:
    outputs = kernel.outputs
    backend = outputs[0].device.backend
    arrays = [_region_view(kernel, i, backend) for i in range(len(kernel.inputs))]
    results = [backend.empty(buf.shape, buf.dtype) for buf in outputs]
    counters.count(bytes_allocated=sum(b.dtype.itemsize * math.prod(b.shape) for b in outputs))
    if any(math.prod(buf.shape) for buf in outputs):
        program, shape, strides = plan(kernel, [backend.strides(a) for a in arrays])
        n_out, kept = len(outputs), program.kept_rank
        targets = [backend.as_strided(a, shape, s, writeable=True)
                   for a, s in zip(results, strides[:n_out])]
        if kernel.reduce:
            targets[0] = backend.as_strided(results[0], shape[:kept], strides[0][:kept],
                                            writeable=True)
        # The epilogue reads its inputs at index 0 of the reduced dimensions, which
        # may be empty: they span one element there.
        late_shape = shape[:kept] + (1,) * (len(shape) - kept)
        views = [backend.as_strided(a, late_shape if late else shape, s)
                 for a, s, late in zip(arrays, strides[n_out:], kernel.in_epilogue)]
        views += [t.realized for t in kernel.tables]
        variant = backend.variant(program, shape)
        fn = cache.lookup((program, variant, backend.target),
                          lambda: backend.render(program, variant))
        _launch(backend, fn, variant, targets, shape, views, kernel.args)
    for buf, array in zip(outputs, results):
        buf.set_realized(array)


def _launch(backend, fn, variant, outs, shape, inputs, args) -> None:
    compiled_before, disk_before = backend.compile_state(fn)
    try:
        backend.launch(fn, variant, outs, shape, inputs, args)
    except Exception:
        if backend.compile_state(fn)[0] > compiled_before:
            raise
        # Numba could not load its cached machine code (a damaged file): drop it
        # and compile again. A kernel that compiled never raises here.
        cache.forget_compiled(backend.source_file(fn))
        backend.launch(fn, variant, outs, shape, inputs, args)
    compiled, disk = backend.compile_state(fn)
    if compiled == compiled_before:
        counters.count(kernels_launched=1, cache_hits=1)
    elif disk > disk_before:
        counters.count(kernels_launched=1, disk_hits=1)
    else:
        counters.count(kernels_launched=1, kernels_compiled=1)
        counters.log.debug("compiled kernel %s", backend.source_file(fn))


def _run_backend_op(item: BackendOp) -> None:
    out = item.out
    backend = out.device.backend
    if out.is_const:  # a constant needed as an array: a broadcast scalar, no copies
        result = backend.full(out.shape, out.arg, out.dtype)
    else:
        result = getattr(backend, out.op.name)(*(s.realized for s in out.srcs), out.arg)
    if not backend.is_view(result):
        counters.count(kernels_launched=1, bytes_allocated=result.nbytes)
    out.set_realized(result)
