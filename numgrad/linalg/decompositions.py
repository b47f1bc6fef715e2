"""``ng.linalg`` decompositions: cholesky, eigh, svd and qr; the Array API standard's
svdvals, eigvalsh and matrix_rank are read off svd and eigh.

Each is one library primitive whose ``ref`` is NumPy's function (LAPACK's results, so
eigenvector, singular-vector and Q/R signs are NumPy's); several outputs are packed in
one array and sliced out (`numgrad.linalg.stacks`), so their gradients meet in one VJP.
The rules are the standard ones (PyTorch's and JAX's), written with Tensor operations:

* cholesky and eigh read one triangle of a matrix they take to be symmetric; their
  gradients are the symmetric ones (for ``A`` and ``A^T`` moved together);
* eigh and svd divide by gaps in the spectrum: where two eigenvalues (singular values)
  are exactly equal the term is left out (0), which is right when the loss does not
  depend on the ill-defined vectors and meaningless otherwise;
* vectors that are an arbitrary basis (svd's ``full_matrices=True`` columns beyond
  ``min(M, N)``, qr's ``mode='complete'`` columns beyond N) get no gradient, as PyTorch.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from numgrad.linalg.solvers import solve_stacked
from numgrad.linalg.stacks import (
    TensorLike,
    as_tensor,
    define,
    eye,
    gap_reciprocals,
    mT,
    pack,
    packed,
    safe_reciprocal,
    stacked,
    unpack,
)
from numgrad.numpy.joining import concatenate
from numgrad.primitives import _apply
from numgrad.tensor import Tensor

__all__ = ["EighResult", "QRResult", "SVDResult", "cholesky", "eigh", "eigvalsh",
           "matrix_rank", "qr", "svd", "svdvals"]


class EighResult(NamedTuple):
    """``eigh``'s result, as NumPy's."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class SVDResult(NamedTuple):
    """``svd``'s result, as NumPy's: ``a == U @ (S[..., None] * Vh)``."""

    U: Tensor
    S: Tensor
    Vh: Tensor


class QRResult(NamedTuple):
    """``qr``'s result, as NumPy's."""

    Q: Tensor
    R: Tensor


def _symmetric(x: Tensor) -> Tensor:
    return (x + mT(x)) * 0.5


# ---- cholesky --------------------------------------------------------------------

def _cholesky_vjp(g, out, a, upper):
    # Murray's rule (arXiv:1602.07527), as PyTorch writes it:
    # gA = L^-T Phi(L^T gL) L^-1, Phi(X) = (tril(X) + tril(X, -1)^T) / 2.
    lower, gl = (mT(out), mT(g)) if upper else (out, g)
    x = (mT(lower) @ gl).tril()
    phi = (x + mT(x.tril(-1))) * 0.5
    left = solve_stacked(mT(lower), phi)  # L^-T Phi
    return (mT(solve_stacked(mT(lower), mT(left))),)  # (L^-T Phi) L^-1


define("cholesky", lambda a, upper: np.linalg.cholesky(a, upper=upper), _cholesky_vjp)


def cholesky(a: TensorLike, /, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of each symmetric positive-definite matrix in `a`, as
    ``np.linalg.cholesky``: lower ``L`` with ``a = L @ L.T`` (``upper=True``: ``L.T``).

    Only one triangle of `a` is read. A matrix that is not positive definite raises
    ``np.linalg.LinAlgError`` when the value is computed. The gradient is Murray's
    symmetric one.
    """
    a = stacked(a)
    return _apply("cholesky", (a,), bool(upper), a.shape, a.dtype)


# ---- eigh ------------------------------------------------------------------------

def _eigh_parts(n: int) -> list[tuple[int, ...]]:
    return [(n,), (n, n)]


def _eigh_vjp(g, out, a, uplo):
    # gA = sym(V (diag(gw) + F o (V^T gV)) V^T), F[i, j] = 1 / (w[j] - w[i]).
    n = a.shape[-1]
    w, v = unpack(out, _eigh_parts(n))
    gw, gv = unpack(g, _eigh_parts(n))
    inner = eye(n, a) * gw[..., None, :] + gap_reciprocals(w) * (mT(v) @ gv)
    return (_symmetric(v @ inner @ mT(v)),)


define("eigh", lambda a, uplo: pack(np.linalg.eigh(a, UPLO=uplo), a.ndim - 2), _eigh_vjp)


def eigh(a: TensorLike, UPLO: str = "L") -> EighResult:  # noqa: N803 - NumPy's name
    """Eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix in
    `a`, as ``np.linalg.eigh`` (the same LAPACK call, so the same vector signs).

    Only the `UPLO` triangle is read. The gradient is the symmetric one (PyTorch's and
    JAX's); terms of exactly repeated eigenvalues are left out (see the module notes).
    """
    a = stacked(a)
    uplo = str(UPLO).upper()
    if uplo not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    parts = _eigh_parts(a.shape[-1])
    return EighResult(*unpack(packed("eigh", a, uplo, parts), parts))


def eigvalsh(x: TensorLike, /) -> Tensor:
    """The eigenvalues (ascending) of each symmetric matrix in `x`, as the Array API
    standard's (and ``np.linalg.eigvalsh``): ``eigh(x).eigenvalues``.

    Parameters
    ----------
    x : Tensor or array_like
        Stacked symmetric matrices, at least 2-D; only the lower triangle is read.

    Returns
    -------
    Tensor
        Shape ``x.shape[:-1]``. Differentiable (`eigh`'s symmetric rule).
    """
    return eigh(x).eigenvalues


# ---- svd -------------------------------------------------------------------------

def _svd_parts(m: int, n: int, full: bool) -> list[tuple[int, ...]]:
    k = min(m, n)
    return [(m, m if full else k), (k,), (n if full else k, n)]


def _svd_vjp(g, out, a, arg):
    # HIPS autograd's rule (Townsend's derivation) for U, s, Vh of the reduced SVD;
    # f[i, j] = 1 / (s[j]^2 - s[i]^2).
    full, _ = arg
    m, n = a.shape[-2:]
    k = min(m, n)
    parts = _svd_parts(m, n, full)
    u, s, vh = unpack(out, parts)
    gu, gs, gvh = unpack(g, parts)
    if full:  # the columns beyond k are an arbitrary basis: no gradient reaches them
        u, vh, gu, gvh = u[..., :k], vh[..., :k, :], gu[..., :k], gvh[..., :k, :]
    f = gap_reciprocals(s * s)
    utgu, vtgv = mT(u) @ gu, vh @ mT(gvh)
    inner = ((f * (utgu - mT(utgu))) * s[..., None, :] + eye(k, a) * gs[..., :, None]
             + s[..., :, None] * (f * (vtgv - mT(vtgv))))
    ga = u @ inner @ vh
    s_inv = safe_reciprocal(s)
    if m < n:
        ga = ga + (u * s_inv[..., None, :]) @ gvh @ (eye(n, a) - mT(vh) @ vh)
    if m > n:
        ga = ga + (eye(m, a) - u @ mT(u)) @ gu @ (vh * s_inv[..., :, None])
    return (ga,)


def _svd_ref(a, arg):
    full, hermitian = arg
    return pack(np.linalg.svd(a, full_matrices=full, hermitian=hermitian), a.ndim - 2)


define("svd", _svd_ref, _svd_vjp)


def svd(a: TensorLike, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False) -> SVDResult | Tensor:
    """Singular value decomposition ``a = U @ (S[..., None] * Vh)`` of each matrix in
    `a`, as ``np.linalg.svd`` (the same LAPACK call, so the same vector signs).

    With ``compute_uv=False`` only the singular values ``S``; their gradient
    ``U diag(gS) Vh`` still needs the vectors, so they are computed anyway. With
    ``full_matrices=True`` the columns of U (rows of Vh) beyond ``min(M, N)`` get no
    gradient; terms of exactly repeated singular values are left out.
    """
    a = stacked(a, square=False)
    m, n = a.shape[-2:]
    full = bool(full_matrices) and bool(compute_uv)
    parts = _svd_parts(m, n, full)
    u, s, vh = unpack(packed("svd", a, (full, bool(hermitian)), parts), parts)
    return SVDResult(u, s, vh) if compute_uv else s


def svdvals(x: TensorLike, /) -> Tensor:
    """The singular values of each matrix in `x`, descending, as the Array API standard's
    (and ``np.linalg.svdvals``): ``svd(x, compute_uv=False)``.

    Parameters
    ----------
    x : Tensor or array_like
        Stacked matrices, at least 2-D, of shape ``(..., M, N)``.

    Returns
    -------
    Tensor
        Shape ``(..., min(M, N))``. Differentiable (`svd`'s rule).
    """
    return svd(x, compute_uv=False)


def matrix_rank(x: TensorLike, /, *, rtol: float | TensorLike | None = None) -> Tensor:
    """The rank of each matrix in `x`: the count of its singular values above
    ``rtol * (its largest singular value)``, as the Array API standard's.

    Parameters
    ----------
    x : Tensor or array_like
        Stacked matrices, at least 2-D, of shape ``(..., M, N)``.
    rtol : float, Tensor, array_like or None
        Relative tolerance: a number, or one per matrix (broadcast against
        ``x.shape[:-2]``). None: ``max(M, N) * eps`` of `x`'s floating dtype.

    Returns
    -------
    Tensor
        int64 counts of shape ``x.shape[:-2]``. They read the values only: no gradient.
    """
    x = stacked(x, square=False)
    s = svd(x.detach(), compute_uv=False)
    if rtol is None:
        rtol = max(x.shape[-2:]) * float(np.finfo(x.dtype).eps)
    if not isinstance(rtol, numbers.Real):
        rtol = as_tensor(rtol).detach()[..., None]
    return (s > s.max(-1, keepdims=True) * rtol).sum(-1)


# ---- qr --------------------------------------------------------------------------

def _qr_parts(m: int, n: int, mode: str) -> list[tuple[int, ...]]:
    k = m if mode == "complete" else min(m, n)
    return [(m, k), (k, n)]


def _qr_square_vjp(q, r, gq, gr):
    # m >= n (R square): gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q, where
    # copyltu mirrors the lower triangle onto the upper (PyTorch's and autograd's rule).
    mm = r @ mT(gr) - mT(gq) @ q
    b = gq + q @ (mm.tril() + mT(mm.tril(-1)))
    return mT(solve_stacked(r, mT(b)))


def _qr_vjp(g, out, a, mode):
    m, n = a.shape[-2:]
    parts = _qr_parts(m, n, mode)
    q, r = unpack(out, parts)
    gq, gr = unpack(g, parts)
    if m > n and mode == "complete":  # Q's columns beyond n are an arbitrary basis
        q, r, gq, gr = q[..., :n], r[..., :n, :], gq[..., :n], gr[..., :n, :]
    if m >= n:
        return (_qr_square_vjp(q, r, gq, gr),)
    # m < n: A = [X | Y], R = [U | V] with X = Q U (a square QR) and Y = Q V.
    y, gu, gv = a[..., m:], gr[..., :m], gr[..., m:]
    gx = _qr_square_vjp(q, r[..., :m], gq + y @ mT(gv), gu)
    return (concatenate([gx, q @ gv], axis=-1),)


define("qr", lambda a, mode: pack(np.linalg.qr(a, mode=mode), a.ndim - 2), _qr_vjp)


def qr(a: TensorLike, mode: str = "reduced") -> QRResult | Tensor:
    """QR decomposition of each matrix in `a`, as ``np.linalg.qr``: ``mode='reduced'``
    (Q ``(..., M, K)``, R ``(..., K, N)``, K = min(M, N)), ``'complete'`` (Q
    ``(..., M, M)``, R ``(..., M, N)``) or ``'r'`` (R alone). ``'raw'`` (LAPACK's
    Householder reflectors) is not supported.
    """
    a = stacked(a, square=False)
    if mode == "raw":
        raise NotImplementedError("qr: mode='raw' (Householder reflectors) is not supported; "
                                  "use 'reduced', 'complete' or 'r'")
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"Unrecognized mode '{mode}'")
    kind = "complete" if mode == "complete" else "reduced"
    parts = _qr_parts(*a.shape[-2:], kind)
    q, r = unpack(packed("qr", a, kind, parts), parts)
    return r if mode == "r" else QRResult(q, r)

