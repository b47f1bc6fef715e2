"""The Array API standard's ``linalg`` functions that numgrad has at top level:
`diagonal` and `trace` over the last two axes (``ng.diagonal`` and ``ng.trace`` keep
NumPy's axes 0 and 1), and `vecdot` and `matrix_transpose`, the same functions as
``ng.vecdot`` and ``ng.matrix_transpose``.

Not in `numgrad.linalg.products`: ``numgrad`` exports that module's names at top level.
"""

from __future__ import annotations

from numgrad.linalg.stacks import TensorLike, as_tensor
from numgrad.numpy.standard import matrix_transpose, vecdot
from numgrad.tensor import Tensor

__all__ = ["diagonal", "matrix_transpose", "trace", "vecdot"]


def _matrices(x: TensorLike, name: str) -> Tensor:
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"{name}: x needs at least two dimensions (its matrices are the last "
                         f"two axes), got shape {x.shape}")
    return x


def diagonal(x: TensorLike, /, *, offset: int = 0) -> Tensor:
    """The diagonal of each matrix in `x` (its last two axes), as the Array API standard's
    (and ``np.linalg.diagonal``): ``x.diagonal(offset, -2, -1)``.

    Parameters
    ----------
    x : Tensor or array_like
        Stacked matrices, at least 2-D.
    offset : int
        The diagonal: 0 the main one, positive above it, negative below.

    Returns
    -------
    Tensor
        Shape ``x.shape[:-2] + (length,)``.
    """
    return _matrices(x, "diagonal").diagonal(offset, -2, -1)


def trace(x: TensorLike, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sum of the diagonal of each matrix in `x` (its last two axes), as the Array
    API standard's (and ``np.linalg.trace``): ``x.trace(offset, -2, -1, dtype)``.

    Parameters
    ----------
    x : Tensor or array_like
        Stacked matrices, at least 2-D.
    offset : int
        The diagonal: 0 the main one, positive above it, negative below.
    dtype : dtype or None
        The sum's dtype; None: `x`'s for floating `x`, int64 for bools and signed
        integers, uint64 for unsigned ones (NumPy's).

    Returns
    -------
    Tensor
        Shape ``x.shape[:-2]``.
    """
    return _matrices(x, "trace").trace(offset, -2, -1, dtype=dtype)
