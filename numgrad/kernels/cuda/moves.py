"""Hand-written kernels: copies, gathers, scatters, concatenation and the tiled matmul."""

from __future__ import annotations

import math

import numpy as np

from numgrad.kernels import jit
from numgrad.kernels.codegen import Program
from numgrad.kernels.cuda import grid, ptx
from numgrad.kernels.cuda.device import SIMULATOR, key
from numgrad.kernels.cuda.pool import empty, flat, flat_block, from_numpy, restride
from numgrad.kernels.cuda.render import ELEMENTWISE, kernel
from numgrad.kernels.cuda.views import full, index, is_contiguous, probe
from numgrad.kernels.layout import collapse

#: Matmul tile edge (threads per block: its square), and blocks along the batch.
#: The simulator runs each thread as a Python thread, so it uses small tiles and
#: one block for all the batch; the PTX check compiles the GPU's tile.
GPU_TILE = 16
TILE, BATCH_BLOCKS = (4, 1) if SIMULATOR else (GPU_TILE, 65535)


# ---- copies --------------------------------------------------------------------------

def contiguous(array):
    """`array` itself if C-contiguous, else a contiguous copy."""
    if is_contiguous(array):
        return array
    out = empty(array.shape, array.dtype)
    copy_into(out, array)
    return out


def copy_into(dst, src) -> None:
    """``dst[...] = src`` for any layouts, by the generated elementwise kernel."""
    if not src.size:
        return
    shape, (out_strides, in_strides), kept = collapse(
        tuple(src.shape), [tuple(dst.strides), tuple(src.strides)], src.ndim)
    dtype = src.dtype.name
    program = Program(code=(("in", 0),), dtypes=(dtype,), stores=(0,), in_dtypes=(dtype,),
                      arg_dtypes=(), kept_rank=kept)
    grid.over(kernel(program, ELEMENTWISE), math.prod(shape),
              [restride(dst, shape, out_strides), shape, restride(src, shape, in_strides)])


def to_numpy(array) -> np.ndarray:
    """A host copy of `array`."""
    if not array.size:
        return np.empty(array.shape, array.dtype)
    return contiguous(array).copy_to_host()


def copy(array, source):
    """`array`, a buffer of device `source` (the CPU's are NumPy arrays), copied here."""
    return from_numpy(array if source == "cpu" else source.backend.to_numpy(array))


def concatenate(*arrays_and_axis):
    *arrays, axis = arrays_and_axis
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty(tuple(shape), arrays[0].dtype)
    start = 0
    for a in arrays:
        copy_into(restride(out, a.shape, out.strides, start * out.strides[axis]), a)
        start += a.shape[axis]
    return out


def roll(array, shifts):
    """`array` shifted cyclically by ``shifts``, ((axis, shift), ...): per axis, its two
    slices concatenated the other way round."""
    for axis, shift in shifts:
        n, lead = array.shape[axis], (slice(None),) * axis
        array = concatenate(index(array, lead + (slice(n - shift, None),)),
                            index(array, lead + (slice(0, n - shift),)), axis)
    return array


# ---- gathers and scatters ------------------------------------------------------------

def gather(array, key):
    """``array[key]`` for a `key` with integer arrays: a new array."""
    positions = _positions(array, key)
    out = empty(positions.shape, array.dtype)
    _run("gather", positions.size, flat(out), flat_block(array), from_numpy(
        positions.ravel() + array._ng_offset // array.dtype.itemsize))
    return out


def index_add(array, arg):
    """Zeros of ``arg[1]``'s shape with `array` added at ``arg[0]`` (repeats add up)."""
    key, shape = arg
    out = contiguous(full(shape, 0, array.dtype))
    positions = _positions(out, key)
    values = np.broadcast_to(probe(array), positions.shape)  # a layout, for its strides
    values = contiguous(restride(array, values.shape, values.strides))
    _run("scatter_add", positions.size, flat(out), flat(values), from_numpy(positions.ravel()))
    return out


def index_put(array, values, key):
    """A copy of `array` with ``[key]`` set to `values` (of the key's shape); where a
    position repeats, the last value wins, as in NumPy."""
    out = empty(array.shape, array.dtype)
    copy_into(out, array)
    positions = _positions(out, key).ravel()
    last = len(positions) - 1 - np.unique(positions[::-1], return_index=True)[1]
    _run("scatter", last.size, flat(out), flat(contiguous(values)),
         from_numpy(positions[last]), from_numpy(last))
    return out


def _positions(array, key) -> np.ndarray:
    """The item offsets, from `array`'s first element, of the elements ``array[key]``."""
    itemsize = array.dtype.itemsize
    offsets = np.broadcast_to(np.zeros((), np.int64), array.shape)[key]
    for d, (n, stride) in enumerate(zip(array.shape, array.strides)):
        along = np.arange(n, dtype=np.int64) * (stride // itemsize)
        along = along.reshape((n,) + (1,) * (array.ndim - d - 1))
        offsets = offsets + np.broadcast_to(along, array.shape)[key]
    return np.ascontiguousarray(offsets)


def _run(name: str, work: int, *arrays) -> None:
    if work:
        grid.over(jit.kernel((name, key), lambda: _MOVES, name=name), work, list(arrays))


# ---- matmul --------------------------------------------------------------------------

def matmul(a, b, arg=None):
    """Batched matrix product through shared-memory tiles (any strides, broadcast
    batches included)."""
    *batch, m, _ = a.shape
    n = tuple(b.shape)[-1]
    out = empty((*batch, m, n), a.dtype)
    if not out.size:
        return out
    layouts = [(tuple(x.shape), tuple(x.strides)) for x in (out, a, b)]
    bshape, bstrides, _ = collapse(tuple(batch) or (1,), [
        st[:-2] or (0,) for _, st in layouts], len(batch) or 1)
    if len(bshape) > 1:  # batch dimensions that do not merge: make them contiguous
        return matmul(contiguous(a), contiguous(b))
    views = [restride(x, (bshape[0], *shape[-2:]), (s[0], *st[-2:]))
             for x, (shape, st), s in zip((out, a, b), layouts, bstrides)]
    tiled = _matmul_kernel(a.dtype, TILE)
    if SIMULATOR and ptx.LOG:  # the PTX check compiles the kernel a GPU would run
        ptx.log_as(tiled, _matmul_kernel(a.dtype, GPU_TILE))
    grid.start(tiled, (-(-n // TILE), -(-m // TILE), min(bshape[0], BATCH_BLOCKS)),
               (TILE, TILE), views)
    return out


def _matmul_kernel(dtype: np.dtype, tile: int):
    # bool products accumulate as integers (any nonzero sum is True)
    acc = "int64" if dtype == np.bool_ else dtype.name
    return jit.kernel(("matmul", dtype.name, tile, key),
                      lambda: _MATMUL.format(acc=acc, tile=tile))


_MOVES = """\
from numba import cuda


@cuda.jit(cache=True)
def gather(out, table, positions):
    n = cuda.grid(1)
    while n < positions.shape[0]:
        out[n] = table[positions[n]]
        n += cuda.gridsize(1)


@cuda.jit(cache=True)
def scatter_add(out, values, positions):
    n = cuda.grid(1)
    while n < positions.shape[0]:
        cuda.atomic.add(out, positions[n], values[n])
        n += cuda.gridsize(1)


@cuda.jit(cache=True)
def scatter(out, values, positions, sources):
    n = cuda.grid(1)
    while n < positions.shape[0]:
        out[positions[n]] = values[sources[n]]
        n += cuda.gridsize(1)
"""

_MATMUL = """\
import numpy as np
from numba import cuda


@cuda.jit(cache=True)
def kernel(out, a, b):
    # out[z] = a[z] @ b[z], one output element per thread, through tiles of a and b
    # in shared memory.
    ta = cuda.shared.array(({tile}, {tile}), np.{acc})
    tb = cuda.shared.array(({tile}, {tile}), np.{acc})
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    i = cuda.blockIdx.y * {tile} + ty
    j = cuda.blockIdx.x * {tile} + tx
    m, k, n = a.shape[1], a.shape[2], b.shape[2]
    z = cuda.blockIdx.z
    while z < out.shape[0]:
        acc = np.{acc}(0)
        for start in range(0, k, {tile}):
            ta[ty, tx] = a[z, i, start + tx] if i < m and start + tx < k else 0
            tb[ty, tx] = b[z, start + ty, j] if start + ty < k and j < n else 0
            cuda.syncthreads()
            for q in range({tile}):
                acc += ta[ty, q] * tb[q, tx]
            cuda.syncthreads()
        if i < m and j < n:
            out[z, i, j] = acc
        z += cuda.gridDim.z
"""
