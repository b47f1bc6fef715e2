"""NumPy-named module functions (``ng.exp``, ``ng.add``, ``ng.sum``, ...).

Each forwards to the Tensor method or elementwise primitive of the same name, so
a new primitive or method needs no second definition here; NumPy's second names
(``remainder``, ``degrees``, ``amax``, ...) are the same functions.
"""

from __future__ import annotations

import math
import numbers

from numgrad import dtypes
from numgrad.creation import as_tensor, tensor
from numgrad.ops import BINARY, TABLE, UNARY
from numgrad.ordering import OrderMethods
from numgrad.primitives import _as, _elementwise
from numgrad.shaping import ShapingMethods
from numgrad.tensor import Tensor
from numgrad.tensor_math import where

#: Tensor methods that are also module functions, beyond the unary primitives and the
#: methods of the shaping and ordering mixins (all of which are).
METHODS = (
    "abs", "square", "relu", "round", "clip", "sum", "prod", "max", "min", "mean", "var",
    "std", "logsumexp", "argmax", "argmin", "all", "any", "reshape", "transpose", "permute",
    "swapaxes", "broadcast_to", "expand_dims", "squeeze", "ravel", "flatten", "negative",
    "deg2rad", "rad2deg", "sinc", "nan_to_num", "isclose", "allclose",
)
#: NumPy's other names of the same functions
ALIASES = {"remainder": "mod", "degrees": "rad2deg", "radians": "deg2rad", "absolute": "abs",
           "around": "round", "amax": "max", "amin": "min", "true_divide": "divide",
           "fix": "trunc"}
#: What a binary primitive's function does beyond its name's promise
NOTES = {
    "fmax": "NaN is ignored: the result is NaN only where both are.",
    "fmin": "NaN is ignored: the result is NaN only where both are.",
    "mod": "The remainder of floor division, ``x % y``: its sign follows the divisor.",
    "fmod": "C's remainder of truncated division: its sign follows the dividend `x`.",
    "arctan2": "``arctan(x / y)`` in the quadrant of the point ``(y, x)``: in ``[-pi, pi]``.",
    "hypot": "``sqrt(x**2 + y**2)``, without overflow or underflow on the way.",
    "copysign": "The magnitude of `x` with the sign of `y` (its sign bit: -0.0 is negative).",
    "logaddexp": "``log(exp(x) + exp(y))``, without overflow.",
    "logaddexp2": "``log2(2**x + 2**y)``, without overflow.",
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
    return function


def _binary_function(name: str):
    def function(x, y):
        # Data (lists, arrays) become tensors; scalars stay scalars beside a tensor.
        x, y = (v if isinstance(v, (Tensor, numbers.Number)) else tensor(v) for v in (x, y))
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


def clip(a, a_min=None, a_max=None, *, min=None, max=None) -> Tensor:  # noqa: A002
    """`a` limited to ``[a_min, a_max]`` (NumPy's ``clip``; `min` and `max` are NumPy 2's
    other names of the bounds)."""
    a = as_tensor(a)
    return a.clip(a_min if min is None else min, a_max if max is None else max)


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



_functions.update(transpose=transpose, clip=clip, nansum=nansum, nanmean=nanmean,
                  nanmax=nanmax, nanmin=nanmin)
__all__ = sorted(_functions)
