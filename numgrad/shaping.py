"""Rearranging one tensor: flips, rolls, repeats, moved axes, diagonals and triangles.

Every function here but `roll` is a composite of indexing, reshapes, broadcasts and
`where`, so it fuses with its neighbours and differentiates with no rule of its own.
Elements are read in a new order in one of three ways, each where it is cheapest:

- a *gather* with one integer array per axis (`take`), which the scheduler reads
  inside the consuming kernel; its gradient is one scatter-add (diagonal, uneven
  repeats, the padding modes of `numgrad.assembly.pad`);
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
from numgrad.primitives import _apply
from numgrad.shapes import normalize_axes, normalize_axis
from numgrad.tensor_base import TensorBase

Axes = int | Sequence[int]


class ShapingMethods(TensorBase):
    """Shaping methods of `numgrad.Tensor`: NumPy's ndarray methods ``repeat``,
    ``diagonal`` and ``trace``, and ``flip``, ``roll``, ``moveaxis``, ``tril`` and
    ``triu`` (methods of PyTorch's tensors; NumPy has them as functions)."""

    __slots__ = ()

    def flip(self, axis: Axes | None = None) -> TensorBase:
        """Reverse the order of elements along `axis` (an int, a tuple, or None for all).

        A view: negative-step slices, so ``x.flip().exp()`` reads `x` backwards in one
        kernel.
        """
        axes = normalize_axes(axis, self.ndim)
        return self[tuple(slice(None, None, -1) if d in axes else slice(None)
                          for d in range(self.ndim))]

    def roll(self, shift: int | Sequence[int], axis: Axes | None = None) -> TensorBase:
        """Shift elements cyclically along `axis` (NumPy's ``roll``).

        `shift` and `axis` may be ints or sequences, broadcast against each other;
        shifts of one axis add up. With ``axis=None`` the tensor is rolled flat and
        given its shape back.
        """
        if axis is None:
            return self.ravel().roll(shift, 0).reshape(self.shape)
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
            a = normalize_axis(operator.index(a), self.ndim)
            total[a] = total.get(a, 0) + int(s)  # NumPy truncates a float shift
        shifts = tuple((a, s % self.shape[a]) for a, s in sorted(total.items())
                       if self.shape[a] and s % self.shape[a])
        if not shifts:
            return self.reshape(self.shape)  # a new tensor object: numgrad returns no aliases
        return _apply("roll", (self,), shifts, self.shape, self.dtype)

    def repeat(self, repeats: int | Sequence[int], axis: int | None = None) -> TensorBase:
        """Repeat each element `repeats` times along `axis` (flattened when None).

        `repeats` is an int, or one count per element of the axis. Even repeats are a
        broadcast (their gradient is a sum); uneven ones a gather.
        """
        x = self.ravel() if axis is None else self
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

    def moveaxis(self, source: Axes, destination: Axes) -> TensorBase:
        """Move the axes at `source` to the positions `destination` (ints or sequences);
        the other axes keep their order."""
        src = _axis_tuple(source, self.ndim, "source")
        dst = _axis_tuple(destination, self.ndim, "destination")
        if len(src) != len(dst):
            raise ValueError(
                f"moveaxis: `source` and `destination` must have the same number of "
                f"elements, got {len(src)} and {len(dst)}")
        order = [d for d in range(self.ndim) if d not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        if order == sorted(order):  # an identity permute would cut a fused kernel in two
            return self.reshape(self.shape)
        return self.transpose(tuple(order))

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> TensorBase:
        """The diagonal of the (axis1, axis2) planes, `offset` above the main one
        (below when negative), as the last axis of the result (NumPy's rule).

        One gather, read inside the consuming kernel.
        """
        if self.ndim < 2:
            raise ValueError(
                f"diagonal needs a tensor of at least two dimensions, got shape {self.shape}")
        a1, a2 = normalize_axis(axis1, self.ndim), normalize_axis(axis2, self.ndim)
        if a1 == a2:
            raise ValueError(f"diagonal: axis1 and axis2 cannot be the same axis ({a1})")
        offset = operator.index(offset)
        rows, cols = self.shape[a1], self.shape[a2]
        length = max(0, min(rows - max(-offset, 0), cols - max(offset, 0)))
        steps = np.arange(length)
        rest = [d for d in range(self.ndim) if d not in (a1, a2)]
        ndim = len(rest) + 1  # the result's: the other axes in order, then the diagonal
        key = [None] * self.ndim
        for position, d in enumerate(rest):
            key[d] = _along(np.arange(self.shape[d]), position, ndim)
        key[a1] = _along(steps + max(-offset, 0), ndim - 1, ndim)
        key[a2] = _along(steps + max(offset, 0), ndim - 1, ndim)
        return self[tuple(key)]

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype=None) -> TensorBase:
        """Sum of the diagonal (see `diagonal`); for more than two dimensions, one sum
        per plane. Integers sum in int64 (unsigned ones in uint64), as NumPy's do."""
        return self.diagonal(offset, axis1, axis2).sum(-1, dtype=dtype)

    def tril(self, k: int = 0) -> TensorBase:
        """The lower triangle of the last two axes (on and below diagonal `k`), zeros
        above; a 1-D tensor is broadcast to a square, as in NumPy."""
        return self._triangle(k, lower=True)

    def triu(self, k: int = 0) -> TensorBase:
        """The upper triangle of the last two axes (on and above diagonal `k`), zeros
        below; a 1-D tensor is broadcast to a square, as in NumPy."""
        return self._triangle(k, lower=False)

    def _triangle(self, k: int, lower: bool) -> TensorBase:
        if self.ndim == 0:
            raise TypeError(f"{'tril' if lower else 'triu'} needs a tensor of at least one "
                            f"dimension, got a 0-d tensor")
        k = operator.index(k)
        rows, cols = self.shape[-2:] if self.ndim > 1 else self.shape * 2

        def triangle():
            below = np.tri(rows, cols, k=k if lower else k - 1, dtype=bool)
            return below if lower else ~below
        mask = fixed(("triangle", rows, cols, k, lower), triangle, self.device)
        return self.where(type(self)._wrap(mask), self.dtype.type(0))


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


def take(x: TensorBase, picks: dict[int, np.ndarray]) -> TensorBase:
    """`x` with axis ``d`` read at positions ``picks[d]``, the other axes whole.

    One integer array per axis, each laid along its own axis (an open mesh, so the
    arrays stay 1-D in memory): the scheduler reads such a gather inside the consuming
    kernel, and its gradient is one scatter-add.
    """
    if not picks:
        return x.reshape(x.shape)  # a new tensor object: numgrad returns no aliases
    return x[tuple(_along(picks.get(d, np.arange(n)), d, x.ndim) for d, n in enumerate(x.shape))]


def copies(x: TensorBase, counts, inner: bool) -> TensorBase:
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
