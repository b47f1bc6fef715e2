"""Host memory reused for large buffers.

A large allocation comes from the system fresh (glibc maps it), and writing it costs a
page fault per 4 KiB page: on the W3 MLP step that was a third of the time. So buffers
of at least `MIN_BYTES` are views of pooled blocks, in size classes of at most 12.5%
waste. A block is lent until nothing refers to it any more (no view, however derived,
keeps a reference to it: NumPy points every view at the array that owns the memory),
which the pool sees from the block's reference count; it is then reused. At most
`MAX_FREE_BYTES` of unused blocks are kept.
"""

from __future__ import annotations

import math
import sys
import threading
import weakref

import numpy as np

#: Smaller buffers come from NumPy's allocator (glibc's heap, no fresh pages).
MIN_BYTES = 1 << 18
#: Unused blocks kept, in bytes; beyond that they are freed.
MAX_FREE_BYTES = 1 << 28
#: Every this many pooled allocations, every lent block is checked (so blocks of a
#: size never asked for again are not kept lent).
SWEEP_EVERY = 64

_free: dict[int, list[np.ndarray]] = {}  # size class -> unused blocks
_lent: dict[int, list[np.ndarray]] = {}  # size class -> blocks that may be in use
_handed: dict[int, weakref.ref] = {}  # block (by id) -> the array made of it last
_free_bytes = 0
_since_sweep = 0
_lock = threading.Lock()
# References to a block that nothing else uses, while `_reclaim` looks at it: the lent
# list, the loop variable and getrefcount's argument.
_OWN_REFERENCES = 3


def size_class(nbytes: int) -> int:
    """`nbytes` rounded up to one of 8 steps per power of two."""
    step = 1 << max(nbytes.bit_length() - 4, 0)
    return -(-nbytes // step) * step


def empty(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A new C-contiguous array of `shape` and `dtype` (its contents undefined)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes < MIN_BYTES:
        return np.empty(shape, dtype)
    with _lock:
        block = _take(size_class(nbytes))
    array = block[:nbytes].view(dtype).reshape(shape)
    _handed[id(block)] = weakref.ref(array)
    return array


def is_fresh(array: np.ndarray) -> bool:
    """Whether `array` is the one `empty` made (rather than a view of it or of
    something else): views of pooled arrays share their block with them."""
    handed = _handed.get(id(array.base))
    return handed is not None and handed() is array


def clear() -> None:
    """Free every unused block."""
    global _free_bytes
    with _lock:
        _sweep()
        for blocks in _free.values():
            for block in blocks:
                del _handed[id(block)]
        _free.clear()
        _free_bytes = 0


def _take(size: int) -> np.ndarray:
    global _free_bytes, _since_sweep
    _since_sweep += 1
    if _since_sweep >= SWEEP_EVERY:
        _sweep()
    elif not _free.get(size):
        _reclaim(size)
    free = _free.get(size)
    if free:
        block = free.pop()
        _free_bytes -= size
    else:
        block = np.empty(size, np.uint8)
    _lent.setdefault(size, []).append(block)
    return block


def _reclaim(size: int) -> None:
    """Move the unused blocks of class `size` from lent to free (within the cap)."""
    global _free_bytes
    lent, still = _lent.get(size, []), []
    for block in lent:
        if sys.getrefcount(block) > _OWN_REFERENCES:
            still.append(block)
        elif _free_bytes + size <= MAX_FREE_BYTES:
            _free.setdefault(size, []).append(block)
            _free_bytes += size
        else:
            del _handed[id(block)]  # freed: its id may be reused
    _lent[size] = still


def _sweep() -> None:
    global _since_sweep
    _since_sweep = 0
    for size in list(_lent):
        _reclaim(size)
