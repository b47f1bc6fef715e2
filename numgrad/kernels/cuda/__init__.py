"""The CUDA target: device buffers, ``numba.cuda`` kernels and a buffer pool.

Every ``numba.cuda`` detail of numgrad lives in this package (numba-cuda is in
maintenance; its successor can replace it here). Buffers are Numba device arrays
and stay on the device between kernels; only `to_numpy` copies back. Under
``NUMBA_ENABLE_CUDASIM=1`` the same code runs in Numba's simulator. This module is
the target contract (`numgrad.kernels`); its parts, one job each:

- `device`: availability, the device's name, synchronisation, the cache key;
- `pool`: pooled device memory and the arrays viewing it;
- `views`: layouts (reshape, permute, expand, basic indexing) as views;
- `moves`: hand-written kernels (copies, gathers, scatters, the tiled matmul);
- `render`: generated kernels, in one of three skeletons (the variants);
- `grid`: launch configuration, and the one call every launch makes;
- `interop`: DLPack for other libraries;
- `ptx`: the PTX check of what the simulator ran (``python -m numgrad.kernels.cuda LOG``).
"""

from __future__ import annotations

import math

import numpy as np

from numgrad.kernels import host, jit
from numgrad.kernels.codegen import Program
from numgrad.kernels.cuda import device, grid, moves, views
from numgrad.kernels.cuda.device import (
    UNAVAILABLE,
    device_name,
    is_available,
    key,
    synchronize,
)
from numgrad.kernels.cuda.interop import adopt, clone, dlpack, dlpack_device
from numgrad.kernels.cuda.moves import (
    concatenate,
    copy,
    index_add,
    index_put,
    matmul,
    roll,
    to_numpy,
)
from numgrad.kernels.cuda.pool import empty, empty_cache, from_numpy, pool_stats
from numgrad.kernels.cuda.render import ELEMENTWISE, ROWS, Blocks, Variant, kernel, render
from numgrad.kernels.cuda.views import as_strided, expand, full, is_view, permute, strides

__all__ = [
    "name", "key", "empty", "full", "from_numpy", "to_numpy", "copy", "strides",
    "as_strided", "is_view", "dlpack", "dlpack_device", "reshape", "permute", "expand",
    "index", "index_add", "index_put", "concatenate", "roll", "matmul", "library", "variant",
    "render", "kernel", "launch",
    "is_available", "UNAVAILABLE", "device_name", "synchronize", "pool_stats", "empty_cache",
    "ELEMENTWISE", "ROWS", "Blocks", "Variant", "adopt", "clone",
]

name = "cuda"
#: A reduction with at least this many outputs gives each output one thread;
#: fewer outputs each get blocks of threads, which combine their partial results.
ROWS_THRESHOLD = 4096
#: ... and so does one whose outputs each reduce fewer than this many elements.
SMALL_ROW = 64
#: Blocks a block reduction aims to spread its work over.
TARGET_TASKS = 1024


# ---- movements that are views when they can be -----------------------------------

def reshape(array, shape):
    view = views.reshape(array, shape)
    return view if view is not None else views.reshape(moves.contiguous(array), shape)


def index(array, key):
    """``array[key]``: a view for basic keys, a gather for integer arrays."""
    if any(isinstance(k, np.ndarray) for k in key):
        return moves.gather(array, key)
    return views.index(array, key)


def library(*arrays_and_call):
    """A library primitive through the host: the inputs copied there, the result back
    (counted as ``library_via_host`` by ``ng.engine.record()``)."""
    *arrays, call = arrays_and_call
    return from_numpy(host.library(*(to_numpy(a) for a in arrays), call))


# ---- generated kernels -----------------------------------------------------------

def variant(program: Program, shape: tuple[int, ...]) -> Variant:
    """`ELEMENTWISE` without a reduction; a reduction over many rows or short rows
    gets `ROWS` (a thread per output), others `Blocks` (blocks per output)."""
    if not program.reduce:
        return ELEMENTWISE
    rows = math.prod(shape[:program.kept_rank])
    if rows >= ROWS_THRESHOLD or math.prod(shape[program.kept_rank:]) < SMALL_ROW:
        return ROWS
    return Blocks(program.acc_dtype, grid.MAX_THREADS)


def launch(kernel, variant: Variant, outs, shape, inputs, args) -> str:
    return jit.launch(kernel, lambda: _start(kernel, variant, outs, shape, inputs, args),
                      _compile_state, device.py_func(kernel).__code__.co_filename)


def _start(kernel, variant: Variant, outs, shape, inputs, args) -> None:
    """Launch `kernel`, of `variant`, over the loop nest `shape`."""
    if variant == ELEMENTWISE:
        return grid.over(kernel, math.prod(shape), [*outs, shape, *inputs, *args])
    kept = outs[0].ndim
    rows, size = math.prod(shape[:kept]), math.prod(shape[kept:])
    if variant == ROWS:
        return grid.over(kernel, rows, [*outs, shape, *inputs, *args])
    threads = min(variant.width, grid.threads(size))
    chunks = max(1, min(TARGET_TASKS // rows, size // (4 * threads)))
    partial = empty((rows * chunks,), variant.acc)
    grid.start(kernel, min(rows * chunks, grid.MAX_BLOCKS), threads,
               [*outs, shape, chunks, partial, _chunk_counter(rows), *inputs, *args])


def _compile_state(kernel) -> tuple[int, int]:
    """Signatures `kernel` has compiled, and how many of them came from the disk cache."""
    if device.SIMULATOR:  # nothing compiles: count a kernel's first launch as its compile
        started = getattr(kernel, "_ng_started", False)
        kernel._ng_started = True
        return int(started), 0
    return len(kernel.overloads), sum(kernel.stats.cache_hits.values())


_counter = None


def _chunk_counter(rows: int):
    """Counts of finished blocks for `rows` rows; zero between launches (the last
    block of each row resets its count)."""
    global _counter
    if _counter is None or _counter.size < rows:
        _counter = from_numpy(np.zeros(max(rows, ROWS_THRESHOLD), np.int32))
    return _counter
