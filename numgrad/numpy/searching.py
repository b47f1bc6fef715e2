"""NumPy's functions whose result's shape or positions depend on the values: ``nonzero``,
``argwhere``, ``flatnonzero``, ``unique``, ``searchsorted``, ``digitize``, ``lexsort``,
``bincount``, ``histogram`` (and ``histogram2d``, ``histogramdd``) and ``interp``.

Each reads the values it needs (computed first, as ``t.numpy()`` computes them; so
``ng.jit`` refuses them while it traces), finds the positions with NumPy, and gathers
or scatter-adds the tensors there, so results stay on the tensors' device and
differentiate where NumPy's function is smooth in a tensor: `unique`'s values,
`bincount`'s and `histogram`'s weights, `interp`'s ``x``, ``xp`` and ``fp``.
Positions and counts are int64 tensors, without gradients.
"""

from __future__ import annotations

import math

import numpy as np

from numgrad import dtypes
from numgrad.device import get_default_device
from numgrad.numpy.creation import as_tensor, tensor
from numgrad.numpy.elementwise import where
from numgrad.numpy.joining import concatenate
from numgrad.numpy.shaping import take
from numgrad.primitives import _as
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor

__all__ = ["argwhere", "bincount", "digitize", "flatnonzero", "histogram", "histogram2d",
           "histogramdd", "interp", "isin", "lexsort", "nonzero", "searchsorted", "unique"]


def _device(*arrays):
    """The device of the first tensor among `arrays` (the default one if none is)."""
    return next((a.device for a in arrays if isinstance(a, Tensor)), get_default_device())


def _values(a) -> np.ndarray:
    """The values of `a` (a tensor, computed, or data) as a NumPy array."""
    return a.numpy() if isinstance(a, Tensor) else np.asarray(a)


def _positions(values, device) -> Tensor:
    """Positions or counts found by NumPy, as an int64 tensor on `device`."""
    return tensor(np.asarray(values).astype(np.int64), device=device)


def nonzero(a) -> tuple[Tensor, ...]:
    """The indices of the elements that are not zero, one int64 tensor per dimension
    (NumPy's ``nonzero``; a 0-d tensor is refused, as NumPy 2 refuses a 0-d array)."""
    a = as_tensor(a)
    if not a.ndim:
        raise ValueError("nonzero of a 0-d tensor is not allowed (NumPy 2's rule); use "
                         "ng.atleast_1d(t) or t.reshape(1) first")
    return tuple(_positions(i, a.device) for i in np.nonzero(a.numpy()))


def argwhere(a) -> Tensor:
    """The indices of the elements that are not zero, one row each: ``(N, a.ndim)``
    int64 (NumPy's ``argwhere``)."""
    a = as_tensor(a)
    return _positions(np.argwhere(a.numpy()), a.device)


def flatnonzero(a) -> Tensor:
    """The indices of the elements of ``a.ravel()`` that are not zero (NumPy's
    ``flatnonzero``)."""
    a = as_tensor(a)
    return _positions(np.flatnonzero(a.numpy()), a.device)


def unique(ar, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True):
    """The sorted unique elements of `ar` (or its unique slices along `axis`), NumPy's
    ``unique``, with the indices of their first occurrences, the inverse that rebuilds
    `ar` and the counts on request.

    The unique values are `ar` read at their first occurrences: the gradient goes
    there.

    >>> import numgrad as ng
    >>> values, counts = ng.unique(ng.tensor([3, 1, 3, 2, 1]), return_counts=True)
    >>> values.tolist(), counts.tolist()
    ([1, 2, 3], [2, 1, 2])
    """
    ar = as_tensor(ar)
    _, index, inverse, counts = np.unique(ar.numpy(), True, True, True, axis=axis,
                                          equal_nan=equal_nan)
    values = ar.reshape(-1)[index] if axis is None else \
        take(ar, {normalize_axis(axis, ar.ndim): index})
    extra = [_positions(v, ar.device) for v, wanted in
             ((index, return_index), (inverse, return_inverse), (counts, return_counts))
             if wanted]
    return (values, *extra) if extra else values


def searchsorted(a, v, side: str = "left", sorter=None) -> Tensor:
    """Where each of `v` would go in the sorted 1-D `a` to keep it sorted (NumPy's
    ``searchsorted``): int64 indices of `v`'s shape."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    found = np.searchsorted(_values(a), _values(v), side,
                            None if sorter is None else _values(sorter))
    return _positions(found, _device(a, v))


def digitize(x, bins, right: bool = False) -> Tensor:
    """The index of the bin of `bins` (increasing or decreasing edges) each of `x`
    falls in (NumPy's ``digitize``): int64 indices of `x`'s shape, 0 below the first
    edge and ``len(bins)`` beyond the last."""
    return _positions(np.digitize(_values(x), _values(bins), right), _device(x, bins))


def lexsort(keys, axis: int = -1) -> Tensor:
    """The indices that sort by several keys, the last key first (NumPy's
    ``lexsort``): int64."""
    many = isinstance(keys, (list, tuple))  # (else one array, a key per row)
    arrays = [_values(k) for k in keys] if many else _values(keys)
    return _positions(np.lexsort(arrays, axis), _device(*keys) if many else _device(keys))


def bincount(x, weights=None, minlength: int = 0) -> Tensor:
    """The number of times each value ``0, 1, ...`` occurs in the 1-D non-negative
    integers `x` (NumPy's ``bincount``), at least `minlength` of them; with `weights`,
    the sum of the weights of each value's occurrences (float64, and differentiable in
    the weights).

    >>> import numgrad as ng
    >>> ng.bincount(ng.tensor([0, 2, 2]), weights=ng.tensor([0.5, 1.0, 2.0])).tolist()
    [0.5, 0.0, 3.0]
    """
    device = _device(x, weights)
    values = _values(x)
    if values.ndim != 1 or values.size and values.dtype.kind not in "iu":
        raise ValueError(f"bincount takes 1-D non-negative integers, got {values.dtype} of "
                         f"shape {values.shape}")
    if values.size and values.min() < 0:
        raise ValueError(f"bincount takes non-negative integers, got {values.min()}")
    if minlength < 0:
        raise ValueError(f"minlength must be non-negative, got {minlength}")
    n = max(int(values.max()) + 1 if values.size else 0, minlength)
    if weights is None:
        return _positions(np.bincount(values, minlength=n), device)
    w = as_tensor(weights, device)
    if w.shape != values.shape:
        raise ValueError(f"weights of shape {w.shape} differ from x's shape {values.shape}")
    return _as(w, dtypes.float64)._index_add((values.astype(np.int64),), (n,))


def histogram(a, bins=10, range=None, density: bool | None = None,  # noqa: A002
              weights=None) -> tuple[Tensor, Tensor]:
    """The histogram of `a` (NumPy's ``histogram``): the count (or the weights' sum) of
    the values in each bin, and the bins' edges (float64).

    `bins` is a number of equal bins over `range` (the values' range by default), the
    edges themselves, or one of NumPy's rules (``"auto"``, ``"fd"``, ...). Each bin
    holds its left edge and the last also its right. With `density`, the counts are
    divided by their sum and the bin widths. With `weights`, the result differentiates
    in them.
    """
    a = as_tensor(a)
    values = a.numpy().ravel()
    w = None if weights is None else as_tensor(weights, a.device)
    if w is not None and w.shape != a.shape:
        raise ValueError(f"weights of shape {w.shape} differ from a's shape {a.shape}")
    edges = np.histogram_bin_edges(values, bins, range)
    n = len(edges) - 1
    where_in = (values >= edges[0]) & (values <= edges[-1])
    bin_of = np.clip(np.searchsorted(edges, values[where_in], "right") - 1, 0, n - 1)
    if w is None:
        hist = _positions(np.bincount(bin_of, minlength=n), a.device)
    else:
        picked = _as(w, dtypes.float64).reshape(-1)[np.flatnonzero(where_in)]
        hist = picked._index_add((bin_of,), (n,))
    if density:
        hist = _as(hist, dtypes.float64)
        hist = hist / hist.sum() / tensor(np.diff(edges), device=a.device)
    return hist, tensor(edges, device=a.device)


def histogramdd(sample, bins=10, range=None, density: bool | None = None,  # noqa: A002
                weights=None) -> tuple[Tensor, list[Tensor]]:
    """The histogram of `sample`'s points in D dimensions (NumPy's ``histogramdd``): the
    count (float64, as NumPy's) or the weights' sum in each bin, and each dimension's
    edges (float64).

    `sample` is an ``(N, D)`` tensor or array of points, or a sequence of D coordinate
    arrays. `bins` (a number, or one per dimension: numbers or edges) and `range` are
    NumPy's; each bin holds its left edge, the last of a dimension also its right. With
    `density`, the result is divided by its sum and by the bins' volumes. With `weights`
    (one per point), the result differentiates in them.
    """
    coords = isinstance(sample, (list, tuple))
    device = _device(*sample) if coords else _device(sample)
    values = np.stack([_values(c) for c in sample], axis=-1) if coords else _values(sample)
    values = values if values.ndim == 2 else np.atleast_2d(values).T  # (as NumPy reads it)
    counts, edges = np.histogramdd(values, bins, range)  # (NumPy's edges and checks)
    if weights is None:
        hist = tensor(counts, device=device)
    else:
        w = as_tensor(weights, device)
        if w.shape != values.shape[:1]:
            raise ValueError(f"weights of shape {w.shape} do not match the sample's "
                             f"{len(values)} points")
        hist = _binned(_as(w, dtypes.float64), values, edges)
    if density:  # (NumPy's order: the total, then per unit of each dimension)
        total = hist.sum()
        for i, e in enumerate(edges):
            shape = [1] * len(edges)
            shape[i] = -1
            hist = hist / tensor(np.diff(e).reshape(shape), device=device)
        hist = hist / total
    return hist, [tensor(e, device=device) for e in edges]


def _binned(w: Tensor, values: np.ndarray, edges: list) -> Tensor:
    """The sum of the weights `w` of the points `values` (``(N, D)``) in each bin of
    `edges`, found as NumPy's ``histogramdd`` finds them."""
    inner = tuple(len(e) - 1 for e in edges)
    index = np.empty((len(edges), len(values)), np.int64)
    for i, e in enumerate(edges):
        index[i] = np.searchsorted(e, values[:, i], "right") - 1
        index[i][values[:, i] == e[-1]] -= 1  # the right edge is the last bin's
    inside = ((index >= 0) & (index < np.array(inner)[:, None])).all(axis=0)
    flat = np.ravel_multi_index(tuple(index[:, inside]), inner)
    return w[np.flatnonzero(inside)]._index_add((flat,), (math.prod(inner),)).reshape(inner)


def histogram2d(x, y, bins=10, range=None, density: bool | None = None,  # noqa: A002
                weights=None) -> tuple[Tensor, Tensor, Tensor]:
    """The histogram of the points ``(x, y)`` (NumPy's ``histogram2d``): the count or the
    weights' sum in each bin, and the edges along x and along y (`histogramdd`'s).

    `bins` is a number or edges for both coordinates, or a pair of them.
    """
    try:
        n = len(bins)
    except TypeError:  # a number
        n = 1
    if n not in (1, 2):  # (NumPy's reading: edges for both)
        bins = [bins, bins]
    hist, (xedges, yedges) = histogramdd([x, y], bins, range, density, weights)
    return hist, xedges, yedges


def interp(x, xp, fp, left=None, right=None, period=None) -> Tensor:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at `x` (NumPy's
    ``interp``): `xp` increasing (or, with `period`, any order of a periodic
    coordinate); `left` and `right` (``fp[0]`` and ``fp[-1]`` by default) outside.

    The result differentiates in `x` (the slope of its segment), `fp` and `xp`.

    >>> import numgrad as ng
    >>> ng.interp(ng.tensor([0.5, 2.5, 9.0]), [0.0, 1.0, 3.0], [0.0, 10.0, 30.0]).tolist()
    [5.0, 25.0, 30.0]
    """
    device = _device(x, xp, fp)
    x, xp, fp = (as_tensor(t, device) for t in (x, xp, fp))
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape:
        raise ValueError(f"xp and fp must be 1-D of one length, got shapes {xp.shape} and "
                         f"{fp.shape}")
    if xp.shape[0] == 0:
        raise ValueError("interp needs at least one point: xp is empty")
    dtype = dtypes.result_type(dtypes.to_float(x.dtype), dtypes.to_float(xp.dtype),
                               dtypes.to_float(fp.dtype))
    x, xp, fp = _as(x, dtype), _as(xp, dtype), _as(fp, dtype)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        x, xp, fp = _periodic(x, xp, fp, abs(period))
        left = right = None
    xv, xpv = x.numpy(), xp.numpy()
    n = xpv.shape[0]
    j = np.clip(np.searchsorted(xpv, xv, "right") - 1, 0, max(n - 2, 0))
    k = np.minimum(j + 1, n - 1)
    x0, x1, f0, f1 = xp[j], xp[k], fp[j], fp[k]
    span = where(x1 == x0, 1, x1 - x0)
    inside = where(x == x0, f0, f0 + (x - x0) * ((f1 - f0) / span))
    first = fp[0] if left is None else left
    last = fp[-1] if right is None else right
    out = where(xv < xpv[0], first, where(xv > xpv[-1], last, inside))
    return where(xv == xpv[-1], fp[-1], out)


def _periodic(x: Tensor, xp: Tensor, fp: Tensor, period: float):
    """NumPy's periodic interp: the coordinates modulo `period`, the points sorted and
    extended by one period on each side."""
    x, xp = x % period, xp % period
    order = np.argsort(xp.numpy(), kind="stable")
    xp, fp = xp[order], fp[order]
    xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
    fp = concatenate([fp[-1:], fp, fp[:1]])
    return x, xp, fp


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *,
         kind=None) -> Tensor:
    """Whether each element of `element` is among `test_elements` (NumPy's ``isin``; NaN
    is never found): a bool tensor of `element`'s shape, no gradient. Every element is
    compared with every test element, so memory grows with their product; for a large
    sorted set, `searchsorted` compares less. `assume_unique` and `kind` choose NumPy's
    algorithm, not the result: they are taken, and change nothing here."""
    element = as_tensor(element)
    tests = test_elements if isinstance(test_elements, Tensor) else \
        tensor(np.asarray(test_elements), device=element.device)
    found = (element.expand_dims(-1) == tests.reshape(-1)).any(-1)
    return found.logical_not() if invert else found
