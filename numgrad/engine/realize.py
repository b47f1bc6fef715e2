"""Run a schedule: allocate outputs, look kernels up in the cache, launch, count."""

from __future__ import annotations

import math

from numgrad.engine import counters
from numgrad.engine.schedule import BackendOp, Kernel, schedule
from numgrad.kernels import cache
from numgrad.kernels.codegen import Program, render
from numgrad.kernels.layout import collapse
from numgrad.lazy import LazyBuffer


def realize(*bufs: LazyBuffer) -> None:
    """Compute every unrealized buffer in `bufs` (and what they need)."""
    pending = [b for b in bufs if not b.is_realized]
    if not pending:
        return
    for item in schedule(pending):
        if isinstance(item, Kernel):
            _run_kernel(item)
        else:
            _run_backend_op(item)


def plan(kernel: Kernel, strides: list) -> tuple[Program, tuple, list]:
    """The program, collapsed loop shape and per-operand strides of a kernel launch.

    `strides` gives each input's strides in bytes; a None entry (an input not
    computed yet, for `explain`) is taken as contiguous.
    """
    out, loop = kernel.out, kernel.loop_shape
    reduced = tuple(out.arg) if kernel.reduce else ()
    order = [d for d in range(len(loop)) if d not in reduced] + list(reduced)
    itemsize = [b.dtype.itemsize for b in kernel.inputs]
    strides = [_contiguous(loop, size) if s is None else s for s, size in zip(strides, itemsize)]
    out_strides = _contiguous(out.shape, out.dtype.itemsize) + (0,) * len(reduced)
    shape, all_strides, kept = collapse(
        tuple(loop[d] for d in order),
        [out_strides] + [tuple(s[d] for d in order) for s in strides],
        len(loop) - len(reduced),
    )
    program = Program(
        code=tuple(kernel.code),
        dtypes=tuple(kernel.dtypes),
        in_dtypes=tuple(b.dtype.name for b in kernel.inputs),
        arg_dtypes=tuple(type(a).__name__ for a in kernel.args),
        reduce=kernel.reduce,
        kept_rank=kept,
        reduced_rank=len(shape) - kept,
    )
    return program, shape, all_strides


def _contiguous(shape, itemsize) -> tuple[int, ...]:
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def _run_kernel(kernel: Kernel) -> None:
    out = kernel.out
    backend = out.device.backend
    arrays = [b.realized for b in kernel.inputs]
    result = backend.empty(out.shape, out.dtype)
    counters.count(bytes_allocated=out.dtype.itemsize * math.prod(out.shape))
    if math.prod(out.shape):
        program, shape, strides = plan(kernel, [backend.strides(a) for a in arrays])
        parallel = math.prod(shape) >= backend.PARALLEL_THRESHOLD and shape[0] > 1
        target = backend.as_strided(result, shape[:program.kept_rank],
                                    strides[0][:program.kept_rank], writeable=True)
        views = [backend.as_strided(a, shape, s) for a, s in zip(arrays, strides[1:])]
        key = (program, parallel, backend.name)
        fn = cache.lookup(key, lambda: render(program, parallel))
        _launch(backend, fn, target, shape, views, kernel.args)
    out.set_realized(result)


def _launch(backend, fn, out, shape, inputs, args) -> None:
    compiled_before = len(fn.overloads)
    disk_before = sum(fn.stats.cache_hits.values())
    try:
        backend.launch(fn, out, shape, inputs, args)
    except Exception:
        if len(fn.overloads) > compiled_before:
            raise
        # Numba could not load its cached machine code (a damaged file): drop it
        # and compile again. A kernel that compiled never raises here.
        cache.forget_compiled(fn)
        backend.launch(fn, out, shape, inputs, args)
    if len(fn.overloads) == compiled_before:
        counters.count(kernels_launched=1, cache_hits=1)
    elif sum(fn.stats.cache_hits.values()) > disk_before:
        counters.count(kernels_launched=1, disk_hits=1)
    else:
        counters.count(kernels_launched=1, kernels_compiled=1)
        counters.log.debug("compiled kernel %s", fn.py_func.__code__.co_filename)


def _run_backend_op(item: BackendOp) -> None:
    out = item.out
    backend = out.device.backend
    arrays = [s.realized for s in out.srcs]
    result = getattr(backend, out.op.name)(*arrays, out.arg)
    if getattr(result, "base", None) is None:
        counters.count(kernels_launched=1, bytes_allocated=result.nbytes)
    out.set_realized(result)
