"""``scipy.special``'s logistic, log-sum-exp, softmax, ``x log y``, gamma-family (with the
regularized incomplete gamma and beta functions), error and modified Bessel functions."""

from __future__ import annotations

import math
import numbers

from numgrad.nn import functional
from numgrad.numpy.creation import as_tensor
from numgrad.numpy.elementwise import where
from numgrad.numpy.joining import _tensors
from numgrad.primitives import _elementwise
from numgrad.tensor import Tensor

__all__ = ["expit", "logit", "logsumexp", "softmax", "log_softmax", "xlogy", "xlog1py",
           "gammaln", "gamma", "digamma", "psi", "polygamma", "multigammaln", "beta", "betaln",
           "gammainc", "gammaincc", "betainc", "erf", "erfc", "erfinv", "i0", "i1", "i0e", "i1e"]


def expit(x) -> Tensor:
    """The logistic function ``1 / (1 + exp(-x))`` (`numgrad.sigmoid`)."""
    return as_tensor(x).sigmoid()


def logit(p) -> Tensor:
    """``log(p / (1 - p))``, the inverse of `expit`: -inf at 0, inf at 1."""
    p = as_tensor(p)
    return p.log() - (-p).log1p()


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False):
    """``log(sum(b * exp(a)))`` along `axis`, shifted by the maximum so it cannot
    overflow; with `return_sign`, ``(log|s|, sign(s))`` of the weighted sum ``s`` (a
    negative sum is NaN without it, as SciPy's)."""
    a = as_tensor(a)
    if b is None and not return_sign:
        return a.logsumexp(axis, keepdims)
    top = a.max(axis, keepdims=True).detach()
    top = top.where(top.isfinite(), 0)
    total = (a - top).exp()
    total = (total if b is None else total * as_tensor(b, a.device)).sum(axis, keepdims=True)
    out = (total.abs() if return_sign else total).log() + top
    if not keepdims:
        out, total = _squeezed(out, axis), _squeezed(total, axis)
    return (out, total.sign().detach()) if return_sign else out


def _squeezed(x: Tensor, axis) -> Tensor:
    return x.reshape(()) if axis is None else x.squeeze(axis)


def softmax(x, axis=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along `axis` (every element when None, as SciPy's)."""
    x = as_tensor(x)
    if axis is None:
        return functional.softmax(x.reshape(-1), 0).reshape(x.shape)
    return functional.softmax(x, axis)


def log_softmax(x, axis=None) -> Tensor:
    """``log(softmax(x))`` along `axis` (every element when None), without overflow."""
    x = as_tensor(x)
    if axis is None:
        return functional.log_softmax(x.reshape(-1), 0).reshape(x.shape)
    return functional.log_softmax(x, axis)


def xlogy(x, y) -> Tensor:
    """``x * log(y)``, 0 where ``x == 0`` (unless `y` is NaN).

    The gradient is the product's: ``log(y)`` for `x` and ``x / y`` for `y`, so 0 for
    `y` where ``x == 0``; where both are 0 (the function is 0 along `y`, and its slope
    in `x` is -inf) it is 0 for both, never NaN.
    """
    x, y = _tensors([x, y], "xlogy")
    return x * where((x == 0) & (y <= 0), 1, y).log()


def xlog1py(x, y) -> Tensor:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless `y` is NaN); gradients as `xlogy`'s."""
    x, y = _tensors([x, y], "xlog1py")
    return x * where((x == 0) & (y <= -1), 0, y).log1p()


# ---- the gamma family and the error functions ------------------------------------------

def gammaln(x) -> Tensor:
    """``log|gamma(x)|`` (`numgrad.lgamma`): inf at the poles, -inf at -inf (SciPy's);
    its derivative is `digamma`."""
    x = as_tensor(x)
    return where(x == -math.inf, -math.inf, x.lgamma())


def gamma(x) -> Tensor:
    """The gamma function, ``exp(gammaln(x))`` with its sign: inf at +0 (-inf at -0), NaN at
    the negative integers and -inf, as SciPy's. (The exponential costs digits where
    ``|gammaln|`` is large: 1e-13 relative near x = 170, where gamma overflows.)"""
    x = as_tensor(x)
    value = x.lgamma().exp()
    pole = (x <= 0) & (x == x.floor()) & (x != 0)  # (-inf too)
    return where(pole, math.nan, where(_gamma_negative(x), -value, value))


def _gamma_negative(x: Tensor) -> Tensor:
    """Where gamma(x) < 0: between -1 and 0, -3 and -2, ..., and at -0."""
    return (x < 0) & (x.floor() % 2 == 1) | (x == 0) & x.signbit()


def digamma(x) -> Tensor:
    """``psi(x) = d/dx log gamma(x)`` (`numgrad.digamma`): -inf at +0 (inf at -0), NaN at
    the negative integers; its derivative is ``polygamma(1, x)``."""
    return as_tensor(x).digamma()


psi = digamma


def polygamma(n, x) -> Tensor:
    """The `n`-th derivative of `digamma` at `x` (`n` broadcast against `x`): NaN where
    `n` is not a non-negative integer, as SciPy's; no gradient for `n`."""
    if isinstance(n, numbers.Integral):
        return as_tensor(x).polygamma(n)  # (n = 0: digamma)
    n, x = _tensors([n, x], "polygamma")
    out = where(n == 0, x.digamma(), x.polygamma(n))
    return where(n == n.floor(), out, math.nan)


def multigammaln(a, d: int) -> Tensor:
    """The log of the multivariate gamma function of dimension `d`, ``d (d - 1) / 4
    log(pi) + sum_j gammaln(a - j / 2)`` for j < d. (SciPy checks ``a > (d - 1) / 2``,
    which reads the values; this does not.)"""
    if not isinstance(d, numbers.Integral) or d < 1:
        raise ValueError(f"multigammaln: d must be a positive integer, got {d!r}")
    a = as_tensor(a)
    total = a.lgamma()
    for j in range(1, d):
        total = total + (a - j / 2).lgamma()
    return total + d * (d - 1) / 4 * math.log(math.pi)


def betaln(a, b) -> Tensor:
    """``log|beta(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)``. (A difference of
    large logs: digits go where one argument is much larger than the other, 1e-10 relative
    at a ratio of 1e6.)"""
    a, b = _tensors([a, b], "betaln")
    return a.lgamma() + b.lgamma() - (a + b).lgamma()


def beta(a, b) -> Tensor:
    """The beta function ``gamma(a) gamma(b) / gamma(a + b)``, as ``exp(betaln)`` with the
    sign of the gammas."""
    a, b = _tensors([a, b], "beta")
    value = betaln(a, b).exp()
    negative = _gamma_negative(a) ^ _gamma_negative(b) ^ _gamma_negative(a + b)
    return where(negative, -value, value)


def gammainc(a, x) -> Tensor:
    """The regularized lower incomplete gamma function ``P(a, x) = gamma(a, x) / Gamma(a)``
    (SciPy's argument order; `numgrad.gammainc`): NaN for a negative `a` or `x`, and at
    ``a = x = 0`` and ``a = x = inf``, as SciPy's.

    The gradient is for `x` only, ``x**(a - 1) exp(-x) / Gamma(a)`` (in logs), as
    autograd's: a backward pass through it while `a` requires grad raises
    ``RuntimeError`` (detach `a` to differentiate with respect to `x` alone).
    """
    return _operands("gammainc", a, x)


def gammaincc(a, x) -> Tensor:
    """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``, accurate
    where it is small (large `x`); the gradient is for `x` only, as `gammainc`'s."""
    return _operands("gammaincc", a, x)


def betainc(a, b, x) -> Tensor:
    """The regularized incomplete beta function ``I_x(a, b) = integral of t**(a - 1) (1 -
    t)**(b - 1) from 0 to x / B(a, b)`` (SciPy's argument order): NaN for a negative `a`
    or `b`, or `x` outside [0, 1]. Differentiable in `x` (to any order), not in `a` or
    `b` (as HIPS autograd's): a backward pass through them raises."""
    return _operands("betainc", a, b, x)


def _operands(name: str, *operands) -> Tensor:
    """Row `name` of `operands`; a Python scalar beside a tensor stays weak (a float32
    tensor gives float32), data goes to the tensor's device."""
    if not any(isinstance(o, Tensor) for o in operands):
        operands = (as_tensor(operands[0]), *operands[1:])
    return _elementwise(name, *operands)


def erf(x) -> Tensor:
    """The error function ``2 / sqrt(pi) * integral of exp(-t**2) from 0 to x``."""
    return as_tensor(x).erf()


def erfc(x) -> Tensor:
    """``1 - erf(x)``, accurate where it is small (large x)."""
    return as_tensor(x).erfc()


def erfinv(y) -> Tensor:
    """The inverse of `erf`: NaN beyond [-1, 1], +-inf at +-1; its derivative is ``sqrt(pi)
    / 2 * exp(erfinv(y)**2)``."""
    return as_tensor(y).erfinv()


# ---- modified Bessel functions of the first kind ---------------------------------------

def i0(x) -> Tensor:
    """The modified Bessel function of the first kind of order 0 (`numgrad.i0`, NumPy's
    ``np.i0``): even, inf beyond 713.98; its derivative is `i1`."""
    return as_tensor(x).i0()


def i1(x) -> Tensor:
    """The modified Bessel function of the first kind of order 1: odd; its derivative is
    ``i0(x) - i1(x) / x`` (1/2 at 0)."""
    return as_tensor(x).i1()


def i0e(x) -> Tensor:
    """``exp(-|x|) i0(x)``, which does not overflow; its derivative is ``i1e(x) - sign(x)
    i0e(x)`` (0 at 0, where the one-sided slopes are -1 and 1)."""
    return as_tensor(x).i0e()


def i1e(x) -> Tensor:
    """``exp(-|x|) i1(x)``; its derivative is ``i0e(x) - i1e(x) (sign(x) + 1 / x)`` (1/2 at
    0)."""
    return as_tensor(x).i1e()
