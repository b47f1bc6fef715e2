"""Layouts as views: reshape, permute, expand and basic indexing, allocating nothing.

The layouts are worked out by NumPy on a *probe*, an array with the buffer's shape
and strides over no real memory (`probe`), so the rules are exactly NumPy's.
"""

from __future__ import annotations

import numpy as np

from numgrad.kernels.cuda.pool import from_numpy, restride
from numgrad.kernels.layout import contiguous_strides


def probe(array) -> np.ndarray:
    """A NumPy array with `array`'s shape and strides over one element: for layout
    arithmetic only (views of it are fine; reading it is not)."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, array.dtype), array.shape, array.strides)


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def is_contiguous(array) -> bool:
    expected = contiguous_strides(array.shape, array.dtype.itemsize)
    return all(n == 1 or s == e for n, s, e in zip(array.shape, array.strides, expected))


def strides(array) -> tuple[int, ...]:
    return tuple(array.strides)


def as_strided(array, shape, strides, writeable: bool = False):
    return restride(array, shape, strides)


def is_view(array) -> bool:
    return not array._ng_fresh


def full(shape, value, dtype):
    """`value` broadcast to `shape`: one element on the device, read with stride 0."""
    one = from_numpy(np.full((1,), value, dtype))
    return restride(one, shape, (0,) * len(shape))


def reshape(array, shape):
    """`array` reshaped as a view, or None where no view has that shape (copy first)."""
    try:
        view = probe(array).reshape(shape, copy=False)
    except ValueError:
        return None
    return restride(array, view.shape, view.strides)


def permute(array, axes):
    view = probe(array).transpose(axes)
    return restride(array, view.shape, view.strides)


def expand(array, shape):
    view = np.broadcast_to(probe(array), shape)
    return restride(array, view.shape, view.strides)


def index(array, key):
    """``array[key]`` for a basic `key` (no integer arrays): a view."""
    p = probe(array)
    view = p[key]
    if not isinstance(view, np.ndarray):  # an element: as a 0-d view instead
        view = p[key + (Ellipsis,)]
    return restride(array, view.shape, view.strides, _address(view) - _address(p))
