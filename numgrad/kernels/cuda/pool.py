"""Device memory: a pool of reused blocks, and the arrays viewing them.

Every buffer is a view of a pooled *block*. `view` makes every view, so each view
keeps its block's lease alive, and the block goes back to the pool when the last
array using it is gone: a training loop reuses the same blocks step after step. All
work runs in order on the default stream, so a block is never reused while a kernel
that reads it is still queued.
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict

import numpy as np
from numba import cuda

from numgrad.kernels.cuda.device import SIMULATOR
from numgrad.kernels.layout import contiguous_strides


class Block:
    """A lease on one pooled allocation; arrays viewing it hold it."""

    __slots__ = ("memory", "nbytes", "__weakref__")

    def __init__(self, memory, nbytes: int):
        self.memory, self.nbytes = memory, nbytes


_free: dict[int, list] = defaultdict(list)
#: device allocations made, blocks reused from the pool, bytes the pool holds
pool_stats = {"allocations": 0, "reuses": 0, "bytes_reserved": 0}


def _size_class(nbytes: int) -> int:
    """`nbytes` rounded up to one of 8 sizes per power of two (at most 12.5% waste)."""
    nbytes = max(nbytes, 512)
    step = 1 << max(0, nbytes.bit_length() - 4)
    return -(-nbytes // step) * step


def _take(nbytes: int) -> Block:
    size = _size_class(nbytes)
    if _free[size]:
        memory = _free[size].pop()
        pool_stats["reuses"] += 1
    else:
        memory = np.empty(size, np.uint8) if SIMULATOR else cuda.device_array(size, np.uint8)
        pool_stats["allocations"] += 1
        pool_stats["bytes_reserved"] += size
    block = Block(memory, size)
    weakref.finalize(block, _free[size].append, memory)
    return block


def empty_cache() -> None:
    """Give the pool's unused blocks back to the device."""
    for size, blocks in _free.items():
        pool_stats["bytes_reserved"] -= size * len(blocks)
        blocks.clear()


def view(block: Block, offset: int, shape, strides, dtype, fresh: bool = False):
    """A device array over `block`, starting `offset` bytes in."""
    shape, strides, dtype = tuple(shape), tuple(strides), np.dtype(dtype)
    if SIMULATOR:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        host = np.ndarray(shape, dtype, buffer=block.memory, offset=offset, strides=strides)
        array = FakeCUDAArray(host)
    else:
        from numba.cuda.cudadrv.devicearray import DeviceNDArray

        memory = block.memory.gpu_data
        array = DeviceNDArray(shape, strides, dtype,
                              gpu_data=memory.view(offset) if offset else memory)
    array._ng_block, array._ng_offset, array._ng_fresh = block, offset, fresh
    return array


def restride(array, shape, strides, offset: int = 0):
    """Another view of `array`'s block: `offset` bytes from `array`'s start."""
    return view(array._ng_block, array._ng_offset + offset, shape, strides, array.dtype)


def flat(array):
    """A contiguous `array` as 1-D."""
    return restride(array, (array.size,), (array.dtype.itemsize,))


def flat_block(array):
    """All of `array`'s block as 1-D items of its dtype."""
    itemsize = array.dtype.itemsize
    return view(array._ng_block, 0, (array._ng_block.nbytes // itemsize,), (itemsize,),
                array.dtype)


def empty(shape, dtype):
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    return view(_take(nbytes), 0, shape, contiguous_strides(shape, dtype.itemsize), dtype,
                fresh=True)


def from_numpy(array: np.ndarray):
    """A device copy of `array`."""
    out = empty(array.shape, array.dtype)
    if array.size:
        out.copy_to_device(np.ascontiguousarray(array))
    return out
