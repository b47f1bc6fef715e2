"""``scipy.special``'s logistic, log-sum-exp, softmax and ``x log y`` functions."""

from __future__ import annotations

from numgrad.creation import as_tensor
from numgrad.joining import _tensors
from numgrad.nn import functional
from numgrad.tensor import Tensor
from numgrad.tensor_math import where

__all__ = ["expit", "logit", "logsumexp", "softmax", "log_softmax", "xlogy", "xlog1py"]


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
