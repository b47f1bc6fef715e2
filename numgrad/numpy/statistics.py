"""NumPy's statistics on tensors: ``ptp``, ``count_nonzero``, ``average``, ``quantile``,
``percentile``, ``median``, ``cov`` and ``corrcoef``.

Each is a composite of numgrad's primitives (order statistics read the sorted values,
`numgrad.numpy.ordering.sort`, at positions known from `q`), so each fuses, runs on every device
and differentiates. Arguments that are parameters rather than data (`q`, the weights'
sum, the degrees of freedom) are read and checked at the boundary, with NumPy's
errors; that reads values, which ``ng.jit`` refuses while it traces.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from numgrad import dtypes
from numgrad.numpy.assembly import take_along_axis
from numgrad.numpy.creation import as_tensor, tensor
from numgrad.numpy.elementwise import where
from numgrad.numpy.joining import concatenate
from numgrad.numpy.ordering import sort
from numgrad.primitives import _as
from numgrad.shapes import normalize_axes
from numgrad.tensor import Tensor

__all__ = ["average", "corrcoef", "count_nonzero", "cov", "median", "nanmedian",
           "nanpercentile", "nanquantile", "percentile", "ptp", "quantile"]

#: NumPy's quantile methods that pick or interpolate between the two nearest order
#: statistics: per method, the position from the virtual index ``q * (n - 1)``.
_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _floating(a: Tensor) -> Tensor:
    return _as(a, dtypes.to_float(a.dtype))


def ptp(a, axis=None, keepdims: bool = False) -> Tensor:
    """The range, ``max - min``, along `axis` (NumPy's ``ptp``). The gradient goes to
    the maximum and the minimum (ties share it, as `max`'s and `min`'s).

    >>> import numgrad as ng
    >>> ng.ptp(ng.tensor([[4.0, 9.0, 2.0], [1.0, 1.0, 1.0]]), axis=1).tolist()
    [7.0, 0.0]
    """
    a = as_tensor(a)
    return a.max(axis, keepdims) - a.min(axis, keepdims)


def count_nonzero(a, axis=None, *, keepdims: bool = False) -> Tensor:
    """The number of elements that are not zero along `axis`, as int64 (NumPy's
    ``count_nonzero``; a 0-d tensor where NumPy gives a Python int)."""
    a = as_tensor(a)
    return (a != 0).astype(dtypes.int64).sum(axis, keepdims)


def average(a, axis=None, weights=None, returned: bool = False, *, keepdims: bool = False):
    """The weighted mean along `axis` (NumPy's ``average``): ``sum(a * w) / sum(w)``.

    `weights` has `a`'s shape, or is 1-D with the length of `a` along an int `axis`.
    Weights that sum to zero are a `ZeroDivisionError`, as in NumPy (read from their
    values). With `returned`, also the sum of the weights, broadcast to the result's
    shape.

    >>> import numgrad as ng
    >>> ng.average(ng.tensor([1.0, 2.0, 4.0]), weights=[3.0, 1.0, 0.0]).item()
    1.25
    """
    a = as_tensor(a)
    if weights is None:
        x = _floating(a)
        result = x.mean(axis, keepdims)
        total = tensor(x.size / max(result.size, 1), dtype=result.dtype, device=x.device)
    else:
        w = _shaped_weights(a, as_tensor(weights, a.device), axis)
        dtype = dtypes.result_type(dtypes.to_float(a.dtype), w.dtype)
        x, w = _as(a, dtype), _as(w, dtype)
        total = w.sum(axis, keepdims)
        if (total == 0).any().item():
            raise ZeroDivisionError("weights sum to zero: the average cannot be normalized")
        result = (x * w).sum(axis, keepdims) / total
    if not returned:
        return result
    return result, total.broadcast_to(result.shape) if total.shape != result.shape else total


def _shaped_weights(a: Tensor, w: Tensor, axis) -> Tensor:
    """`w` broadcast to `a`'s shape, from `a`'s shape or 1-D along an int `axis`."""
    if w.shape == a.shape:
        return w
    if axis is None:
        raise TypeError(f"weights of shape {w.shape} differ from a's shape {a.shape}: "
                        f"give an axis to weight 1-D")
    if w.ndim != 1 or not isinstance(axis, numbers.Integral):
        raise TypeError(f"1-D weights need one int axis; got weights of shape {w.shape} "
                        f"and axis {axis!r}")
    (axis,) = normalize_axes(axis, a.ndim)
    if w.shape[0] != a.shape[axis]:
        raise ValueError(f"weights of length {w.shape[0]} differ from a's length "
                         f"{a.shape[axis]} along axis {axis}")
    shape = [1] * a.ndim
    shape[axis] = w.shape[0]
    return w.reshape(tuple(shape)).broadcast_to(a.shape)


def quantile(a, q, axis=None, method: str = "linear", keepdims: bool = False) -> Tensor:
    """The `q`-th quantiles along `axis` (NumPy's ``quantile``), `q` in ``[0, 1]``: a
    scalar, or an array whose shape leads the result's.

    `method` is one of NumPy's ``"linear"`` (the default: between the two nearest order
    statistics), ``"lower"``, ``"higher"``, ``"nearest"`` and ``"midpoint"``. `axis`
    is an int, a tuple or None (all). A slice holding NaN gives NaN. The gradient goes
    to the order statistics used, by their weights.

    >>> import numgrad as ng
    >>> ng.quantile(ng.tensor([1.0, 2.0, 3.0, 10.0]), [0.5, 1.0]).tolist()
    [2.5, 10.0]
    """
    return _quantile(a, _quantiles(q, "quantile", 1.0), axis, method, keepdims, False)


def nanquantile(a, q, axis=None, method: str = "linear", keepdims: bool = False) -> Tensor:
    """`quantile` of the values that are not NaN (NumPy's ``nanquantile``): NaN where a
    slice has none (NumPy warns there; numgrad does not)."""
    return _quantile(a, _quantiles(q, "nanquantile", 1.0), axis, method, keepdims, True)


def _quantile(a, qs: np.ndarray, axis, method: str, keepdims: bool,
              skip_nan: bool) -> Tensor:
    """Quantiles `qs` along `axis` by interpolating `method`, of all the values or of
    those that are not NaN (`skip_nan`: each slice's own count, read from the values,
    places its order statistics)."""
    if method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, _METHODS))}; got "
                         f"{method!r}")
    a = as_tensor(a)
    x, kept = _reduced_last(_floating(a), axis)
    n = x.shape[-1]
    if n == 0:
        raise ValueError(f"quantile of an empty slice: a has shape {a.shape} along axis "
                         f"{axis!r}")
    ordered = sort(x, -1)  # (NaN last)
    counts = (~np.isnan(x.numpy())).sum(-1, keepdims=True) if skip_nan else np.array(n)
    last = np.maximum(counts, 1) - 1
    position = qs.ravel() * last
    below = np.floor(position).astype(np.int64)
    ceil = np.ceil(position).astype(np.int64)

    def at(index: np.ndarray) -> Tensor:  # the order statistics at `index` of each slice
        return take_along_axis(ordered, index, -1) if skip_nan else ordered[..., index]

    if method == "linear":
        t = tensor(position - below, dtype=x.dtype, device=x.device)
        low, high = at(below), at(np.minimum(below + 1, last))
        result = low + (high - low) * t
    elif method == "midpoint":
        result = (at(below) + at(ceil)) / 2
    else:
        result = at({"lower": below, "higher": ceil,
                     "nearest": np.around(position).astype(np.int64)}[method])
    empty = counts == 0 if skip_nan else x.isnan().any(-1, keepdims=True)
    result = where(empty, math.nan, result)
    result = result.reshape(kept + qs.shape).moveaxis(
        tuple(range(len(kept), len(kept) + qs.ndim)), tuple(range(qs.ndim)))
    if keepdims:
        axes = range(a.ndim) if axis is None else normalize_axes(axis, a.ndim)
        shape = [1 if d in axes else a.shape[d] for d in range(a.ndim)]
        result = result.reshape(qs.shape + tuple(shape))
    return result


def percentile(a, q, axis=None, method: str = "linear", keepdims: bool = False) -> Tensor:
    """The `q`-th percentiles along `axis`, `q` in ``[0, 100]`` (NumPy's ``percentile``;
    `quantile` of ``q / 100``)."""
    return quantile(a, _quantiles(q, "percentile", 100.0) / 100, axis, method, keepdims)


def nanpercentile(a, q, axis=None, method: str = "linear", keepdims: bool = False) -> Tensor:
    """`percentile` of the values that are not NaN (NumPy's ``nanpercentile``)."""
    return nanquantile(a, _quantiles(q, "nanpercentile", 100.0) / 100, axis, method,
                       keepdims)


def nanmedian(a, axis=None, keepdims: bool = False) -> Tensor:
    """The median of the values that are not NaN (NumPy's ``nanmedian``): NaN where a
    slice has none.

    >>> import numgrad as ng, numpy as np
    >>> ng.nanmedian(ng.tensor([[3.0, np.nan, 1.0], [np.nan, np.nan, np.nan]]), 1).tolist()
    [2.0, nan]
    """
    return nanquantile(a, 0.5, axis, "linear", keepdims)


def median(a, axis=None, keepdims: bool = False) -> Tensor:
    """The median along `axis` (NumPy's ``median``): the middle order statistic, or the
    mean of the two middle ones.

    >>> import numgrad as ng
    >>> ng.median(ng.tensor([[3.0, 1.0, 2.0], [4.0, 6.0, 5.0]]), axis=1).tolist()
    [2.0, 5.0]
    """
    return quantile(a, 0.5, axis, "linear", keepdims)


def _quantiles(q, name: str, top: float) -> np.ndarray:
    """`q` as a float64 array, checked to lie in ``[0, top]`` (NumPy's error)."""
    qs = np.asarray(q.numpy() if isinstance(q, Tensor) else q, dtype=np.float64)
    if qs.ndim > 1:
        raise ValueError(f"{name}: q must be a scalar or 1-D, got shape {qs.shape}")
    if not np.all((qs >= 0) & (qs <= top)):
        raise ValueError(f"{name}: q must lie in [0, {top:g}], got {q!r}")
    return qs


def _reduced_last(a: Tensor, axis) -> tuple[Tensor, tuple[int, ...]]:
    """`a` with the axes `axis` moved last and made one, and the shape of the others."""
    if axis is None:
        return a.reshape(-1), ()
    axes = normalize_axes(axis, a.ndim)
    others = [d for d in range(a.ndim) if d not in axes]
    moved = a.permute(*others, *axes) if list(axes) != list(range(a.ndim))[-len(axes):] \
        else a
    kept = tuple(a.shape[d] for d in others)
    return moved.reshape(kept + (-1,)), kept


def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights=None, aweights=None, *, dtype=None) -> Tensor:
    """The covariance matrix of the variables in `m` (and `y`), NumPy's ``cov``.

    Each row of `m` is a variable and each column an observation (each column a
    variable if not `rowvar`). Normalized by ``N - 1`` (``N`` if `bias`, or
    ``N - ddof``); `fweights` (integer repeat counts) and `aweights` (observation
    weights) weight the observations as in NumPy. One variable gives a 0-d tensor.
    Degrees of freedom of zero or fewer are a `ValueError` (NumPy warns and divides).

    >>> import numgrad as ng
    >>> ng.cov(ng.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"ddof must be an integer, got {ddof!r}")
    x = _variables(m, rowvar, "m")
    if y is not None:
        x = concatenate([x, _variables(y, rowvar, "y")], 0)
    x = _as(x, dtypes.as_dtype(dtype) if dtype is not None else
            dtypes.result_type(x.dtype, dtypes.float64))
    n = x.shape[1]
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    w, a = _observation_weights(fweights, aweights, n)
    if w is None:
        mean, fact = x.mean(1, keepdims=True), n - ddof
    else:
        w_sum = w.sum()
        fact = w_sum - ddof if a is None else w_sum - ddof * (w * a).sum() / w_sum
        w = tensor(w, dtype=x.dtype, device=x.device)
        mean = (x * w).sum(1, keepdims=True) / float(w_sum)
    if fact <= 0:
        raise ValueError(f"cov: {fact} degrees of freedom (N = {n} observations, ddof = "
                         f"{ddof}, with their weights); need more than zero")
    centred = x - mean
    c = ((centred if w is None else centred * w) @ centred.T) / float(fact)
    return c.reshape(()) if c.shape == (1, 1) else c


def _variables(m, rowvar: bool, name: str) -> Tensor:
    """`m` as a 2-D tensor with a variable per row."""
    m = as_tensor(m)
    if m.ndim > 2:
        raise ValueError(f"{name} has {m.ndim} dimensions; cov takes 1 or 2")
    m = m.reshape(1, -1) if m.ndim < 2 else m
    return m if rowvar or m.shape[0] == 1 else m.T


def _observation_weights(fweights, aweights, n: int) -> tuple:
    """The product of the frequency and observation weights (NumPy's checks), and the
    observation weights, as float64 arrays (None where not given)."""
    w = a = None
    for weights, kind in ((fweights, "fweights"), (aweights, "aweights")):
        if weights is None:
            continue
        v = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights)
        if kind == "fweights" and not np.all(v == np.around(v)):
            raise TypeError("fweights must be integers")
        if v.ndim != 1 or v.shape[0] != n:
            raise ValueError(f"{kind} must be 1-D with one weight per observation ({n}), "
                             f"got shape {v.shape}")
        if np.any(v < 0):
            raise ValueError(f"{kind} cannot be negative")
        w = v.astype(np.float64) if w is None else w * v
        a = v.astype(np.float64) if kind == "aweights" else a
    return w, a


def corrcoef(x, y=None, rowvar: bool = True, *, dtype=None) -> Tensor:
    """Pearson's correlation coefficients of the variables in `x` (and `y`), NumPy's
    ``corrcoef``: `cov` divided by the outer product of the standard deviations,
    clipped to ``[-1, 1]``.

    >>> import numgrad as ng
    >>> ng.corrcoef(ng.tensor([[0.0, 1.0, 2.0], [4.0, 2.0, 0.0]])).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = c.diagonal().sqrt()
    return (c / d.reshape(-1, 1) / d.reshape(1, -1)).clip(-1, 1)
