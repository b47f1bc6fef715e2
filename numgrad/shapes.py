"""Shape arithmetic: broadcasting, axis normalisation, reducing gradients to a shape."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from numpy.exceptions import AxisError

Shape = tuple[int, ...]


def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy's broadcast of `shapes`; ValueError names every shape otherwise."""
    try:
        return _broadcast(shapes)
    except TypeError:  # (a shape given as a list)
        return _broadcast(tuple(tuple(s) for s in shapes))


@functools.lru_cache(maxsize=4096)
def _broadcast(shapes: tuple[Shape, ...]) -> Shape:
    # (Cached: the same few broadcasts are recorded over and over, a bias add's at
    # every step.)
    if all(s == shapes[0] for s in shapes):
        return tuple(shapes[0])
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        dims = {s[i] for s in shapes if len(s) >= -i} - {1}
        if len(dims) > 1:
            listed = " and ".join(str(tuple(s)) for s in shapes)
            raise ValueError(f"shapes {listed} cannot be broadcast together")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def normalize_axis(axis: int, ndim: int) -> int:
    """A non-negative axis; NumPy's AxisError (a ValueError and an IndexError) naming the
    axis and `ndim` when out of range."""
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"axis must be an int, got {type(axis).__name__}")
    if not -ndim <= axis < ndim:
        raise AxisError(f"axis {axis} is out of bounds for a tensor of dimension {ndim}")
    return axis % ndim if ndim else 0


def normalize_axes(axis: int | Iterable[int] | None, ndim: int) -> tuple[int, ...]:
    """Sorted non-negative axes for a reduction; None means every axis."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = tuple(sorted(normalize_axis(a, ndim) for a in axes))
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return out


def reduced_shape(shape: Shape, axes: tuple[int, ...], keepdims: bool) -> Shape:
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)
