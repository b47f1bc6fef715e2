"""The composites behind PyTorch's Tensor method names (`numgrad.methods`): torch's
indexing (``gather``, ``scatter``, ``index_add``...), splitting, sorting selections and
the few functions whose signature or result differs from NumPy's (``svd``'s ``V``,
``norm``, ``cross``'s default axis). Each is built from numgrad operations, so it fuses
and differentiates as they do.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from numgrad import linalg
from numgrad.linalg.products import cross as _cross
from numgrad.numpy.assembly import array_split, take_along_axis
from numgrad.numpy.elementwise import where
from numgrad.numpy.searching import histogram
from numgrad.primitives import _shape_arg
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor


class MinMax(NamedTuple):
    min: Tensor
    max: Tensor


class ValuesIndices(NamedTuple):
    values: Tensor
    indices: Tensor


class SVD(NamedTuple):
    U: Tensor
    S: Tensor
    V: Tensor


def axes_of(dim):
    """torch's ``dim`` as NumPy's ``axis``: None, an int or a tuple (``()`` is all)."""
    return None if dim is None or dim == () else (tuple(dim) if isinstance(dim, list) else dim)


def scaled_sum(x, product, beta=1, alpha=1):
    """``beta * x + alpha * product``, torch's ``add*`` family (``beta=0`` ignores `x`)."""
    scaled = product if alpha == 1 else alpha * product
    return scaled if beta == 0 else (x if beta == 1 else beta * x) + scaled


def _along(x: Tensor, dim: int, index) -> tuple:
    """The integer-array key that puts ``index`` along `dim` and each other axis's
    positions along their own: torch's ``scatter``/``gather`` addressing, for an index of
    `x`'s rank no larger than `x` (as torch asks)."""
    index = np.asarray(index.numpy() if isinstance(index, Tensor) else index, np.int64)
    dim = normalize_axis(dim, x.ndim)
    grid = np.indices(index.shape, sparse=True)
    return tuple(index if d == dim else grid[d] for d in range(x.ndim))


def _at(x: Tensor, dim: int, item) -> tuple:
    """The key of `item` (an index, a slice, an index array) along axis `dim` of `x`."""
    return (slice(None),) * normalize_axis(dim, x.ndim) + (item,)


def _index_key(x: Tensor, dim: int, index) -> tuple:
    """``x[..., index, ...]`` along `dim` as a key (``index_copy``, ``index_add``)."""
    return _at(x, dim, index.numpy() if isinstance(index, Tensor) else np.asarray(index))


def _fitted(src, key: tuple):
    """`src` cut to the shape of the scatter `key` (torch lets a source be larger)."""
    shape = np.broadcast_shapes(*(k.shape for k in key))
    if not isinstance(src, Tensor) or src.shape == shape:
        return src
    return src[tuple(slice(0, n) for n in shape)]


def _split_sizes(n: int, sizes) -> list[int]:
    if isinstance(sizes, int):
        if sizes <= 0:
            raise ValueError(f"split: split_size must be positive, got {sizes}")
        return [min(sizes, n - i) for i in range(0, n, sizes)] or [0]
    sizes = list(sizes)
    if sum(sizes) != n:
        raise ValueError(f"split: sizes {sizes} do not add up to the axis length {n}")
    return sizes


def split(self, split_size_or_sections, dim: int = 0) -> tuple[Tensor, ...]:
    """Pieces of ``split_size`` along `dim` (the last may be shorter), or of the given
    sizes: torch's ``split`` (``ng.split`` is NumPy's, which takes the number of pieces)."""
    sizes = _split_sizes(self.shape[normalize_axis(dim, self.ndim)], split_size_or_sections)
    return tuple(array_split(self, np.cumsum(sizes)[:-1].tolist(), axis=dim))


def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """At most `chunks` pieces of ``ceil(n / chunks)`` along `dim` (torch's ``chunk``)."""
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {chunks}")
    n = self.shape[normalize_axis(dim, self.ndim)]
    return split(self, max(1, math.ceil(n / chunks)), dim)


def expand(self, *sizes) -> Tensor:
    """Broadcast to `sizes`, where ``-1`` keeps a size (torch's ``expand``)."""
    sizes = _shape_arg(sizes)
    lead = len(sizes) - self.ndim
    if lead < 0:
        raise ValueError(f"expand: {len(sizes)} sizes for a tensor of {self.ndim} dimensions")
    return self.broadcast_to(tuple(
        self.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(sizes)))


def view(self, *shape) -> Tensor:
    """This tensor in `shape` (torch's ``view``: ``reshape``; numgrad shows no aliasing
    views, so a later in-place change of either leaves the other as it was)."""
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        raise TypeError("view(dtype) reinterprets bytes, which numgrad does not do; "
                        "astype(dtype) converts the values")
    return self.reshape(_shape_arg(shape))


def t(self) -> Tensor:
    """The transpose of a tensor of at most 2 dimensions (torch's ``t``)."""
    if self.ndim > 2:
        raise ValueError(f"t() needs at most 2 dimensions; this tensor has shape {self.shape}")
    return self.transpose()


def narrow(self, dim: int, start: int, length: int) -> Tensor:
    start = start + self.shape[normalize_axis(dim, self.ndim)] if start < 0 else start
    return self[_at(self, dim, slice(start, start + length))]


def select(self, dim: int, index: int) -> Tensor:
    return self[_at(self, dim, index)]


def unflatten(self, dim: int, sizes) -> Tensor:
    dim = normalize_axis(dim, self.ndim)
    return self.reshape(self.shape[:dim] + tuple(sizes) + self.shape[dim + 1:])


def gather(self, dim: int, index) -> Tensor:
    """``out[i][j] = self[index[i][j]][j]`` for ``dim=0`` (torch's ``gather``): `index` has
    this tensor's rank and is no larger along the other axes."""
    return self[_along(self, dim, index)]


def scatter(self, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy with ``src`` (or the scalar `value`) written at `index` along `dim`
    (torch's ``scatter``; ``reduce='add'`` adds, as ``scatter_add``)."""
    if reduce not in (None, "add"):
        raise ValueError(f"scatter: reduce must be None or 'add', got {reduce!r}")
    if reduce == "add":
        return scatter_add(self, dim, index, src if src is not None else value)
    key = _along(self, dim, index)
    return self.index_put(key, _fitted(value if src is None else src, key))


def scatter_add(self, dim: int, index, src) -> Tensor:
    """This tensor plus `src` added at `index` along `dim`, repeats summing (torch's
    ``scatter_add``)."""
    key = _along(self, dim, index)
    return self + _fitted(src, key)._index_add(key, self.shape)


def index_add(self, dim: int, index, source, *, alpha=1) -> Tensor:
    key = _index_key(self, dim, index)
    return self + scaled_sum(0, source, 0, alpha)._index_add(key, self.shape)


def index_copy(self, dim: int, index, source) -> Tensor:
    return self.index_put(_index_key(self, dim, index), source)


def index_fill(self, dim: int, index, value) -> Tensor:
    return self.index_put(_index_key(self, dim, index), value)


def masked_fill(self, mask, value) -> Tensor:
    """`value` where `mask` holds, else this tensor, in this tensor's dtype."""
    return where(mask, value, self).astype(self.dtype)


def masked_select(self, mask) -> Tensor:
    mask = mask if isinstance(mask, Tensor) else Tensor(mask)
    shape = np.broadcast_shapes(self.shape, mask.shape)
    return self.broadcast_to(shape)[mask.broadcast_to(shape)]


def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):  # noqa: A002
    """The `k` largest (smallest) values along `dim` and their indices, largest first."""
    _check_k("topk", k, 0, self.shape[normalize_axis(dim, self.ndim)])
    order = self.argsort(axis=dim, descending=largest, stable=True)
    indices = order[_at(self, dim, slice(0, k))]
    return ValuesIndices(take_along_axis(self, indices, dim), indices)


def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False):
    """The `k`-th smallest value along `dim` (from 1) and its index."""
    axis = normalize_axis(dim, self.ndim)
    _check_k("kthvalue", k, 1, self.shape[axis])
    order = self.argsort(axis=axis, stable=True)
    indices = order[_at(self, axis, slice(k - 1, k))]
    values = take_along_axis(self, indices, axis)
    if not keepdim:
        indices, values = indices.squeeze(axis), values.squeeze(axis)
    return ValuesIndices(values, indices)


def _check_k(name: str, k: int, low: int, n: int) -> None:
    if not low <= k <= n:
        raise ValueError(f"{name}: k = {k} is outside {low}..{n}, the axis' length {n}")


def norm(self, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """torch's ``norm``: a vector p-norm over `dim` (all elements when None; ``'fro'``
    is the 2-norm), ``'nuc'`` the nuclear norm of matrices over `dim`."""
    x = self if dtype is None else self.astype(dtype)
    if p == "nuc":
        return linalg.matrix_norm(x, ord="nuc", keepdims=keepdim) if dim is None else \
            linalg.norm(x, "nuc", axis=tuple(dim), keepdims=keepdim)
    return linalg.vector_norm(x, axis=axes_of(dim), keepdims=keepdim,
                              ord=2 if p == "fro" else p)


def cross(self, other, dim: int | None = None) -> Tensor:
    """The cross product along `dim` (torch's rule when None: the first axis of length 3)."""
    if dim is None:
        dim = next((d for d, n in enumerate(np.broadcast_shapes(self.shape, other.shape))
                    if n == 3), None)
        if dim is None:
            raise ValueError("cross: no axis of length 3")
    return _cross(self, other, axis=dim)


def logdet(self) -> Tensor:
    """``log(det)``: NaN where the determinant is negative, -inf where it is 0."""
    sign, logabsdet = linalg.slogdet(self)
    return where(sign < 0, math.nan, logabsdet)


def svd(self, some: bool = True, compute_uv: bool = True) -> SVD:
    """``(U, S, V)`` with ``self = U @ diag(S) @ V.mT`` (torch's ``Tensor.svd``; NumPy's
    gives ``Vh``)."""
    u, s, vh = linalg.svd(self, full_matrices=not some)
    return SVD(u, s, vh.mT) if compute_uv else SVD(u.zeros_like(), s, vh.zeros_like())


def histc(self, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002
    """Counts in `bins` equal bins between `min` and `max` (the data's range when both
    are 0), values outside left out; in this tensor's dtype."""
    lo, hi = (min, max) if (min, max) != (0, 0) else (self.min().item(), self.max().item())
    values = self.ravel()
    inside = values.numpy()
    counts, _ = histogram(values[(inside >= lo) & (inside <= hi)], bins, range=(lo, hi))
    return counts.astype(self.dtype)


def div(self, other, *, rounding_mode=None) -> Tensor:
    """``self / other``, rounded down (``'floor'``) or toward zero (``'trunc'``), in the
    dtype of the division's operands (torch's ``div``)."""
    if rounding_mode is None:
        return self / other
    if rounding_mode == "floor":
        return self // other
    if rounding_mode != "trunc":
        raise ValueError(f"div: rounding_mode must be None, 'floor' or 'trunc', got "
                         f"{rounding_mode!r}")
    floor = self // other
    return where((floor < 0) & (floor * other != self), floor + 1, floor)


def renorm(self, p, dim: int, maxnorm) -> Tensor:
    """Each slice along `dim` scaled down to p-norm `maxnorm` where its norm is larger
    (torch's ``renorm``, with its 1e-7 in the divisor)."""
    dim = normalize_axis(dim, self.ndim)
    rest = tuple(d for d in range(self.ndim) if d != dim)
    norms = linalg.vector_norm(self, axis=rest, keepdims=True, ord=p)
    return self * where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)


def prelu(self, weight) -> Tensor:
    """``max(0, x) + weight * min(0, x)``, one weight per channel (axis 1) or one for all."""
    if weight.size > 1 and self.ndim > 1:
        weight = weight.reshape((-1,) + (1,) * (self.ndim - 2))
    return where(self >= 0, self, weight * self)


def unfold(self, dimension: int, size: int, step: int) -> Tensor:
    """The windows of `size` every `step` along `dimension`, that axis counting windows
    and a new last axis running through each (torch's ``unfold``)."""
    dim = normalize_axis(dimension, self.ndim)
    if not 0 <= size <= self.shape[dim] or step <= 0:
        raise ValueError(f"unfold: size {size} must be in 0..{self.shape[dim]} (the axis' "
                         f"length) and step {step} positive")
    starts = np.arange(0, self.shape[dim] - size + 1, step)
    windows = self.take(starts[:, None] + np.arange(size), axis=dim)
    return windows.moveaxis(dim + 1, -1)


def _diagonal_key(n1: int, n2: int, offset: int) -> tuple:
    count = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    i = np.arange(count)
    return (Ellipsis, i - min(offset, 0), i + max(offset, 0))


def diagonal_scatter(self, src, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """A copy with `src` written on the diagonal that ``diagonal(offset, dim1, dim2)``
    reads (its last axis running along the diagonal)."""
    moved = self.moveaxis((dim1, dim2), (-2, -1))
    key = _diagonal_key(*moved.shape[-2:], offset)
    return moved.index_put(key, src).moveaxis((-2, -1), (dim1, dim2))


def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices with the last axis of this tensor on their `offset` diagonal, zeros
    elsewhere, the two new axes at `dim1` and `dim2` of the result."""
    n = self.shape[-1] + abs(offset)
    zeros = Tensor(np.zeros(self.shape[:-1] + (n, n)), self.dtype, self.device)
    embedded = diagonal_scatter(zeros, self, offset, -2, -1)
    return embedded.moveaxis((-2, -1), (dim1, dim2))


def select_scatter(self, src, dim: int, index: int) -> Tensor:
    return self.index_put(_at(self, dim, index), src)


def slice_scatter(self, src, dim: int = 0, start=None, end=None, step: int = 1) -> Tensor:
    return self.index_put(_at(self, dim, slice(start, end, step)), src)


def masked_scatter(self, mask, source) -> Tensor:
    """A copy with the first elements of `source`, in order, where `mask` holds."""
    mask = np.broadcast_to(mask.numpy() if isinstance(mask, Tensor) else mask, self.shape)
    return self.index_put(mask, source.ravel()[:int(mask.sum())])


def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """The values (slices along `dim`) that differ from the one before, with the inverse
    that rebuilds this tensor and the run lengths on request."""
    x = self.ravel() if dim is None else self.moveaxis(dim, 0)
    values = x.numpy().reshape(x.shape[0], -1)
    first = np.r_[True, (values[1:] != values[:-1]).any(axis=1)] if len(values) else \
        np.zeros(0, bool)
    starts = np.flatnonzero(first)
    unique = x[starts] if dim is None else x[starts].moveaxis(0, dim)
    extra = []
    if return_inverse:
        inverse = np.cumsum(first) - 1
        extra.append(Tensor(inverse.reshape(self.shape) if dim is None else inverse,
                            device=self.device))
    if return_counts:
        extra.append(Tensor(np.diff(np.r_[starts, len(values)]), device=self.device))
    return (unique, *extra) if extra else unique


def fill_diagonal_(self, fill_value, wrap: bool = False) -> Tensor:
    """Set the main diagonal to `fill_value`, in place (NumPy's ``fill_diagonal``: every
    axis of one length, or a matrix; a tall one restarts every ``cols + 1`` rows if
    `wrap`)."""
    if self.ndim < 2 or (self.ndim > 2 and len(set(self.shape)) > 1):
        raise ValueError(f"fill_diagonal_ needs a matrix or all axes of one length, got "
                         f"shape {self.shape}")
    flat = np.arange(0, self.size, np.cumprod(self.shape[:0:-1]).sum() + 1)
    if self.ndim == 2 and not wrap:
        flat = flat[:min(self.shape)]
    self.put(flat, fill_value)
    return self


def put_(self, index, source, accumulate: bool = False) -> Tensor:
    """Write `source` at the flat `index` in place, or add it there if `accumulate`
    (repeats summing): torch's ``put_``."""
    if not accumulate:
        self.put(index, source)
        return self
    flat = np.asarray(index.numpy() if isinstance(index, Tensor) else index, np.int64).ravel()
    flat = np.where(flat < 0, flat + self.size, flat)
    added = source.ravel()._index_add((flat,), (self.size,)).reshape(self.shape)
    return self._rebind(self + added)
