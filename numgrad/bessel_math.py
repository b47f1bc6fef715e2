"""The modified Bessel functions of the first kind of orders 0 and 1, and their
exponentially scaled forms (``i0e(x) = exp(-|x|) i0(x)``), as kernel expressions for the
primitive table (`numgrad.ops`) and their vector-Jacobian products.

Each is one Python expression, built here as `numgrad.special_math` builds digamma's
(conditional expressions, immediately called lambdas, Horner polynomials), and the
same expression turned into NumPy code (`numgrad.special_math.numpy_form`) is the row's
reference. They compute in float64 on every target (a float32 operand is rounded in the
result).

The algorithm, from the functions' textbook expansions (DLMF 10.25.2 and 10.40.1; the
coefficients are exact rationals, computed here):

- ``|x| <= SERIES_END``: the power series ``I_nu(x) = (x/2)**nu sum_k q**k / (k! (k +
  nu)!)``, ``q = x**2 / 4``: positive terms, so no cancellation;
- beyond: the asymptotic expansion ``I_nu(x) ~ exp(x) / sqrt(2 pi x) sum_k (-1)**k
  a_k(nu) / x**k``, ``a_k(nu) = prod_{j<=k} (4 nu**2 - (2j - 1)**2) / (k! 8**k)``, whose
  error at x = 20 is below 1e-17 (it diverges only from k near 2x).

The term counts are the fewest that keep the largest relative error against mpmath
(40 digits) below 2.5e-15 on either side of the cut (tools/special_accuracy.py measures
it: docs/decisions.md). i0 and i1 are ``exp(|x|) i0e`` by two factors ``exp(|x| / 2)``,
so that they overflow where the functions do (near 713.98) rather than where ``exp``
does (709.78, SciPy's); i0 is even, i1 odd (``i1(-0.0)`` is -0.0).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

from numgrad.special_math import _horner, _let

__all__ = ["I0", "I1", "I0E", "I1E", "i0_vjp", "i1_vjp", "i0e_vjp", "i1e_vjp"]

#: the power series serves ``|x| <= SERIES_END``, the asymptotic expansion beyond
SERIES_END = 20.0
#: terms of the power series (in ``x**2 / 4``) and of the asymptotic expansion (in
#: ``1 / |x|``), by order
SERIES_TERMS = {0: 34, 1: 32}
ASYMPTOTIC_TERMS = {0: 20, 1: 20}


def series_coefficients(nu: int) -> list[float]:
    """``1 / (k! (k + nu)!)`` for k = 0, 1, ...: the power series in ``x**2 / 4``."""
    return [1.0 / (math.factorial(k) * math.factorial(k + nu)) for k in range(SERIES_TERMS[nu])]


def asymptotic_coefficients(nu: int) -> list[float]:
    """``(-1)**k a_k(nu)``: the asymptotic expansion of ``sqrt(2 pi x) exp(-x) I_nu(x)``
    in ``1 / x``."""
    out, c = [], Fraction(1)
    for k in range(1, ASYMPTOTIC_TERMS[nu] + 1):
        out.append(float(c))
        c *= Fraction((2 * k - 1) ** 2 - 4 * nu * nu, 8 * k)
    return out


def _scaled(nu: int, ax: str) -> str:
    """``exp(-ax) I_nu(ax)`` (`ax` a name, not negative or NaN), by the series or the
    expansion; the series' branch without the exponential is `_unscaled`'s."""
    return (f"math.exp(-{ax}) * ({_series(nu, ax)}) if {ax} <= {SERIES_END!r} else "
            f"{_expansion(nu, ax)}")


def _series(nu: int, ax: str) -> str:
    series = _let("bq", f"0.25 * {ax} * {ax}", _horner("bq", series_coefficients(nu)))
    return series if nu == 0 else f"0.5 * {ax} * ({series})"


def _expansion(nu: int, ax: str) -> str:
    return _let("bw", f"1.0 / {ax}", f"({_horner('bw', asymptotic_coefficients(nu))}) / "
                                     f"math.sqrt({2 * math.pi!r} * {ax})")


def _unscaled(nu: int, ax: str) -> str:
    """``I_nu(ax)``: inf at inf (where the expansion's product would be NaN)."""
    return (f"{_series(nu, ax)} if {ax} <= {SERIES_END!r} else math.inf if {ax} == math.inf "
            f"else " + _let("be", f"math.exp(0.5 * {ax})", f"be * (be * ({_expansion(nu, ax)}))"))


def _row(nu: int, body) -> str:
    """The row's expression over ``x``: `body` of ``|x|`` in float64, odd for order 1."""
    value = body(nu, "ba")
    if nu == 1:
        value = f"math.copysign({value}, bx)"
    return _let("bx", "np.float64(x)", _let("ba", "abs(bx)", value))


#: the rows' expressions, written at their first use (`numgrad.ops.Primitive.code`)
I0, I1 = (functools.cache(functools.partial(_row, nu, _unscaled)) for nu in (0, 1))
I0E, I1E = (functools.cache(functools.partial(_row, nu, _scaled)) for nu in (0, 1))


# ---- vector-Jacobian products (of Tensors, by Tensor methods) ------------------------

def i0_vjp(g, out, x, _):
    return (g * x.i1(),)


def i1_vjp(g, out, x, _):
    # i1' = i0 - i1 / x, 1/2 at 0 (i1 / x is even: the second derivative there is 0)
    nonzero = x != 0
    return (g * (x.i0() - out / x.where(nonzero, 1)).where(nonzero, 0.5),)


def i0e_vjp(g, out, x, _):
    # i0e' = i1e - sign(x) i0e: 0 at 0, between the one-sided slopes -1 and 1
    return (g * (x.i1e() - x.sign() * out),)


def i1e_vjp(g, out, x, _):
    # i1e' = i0e - i1e (sign(x) + 1 / x), 1/2 at 0
    nonzero = x != 0
    slope = x.i0e() - out * (x.sign() + 1 / x.where(nonzero, 1))
    return (g * slope.where(nonzero, 0.5),)
