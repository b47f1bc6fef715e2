"""Functions of sampled data, as NumPy's: ``gradient`` (finite differences),
``trapezoid`` (integration) and ``convolve``. Each is built from slices, gathers and
arithmetic, so each is lazy, fuses, and is differentiable in every tensor it takes.

Examples
--------
>>> import numgrad as ng
>>> ng.gradient(ng.tensor([1.0, 4.0, 9.0, 16.0])).tolist()
[3.0, 4.0, 6.0, 7.0]
"""

from __future__ import annotations

import functools

import numpy as np

from numgrad.numpy.creation import as_tensor
from numgrad.numpy.elementwise import where
from numgrad.numpy.joining import concatenate
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor

__all__ = ["convolve", "gradient", "trapezoid"]


def _slice(x: Tensor, axis: int, start, stop) -> Tensor:
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _along(v, axis: int, ndim: int):
    """A 1-D `v` (spacings, coordinates) laid along `axis` of `ndim` axes."""
    return v.reshape((-1,) + (1,) * (ndim - 1 - axis)) if isinstance(v, Tensor) else v


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """The gradient of `f` sampled on a grid, as NumPy's ``gradient``: second-order
    central differences inside, one-sided ones of order `edge_order` (1 or 2) at the
    ends, along each of `axis` (all axes when None). `varargs` gives the spacing per
    axis: none (1), one scalar for all, or per axis a scalar or the 1-D coordinates.
    Returns a tensor for one axis, else a tuple of them (as NumPy 2).

    >>> ng.gradient(ng.tensor([1.0, 2.0, 4.0]), ng.tensor([0.0, 1.0, 3.0])).tolist()
    [1.0, 1.0, 1.0]
    """
    f = as_tensor(f)
    axes = tuple(range(f.ndim)) if axis is None else tuple(
        normalize_axis(a, f.ndim) for a in (axis if isinstance(axis, (tuple, list)) else
                                            (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError(f"gradient: repeated axis in {axis}")
    if edge_order not in (1, 2):
        raise ValueError(f"'edge_order' must be 1 or 2, got {edge_order}")
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    results = [_gradient_along(f, a, h, edge_order) for a, h in zip(axes, spacings)]
    return results[0] if len(results) == 1 else tuple(results)


def _gradient_along(f: Tensor, axis: int, h, edge_order: int) -> Tensor:
    """`gradient` along one axis, by NumPy's formulas, each in NumPy's order of
    operations: spacing `h` is a scalar (uniform) or the 1-D coordinates."""
    n = f.shape[axis]
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least (edge_order + 1) elements are required.")
    if f.dtype.kind in "biu":
        f = f.astype(np.float64)
    part = functools.partial(_slice, f, axis)
    if np.ndim(h) == 0:
        h = h if isinstance(h, Tensor) else float(h)
        h0 = hn = h
        inside = (part(2, None) - part(None, -2)) / (2.0 * h)
        if edge_order == 2:
            first = -1.5 / h * part(0, 1) + 2.0 / h * part(1, 2) + -0.5 / h * part(2, 3)
            last = 0.5 / h * part(-3, -2) + -2.0 / h * part(-2, -1) + 1.5 / h * part(-1, None)
    else:
        x = as_tensor(h)
        if x.ndim != 1 or x.shape[0] != n:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")
        if x.dtype.kind in "biu":
            x = x.astype(np.float64)
        dx = x[1:] - x[:-1]
        h0, hn = dx[0], dx[-1]
        d1, d2 = _along(dx[:-1], axis, f.ndim), _along(dx[1:], axis, f.ndim)
        a = -d2 / (d1 * (d1 + d2))
        b = (d2 - d1) / (d1 * d2)
        c = d1 / (d2 * (d1 + d2))
        inside = a * part(None, -2) + b * part(1, -1) + c * part(2, None)
        if edge_order == 2:
            h1, h2 = dx[0], dx[1]
            first = (-(2.0 * h1 + h2) / (h1 * (h1 + h2)) * part(0, 1)
                     + (h1 + h2) / (h1 * h2) * part(1, 2)
                     - h1 / (h2 * (h1 + h2)) * part(2, 3))
            h1, h2 = dx[-2], dx[-1]
            last = (h2 / (h1 * (h1 + h2)) * part(-3, -2)
                    - (h2 + h1) / (h1 * h2) * part(-2, -1)
                    + (2.0 * h2 + h1) / (h2 * (h1 + h2)) * part(-1, None))
    if edge_order == 1:
        first = (part(1, 2) - part(0, 1)) / h0
        last = (part(-1, None) - part(-2, -1)) / hn
    return concatenate([first, inside, last], axis)


def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1) -> Tensor:
    """The integral of `y` along `axis` by the trapezoidal rule, at the points `x` (1-D,
    or `y`'s shape) or spaced `dx` apart (NumPy's ``trapezoid``).

    >>> ng.trapezoid(ng.tensor([1.0, 2.0, 3.0]), x=[0.0, 1.0, 3.0]).item()
    6.5
    """
    y = as_tensor(y)
    axis = normalize_axis(axis, y.ndim)
    if x is None:
        step = dx
    else:
        x = as_tensor(x)
        if x.ndim == 1:
            step = _along(x[1:] - x[:-1], axis, y.ndim)
        else:
            step = _slice(x, axis, 1, None) - _slice(x, axis, None, -1)
    pairs = _slice(y, axis, 1, None) + _slice(y, axis, None, -1)
    return (pairs * step).sum(axis) / 2.0


def convolve(a, v, mode: str = "full") -> Tensor:
    """The discrete linear convolution of the 1-D `a` and `v`, as NumPy's ``convolve``:
    ``'full'`` (every overlap), ``'same'`` (the length of the longer, centred) or
    ``'valid'`` (full overlaps only). Differentiable in both.

    >>> ng.convolve(ng.tensor([1.0, 2.0, 3.0]), ng.tensor([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    """
    a, v = as_tensor(a), as_tensor(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"convolve takes 1-D inputs, got shapes {a.shape} and {v.shape}")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError("convolve: neither input can be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"convolve: mode must be 'full', 'same' or 'valid', got {mode!r}")
    if v.shape[0] > a.shape[0]:  # (NumPy swaps them: the same sums)
        a, v = v, a
    return convolution(a, v, mode)


def convolution(a: Tensor, v: Tensor, mode: str, boundary: str = "fill", fillvalue=0,
                late_middle: bool = False) -> Tensor:
    """The N-dimensional convolution of `a` and `v` (``out[k] = sum_j a[k - j] v[j]``) in
    `mode` (`a` at least as long as `v` along every axis for ``'valid'``): ``'full'``,
    ``'same'`` (`a`'s shape, centred; for an even-length `v`, on the later of the two
    middles if `late_middle`) or ``'valid'``. `a` is read outside itself as `fillvalue`
    (``boundary='fill'``), periodically (``'wrap'``) or mirrored at its edges
    (``'symm'``). One gather of `a` at every (output, kernel) pair of positions,
    multiplied by `v` and summed over its axes: one reduction, of the output's size
    times the kernel's (`numgrad.scipy.signal` uses it too)."""
    d = a.ndim
    index, inside = [], np.ones((1,) * 2 * d, dtype=bool)
    for axis, (n, m) in enumerate(zip(a.shape, v.shape)):
        # the part of the full output (length n + m - 1) computed: its start, its length
        start, length = (0, n + m - 1) if mode == "full" else \
            ((m - 1 + late_middle) // 2, n) if mode == "same" else (m - 1, n - m + 1)
        i = (start + np.arange(length)[:, None] - np.arange(m)[None, :]).reshape(
            [length if k == axis else m if k == d + axis else 1 for k in range(2 * d)])
        inside = inside & (i >= 0) & (i < n)
        if boundary == "wrap":
            i = i % n
        elif boundary == "symm":  # ... a[1] a[0] | a[0] a[1] ... a[n-1] | a[n-1] ...
            i = i % (2 * n)
            i = np.where(i < n, i, 2 * n - 1 - i)
        index.append(np.clip(i, 0, n - 1))
    terms = a[tuple(index)]
    if boundary == "fill" and not inside.all():
        terms = where(np.broadcast_to(inside, terms.shape), terms, fillvalue)
    return (terms * v).sum(axis=tuple(range(d, 2 * d)))
