"""``scipy.linalg``'s Cholesky factor and triangular solves."""

from __future__ import annotations

from numgrad import linalg as _linalg
from numgrad.linalg.stacks import eye
from numgrad.numpy.creation import as_tensor
from numgrad.numpy.joining import _tensors
from numgrad.tensor import Tensor

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular"]


def cholesky(a, lower: bool = False) -> Tensor:
    """The Cholesky factor of the symmetric positive definite `a`: upper (``U.T @ U
    == a``) unless `lower`, as SciPy's (NumPy's is lower)."""
    factor = _linalg.cholesky(as_tensor(a))
    return factor if lower else factor.mT


def cho_factor(a, lower: bool = False) -> tuple[Tensor, bool]:
    """``(c, lower)`` for `cho_solve`: `c` is `cholesky`'s factor (its other triangle
    is zeros, where SciPy's holds whatever `a` held)."""
    return cholesky(a, lower), lower


def cho_solve(c_and_lower: tuple, b) -> Tensor:
    """The solution `x` of ``a @ x = b`` from ``(c, lower) = cho_factor(a)``."""
    c, lower = c_and_lower
    y = solve_triangular(c, b, trans=0 if lower else 1, lower=lower)
    return solve_triangular(c, y, trans=1 if lower else 0, lower=lower)


def solve_triangular(a, b, trans=0, lower: bool = False,
                     unit_diagonal: bool = False) -> Tensor:
    """The solution `x` of ``a @ x = b`` (``trans`` 1, ``'T'`` or ``'C'``: ``a.T @ x =
    b``) reading only `a`'s lower (`lower`) or upper triangle, its diagonal taken as
    ones with `unit_diagonal`. The gradient reaches only the triangle read."""
    if trans not in (0, 1, 2, "N", "T", "C"):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got "
                         f"{trans!r}")
    a, b = _tensors([a, b], "solve_triangular")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"solve_triangular: a must be a square matrix, got shape {a.shape}")
    t = a.tril(-1 if unit_diagonal else 0) if lower else a.triu(1 if unit_diagonal else 0)
    if unit_diagonal:
        t = t + eye(a.shape[-1], t)
    return _linalg.solve(t.mT if trans in (1, 2, "T", "C") else t, b)
