"""How a kernel reads its inputs: through movements (views the launch makes, or a
roll read at shifted indices), and gathers' index arrays, uploaded when it runs."""

from __future__ import annotations

import numpy as np

from numgrad.lazy import LazyBuffer
from numgrad.ops import TABLE


def is_unit_reshape(buf: LazyBuffer) -> bool:
    """A reshape that only adds or drops length-1 axes: the same elements in order."""
    return buf.op.name == "reshape" and (
        [d for d in buf.shape if d != 1] == [d for d in buf.srcs[0].shape if d != 1])


def view_key(views: tuple[LazyBuffer, ...]) -> tuple:
    """What a chain of movements does (not which nodes recorded it): reads of one
    buffer through equal views are one input."""
    return tuple((v.op.name, v.arg) for v in views)


def rolled_read(views: tuple[LazyBuffer, ...], loop: tuple[int, ...]) -> tuple:
    """The shifts of an input read through one roll over the whole loop, as
    `Program.in_rolled` takes them (each the signed shift nearest zero: a stencil's
    -1 rather than its length less one), else ``()``: the launch rolls it (a copy)."""
    if len(views) != 1 or views[0].op.name != "roll" or views[0].shape != loop:
        return ()
    return tuple((axis, s if 2 * s <= loop[axis] else s - loop[axis])
                 for axis, s in views[0].arg)


def gather_key(buf: LazyBuffer) -> tuple | None:
    """The index arrays of ``x[i, j, ...]`` (one integer array per axis), else None."""
    key = buf.arg if buf.op.name == "index" else None
    if not key or len(key) != len(buf.srcs[0].shape):  # x[()] of a 0-d x is a view
        return None
    return key if all(getattr(k, "dtype", None) is not None for k in key) else None


def index_upload(gather: LazyBuffer, axis: int, n: int, device) -> LazyBuffer:
    """The index of `gather` (``x[i, j, ...]``) along `axis` (of length `n`), as an
    unrealized ``load`` of the gather's shape whose argument says so: the schedule
    uploads it, negative indices wrapped (`wrapped_index`), and broadcasts it to that
    shape when it runs (`Schedule.uploads`)."""
    return LazyBuffer(TABLE["load"], (), (gather, axis, n), gather.shape, _INDEX_DTYPE, device)


def wrapped_index(index: np.ndarray, n: int) -> np.ndarray:
    """`index` (a key's array: never changed) into an axis of length `n`, negative
    indices wrapped, as a C-contiguous int64 array: `index` itself where it is one with
    no negative index (class labels: no copy, and a step plan finds the key's array
    in its upload, `numgrad.plan.step_plans`), else a new array."""
    if plain_index(index):
        return index
    wrapped = index.astype(_INDEX_DTYPE)
    return np.add(wrapped, n, out=wrapped, where=wrapped < 0)


def plain_index(index: np.ndarray) -> bool:
    """Whether `index` is uploaded as it is (`wrapped_index`): C-contiguous int64, with
    no negative index."""
    return index.dtype == _INDEX_DTYPE and index.flags.c_contiguous and \
        (not index.size or index.item(index.argmin()) >= 0)  # (a quarter of min()'s cost)


_INDEX_DTYPE = np.dtype(np.int64)
