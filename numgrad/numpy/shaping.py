"""One tensor's shape and order: reshapes, transposes, broadcasts, flips, rolls, repeats,
moved axes, diagonals and triangles.

A reshape, a permutation of the axes and a broadcast are primitives
(`numgrad.primitives`). Every other function here but `roll` is a composite of indexing,
reshapes, broadcasts and `where`, so it fuses with its neighbours and differentiates with
no rule of its own.
Elements are read in a new order in one of three ways, each where it is cheapest:

- a *gather* with one integer array per axis (`take`), which the scheduler reads
  inside the consuming kernel; its gradient is one scatter-add (diagonal, uneven
  repeats, the padding modes of `numgrad.numpy.assembly.pad`);
- a *broadcast and merge* of axes (`copies`), whose gradient is a fused sum (even
  repeats, tile);
- negative-step slices, which are views (flips).

A roll is a primitive of its own: an elementwise kernel reads it at shifted indices
(`numgrad.kernels.codegen.Program.in_rolled`), anything else reads one copy (two slices
per axis); no index array to check or upload, and its gradient is the roll back, where a
gather's is a scatter-add.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Sequence

import numpy as np

from numgrad.lazy import fixed
from numgrad.numpy.creation import as_tensor
from numgrad.primitives import _apply, _broadcast_to, _permute, _reshape, _shape_arg
from numgrad.shapes import normalize_axes, normalize_axis
from numgrad.tensor import Tensor

Axes = int | Sequence[int]

__all__ = ["reshape", "transpose", "permute", "swapaxes", "broadcast_to", "expand_dims",
           "squeeze", "ravel", "flatten", "flip", "roll", "repeat", "moveaxis", "diagonal",
           "trace", "tril", "triu"]


def reshape(x, /, shape, *, copy: bool | None = None) -> Tensor:
    """`x` in another shape of the same size (``x.reshape(shape)``; one -1 stands for the
    rest), the standard's and NumPy's signature. `copy` is accepted as the standard's:
    numgrad's values cannot change in place, so a reshape never shares memory that can
    be written, and ``copy=True`` gives a new tensor whose gradient flows back."""
    out = _reshape(as_tensor(x), _shape_arg((shape,)))
    return out.copy() if copy else out


def transpose(a, axes=None) -> Tensor:
    """The axes of `a` reversed, or permuted as `axes` says (NumPy's ``transpose``)."""
    return permute(a) if axes is None else permute(a, axes)


def permute(x, *axes) -> Tensor:
    """The axes in the order `axes`, reversed when none is given (PyTorch's
    ``permute``)."""
    x = as_tensor(x)
    axes = _shape_arg(axes) if axes and axes != (None,) else tuple(range(x.ndim))[::-1]
    return _permute(x, axes)


def swapaxes(x, axis1: int, axis2: int) -> Tensor:
    """`x` with axes `axis1` and `axis2` interchanged."""
    x = as_tensor(x)
    axes = list(range(x.ndim))
    a, b = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    axes[a], axes[b] = axes[b], axes[a]
    return _permute(x, tuple(axes))


def broadcast_to(x, shape) -> Tensor:
    """`x` broadcast to `shape` (NumPy's rules); the gradient is summed back."""
    return _broadcast_to(as_tensor(x), _shape_arg((shape,)))


def expand_dims(x, axis) -> Tensor:
    """`x` with new axes of length 1 at the positions `axis` (an int or a sequence)."""
    x = as_tensor(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = x.ndim + len(axes)
    axes = normalize_axes(axes, ndim)
    dims = iter(x.shape)
    return _reshape(x, tuple(1 if d in axes else next(dims) for d in range(ndim)))


def squeeze(x, axis=None) -> Tensor:
    """Remove length-1 axes (the given ones must have length 1, as in NumPy)."""
    x = as_tensor(x)
    if axis is None:
        axes = tuple(d for d, n in enumerate(x.shape) if n == 1)
    else:
        axes = normalize_axes(axis, x.ndim)
        for a in axes:
            if x.shape[a] != 1:
                raise ValueError(
                    f"cannot squeeze axis {a} of length {x.shape[a]}; only axes of "
                    f"length 1 can be squeezed (shape {x.shape})")
    return _reshape(x, tuple(n for d, n in enumerate(x.shape) if d not in axes))


def ravel(x) -> Tensor:
    """`x` as one axis."""
    return _reshape(as_tensor(x), (-1,))


def flatten(x, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The tensor as one axis (NumPy's ``flatten``), or only its axes from `start_dim`
    to `end_dim` (PyTorch's)."""
    x = as_tensor(x)
    start, end = (normalize_axis(d, max(x.ndim, 1)) for d in (start_dim, end_dim))
    return _reshape(x, x.shape[:start] + (-1,) + x.shape[end + 1:])


def flip(x, axis: Axes | None = None) -> Tensor:
    """Reverse the order of elements along `axis` (an int, a tuple, or None for all).

    A view: negative-step slices, so ``x.flip().exp()`` reads `x` backwards in one
    kernel.
    """
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    return x[tuple(slice(None, None, -1) if d in axes else slice(None)
                   for d in range(x.ndim))]


def roll(x, shift: int | Sequence[int], axis: Axes | None = None) -> Tensor:
    """Shift elements cyclically along `axis` (NumPy's ``roll``).

    `shift` and `axis` may be ints or sequences, broadcast against each other;
    shifts of one axis add up. With ``axis=None`` the tensor is rolled flat and
    given its shape back.
    """
    x = as_tensor(x)
    if axis is None:
        return x.ravel().roll(shift, 0).reshape(x.shape)
    if type(shift) is int and type(axis) is int:  # (a stencil's: the common case, fast)
        pairs = ((shift, axis),)
    else:
        try:
            pairs = np.broadcast(np.asarray(shift), np.asarray(axis))
        except ValueError:
            raise ValueError(f"roll: shift {shift!r} and axis {axis!r} do not broadcast "
                             f"together") from None
    total: dict[int, int] = {}
    for s, a in pairs:
        a = normalize_axis(operator.index(a), x.ndim)
        total[a] = total.get(a, 0) + int(s)  # NumPy truncates a float shift
    shifts = tuple((a, s % x.shape[a]) for a, s in sorted(total.items())
                   if x.shape[a] and s % x.shape[a])
    if not shifts:
        return x.reshape(x.shape)  # a new tensor object: numgrad returns no aliases
    return _apply("roll", (x,), shifts, x.shape, x.dtype)


def repeat(x, repeats: int | Sequence[int], axis: int | None = None) -> Tensor:
    """Repeat each element `repeats` times along `axis` (flattened when None).

    `repeats` is an int, or one count per element of the axis. Even repeats are a
    broadcast (their gradient is a sum); uneven ones a gather.
    """
    x = as_tensor(x)
    x = x.ravel() if axis is None else x
    axis = normalize_axis(0 if axis is None else axis, x.ndim)
    try:  # NumPy casts repeats to integers unsafely (1.5 repeats once)
        counts = np.asarray(repeats).astype(np.intp)
    except (TypeError, ValueError):
        raise TypeError(f"repeat: repeats must be integers, got {repeats!r}") from None
    n = x.shape[axis]
    if counts.ndim > 1 or counts.size not in (1, n):
        raise ValueError(
            f"repeat: repeats of shape {counts.shape} do not broadcast to the {n} "
            f"elements of axis {axis}")
    if (counts < 0).any():
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats!r}")
    if counts.size == 1:
        return copies(x, [int(counts.flat[0]) if d == axis else 1 for d in range(x.ndim)],
                      inner=True)
    return take(x, {axis: np.repeat(np.arange(n), counts)})


def moveaxis(x, source: Axes, destination: Axes) -> Tensor:
    """Move the axes at `source` to the positions `destination` (ints or sequences);
    the other axes keep their order."""
    x = as_tensor(x)
    src = _axis_tuple(source, x.ndim, "source")
    dst = _axis_tuple(destination, x.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError(
            f"moveaxis: `source` and `destination` must have the same number of "
            f"elements, got {len(src)} and {len(dst)}")
    order = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    if order == sorted(order):  # an identity permute would cut a fused kernel in two
        return x.reshape(x.shape)
    return x.transpose(tuple(order))


def diagonal(x, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor:
    """The diagonal of the (axis1, axis2) planes, `offset` above the main one
    (below when negative), as the last axis of the result (NumPy's rule).

    One gather, read inside the consuming kernel.
    """
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(
            f"diagonal needs a tensor of at least two dimensions, got shape {x.shape}")
    a1, a2 = normalize_axis(axis1, x.ndim), normalize_axis(axis2, x.ndim)
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same axis ({a1})")
    offset = operator.index(offset)
    rows, cols = x.shape[a1], x.shape[a2]
    length = max(0, min(rows - max(-offset, 0), cols - max(offset, 0)))
    steps = np.arange(length)
    rest = [d for d in range(x.ndim) if d not in (a1, a2)]
    ndim = len(rest) + 1  # the result's: the other axes in order, then the diagonal
    key = [None] * x.ndim
    for position, d in enumerate(rest):
        key[d] = _along(np.arange(x.shape[d]), position, ndim)
    key[a1] = _along(steps + max(-offset, 0), ndim - 1, ndim)
    key[a2] = _along(steps + max(offset, 0), ndim - 1, ndim)
    return x[tuple(key)]


def trace(x, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> Tensor:
    """Sum of the diagonal (see `diagonal`); for more than two dimensions, one sum
    per plane. Integers sum in int64 (unsigned ones in uint64), as NumPy's do."""
    return diagonal(x, offset, axis1, axis2).sum(-1, dtype=dtype)


def tril(x, k: int = 0) -> Tensor:
    """The lower triangle of the last two axes (on and below diagonal `k`), zeros
    above; a 1-D tensor is broadcast to a square, as in NumPy."""
    return _triangle(as_tensor(x), k, lower=True)


def triu(x, k: int = 0) -> Tensor:
    """The upper triangle of the last two axes (on and above diagonal `k`), zeros
    below; a 1-D tensor is broadcast to a square, as in NumPy."""
    return _triangle(as_tensor(x), k, lower=False)


def _triangle(x, k: int, lower: bool) -> Tensor:
    if x.ndim == 0:
        raise TypeError(f"{'tril' if lower else 'triu'} needs a tensor of at least one "
                        f"dimension, got a 0-d tensor")
    k = operator.index(k)
    rows, cols = x.shape[-2:] if x.ndim > 1 else x.shape * 2

    def triangle():
        below = np.tri(rows, cols, k=k if lower else k - 1, dtype=bool)
        return below if lower else ~below
    mask = fixed(("triangle", rows, cols, k, lower), triangle, x.device)
    return x.where(Tensor._wrap(mask), x.dtype.type(0))


def _axis_tuple(axes: Axes, ndim: int, name: str) -> tuple[int, ...]:
    """`axes` (an int or a sequence) as non-negative axes, in the given order."""
    out = tuple(normalize_axis(a, ndim) for a in
                ((axes,) if isinstance(axes, numbers.Integral) else axes))
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in `{name}` argument: {axes!r}")
    return out


def _along(index, position: int, ndim: int) -> np.ndarray:
    """`index` as an integer array of `ndim` dimensions laid along `position`."""
    return np.asarray(index, np.intp).reshape([-1 if d == position else 1 for d in range(ndim)])


def take(x: Tensor, picks: dict[int, np.ndarray]) -> Tensor:
    """`x` with axis ``d`` read at positions ``picks[d]``, the other axes whole.

    One integer array per axis, each laid along its own axis (an open mesh, so the
    arrays stay 1-D in memory): the scheduler reads such a gather inside the consuming
    kernel, and its gradient is one scatter-add.
    """
    if not picks:
        return x.reshape(x.shape)  # a new tensor object: numgrad returns no aliases
    return x[tuple(_along(picks.get(d, np.arange(n)), d, x.ndim) for d, n in enumerate(x.shape))]


def copies(x: Tensor, counts, inner: bool) -> Tensor:
    """`x` with axis ``d`` taken ``counts[d]`` times: each element in turn (`inner`,
    ``repeat``'s order) or the whole axis in turn (``tile``'s).

    A broadcast over a new axis beside each one, merged into it by a reshape, so the
    gradient is a sum over the new axes.
    """
    counts = [int(c) for c in counts]
    split = [(n, 1) if inner else (1, n) for n in x.shape]
    wide = [(n, c) if inner else (c, n) for n, c in zip(x.shape, counts)]
    out = x.reshape(tuple(d for pair in split for d in pair))
    out = out.broadcast_to(tuple(d for pair in wide for d in pair))
    return out.reshape(tuple(n * c for n, c in zip(x.shape, counts)))
