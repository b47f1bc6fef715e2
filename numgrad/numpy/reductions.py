"""Reductions: sums, products, extremes, means and spreads, their positions, all and any,
and the forms that skip NaN.

`sum`, `prod`, `max` and `min` are reduce primitives (`numgrad.primitives._reduce`);
the rest are composites of them, so they fuse and differentiate with no rule of their
own. Tensor's methods of the same names are these functions (`numgrad.methods`).
"""

from __future__ import annotations

import builtins
import math

import numpy as np

from numgrad import dtypes
from numgrad.lazy import LazyBuffer
from numgrad.numpy.creation import as_tensor
from numgrad.numpy.elementwise import where
from numgrad.primitives import _as, _reduce, reduction_shapes
from numgrad.shapes import normalize_axes, normalize_axis
from numgrad.tensor import Tensor

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "logsumexp",
           "argmax", "argmin", "all", "any", "nansum", "nanmean", "nanmax", "nanmin",
           "nanvar", "nanstd"]


def sum(x, axis=None, keepdims: bool = False, dtype=None) -> Tensor:  # noqa: A001
    """The sum over `axis` (all axes when None), NumPy's: bools and integers narrower
    than 64 bits sum in int64 (unsigned ones in uint64) unless `dtype` says otherwise."""
    x = x if isinstance(x, Tensor) else as_tensor(x)
    if dtype is None:  # NumPy sums bool and int32 in int64, uint8 in uint64
        x = _as(x, dtypes.accumulated(x.dtype))
    else:
        x = x.astype(dtype)
    return _reduce("sum", x, axis, keepdims)


def prod(x, axis=None, keepdims: bool = False, dtype=None) -> Tensor:
    """The product over `axis`, accumulated as `sum` accumulates."""
    x = x if isinstance(x, Tensor) else as_tensor(x)
    if dtype is None:
        x = _as(x, dtypes.accumulated(x.dtype))  # (as sum)
    else:
        x = x.astype(dtype)
    return _reduce("prod", x, axis, keepdims)


def max(x, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """The maximum over `axis` (NaN if any is); the gradient is shared by ties."""
    return _reduce("max", x if isinstance(x, Tensor) else as_tensor(x), axis, keepdims)


def min(x, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """The minimum over `axis` (NaN if any is); the gradient is shared by ties."""
    return _reduce("min", x if isinstance(x, Tensor) else as_tensor(x), axis, keepdims)


amax, amin = max, min  # NumPy's other names


def mean(x, axis=None, keepdims: bool = False, dtype=None) -> Tensor:
    """The mean, computed in `dtype` if given (else the floating dtype of `x`)."""
    x = x if isinstance(x, Tensor) else as_tensor(x)
    f = _as(x, dtypes.to_float(x.dtype) if dtype is None else dtypes.as_dtype(dtype))
    return _as(sum(f, axis, keepdims) / _count(x.shape, axis), f.dtype)


def var(x, axis=None, ddof: int = 0, keepdims: bool = False, *,
        correction: float | None = None) -> Tensor:
    """Variance with NumPy's default ``ddof=0``; `correction` is the standard's (and
    NumPy 2's) name for `ddof`."""
    x = as_tensor(x)
    ddof = _correction(ddof, correction)
    f = _as(x, dtypes.to_float(x.dtype))
    centered = f - mean(f, axis, keepdims=True)
    return sum(centered * centered, axis, keepdims) / (_count(x.shape, axis) - ddof)


def std(x, axis=None, ddof: int = 0, keepdims: bool = False, *,
        correction: float | None = None) -> Tensor:
    """The standard deviation, the square root of `var`."""
    return var(x, axis, ddof, keepdims, correction=correction).sqrt()


def logsumexp(x, axis=None, keepdims: bool = False) -> Tensor:
    """``log(sum(exp(x)))``, shifted by the maximum so it cannot overflow."""
    x = as_tensor(x)
    x = _as(x, dtypes.to_float(x.dtype))
    top = max(x, axis).detach()
    top = where(top.isfinite(), top, 0)  # an infinite max shifts by 0
    # (with no history, the kept axes are a reshape of `top` itself)
    shift = top.reshape(reduction_shapes(x.shape, axis)[2])
    out = sum((x - shift).exp(), axis, keepdims).log()
    return out + (shift if keepdims else top)


def argmax(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the first maximum (of the first NaN, if any), as NumPy."""
    return _arg_extreme(as_tensor(x), max, axis, keepdims)


def argmin(x, axis=None, keepdims: bool = False) -> Tensor:
    """Index of the first minimum (of the first NaN, if any), as NumPy."""
    return _arg_extreme(as_tensor(x), min, axis, keepdims)


def _arg_extreme(x: Tensor, extreme, axis, keepdims: bool) -> Tensor:
    if axis is None:
        out = _arg_extreme(x.ravel(), extreme, 0, False)
        return out.reshape((1,) * x.ndim) if keepdims else out
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    positions = x.new_tensor(np.arange(n)).reshape(
        tuple(n if d == axis else 1 for d in range(x.ndim)))
    values = x.detach()
    hit = (values == extreme(values, axis, keepdims=True)) | (values != values)
    return min(where(hit, positions, n), axis, keepdims)


def all(x, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Whether every element along `axis` is true (True over an empty axis)."""
    return _logical(as_tensor(x), "min", True, axis, keepdims)


def any(x, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A001
    """Whether any element along `axis` is true (False over an empty axis)."""
    return _logical(as_tensor(x), "max", False, axis, keepdims)


def _logical(x: Tensor, which: str, empty: bool, axis, keepdims: bool) -> Tensor:
    x = _as(x, dtypes.bool_)
    axes, shape, kept = reduction_shapes(x.shape, axis)
    if builtins.any(x.shape[a] == 0 for a in axes):  # (as NumPy: the identity of and, or)
        return Tensor._wrap(LazyBuffer.const(empty, kept if keepdims else shape,
                                             dtypes.bool_, x.device))
    return _reduce(which, x, axis, keepdims)


def _count(shape, axis) -> int:
    return math.prod(shape[a] for a in normalize_axes(axis, len(shape)))


def _correction(ddof, correction):
    """The degrees of freedom given as NumPy's `ddof` or the standard's `correction`."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError(f"give ddof or correction, not both (ddof={ddof!r}, "
                         f"correction={correction!r})")
    return correction


# ---- reductions that skip NaN --------------------------------------------------------

def nansum(a, axis=None, keepdims: bool = False) -> Tensor:
    """The sum with NaN taken as 0 (NumPy's ``nansum``): 0 where all are NaN. The gradient
    is 0 at a NaN.

    >>> ng.nansum(ng.tensor([[1.0, np.nan], [np.nan, np.nan]]), axis=1).tolist()
    [1.0, 0.0]
    """
    a = as_tensor(a)
    return where(a.isnan(), 0, a).sum(axis, keepdims)


def nanmean(a, axis=None, keepdims: bool = False) -> Tensor:
    """The mean of the values that are not NaN (NumPy's ``nanmean``): NaN where all are
    (NumPy warns there; numgrad does not). The gradient is 0 at a NaN."""
    a = as_tensor(a)
    x, kept = _as(a, dtypes.to_float(a.dtype)), a.isnan().logical_not()
    return where(kept, x, 0).sum(axis, keepdims) / kept.sum(axis, keepdims).astype(x.dtype)


def nanmax(a, axis=None, keepdims: bool = False) -> Tensor:
    """The maximum of the values that are not NaN (NumPy's ``nanmax``): NaN where all are.
    The gradient goes to the maximum, shared by ties, as `max`'s."""
    return _nan_extreme(as_tensor(a), "max", -math.inf, axis, keepdims)


def nanmin(a, axis=None, keepdims: bool = False) -> Tensor:
    """The minimum of the values that are not NaN (NumPy's ``nanmin``): NaN where all are."""
    return _nan_extreme(as_tensor(a), "min", math.inf, axis, keepdims)


def _nan_extreme(a: Tensor, which: str, fill: float, axis, keepdims: bool) -> Tensor:
    if a.dtype.kind != "f":  # (no NaN)
        return getattr(a, which)(axis, keepdims)
    nan = a.isnan()
    out = getattr(where(nan, fill, a), which)(axis, keepdims)
    return where(nan.all(axis, keepdims), math.nan, out)



def nanvar(a, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """The variance of the values that are not NaN (NumPy's ``nanvar``): NaN where fewer
    than ``ddof + 1`` are. The gradient is 0 at a NaN.

    >>> ng.nanvar(ng.tensor([1.0, np.nan, 3.0])).item()
    1.0
    """
    a = as_tensor(a)
    x, kept = _as(a, dtypes.to_float(a.dtype)), a.isnan().logical_not()
    deviation = where(kept, x - nanmean(a, axis, keepdims=True), 0)
    dof = kept.sum(axis, keepdims).astype(x.dtype) - ddof
    return where(dof > 0, (deviation * deviation).sum(axis, keepdims) / dof, math.nan)


def nanstd(a, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
    """The standard deviation of the values that are not NaN (NumPy's ``nanstd``)."""
    return nanvar(a, axis, ddof, keepdims).sqrt()
