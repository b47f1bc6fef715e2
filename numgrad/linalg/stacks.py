"""What the ``ng.linalg`` modules share: NumPy's checks on stacked matrices, the dtype
they compute in, and library primitives whose several outputs are packed in one array.

A decomposition has several outputs (``eigh``'s eigenvalues and eigenvectors), the
engine's primitives one. So a decomposition is one `numgrad.ops.LIBRARY` row whose
``ref`` returns its outputs flattened and joined along the last axis (`pack`), and the
outputs are slices of that one tensor (`unpack`). The gradients of all outputs then meet
in the row's one VJP, which slices the incoming gradient the same way; an output that was
not used contributes zeros there.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from numgrad import dtypes
from numgrad.lazy import fixed
from numgrad.ops import LIBRARY, Primitive, register
from numgrad.primitives import _apply, _as
from numgrad.tensor import Tensor

LinAlgError = np.linalg.LinAlgError
Shape = tuple[int, ...]
#: what the ``ng.linalg`` functions take: a Tensor, or data NumPy reads as an array
TensorLike = Tensor | npt.ArrayLike


def as_tensor(a: TensorLike) -> Tensor:
    """`a` itself if it is a Tensor, else a new one holding it (NumPy's array_like)."""
    return a if isinstance(a, Tensor) else Tensor(a)


def stacked(a: TensorLike, square: bool = True, floating: bool = True) -> Tensor:
    """`a` as a tensor of stacked matrices, floating unless told otherwise, with NumPy's
    checks and messages (raised at the call: they need shapes only)."""
    a = as_tensor(a)
    if a.ndim < 2:
        raise LinAlgError(
            f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if square and a.shape[-1] != a.shape[-2]:
        raise LinAlgError("Last 2 dimensions of the array must be square")
    return _as(a, dtypes.to_float(a.dtype)) if floating else a


def mT(x: Tensor) -> Tensor:
    """The matrices of `x` transposed (its last two axes swapped)."""
    return x.swapaxes(-1, -2)


def eye(n: int, like: Tensor) -> Tensor:
    """The n x n identity, of `like`'s dtype and on its device."""
    dtype = like.dtype
    return type(like)._wrap(fixed(("eye", n, dtype), lambda: np.eye(n, dtype=dtype), like.device))


def safe_reciprocal(x: Tensor) -> Tensor:
    """``1 / x``, and 0 where x is 0 (a degenerate spectrum's gaps, zero singular values).

    The inner ``where`` keeps the division away from 0, so neither value nor gradient is
    ever infinite there and a zero incoming gradient stays zero.
    """
    zero = x == 0
    return (1 / x.where(~zero, 1)).where(~zero, 0)


def gap_reciprocals(w: Tensor) -> Tensor:
    """``F[i, j] = 1 / (w[j] - w[i])`` for each vector of `w`, 0 where ``w[i] == w[j]``
    (the diagonal, and exactly repeated values)."""
    return safe_reciprocal(w[..., None, :] - w[..., :, None])


# ---- library primitives with several outputs ----------------------------------------

def define(name: str, ref, vjp) -> None:
    """Register library primitive `name`: ``ref(array, arg)`` is a NumPy function."""
    register(Primitive(name, LIBRARY, vjp=vjp, ref=ref))


def pack(arrays, batch_ndim: int) -> np.ndarray:
    """`arrays` (sharing their first `batch_ndim` dimensions) flattened past those and
    joined along the last axis."""
    return np.concatenate(
        [np.reshape(a, a.shape[:batch_ndim] + (-1,)) for a in arrays], axis=-1)


def packed(name: str, a: Tensor, arg, parts: list[Shape]) -> Tensor:
    """Apply library primitive `name` to the stacked matrices `a`: one tensor holding the
    outputs of trailing shapes `parts`, packed by `pack`."""
    size = sum(math.prod(p) for p in parts)
    return _apply(name, (a,), arg, a.shape[:-2] + (size,), a.dtype)


def unpack(t: Tensor, parts: list[Shape]) -> list[Tensor]:
    """The outputs packed in `t` (also a gradient with extra leading dimensions)."""
    out, start = [], 0
    for p in parts:
        stop = start + math.prod(p)
        out.append(t[..., start:stop].reshape(t.shape[:-1] + p))
        start = stop
    return out
