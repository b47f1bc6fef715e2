"""Tensor's elementwise methods and operators, and `where` and `power`.

Each method applies one row of the primitive table (`numgrad.ops`) through
`numgrad.primitives._elementwise`, or is a composite of others (relu, clip, square),
so adding an elementwise operation is one table row and one method here. Results take
their inputs' class, so this module needs no import of tensor.py: `Tensor` inherits
these methods.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from numgrad import dtypes
from numgrad.matmul_rules import _matmul
from numgrad.primitives import _as, _as_tensor, _elementwise
from numgrad.tensor_base import TensorBase


class ElementwiseMethods(TensorBase):
    """Elementwise methods and operators of `numgrad.Tensor`."""

    __slots__ = ()

    def exp(self) -> TensorBase: return _elementwise("exp", self)
    def expm1(self) -> TensorBase: return _elementwise("expm1", self)
    def log(self) -> TensorBase: return _elementwise("log", self)
    def log1p(self) -> TensorBase: return _elementwise("log1p", self)
    def sqrt(self) -> TensorBase: return _elementwise("sqrt", self)
    def reciprocal(self) -> TensorBase: return _elementwise("reciprocal", self)
    def sin(self) -> TensorBase: return _elementwise("sin", self)
    def cos(self) -> TensorBase: return _elementwise("cos", self)
    def tan(self) -> TensorBase: return _elementwise("tan", self)
    def tanh(self) -> TensorBase: return _elementwise("tanh", self)
    def sinh(self) -> TensorBase: return _elementwise("sinh", self)
    def cosh(self) -> TensorBase: return _elementwise("cosh", self)
    def arcsinh(self) -> TensorBase: return _elementwise("arcsinh", self)
    def arccosh(self) -> TensorBase: return _elementwise("arccosh", self)
    def arctanh(self) -> TensorBase: return _elementwise("arctanh", self)
    def arcsin(self) -> TensorBase: return _elementwise("arcsin", self)
    def arccos(self) -> TensorBase: return _elementwise("arccos", self)
    def arctan(self) -> TensorBase: return _elementwise("arctan", self)
    def log2(self) -> TensorBase: return _elementwise("log2", self)
    def log10(self) -> TensorBase: return _elementwise("log10", self)
    def exp2(self) -> TensorBase: return _elementwise("exp2", self)
    def sigmoid(self) -> TensorBase: return _elementwise("sigmoid", self)
    def sign(self) -> TensorBase: return _elementwise("sign", self)
    def floor(self) -> TensorBase: return _elementwise("floor", self)
    def ceil(self) -> TensorBase: return _elementwise("ceil", self)
    def trunc(self) -> TensorBase: return _elementwise("trunc", self)
    def cbrt(self) -> TensorBase: return _elementwise("cbrt", self)
    def signbit(self) -> TensorBase: return _elementwise("signbit", self)
    def logical_not(self) -> TensorBase: return _elementwise("logical_not", self)
    def isnan(self) -> TensorBase: return _elementwise("isnan", self)
    def isinf(self) -> TensorBase: return _elementwise("isinf", self)
    def isfinite(self) -> TensorBase: return _elementwise("isfinite", self)
    def abs(self) -> TensorBase: return _elementwise("abs", self)
    def erf(self) -> TensorBase: return _elementwise("erf", self)
    def erfc(self) -> TensorBase: return _elementwise("erfc", self)
    def erfinv(self) -> TensorBase: return _elementwise("erfinv", self)
    def lgamma(self) -> TensorBase: return _elementwise("lgamma", self)
    def digamma(self) -> TensorBase: return _elementwise("digamma", self)
    def i0(self) -> TensorBase: return _elementwise("i0", self)
    def i1(self) -> TensorBase: return _elementwise("i1", self)
    def i0e(self) -> TensorBase: return _elementwise("i0e", self)
    def i1e(self) -> TensorBase: return _elementwise("i1e", self)

    def polygamma(self, n) -> TensorBase:
        """The `n`-th derivative of `digamma` (PyTorch's ``x.polygamma(n)``; ``ng.polygamma(n,
        x)``): `n` a non-negative integer (a tensor of orders is floored), 0 giving digamma.

        >>> ng.tensor([1.0, 2.0]).polygamma(1).round(12).tolist()  # pi**2 / 6, pi**2 / 6 - 1
        [1.644934066848, 0.644934066848]
        """
        if isinstance(n, numbers.Integral) and n == 0:
            return self.digamma()  # (the row's own digamma has the Taylor series at its root)
        return _elementwise("polygamma", n, self)

    def square(self) -> TensorBase:
        return self * self

    def relu(self) -> TensorBase:
        # where, not maximum: relu'(0) = 0 as in PyTorch; NaN fails `<= 0` and stays NaN.
        return where(self <= 0, 0, self)

    def round(self, decimals: int = 0) -> TensorBase:
        """Round half to even, as NumPy does; integers are returned unchanged."""
        if self.dtype.kind != "f":
            return self.astype(self.dtype)
        if decimals == 0:
            return _elementwise("rint", self)
        scale = 10.0 ** decimals
        return _elementwise("rint", self * scale) / scale

    def deg2rad(self) -> TensorBase:
        """Degrees to radians, ``x * (pi / 180)`` as NumPy computes it."""
        return self * (math.pi / 180)

    def rad2deg(self) -> TensorBase:
        """Radians to degrees, ``x * (180 / pi)`` as NumPy computes it."""
        return self * (180 / math.pi)

    def sinc(self) -> TensorBase:
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
        x = _as(self, dtypes.to_float(self.dtype))
        near_zero = x.abs() < 1e-4
        # The quotient's own gradient is masked at 0 but must not be 0 / 0 there.
        y = where(near_zero, 1, x) * math.pi
        return where(near_zero, 1 - (x * math.pi) ** 2 / 6, y.sin() / y)

    def nan_to_num(self, copy: bool = True, nan=0.0, posinf=None, neginf=None) -> TensorBase:
        """NaN to `nan`, infinities to `posinf`/`neginf` (by default the dtype's largest
        and most negative finite values), as NumPy's; integers and bools are unchanged.

        The gradient passes where the input is finite, 0 elsewhere. ``copy=False``
        changes this tensor in place (its value is rebound, SPEC §1) and returns it.

        >>> ng.nan_to_num(ng.tensor([np.nan, np.inf, -np.inf, 1.5]), posinf=9.0).tolist()
        [0.0, 9.0, -1.7976931348623157e+308, 1.5]
        """
        if self.dtype.kind != "f":
            out = self.astype(self.dtype)
        else:
            info = np.finfo(self.dtype)
            out = where(self != self, nan, self)
            out = where(self == math.inf, info.max if posinf is None else posinf, out)
            out = where(self == -math.inf, info.min if neginf is None else neginf, out)
        return out if copy else self._rebind(out)

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08,
                equal_nan: bool = False) -> TensorBase:
        """Where ``|self - other| <= atol + rtol * |other|`` (equal infinities too, NaN
        only with `equal_nan`), as NumPy's ``isclose``: a bool tensor, no gradient.

        >>> ng.isclose(ng.tensor([1.0, np.inf, np.nan]), [1.0 + 1e-9, np.inf, np.nan]).tolist()
        [True, True, False]
        """
        x = _as(self.detach(), dtypes.to_float(self.dtype))  # (floats, as NumPy's)
        y = _as_tensor(other, x.dtype, x).detach()
        y = _as(y, dtypes.to_float(y.dtype))
        close = ((x - y).abs() <= atol + rtol * y.abs()) & y.isfinite() | (x == y)
        return close | (x.isnan() & y.isnan()) if equal_nan else close

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08,
                 equal_nan: bool = False) -> bool:
        """Whether `isclose` holds everywhere, as NumPy's ``allclose``: a Python bool."""
        return bool(self.isclose(other, rtol, atol, equal_nan).all().item())

    def clip(self, min=None, max=None) -> TensorBase:  # noqa: A002 - NumPy's names
        """Limit values to ``[min, max]`` (NaN in `self` or a bound gives NaN, as in NumPy);
        the gradient passes at the bounds."""
        out = self
        if min is not None:
            out = where(_or_nan(out < min, min), min, out)
        if max is not None:
            out = where(_or_nan(out > max, max), max, out)
        return out

    def where(self, condition, other) -> TensorBase:
        """``where(condition, self, other)``, as PyTorch's ``Tensor.where``."""
        return where(condition, self, other)

    def __neg__(self) -> TensorBase:
        if self.dtype == dtypes.bool_:
            raise TypeError("negative of a bool tensor is not supported; use logical_not()")
        return _elementwise("negative", self)

    negative = __neg__

    def __pos__(self) -> TensorBase:
        return self.astype(self.dtype)

    def __abs__(self) -> TensorBase:
        return self.abs()

    def invert(self) -> TensorBase:
        """``~x``, NumPy's ``invert`` (``bitwise_not``; the standard's ``bitwise_invert``):
        the bits of integers flipped (``-x - 1``), bools negated (``logical_not``); floats
        are a TypeError. No gradient.

        >>> (~ng.tensor([0, 5, -1])).tolist(), (~ng.tensor([True, False])).tolist()
        ([-1, -6, 0], [False, True])
        """
        if self.dtype == dtypes.bool_:
            return self.logical_not()
        if self.dtype.kind == "f":
            raise TypeError(f"invert (~) takes integers and bools, not {self.dtype}")
        return _elementwise("invert", self)

    __invert__ = invert

    def __add__(self, other) -> TensorBase: return _elementwise("add", self, other)
    def __radd__(self, other) -> TensorBase: return _elementwise("add", other, self)
    def __sub__(self, other) -> TensorBase: return _elementwise("subtract", self, other)
    def __rsub__(self, other) -> TensorBase: return _elementwise("subtract", other, self)
    def __mul__(self, other) -> TensorBase: return _elementwise("multiply", self, other)
    def __rmul__(self, other) -> TensorBase: return _elementwise("multiply", other, self)
    def __truediv__(self, other) -> TensorBase: return _elementwise("divide", self, other)
    def __rtruediv__(self, other) -> TensorBase: return _elementwise("divide", other, self)
    def __mod__(self, other) -> TensorBase: return _elementwise("mod", self, other)
    def __rmod__(self, other) -> TensorBase: return _elementwise("mod", other, self)
    def __floordiv__(self, other) -> TensorBase: return _elementwise("floor_divide", self, other)
    def __rfloordiv__(self, other) -> TensorBase: return _elementwise("floor_divide", other, self)
    def __divmod__(self, other) -> tuple: return self // other, self % other
    def __rdivmod__(self, other) -> tuple: return other // self, other % self
    # In place as Tensor's other in-place operators: this object gets the new value.
    def __imod__(self, other) -> TensorBase: return self._rebind(self % other)
    def __ifloordiv__(self, other) -> TensorBase: return self._rebind(self // other)
    def __pow__(self, other) -> TensorBase: return power(self, other)
    def __rpow__(self, other) -> TensorBase: return power(other, self)
    def __matmul__(self, other) -> TensorBase: return _matmul(self, other)
    def __rmatmul__(self, other) -> TensorBase: return _matmul(other, self)
    def __imatmul__(self, other) -> TensorBase: return self._rebind(self @ other)
    # &, | and ^ are NumPy's: bitwise on integers, logical on bools (floats: TypeError)
    def __and__(self, other) -> TensorBase: return _elementwise("bitwise_and", self, other)
    def __rand__(self, other) -> TensorBase: return _elementwise("bitwise_and", other, self)
    def __or__(self, other) -> TensorBase: return _elementwise("bitwise_or", self, other)
    def __ror__(self, other) -> TensorBase: return _elementwise("bitwise_or", other, self)
    def __xor__(self, other) -> TensorBase: return _elementwise("bitwise_xor", self, other)
    def __rxor__(self, other) -> TensorBase: return _elementwise("bitwise_xor", other, self)
    def __iand__(self, other) -> TensorBase: return self._rebind(self & other)
    def __ior__(self, other) -> TensorBase: return self._rebind(self | other)
    def __ixor__(self, other) -> TensorBase: return self._rebind(self ^ other)
    # << and >> are NumPy 2's on integers (floats, and a bool by a bool: TypeError)
    def __lshift__(self, other) -> TensorBase: return _elementwise("left_shift", self, other)
    def __rlshift__(self, other) -> TensorBase: return _elementwise("left_shift", other, self)
    def __rshift__(self, other) -> TensorBase: return _elementwise("right_shift", self, other)
    def __rrshift__(self, other) -> TensorBase: return _elementwise("right_shift", other, self)
    def __ilshift__(self, other) -> TensorBase: return self._rebind(self << other)
    def __irshift__(self, other) -> TensorBase: return self._rebind(self >> other)
    def __eq__(self, other) -> TensorBase: return _elementwise("equal", self, other)  # type: ignore[override]
    def __ne__(self, other) -> TensorBase: return _elementwise("not_equal", self, other)  # type: ignore[override]
    def __lt__(self, other) -> TensorBase: return _elementwise("less", self, other)
    def __le__(self, other) -> TensorBase: return _elementwise("less_equal", self, other)
    def __gt__(self, other) -> TensorBase: return _elementwise("greater", self, other)
    def __ge__(self, other) -> TensorBase: return _elementwise("greater_equal", self, other)


def where(condition, x, y) -> TensorBase:
    """Elements of `x` where `condition` holds, else of `y` (broadcasting)."""
    return _elementwise("where", condition, x, y)


def power(x, y) -> TensorBase:
    """``x ** y``; integer tensors to negative integer powers are an error, as in NumPy
    (`ValueError`; for unsigned ones the `OverflowError` of a negative Python int)."""
    if isinstance(y, numbers.Integral) and y < 0 and isinstance(x, TensorBase) \
            and x.dtype.kind in "bi":
        raise ValueError("integers to negative integer powers are not allowed")
    if isinstance(x, TensorBase) and isinstance(y, numbers.Real) and y == 2 \
            and dtypes.result_type(x.dtype, y) == x.dtype:
        return x * x  # NumPy's fast path too: the same bits as power(x, 2)
    return _elementwise("power", x, y)


def _or_nan(beyond: TensorBase, bound) -> TensorBase:
    """`beyond`, or True where `bound` is NaN (a NaN bound makes clip's result NaN)."""
    if isinstance(bound, numbers.Real):
        return beyond | True if math.isnan(bound) else beyond
    return beyond | (bound != bound)
