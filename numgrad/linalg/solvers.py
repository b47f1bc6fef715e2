"""``ng.linalg`` inverses and determinants: inv, solve, det, slogdet, pinv, matrix_power.

Each decomposition-backed function is one library primitive (``ref`` is NumPy's own
function, so values, batching and errors are NumPy's) and its matrix-calculus VJP, the
rules HIPS autograd and JAX use. The rules are written with Tensor operations (matmul,
solve, inv, transposes) on the saved output, so they are differentiable again: second
derivatives of inv, solve, det, slogdet and pinv work. A singular matrix raises NumPy's
``LinAlgError`` when the value is computed (it needs the values), not at the call.
"""

from __future__ import annotations

import functools
import operator
from typing import NamedTuple

import numpy as np

from numgrad.linalg.stacks import (
    TensorLike,
    as_tensor,
    define,
    eye,
    mT,
    pack,
    packed,
    stacked,
    unpack,
)
from numgrad.matmul_rules import _broadcast_batch
from numgrad.primitives import _apply, _as
from numgrad.tensor import Tensor

__all__ = ["SlogdetResult", "det", "inv", "matrix_power", "pinv", "slogdet", "solve"]


class SlogdetResult(NamedTuple):
    """``slogdet``'s result, as NumPy's: the sign and the log of the absolute value."""

    sign: Tensor
    logabsdet: Tensor


# ---- the rules -------------------------------------------------------------------

def _inv_vjp(g, out, a, arg):
    # d(A^-1) = -A^-1 dA A^-1, so gA = -A^-T g A^-T.
    t = mT(out)
    return (-(t @ g @ t),)


def _solve_vjp(g, out, a, b, arg):
    # X = A^-1 B: gB = A^-T g, gA = -gB X^T.
    gb = solve_stacked(mT(a), g)
    return -(gb @ mT(out)), gb


def _det_vjp(g, out, a, arg):
    # d det A = det A tr(A^-1 dA): gA = g det A A^-T (A^-1 needs A invertible). `out`
    # and `g` end in an axis of length 1 (the packed form, see `det`).
    return ((g * out)[..., None] * mT(inv(a)),)


_SLOGDET_PARTS = [(), ()]


def _slogdet_vjp(g, out, a, arg):
    # The sign is piecewise constant; d log|det A| = tr(A^-1 dA).
    _, glog = unpack(g, _SLOGDET_PARTS)
    return (glog[..., None, None] * mT(inv(a)),)


def _pinv_vjp(g, out, a, arg):
    # Golub and Pereyra's derivative of the pseudo-inverse P of A (valid where the rank
    # is locally constant): dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P.
    m, n = a.shape[-2:]
    p, pt = out, mT(out)
    ga = (-(p @ mT(g) @ p) + p @ pt @ g @ (eye(m, a) - a @ p)
          + (eye(n, a) - p @ a) @ g @ pt @ p)
    return (mT(ga),)


define("inv", lambda a, arg: np.linalg.inv(a), _inv_vjp)
define("solve", lambda a, b, arg: _solve(a, b), _solve_vjp)
define("det", lambda a, arg: pack([np.linalg.det(a)], a.ndim - 2), _det_vjp)
define("slogdet", lambda a, arg: pack(np.linalg.slogdet(a), a.ndim - 2), _slogdet_vjp)
define("pinv", lambda a, arg: np.linalg.pinv(a, rcond=arg[0], hermitian=arg[1]), _pinv_vjp)


# ---- triangular systems ----------------------------------------------------------

def _solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.linalg.solve(a, b)``; a triangular matrix `a` (2-D, ``b`` of shape ``(n, k)``)
    by LAPACK's triangular solve (``?trtrs``, through SciPy where it is installed), as
    MATLAB's backslash does: ``n^2 k`` work where an LU factorization costs ``n^3`` more.
    (A Cholesky factor and its transpose, in a Gaussian process's solves and in
    cholesky's gradient, are triangular: 2.7 us against 24 us for one 60x60 system.)"""
    triangle = _triangle(a) if a.ndim == 2 and b.ndim == 2 else None
    trtrs = _trtrs(a.dtype.char) if triangle is not None else None
    if trtrs is None:
        return np.linalg.solve(a, b)
    x, info = trtrs(a, b, lower=triangle)
    if info > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    return x


def _triangle(a: np.ndarray) -> int | None:
    """1 if the square matrix `a` is lower triangular, 0 if upper, None if neither (a
    nonzero corner says so at once) or it is a single element."""
    if a.shape[0] < 2:
        return None
    if a[0, -1] == 0 and not _off_triangle(a, upper=True).any():
        return 1
    if a[-1, 0] == 0 and not _off_triangle(a, upper=False).any():
        return 0
    return None


def _off_triangle(a: np.ndarray, upper: bool) -> np.ndarray:
    """The entries of the square matrix `a` strictly above (or below) its diagonal.
    (Through a kept mask up to `MASKED` rows: a third of ``np.triu``'s time at 60.)"""
    n = a.shape[0]
    if n > MASKED:
        return np.triu(a, 1) if upper else np.tril(a, -1)
    return a[_strictly(n, upper)]


#: the largest matrix whose triangle masks are kept (a 256 x 256 mask holds 64 KiB)
MASKED = 256


@functools.lru_cache(maxsize=16)
def _strictly(n: int, upper: bool) -> np.ndarray:
    """The mask of the strictly upper (or lower) triangle of an ``n x n`` matrix."""
    mask = np.tri(n, n, -1, dtype=bool)
    mask = np.ascontiguousarray(mask.T) if upper else mask
    mask.flags.writeable = False
    return mask


@functools.cache
def _trtrs(char: str):
    """SciPy's LAPACK triangular solve for NumPy type character `char`, or None (no
    SciPy, or a type LAPACK does not take)."""
    if char not in "fdFD":
        return None
    try:
        from scipy.linalg import lapack
    except ImportError:
        return None
    return getattr(lapack, {"f": "s", "d": "d", "F": "c", "D": "z"}[char] + "trtrs")


# ---- the functions ---------------------------------------------------------------

def inv(a: TensorLike) -> Tensor:
    """The inverse of each square matrix in `a` (``(..., M, M)``), as ``np.linalg.inv``.

    A singular matrix raises ``np.linalg.LinAlgError`` when the value is computed.
    The gradient is ``-A^-T g A^-T``.
    """
    a = stacked(a)
    return _apply("inv", (a,), None, a.shape, a.dtype)


def solve(a: TensorLike, b: TensorLike) -> Tensor:
    """The solution ``x`` of ``a @ x = b``, as ``np.linalg.solve`` (NumPy 2's rule).

    `a` is ``(..., M, M)``. `b` is one vector ``(M,)`` only when it is 1-D (the result is
    then ``(..., M)``); otherwise it is a stack of ``(M, K)`` matrices, and the batch
    dimensions of `a` and `b` broadcast. A singular `a` raises
    ``np.linalg.LinAlgError`` when the value is computed.
    """
    a, b = stacked(a), as_tensor(b)
    m = a.shape[-1]
    if b.ndim == 0:
        raise ValueError("solve: Input operand 1 does not have enough dimensions (has 0, "
                         "gufunc core with signature (m,m),(m,n)->(m,n) requires 2)")
    core = b.shape[:1] if b.ndim == 1 else b.shape[-2:-1]
    if core[0] != m:
        sig = "(m,m),(m)->(m)" if b.ndim == 1 else "(m,m),(m,n)->(m,n)"
        raise ValueError(
            f"solve{'1' if b.ndim == 1 else ''}: Input operand 1 has a mismatch in its core "
            f"dimension 0, with gufunc signature {sig} (size {core[0]} is different from {m})")
    if b.ndim == 1:
        x = solve_stacked(a, b.reshape(m, 1))
        return x.reshape(x.shape[:-1])
    return solve_stacked(a, b)


def solve_stacked(a: Tensor, b: Tensor) -> Tensor:
    """`solve` for stacked matrices `b`, batch dimensions broadcast (also for the VJP,
    whose gradients may carry extra leading dimensions)."""
    dtype = np.result_type(a.dtype, b.dtype, np.float32)
    a, b = _broadcast_batch("solve", _as(a, dtype), _as(b, dtype),
                            f"a {a.shape} and b {b.shape}")
    return _apply("solve", (a, b), None, b.shape, dtype)


def det(a: TensorLike) -> Tensor:
    """The determinant of each square matrix in `a`, as ``np.linalg.det``.

    The gradient ``g det(A) A^-T`` needs ``A^-1``: for a singular matrix the backward
    pass raises ``np.linalg.LinAlgError`` (as HIPS autograd's does).
    """
    a = stacked(a)
    # Packed as a length-1 axis: a library call's result keeps at least one dimension.
    return packed("det", a, None, [()]).reshape(a.shape[:-2])


def slogdet(a: TensorLike) -> SlogdetResult:
    """``(sign, logabsdet)`` of each square matrix in `a`, as ``np.linalg.slogdet``.

    A singular matrix gives sign 0 and logabsdet ``-inf`` (no error). The gradient of
    ``logabsdet`` is ``A^-T``; ``sign`` has none (it is piecewise constant).
    """
    a = stacked(a)
    sign, logabsdet = unpack(packed("slogdet", a, None, _SLOGDET_PARTS), _SLOGDET_PARTS)
    return SlogdetResult(sign, logabsdet)


_NO_VALUE = object()


def pinv(a: TensorLike, rcond=None, hermitian: bool = False, *, rtol=_NO_VALUE) -> Tensor:
    """The Moore-Penrose pseudo-inverse of each matrix in `a`, as ``np.linalg.pinv``.

    Singular values below ``rcond * max(s)`` are treated as zero. The default cutoff is
    NumPy's: ``rcond=1e-15`` when neither `rcond` nor `rtol` is given, and
    ``max(M, N) * eps`` for ``rtol=None``. The gradient (Golub and Pereyra's) holds
    where the rank is locally constant, so it is meant for full-rank matrices.
    """
    a = stacked(a, square=False)
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(a.shape[-2:]) * np.finfo(a.dtype).eps
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    m, n = a.shape[-2:]
    return _apply("pinv", (a,), (np.asarray(rcond), bool(hermitian)), a.shape[:-2] + (n, m),
                  a.dtype)


def matrix_power(a: TensorLike, n: int) -> Tensor:
    """`a` (``(..., M, M)``) to the integer power `n`, as ``np.linalg.matrix_power``:
    the identity for 0, ``inv(a)`` to ``-n`` for negative `n`, and NumPy's sequence of
    squarings and products (so the same rounding) for positive `n`. Differentiable as a
    composite of matmul (and inv)."""
    a = stacked(a, floating=False)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError("exponent must be an integer") from None
    if n == 0:
        return eye(a.shape[-1], a).broadcast_to(a.shape)
    if n < 0:
        a, n = inv(a), -n
    z = result = None
    while n > 0:  # the bits of n, least significant first (NumPy's order)
        z = a if z is None else z @ z
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else result @ z
    return result
