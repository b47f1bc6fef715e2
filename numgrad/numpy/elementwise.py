"""Elementwise functions: the rows of the primitive table, `where`, `power`, and the
composites built from them (relu, clip, round, sinc, isclose, ...).

Each unary and binary row of `numgrad.ops.TABLE` is a function here with no definition
of its own, so adding an elementwise operation is one table row; NumPy's second names
(``remainder``, ``degrees``, ``absolute``, ...) are the same functions. Tensor's
methods of the same names are these functions (`numgrad.methods`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from numgrad import dtypes
from numgrad.numpy.creation import as_tensor, tensor
from numgrad.ops import BINARY, TABLE, UNARY
from numgrad.primitives import _as, _as_tensor, _elementwise
from numgrad.tensor import Tensor

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

#: Unary rows with a function of their own below (a check first, or another name)
_WRITTEN = ("negative", "invert", "rint")


def _unary_function(name: str):
    def function(x) -> Tensor:
        return _elementwise(name, x if isinstance(x, Tensor) else as_tensor(x))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise ``{name}``, NumPy's, on a tensor or array-like."
    return function


def _binary_function(name: str):
    def function(x, y) -> Tensor:
        # Scalars stay scalars beside a tensor, data (lists, arrays) goes to its device.
        if not isinstance(x, Tensor) and not isinstance(y, Tensor):
            x = tensor(x)
        return _elementwise(name, x, y)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise ``{name}`` with NumPy's promotion and broadcasting."
    if name in NOTES:
        function.__doc__ += f"\n\n{NOTES[name]}"
    return function


_TABLE_FUNCTIONS = {
    **{p.name: _unary_function(p.name) for p in TABLE.values()
       if p.kind == UNARY and p.name not in _WRITTEN},
    **{p.name: _binary_function(p.name) for p in TABLE.values()
       if p.kind == BINARY and p.name != "power"},
}
globals().update(_TABLE_FUNCTIONS)


def where(condition, x, y) -> Tensor:
    """Elements of `x` where `condition` holds, else of `y` (broadcasting)."""
    return _elementwise("where", condition, x, y)


def power(x, y) -> Tensor:
    """``x ** y``; integer tensors to negative integer powers are an error, as in NumPy
    (`ValueError`; for unsigned ones the `OverflowError` of a negative Python int)."""
    if isinstance(y, numbers.Integral) and y < 0 and isinstance(x, Tensor) \
            and x.dtype.kind in "bi":
        raise ValueError("integers to negative integer powers are not allowed")
    if isinstance(x, Tensor) and isinstance(y, numbers.Real) and y == 2 \
            and dtypes.result_type(x.dtype, y) == x.dtype:
        return x * x  # NumPy's fast path too: the same bits as power(x, 2)
    return _elementwise("power", x, y)


def negative(x) -> Tensor:
    """``-x`` (NumPy's ``negative``); a bool tensor is a TypeError, as in NumPy."""
    x = as_tensor(x)
    if x.dtype == dtypes.bool_:
        raise TypeError("negative of a bool tensor is not supported; use logical_not()")
    return _elementwise("negative", x)


def positive(x) -> Tensor:
    """A copy of `x` (NumPy's ``positive``, ``+x``)."""
    x = as_tensor(x)
    return x.astype(x.dtype)


def invert(x) -> Tensor:
    """``~x``, NumPy's ``invert`` (``bitwise_not``; the standard's ``bitwise_invert``):
    the bits of integers flipped (``-x - 1``), bools negated (``logical_not``); floats
    are a TypeError. No gradient.

    >>> (~ng.tensor([0, 5, -1])).tolist(), (~ng.tensor([True, False])).tolist()
    ([-1, -6, 0], [False, True])
    """
    x = as_tensor(x)
    if x.dtype == dtypes.bool_:
        return x.logical_not()
    if x.dtype.kind == "f":
        raise TypeError(f"invert (~) takes integers and bools, not {x.dtype}")
    return _elementwise("invert", x)


def square(x) -> Tensor:
    """``x * x``."""
    x = as_tensor(x)
    return x * x


def relu(x) -> Tensor:
    """``max(x, 0)``, with relu'(0) = 0 (PyTorch's); NaN stays NaN."""
    x = as_tensor(x)
    # where, not maximum: relu'(0) = 0 as in PyTorch; NaN fails `<= 0` and stays NaN.
    return where(x <= 0, 0, x)


def round(x, decimals: int = 0) -> Tensor:  # noqa: A001 - NumPy's name
    """Round half to even, as NumPy does; integers are returned unchanged."""
    x = as_tensor(x)
    if x.dtype.kind != "f":
        return x.astype(x.dtype)
    if decimals == 0:
        return _elementwise("rint", x)
    scale = 10.0 ** decimals
    return _elementwise("rint", x * scale) / scale


def deg2rad(x) -> Tensor:
    """Degrees to radians, ``x * (pi / 180)`` as NumPy computes it."""
    return as_tensor(x) * (math.pi / 180)


def rad2deg(x) -> Tensor:
    """Radians to degrees, ``x * (180 / pi)`` as NumPy computes it."""
    return as_tensor(x) * (180 / math.pi)


def sinc(x) -> Tensor:
    """NumPy's normalized sinc, ``sin(pi x) / (pi x)``, 1 at 0.

    Near 0 it is the series ``1 - (pi x)**2 / 6`` (the quotient's value within
    rounding there), so its first and second derivatives at 0 are exact (0 and
    -pi**2 / 3).

    >>> x = ng.tensor([0.0, 0.5, 1.0], requires_grad=True)
    >>> ng.sinc(x).round(6).tolist()
    [1.0, 0.63662, 0.0]
    >>> ng.grad(ng.sinc(x).sum(), x)[0].round(6).tolist()
    [0.0, -1.27324, -1.0]
    """
    x = as_tensor(x)
    x = _as(x, dtypes.to_float(x.dtype))
    near_zero = x.abs() < 1e-4
    # The quotient's own gradient is masked at 0 but must not be 0 / 0 there.
    y = where(near_zero, 1, x) * math.pi
    return where(near_zero, 1 - (x * math.pi) ** 2 / 6, y.sin() / y)


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None) -> Tensor:
    """NaN to `nan`, infinities to `posinf`/`neginf` (by default the dtype's largest
    and most negative finite values), as NumPy's; integers and bools are unchanged.

    The gradient passes where the input is finite, 0 elsewhere. ``copy=False``
    changes the tensor `x` in place (its value is rebound, SPEC §1) and returns it.

    >>> ng.nan_to_num(ng.tensor([np.nan, np.inf, -np.inf, 1.5]), posinf=9.0).tolist()
    [0.0, 9.0, -1.7976931348623157e+308, 1.5]
    """
    x = as_tensor(x)
    if x.dtype.kind != "f":
        out = x.astype(x.dtype)
    else:
        info = np.finfo(x.dtype)
        out = where(x != x, nan, x)
        out = where(x == math.inf, info.max if posinf is None else posinf, out)
        out = where(x == -math.inf, info.min if neginf is None else neginf, out)
    return out if copy else x._rebind(out)


def isclose(x, other, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Where ``|x - other| <= atol + rtol * |other|`` (equal infinities too, NaN only
    with `equal_nan`), as NumPy's ``isclose``: a bool tensor, no gradient.

    >>> ng.isclose(ng.tensor([1.0, np.inf, np.nan]), [1.0 + 1e-9, np.inf, np.nan]).tolist()
    [True, True, False]
    """
    x = as_tensor(x)
    x = _as(x.detach(), dtypes.to_float(x.dtype))  # (floats, as NumPy's)
    y = _as_tensor(other, x.dtype, x).detach()
    y = _as(y, dtypes.to_float(y.dtype))
    close = ((x - y).abs() <= atol + rtol * y.abs()) & y.isfinite() | (x == y)
    return close | (x.isnan() & y.isnan()) if equal_nan else close


def allclose(x, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether `isclose` holds everywhere, as NumPy's ``allclose``: a Python bool."""
    return bool(isclose(x, other, rtol, atol, equal_nan).all().item())


def clip(a, min=None, max=None, *, a_min=None, a_max=None) -> Tensor:  # noqa: A002
    """`a` limited to ``[min, max]`` (NaN in `a` or a bound gives NaN, as in NumPy); the
    gradient passes at the bounds. The standard's and NumPy 2's names of the bounds, by
    position or keyword; NumPy's classic `a_min` and `a_max` are keywords."""
    out = as_tensor(a)
    low, high = a_min if min is None else min, a_max if max is None else max
    if low is not None:
        out = where(_or_nan(out < low, low), low, out)
    if high is not None:
        out = where(_or_nan(out > high, high), high, out)
    return out


def _or_nan(beyond: Tensor, bound) -> Tensor:
    """`beyond`, or True where `bound` is NaN (a NaN bound makes clip's result NaN)."""
    if isinstance(bound, numbers.Real):
        return beyond | True if math.isnan(bound) else beyond
    return beyond | (bound != bound)


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
    return _TABLE_FUNCTIONS["floor_divide"](x1, x2), _TABLE_FUNCTIONS["mod"](x1, x2)


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


#: NumPy's other names of the same functions
ALIASES = {"remainder": "mod", "degrees": "rad2deg", "radians": "deg2rad", "absolute": "abs",
           "around": "round", "true_divide": "divide", "fix": "trunc", "rint": "round",
           "bitwise_not": "invert"}
globals().update({alias: globals()[name] for alias, name in ALIASES.items()})

__all__ = sorted([*_TABLE_FUNCTIONS, *ALIASES, "where", "power", "negative", "positive",
                  "invert", "square", "relu", "round", "deg2rad", "rad2deg", "sinc",
                  "nan_to_num", "isclose", "allclose", "clip", "float_power", "divmod",
                  "select", "polyval"])
