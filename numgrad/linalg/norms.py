"""``ng.linalg.norm``: NumPy's vector and matrix norms, and the Array API standard's
`vector_norm` and `matrix_norm` (the same computations behind the standard's signatures),
as composites of Tensor operations (the spectral and nuclear norms through `svd`), so
each differentiates with no rule of its own.

Where a norm is 0 its square root (p-th root) has an infinite derivative; the root is
taken of a value kept away from 0 there (`_root`), so the gradient at the zero vector is
0, PyTorch's choice at this kink, rather than NaN.
"""

from __future__ import annotations

import math
import numbers
import operator

from numgrad import dtypes
from numgrad.linalg.decompositions import svd
from numgrad.linalg.stacks import TensorLike, as_tensor, stacked
from numgrad.primitives import _as
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor

__all__ = ["matrix_norm", "norm", "vector_norm"]

_INF = math.inf


def norm(x: TensorLike, ord=None, axis=None, keepdims: bool = False) -> Tensor:  # noqa: A002
    """A vector or matrix norm, as ``np.linalg.norm`` (the same orders, axes and errors).

    Vector orders (`axis` an int, or `x` 1-D): None or 2 (Euclidean), inf, -inf, 0 (the
    count of nonzeros, no gradient), 1, and any other number p (``sum(|x|**p)**(1/p)``).
    Matrix orders (`axis` a pair, or `x` 2-D with `ord` given): None or 'fro', 'nuc'
    (sum of singular values), inf, -inf, 1, -1, 2 (largest singular value), -2
    (smallest). With ``axis=None`` and ``ord=None`` it is the 2-norm of all elements.
    """
    x = as_tensor(x)
    x = _as(x, dtypes.to_float(x.dtype))
    if axis is None:
        if ord is None or (ord in ("f", "fro") and x.ndim == 2) or (ord == 2 and x.ndim == 1):
            out = _root((x * x).sum(), 2)
            return out.reshape((1,) * x.ndim) if keepdims else out
        axis = tuple(range(x.ndim))
    elif not isinstance(axis, tuple):
        try:
            axis = (int(axis),)
        except (TypeError, ValueError):
            raise TypeError("'axis' must be None, an integer or a tuple of integers") from None
    if len(axis) == 1:
        return _vector_norm(x, ord, axis[0], keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError("Improper number of dimensions to norm.")


def vector_norm(x: TensorLike, /, *, axis: int | tuple[int, ...] | None = None,
                keepdims: bool = False, ord: float = 2) -> Tensor:  # noqa: A002
    """The vector norm of `x` along `axis`, as the Array API standard's (and
    ``np.linalg.vector_norm``).

    Parameters
    ----------
    x : Tensor or array_like
        Input; integers are computed in float64.
    axis : int, tuple of ints or None
        The axes whose elements make each vector: None, all of them (`x` flattened); a
        tuple, those axes together.
    keepdims : bool
        Keep the reduced axes, with length 1.
    ord : real number
        ``sum(|x|**ord)**(1/ord)``: 2 (Euclidean), 1, any other p, inf (largest
        magnitude), -inf (smallest) or 0 (the count of nonzeros, no gradient).

    Returns
    -------
    Tensor
        The norms, floating.
    """
    x = as_tensor(x)
    if isinstance(ord, bool) or not isinstance(ord, numbers.Real):
        raise ValueError(f"vector_norm: ord must be a real number (inf, -inf and 0 too), "
                         f"got ord {ord!r}")
    axes = _vector_axes(axis, x.ndim)
    x = _as(x, dtypes.to_float(x.dtype))
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    rest = [d for d in range(x.ndim) if d not in axes]
    order = rest + sorted(axes)
    flat = x if order == sorted(order) else x.transpose(tuple(order))
    flat = flat.reshape(tuple(x.shape[d] for d in rest) + (math.prod(x.shape[d] for d in axes),))
    out = _vector_norm(flat, ord, -1, False)
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
    return out


def _vector_axes(axis, ndim: int) -> tuple[int, ...]:
    """`axis` (None, an int or a tuple) as distinct non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    try:
        axes = tuple(normalize_axis(operator.index(a), ndim)
                     for a in (axis if isinstance(axis, tuple) else (axis,)))
    except TypeError:
        raise TypeError(f"vector_norm: axis must be None, an integer or a tuple of integers, "
                        f"got {axis!r}") from None
    if len(set(axes)) < len(axes):
        raise ValueError(f"vector_norm: repeated axis in axis={axis!r}")
    return axes


def matrix_norm(x: TensorLike, /, *, keepdims: bool = False,
                ord: float | str = "fro") -> Tensor:  # noqa: A002
    """The norm of each matrix in `x` (its last two axes), as the Array API standard's
    (and ``np.linalg.matrix_norm``).

    Parameters
    ----------
    x : Tensor or array_like
        Stacked matrices, at least 2-D; integers are computed in float64.
    keepdims : bool
        Keep the last two axes, with length 1.
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}
        Frobenius; nuclear (sum of singular values); largest (1) or smallest (-1)
        column sum of magnitudes; largest (2) or smallest (-2) singular value; largest
        (inf) or smallest (-inf) row sum of magnitudes.

    Returns
    -------
    Tensor
        The norms, of shape ``x.shape[:-2]`` (``keepdims``: with two trailing 1s).
    """
    x = stacked(x, square=False)
    if not (isinstance(ord, str) and ord in ("fro", "nuc")
            or isinstance(ord, numbers.Real) and not isinstance(ord, bool)
            and ord in (1, -1, 2, -2, _INF, -_INF)):
        raise ValueError(f"matrix_norm: ord must be one of 'fro', 'nuc', 1, -1, 2, -2, inf "
                         f"or -inf, got ord {ord!r}")
    return _matrix_norm(x, ord, (-2, -1), keepdims)


def _vector_norm(x: Tensor, ord, axis: int, keepdims: bool) -> Tensor:  # noqa: A002
    if isinstance(ord, str):
        raise ValueError(f"Invalid norm order '{ord}' for vectors")
    if ord == _INF:
        return x.abs().max(axis, keepdims)
    if ord == -_INF:
        return x.abs().min(axis, keepdims)
    if ord == 0:
        return (x != 0).astype(x.dtype).sum(axis, keepdims)
    if ord == 1:
        return x.abs().sum(axis, keepdims)
    if ord is None or ord == 2:
        return _root((x * x).sum(axis, keepdims), 2)
    return _root((x.abs() ** ord).sum(axis, keepdims), ord)


def _matrix_norm(x: Tensor, ord, axis: tuple, keepdims: bool) -> Tensor:  # noqa: A002
    row, col = (normalize_axis(a, x.ndim) for a in axis)
    if row == col:
        raise ValueError("Duplicate axes given.")
    if ord in (2, -2, "nuc"):
        rest = [d for d in range(x.ndim) if d not in (row, col)]
        s = svd(x.transpose((*rest, row, col)), compute_uv=False)
        out = s.max(-1) if ord == 2 else s.min(-1) if ord == -2 else s.sum(-1)
    elif ord in (1, -1):  # sums down the columns, then the extreme column
        sums = x.abs().sum(row)
        out = sums.max(col - (col > row)) if ord == 1 else sums.min(col - (col > row))
    elif ord in (_INF, -_INF):  # sums along the rows, then the extreme row
        sums = x.abs().sum(col)
        out = sums.max(row - (row > col)) if ord == _INF else sums.min(row - (row > col))
    elif ord in (None, "fro", "f"):
        out = _root((x * x).sum((row, col)), 2)
    else:
        raise ValueError("Invalid norm order for matrices.")
    if keepdims:
        shape = list(x.shape)
        shape[row] = shape[col] = 1
        out = out.reshape(tuple(shape))
    return out


def _root(s: Tensor, p) -> Tensor:
    """``s ** (1 / p)`` (``sqrt`` for p = 2, as NumPy), with a zero gradient where s is 0."""
    zero = s == 0
    safe = s.where(~zero, 1)
    return (safe.sqrt() if p == 2 else safe ** (1 / p)).where(~zero, 0)
