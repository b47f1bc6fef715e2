"""NumPy-named module functions (``ng.exp``, ``ng.add``, ``ng.sum``, ...).

Each forwards to the Tensor method or elementwise primitive of the same name, so
a new primitive or method needs no second definition here; NumPy's second names
(``remainder``, ``degrees``, ``amax``, ...) are the same functions.
"""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np

from numgrad import dtypes
from numgrad.creation import as_tensor, full, tensor
from numgrad.joining import concatenate
from numgrad.ops import BINARY, TABLE, UNARY
from numgrad.ordering import OrderMethods
from numgrad.primitives import _as, _elementwise
from numgrad.shapes import normalize_axis
from numgrad.shaping import ShapingMethods
from numgrad.tensor import Tensor
from numgrad.tensor_math import power, where

#: Tensor methods that are also module functions, beyond the unary primitives and the
#: methods of the shaping and ordering mixins (all of which are).
METHODS = (
    "abs", "square", "relu", "round", "clip", "sum", "prod", "max", "min", "mean", "var",
    "std", "logsumexp", "argmax", "argmin", "all", "any", "transpose", "permute",
    "swapaxes", "broadcast_to", "expand_dims", "squeeze", "ravel", "flatten", "negative",
    "deg2rad", "rad2deg", "sinc", "nan_to_num", "isclose", "allclose",
)
#: NumPy's other names of the same functions
ALIASES = {"remainder": "mod", "degrees": "rad2deg", "radians": "deg2rad", "absolute": "abs",
           "around": "round", "amax": "max", "amin": "min", "true_divide": "divide",
           "fix": "trunc", "rint": "round", "bitwise_not": "invert"}
#: What a binary primitive's function does beyond its name's promise
NOTES = {
    "gammainc": "The regularized lower incomplete gamma function ``P(a, x)`` of ``(x, y) = (a, "
                "x)``, SciPy's order (`numgrad.scipy.special.gammainc`); the gradient is for "
                "``x`` only.",
    "gammaincc": "The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)`` "
                 "(`numgrad.scipy.special.gammaincc`); the gradient is for ``x`` only.",
    "fmax": "NaN is ignored: the result is NaN only where both are.",
    "fmin": "NaN is ignored: the result is NaN only where both are.",
    "mod": "The remainder of floor division, ``x % y``: its sign follows the divisor.",
    "fmod": "C's remainder of truncated division: its sign follows the dividend `x`.",
    "arctan2": "``arctan(x / y)`` in the quadrant of the point ``(y, x)``: in ``[-pi, pi]``.",
    "hypot": "``sqrt(x**2 + y**2)``, without overflow or underflow on the way.",
    "copysign": "The magnitude of `x` with the sign of `y` (its sign bit: -0.0 is negative).",
    "logaddexp": "``log(exp(x) + exp(y))``, without overflow.",
    "logaddexp2": "``log2(2**x + 2**y)``, without overflow.",
    "floor_divide": "``x // y``, the quotient floored (NumPy's). Its gradient is 0.",
    "heaviside": "0 where ``x < 0``, 1 where ``x > 0``, `y` where ``x == 0`` (NaN where x is).",
    "bitwise_and": "``x & y`` of integers or bools (floats are a TypeError).",
    "bitwise_or": "``x | y`` of integers or bools (floats are a TypeError).",
    "bitwise_xor": "``x ^ y`` of integers or bools (floats are a TypeError).",
    "left_shift": "``x << y`` of integers, as NumPy 2's: 0 where `y` is negative or at least "
                  "the bit width. Floats, and a bool shifted by a bool, are a TypeError.",
    "right_shift": "``x >> y`` of integers (arithmetic), as NumPy 2's: 0 or -1 (the sign of "
                   "`x`) where `y` is negative or at least the bit width. Floats, and a bool "
                   "shifted by a bool, are a TypeError.",
    "nextafter": "The float next to `x` toward `y` (`y` where they are equal), NumPy's to the "
                 "bit. The gradient is 1 for `x` (a step of one spacing) and 0 for `y`.",
}


#: Module functions that return a copy where NumPy's method works in place (``x.sort()``
#: sorts x, ``ng.sort(x)`` returns a sorted copy): the Tensor method each one calls.
COPYING = {"sort": "_sorted", "partition": "_partitioned"}


def _method_function(name: str, method_name: str | None = None):
    method = getattr(Tensor, method_name or name)

    def function(x, *args, **kwargs):
        return method(as_tensor(x), *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = method.__doc__ or f"``x.{name}(...)`` as a function."
    function.__signature__ = _as_function_signature(method)
    return function


def _as_function_signature(method) -> inspect.Signature:
    """`method`'s signature with its `self` as the first argument, `x` (what ``help()``,
    IDEs and NumPy's dispatch read)."""
    signature = inspect.signature(method)
    first, *rest = signature.parameters.values()
    return signature.replace(parameters=[first.replace(name="x"), *rest])


def _binary_function(name: str):
    def function(x, y):
        # Scalars stay scalars beside a tensor, data (lists, arrays) goes to its device.
        if not isinstance(x, Tensor) and not isinstance(y, Tensor):
            x = tensor(x)
        return _elementwise(name, x, y)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise ``{name}`` with NumPy's promotion and broadcasting."
    if name in NOTES:
        function.__doc__ += f"\n\n{NOTES[name]}"
    return function


_unary = [p.name for p in TABLE.values() if p.kind == UNARY and hasattr(Tensor, p.name)]
_mixins = [n for m in (ShapingMethods, OrderMethods) for n in vars(m) if not n.startswith("_")]
_functions = {name: _method_function(name) for name in (*_unary, *METHODS, *_mixins)}
_functions.update(
    {p.name: _binary_function(p.name) for p in TABLE.values()
     if p.kind == BINARY and p.name != "power"})
_functions.update({alias: _functions[name] for alias, name in ALIASES.items()})
_functions.update({name: _method_function(name, m) for name, m in COPYING.items()})
globals().update(_functions)


# NumPy's argument names where they differ from the Tensor method's.
def transpose(a, axes=None) -> Tensor:
    """The axes of `a` reversed, or permuted as `axes` says (NumPy's ``transpose``)."""
    a = as_tensor(a)
    return a.transpose() if axes is None else a.transpose(axes)


def clip(a, min=None, max=None, *, a_min=None, a_max=None) -> Tensor:  # noqa: A002
    """`a` limited to ``[min, max]`` (NumPy's ``clip``; the standard's and NumPy 2's names
    of the bounds, by position or keyword; NumPy's classic `a_min` and `a_max` are
    keywords)."""
    a = as_tensor(a)
    return a.clip(a_min if min is None else min, a_max if max is None else max)


def reshape(x, /, shape, *, copy: bool | None = None) -> Tensor:
    """`x` in another shape of the same size (``x.reshape(shape)``; one -1 stands for the
    rest), the standard's and NumPy's signature. `copy` is accepted as the standard's:
    numgrad's values cannot change in place, so a reshape never shares memory that can
    be written, and ``copy=True`` gives a new tensor whose gradient flows back."""
    out = as_tensor(x).reshape(shape)
    return out.copy() if copy else out


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


# ---- more of NumPy's functions, built from the above ---------------------------------

def positive(x) -> Tensor:
    """A copy of `x` (NumPy's ``positive``, ``+x``)."""
    return +as_tensor(x)


def float_power(x1, x2) -> Tensor:
    """``x1 ** x2`` computed in float64 (NumPy's ``float_power``: integers and float32
    are promoted)."""
    x1, x2 = (float(v) if isinstance(v, numbers.Number) else
              _as(as_tensor(v), dtypes.float64) for v in (x1, x2))
    if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
        x1 = tensor(x1, dtype=dtypes.float64)
    return power(x1, x2)


def divmod(x1, x2) -> tuple[Tensor, Tensor]:  # noqa: A001 - NumPy's name
    """``(x1 // x2, x1 % x2)`` (NumPy's ``divmod``)."""
    return _functions["floor_divide"](x1, x2), _functions["mod"](x1, x2)


def take(a, indices, axis: int | None = None, mode: str = "raise") -> Tensor:
    """The elements of `a` at `indices` along `axis` (of the flattened `a` when None), as
    NumPy's ``take``: an index out of range raises (``mode='raise'``), wraps around
    (``'wrap'``) or is clipped to the ends (``'clip'``). The gradient is a scatter-add.

    >>> ng.take(ng.tensor([[1.0, 2.0], [3.0, 4.0]]), [0, 3]).tolist()
    [1.0, 4.0]
    """
    a = as_tensor(a)
    if axis is None:
        a, axis = a.ravel(), 0
    axis = normalize_axis(axis, a.ndim)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    n = a.shape[axis]
    if mode != "raise":
        if n == 0:
            raise IndexError("take: cannot do a non-empty take from an empty axis")
        indices = indices if isinstance(indices, Tensor) else np.asarray(indices)
        indices = indices % n if mode == "wrap" else indices.clip(0, n - 1)
    return a[(slice(None),) * axis + (indices,)]


def compress(condition, a, axis: int | None = None) -> Tensor:
    """The slices of `a` along `axis` (the elements of the flattened `a` when None) where
    the 1-D `condition` is true, as NumPy's ``compress``: a `condition` shorter than the
    axis leaves the rest out. The gradient is a scatter-add."""
    condition = condition.numpy() if isinstance(condition, Tensor) else np.asarray(condition)
    if condition.ndim != 1:
        raise ValueError(f"compress: condition must be 1-D, got shape {condition.shape}")
    return take(a, np.flatnonzero(condition), axis)


def choose(a, choices, mode: str = "raise") -> Tensor:
    """``choices[a[i]][i]`` for the integer `a`, all broadcast together (NumPy's
    ``choose``): an index out of range raises (``mode='raise'``), wraps around or is
    clipped. A chain of `where`, so differentiable in the choices.

    >>> ng.choose(ng.tensor([1, 0]), [[1.0, 2.0], [3.0, 4.0]]).tolist()
    [3.0, 2.0]
    """
    a = as_tensor(a)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if a.dtype.kind not in "iu":
        raise TypeError(f"choose: the index array must be integer, not {a.dtype}")
    n = len(choices)
    if n == 0:
        raise ValueError("choose: choices must not be empty")
    if mode == "raise":
        values = a.numpy()
        if values.size and (values.min() < 0 or values.max() >= n):
            raise ValueError(f"choose: an index is outside 0..{n - 1} (mode='raise')")
    else:
        a = a % n if mode == "wrap" else a.clip(0, n - 1)
    chosen = where(a == n - 1, choices[n - 1], choices[0])
    for k in range(1, n - 1):
        chosen = where(a == k, choices[k], chosen)
    return chosen


def put(a: Tensor, ind, v, mode: str = "raise") -> None:
    """Set the elements of the tensor `a` at the flat indices `ind` to `v`, in place
    (NumPy's ``put``): `v` repeats when shorter than `ind`; an index out of range raises,
    wraps around or is clipped as `take`'s `mode` says."""
    if not isinstance(a, Tensor):
        raise TypeError(f"put changes a tensor in place; got {type(a).__name__}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    ind = np.asarray(ind.numpy() if isinstance(ind, Tensor) else ind, np.int64).ravel()
    n = a.size
    if mode == "raise" and ind.size and (ind.min() < -n or ind.max() >= n):
        raise IndexError(f"put: an index is out of range for a tensor of {n} elements")
    ind = ind % n if mode == "wrap" else (ind.clip(0, n - 1) if mode == "clip" else ind)
    v = take(as_tensor(v, device=a.device), np.arange(ind.size), mode="wrap")
    a[...] = a.ravel().index_put(ind, v).reshape(a.shape)


def cumulative_sum(x, /, *, axis: int | None = None, dtype=None,
                   include_initial: bool = False) -> Tensor:
    """NumPy 2's ``cumulative_sum``: `cumsum` along `axis` (which a tensor of more than
    one dimension needs), with the sum of nothing (0) first if `include_initial`."""
    return _cumulative(as_tensor(x), "cumsum", 0, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis: int | None = None, dtype=None,
                    include_initial: bool = False) -> Tensor:
    """NumPy 2's ``cumulative_prod``: `cumprod` along `axis`, with 1 first if
    `include_initial`."""
    return _cumulative(as_tensor(x), "cumprod", 1, axis, dtype, include_initial)


def _cumulative(x: Tensor, scan: str, initial, axis, dtype, include_initial: bool) -> Tensor:
    if axis is None:
        if x.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` "
                             "argument is required.")
        x, axis = x.reshape(-1), 0
    x = x if dtype is None else x.astype(dtype)
    out = getattr(x, scan)(axis)
    if dtype is not None and out.dtype != x.dtype:  # (integer scans accumulate in 64 bits)
        out = out.astype(dtype)
    if not include_initial:
        return out
    axis = normalize_axis(axis, out.ndim)
    first = full(out.shape[:axis] + (1,) + out.shape[axis + 1:], initial, out.dtype,
                 out.device)
    return concatenate([first, out], axis)


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


def select(condlist, choicelist, default=0) -> Tensor:
    """Per element, the choice of the first condition that holds, else `default` (NumPy's
    ``select``). The gradient goes to the choice taken.

    >>> x = ng.tensor([-2.0, 0.5, 3.0])
    >>> ng.select([x < 0, x > 1], [-x, x * 10], default=0.0).tolist()
    [2.0, 0.0, 30.0]
    """
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    out = default
    for condition, choice in reversed(list(zip(condlist, choicelist))):
        condition = as_tensor(condition)
        if condition.dtype != dtypes.bool_:
            raise TypeError(f"invalid entry in condlist: should be boolean ndarray, not "
                            f"{condition.dtype}")
        out = where(condition, choice, out)
    return out if isinstance(out, Tensor) else as_tensor(out)


def polyval(p, x) -> Tensor:
    """The polynomial with coefficients `p` (highest power first) at `x`, by Horner's
    rule (NumPy's ``polyval``): differentiable in both.

    >>> ng.polyval([3.0, 0.0, 1.0], ng.tensor([2.0])).tolist()
    [13.0]
    """
    p = p if isinstance(p, Tensor) else np.asarray(p)
    x = as_tensor(x)
    out = x.zeros_like()
    for i in range(len(p)):
        out = out * x + p[i]
    return out


_functions.update(transpose=transpose, clip=clip, reshape=reshape, nansum=nansum,
                  nanmean=nanmean, nanmax=nanmax, nanmin=nanmin, nanvar=nanvar, nanstd=nanstd,
                  positive=positive, float_power=float_power, divmod=divmod, take=take,
                  compress=compress, choose=choose, put=put,
                  cumulative_sum=cumulative_sum, cumulative_prod=cumulative_prod, isin=isin,
                  select=select, polyval=polyval)
__all__ = sorted(_functions)
