"""Device memory: a pool of reused blocks, and the arrays viewing them.

Every buffer is a view of a pooled *block*. `view` makes every view, so each view
keeps its block's lease alive, and the block goes back to the pool when the last
array using it is gone: a training loop reuses the same blocks step after step. All
work runs in order on the default stream, so a block is never reused while a kernel
that reads it is still queued.

The pool is shared by every thread: taking a block holds `_lock`; a block comes back
(a finalizer, in whichever thread drops the last view) with one atomic append. An
allocation the device cannot make, even after the pool's unused blocks are given
back, raises `MemoryError` naming the shape and dtype.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import defaultdict

import numpy as np
from numba import cuda

from numgrad.kernels.cuda.device import SIMULATOR
from numgrad.kernels.host import allocation_error
from numgrad.kernels.layout import contiguous_strides


class Block:
    """A lease on one pooled allocation; arrays viewing it hold it."""

    __slots__ = ("memory", "nbytes", "__weakref__")

    def __init__(self, memory, nbytes: int):
        self.memory, self.nbytes = memory, nbytes


_free: dict[int, list] = defaultdict(list)
_lock = threading.RLock()
#: device allocations made, blocks reused from the pool, bytes the pool holds
pool_stats = {"allocations": 0, "reuses": 0, "bytes_reserved": 0}


def _size_class(nbytes: int) -> int:
    """`nbytes` rounded up to one of 8 sizes per power of two (at most 12.5% waste)."""
    nbytes = max(nbytes, 512)
    step = 1 << max(0, nbytes.bit_length() - 4)
    return -(-nbytes // step) * step


def _take(nbytes: int) -> Block:
    size = _size_class(nbytes)
    with _lock:
        free = _free[size]
        try:
            memory = free.pop()
            pool_stats["reuses"] += 1
        except IndexError:
            memory = _allocate(size)
            pool_stats["allocations"] += 1
            pool_stats["bytes_reserved"] += size
    block = Block(memory, size)
    weakref.finalize(block, free.append, memory)
    return block


def _allocate(size: int):
    """`size` bytes of device memory; when the device is full, the pool's unused
    blocks are given back and the allocation tried once more."""
    for attempt in range(2):
        try:
            return np.empty(size, np.uint8) if SIMULATOR else cuda.device_array(size, np.uint8)
        except Exception as error:
            if not _out_of_memory(error) or attempt:
                raise
            empty_cache()


def _out_of_memory(error: Exception) -> bool:
    """Whether `error` says the device is out of memory (NumPy's in the simulator, the
    CUDA driver's ``CUDA_ERROR_OUT_OF_MEMORY`` on a GPU)."""
    if isinstance(error, MemoryError):
        return True
    code = getattr(error, "code", None)
    return code is not None and (getattr(code, "name", "") == "CUDA_ERROR_OUT_OF_MEMORY"
                                 or code == 2)


def empty_cache() -> None:
    """Give the pool's unused blocks back to the device."""
    with _lock:
        for size, blocks in list(_free.items()):
            while blocks:
                blocks.pop()
                pool_stats["bytes_reserved"] -= size


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
    try:
        block = _take(nbytes)
    except Exception as error:
        if not _out_of_memory(error):
            raise
        raise allocation_error(shape, dtype, "cuda") from None
    return view(block, 0, shape, contiguous_strides(shape, dtype.itemsize), dtype, fresh=True)


def from_numpy(array: np.ndarray):
    """A device copy of `array`."""
    out = empty(array.shape, array.dtype)
    if array.size:
        host = np.ascontiguousarray(array)
        if host.strides != out.strides:  # a length-1 axis of another stride (``a[:, None]``):
            host = host.copy()  # contiguous to NumPy, another layout to Numba's copy
        out.copy_to_device(host)
    return out
