"""Scans and order: cumulative sums and products, differences, sorting.

Scans and the permutations that sort or partition a tensor are library primitives
(`numgrad.ops.LIBRARY`: NumPy on host arrays, through the host on other devices),
registered here beside the functions that use them. Sorted and partitioned values are
a gather of the tensor by that permutation, so they differentiate through the gather
(its VJP is a scatter-add); a difference is a composite of slices.
"""

from __future__ import annotations

import operator

import numpy as np

from numgrad import dtypes
from numgrad.autograd.grad_mode import is_grad_enabled
from numgrad.numpy.creation import as_tensor, full
from numgrad.numpy.joining import concatenate
from numgrad.ops import LIBRARY, Primitive, register
from numgrad.primitives import _apply, _as, _as_tensor, _broadcast_to, _cast, _index, _load
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor

__all__ = ["cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "diff", "argsort",
           "argpartition", "sort", "partition"]

# ---- the library primitives and their rules -----------------------------------------
# A scan's axis is recorded negative: the VJP rules' gradients may carry extra leading
# axes (batched seeds), and a negative axis names the same axis there.


def _scan(name: str, x: Tensor, arg) -> Tensor:
    return _apply(name, (x,), arg, x.shape, x.dtype)


def _cumsum_ref(a: np.ndarray, arg) -> np.ndarray:
    axis, reverse = arg
    if reverse:  # from the end: the VJP of a forward cumsum, and vice versa
        return np.flip(np.cumsum(np.flip(a, axis), axis, dtype=a.dtype), axis)
    return np.cumsum(a, axis, dtype=a.dtype)


def _cumsum_vjp(g, out, x, arg):
    axis, reverse = arg
    return (_scan("cumsum", g, (axis, not reverse)),)


def _reverse_cumsum(t: Tensor, axis: int) -> Tensor:
    return _scan("cumsum", t, (axis, True))


def _cumprod_vjp(g, out, x, axis):
    """``d out_i / d x_k`` is the product of ``x_j`` for ``j <= i``, ``j != k``: exact with
    zeros in `x` (PyTorch's and JAX's results; HIPS autograd has no cumprod rule)."""
    is_zero = x == 0
    if is_grad_enabled() and bool(is_zero.any()):
        return (_cumprod_vjp_pairs(g, x, axis),)
    # Before the first zero, divide by x_k; at the first zero, the cumulative product
    # with that zero read as 1; after it every product holds that zero. These masks are
    # fixed where x has zeros, so this rule's own derivative is exact only without them:
    # a second order (grad mode on) with zeros takes the pairwise rule above.
    seen = _scan("cumsum", is_zero.astype(dtypes.int64), (axis, False))
    before, first = seen == 0, is_zero & (seen == 1)
    divided = _reverse_cumsum(g * out, axis) / x.where(before, 1)
    at_first = _reverse_cumsum(g * _scan("cumprod", x.where(~first, 1), axis), axis)
    return (divided.where(before, at_first.where(first, 0)),)


def _cumprod_vjp_pairs(g, x, axis):
    """The cumprod VJP as polynomials in `x`, so exact to every order: for each k, the
    cumulative product with ``x_k`` read as 1 (an n-by-n table per row: O(n^2) memory,
    used only to differentiate again at zeros, as PyTorch does)."""
    n = x.shape[axis]
    one = _as_tensor(np.eye(n, dtype=bool), dtypes.bool_, x)
    later = _as_tensor(np.triu(np.ones((n, n), dtype=bool)), dtypes.bool_, x)  # i >= k
    others = _scan("cumprod", x.swapaxes(axis, -1).expand_dims(-2).where(~one, 1), -1)
    terms = g.swapaxes(axis, -1).expand_dims(-2) * others
    return terms.where(later, 0).sum(-1).swapaxes(axis, -1)


def _partition_order(a: np.ndarray, arg) -> np.ndarray:
    """The permutation along `axis` that arranges `a` as ``np.partition(a, kth, axis)``.

    NumPy's argpartition may arrange differently (its SIMD selections differ), so the
    order is matched to partition's result: the j-th smallest of the result takes the
    j-th smallest of `a` (stable sorts, so equal values keep their order).
    """
    kth, axis = arg
    order = np.empty(a.shape, np.int64)
    result = np.partition(a, kth, axis)
    np.put_along_axis(order, np.argsort(result, axis, kind="stable"),
                      np.argsort(a, axis, kind="stable"), axis)
    return order


register(
    Primitive("cumsum", LIBRARY, vjp=_cumsum_vjp, ref=_cumsum_ref),
    Primitive("cumprod", LIBRARY, vjp=_cumprod_vjp,
              ref=lambda a, axis: np.cumprod(a, axis, dtype=a.dtype)),
    # Stable, whatever `kind` asked for: ties keep their order, so the gradient of sort
    # goes where NumPy's stable sort puts each element.
    Primitive("argsort", LIBRARY, ref=lambda a, axis: np.argsort(a, axis, kind="stable")),
    Primitive("partition_order", LIBRARY, ref=_partition_order),
)


# ---- argument checks, as NumPy makes them ---------------------------------------------

def _along(x: Tensor, axis, zero_d_as_1d: bool = False) -> tuple[Tensor, int]:
    """`x` and the non-negative `axis` to work along: flattened for None. Scans and
    argsort read a 0-d tensor as 1-d, as NumPy's do; sort and partition do not."""
    if axis is None:
        return x.reshape(-1), 0
    if zero_d_as_1d and x.ndim == 0:
        x = x.reshape(1)
    return x, normalize_axis(axis, x.ndim)


def _check_kind(kind, order, stable) -> None:
    """NumPy's own checks of a sort's `kind`, `order` and `stable` (its spellings and
    errors), made on an empty probe; any kind is accepted and the sort is stable."""
    np.sort(np.empty(0), kind=kind, order=order, stable=stable)


def _kth(kth, n: int) -> tuple[int, ...]:
    """Partition indices as NumPy checks them, made non-negative."""
    k = np.asarray(kth)
    if k.dtype == np.bool_:
        raise ValueError("kth must be an integer or a sequence of integers, not a boolean")
    if k.dtype.kind not in "iu":
        raise TypeError(f"kth must be an integer or a sequence of integers, got {kth!r}")
    if k.ndim > 1:
        raise ValueError(f"kth must be an integer or a 1-D sequence, got shape {k.shape}")
    for v in k.ravel().tolist():
        if not -n <= v < n:
            raise ValueError(f"kth(={v}) is out of bounds for an axis of length {n}")
    return tuple(v % n for v in k.ravel().tolist())


# ---- gathers by a permutation, and diff's joins ----------------------------------------

def _permuted(x: Tensor, name: str, arg, axis: int) -> Tensor:
    """`x` gathered along `axis` by the permutation library primitive `name` computes
    (NumPy's take_along_axis), differentiable through the gather. The permutation is
    computed now: the gather's index is data."""
    order = _apply(name, (x,), arg, x.shape, dtypes.int64).numpy()
    key = tuple(order if d == axis else
                np.arange(n).reshape(tuple(n if e == d else 1 for e in range(x.ndim)))
                for d, n in enumerate(x.shape))
    return _index(x, key)


def _edge(value, x: Tensor, axis: int) -> Tensor:
    """A `prepend` or `append` of diff as NumPy reads it: data in its own dtype (not as a
    weak scalar), and a 0-d value broadcast to one slice along `axis`."""
    t = value if isinstance(value, Tensor) else Tensor._wrap(_load(value, None, x.device))
    if t.ndim == 0:
        return _broadcast_to(t, x.shape[:axis] + (1,) + x.shape[axis + 1:])
    if t.ndim != x.ndim or any(d != e for i, (d, e) in enumerate(zip(t.shape, x.shape))
                               if i != axis):
        raise ValueError(
            f"diff: prepend/append of shape {t.shape} does not fit a tensor of shape "
            f"{x.shape}: all dimensions but axis {axis} must match")
    return t


def _join(parts: list[Tensor], axis: int) -> Tensor:
    """Concatenate `parts` (checked by `_edge`) along `axis` with NumPy's promotion."""
    dtype = dtypes.result_type(*(t.dtype for t in parts))
    shape = list(parts[0].shape)
    shape[axis] = sum(t.shape[axis] for t in parts)
    return _apply("concatenate", tuple(_as(t, dtype) for t in parts), axis, tuple(shape), dtype)


def cumsum(x, axis: int | None = None, dtype=None) -> Tensor:
    """Cumulative sum along an axis, as NumPy's ``cumsum``.

    Parameters
    ----------
    axis : int or None
        The axis to sum along; None (the default) sums the flattened tensor.
    dtype : dtype, optional
        The dtype to accumulate in. By default booleans and signed integers sum in
        int64, unsigned ones in uint64, as in NumPy, and floats in their own dtype.

    Returns
    -------
    Tensor
        Of this tensor's shape (1-D for ``axis=None``). Its gradient is the
        cumulative sum of the incoming gradient taken from the end.

    Examples
    --------
    >>> ng.tensor([[1, 2], [3, 4]]).cumsum(axis=0)
    tensor([[1, 2],
            [4, 6]], dtype=int64, device='cpu')
    """
    x = as_tensor(x)
    x, axis = _scan_input(x, axis, dtype)
    return _scan("cumsum", x, (axis, False))


def cumprod(x, axis: int | None = None, dtype=None) -> Tensor:
    """Cumulative product along an axis, as NumPy's ``cumprod``.

    Parameters and dtypes as `cumsum`'s. The gradient is exact where the tensor
    holds zeros (one or several), to any order.

    Examples
    --------
    >>> x = ng.tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> x.cumprod()
    tensor([2., 0., 0.], dtype=float64, device='cpu', grad_fn=<CumprodBackward>)
    >>> ng.grad(x.cumprod().sum(), x)[0]
    tensor([1., 8., 0.], dtype=float64, device='cpu')
    """
    x = as_tensor(x)
    x, axis = _scan_input(x, axis, dtype)
    return _scan("cumprod", x, axis)


def _scan_input(x, axis, dtype) -> tuple[Tensor, int]:
    """The tensor to scan, in NumPy's accumulation dtype, and its negative axis."""
    x, axis = _along(x, axis, zero_d_as_1d=True)
    if dtype is not None:
        x = _as(x, dtypes.as_dtype(dtype))
    else:  # NumPy accumulates bool and int32 in int64, uint8 in uint64
        x = _as(x, dtypes.accumulated(x.dtype))
    return x, axis - x.ndim


def diff(x, n: int = 1, axis: int = -1, prepend=None, append=None) -> Tensor:
    """The `n`-th discrete difference along an axis, as NumPy's ``diff``.

    Parameters
    ----------
    n : int
        How many times to take ``x[1:] - x[:-1]`` (``!=`` for booleans); 0 returns
        a copy, and more than the axis holds an empty tensor.
    axis : int
        The axis to difference along, by default the last.
    prepend, append : scalar, array or Tensor, optional
        Values joined before and after along `axis` first (None: nothing). Data
        joins in its own dtype (NumPy's promotion, so ``prepend=0`` makes a float32
        tensor's differences float64); a scalar stands for one slice. A tensor
        given here receives its gradient too.

    Examples
    --------
    >>> ng.tensor([1.0, 4.0, 9.0, 16.0]).diff()
    tensor([3., 5., 7.], dtype=float64, device='cpu')
    """
    x = as_tensor(x)
    n = operator.index(n)
    if n == 0:  # NumPy's order: before any other check, ignoring prepend and append
        return _cast(x, x.dtype)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    if x.ndim == 0:
        raise ValueError("diff needs a tensor of at least one dimension; this one is 0-d")
    axis = normalize_axis(axis, x.ndim)
    before = [] if prepend is None else [_edge(prepend, x, axis)]
    after = [] if append is None else [_edge(append, x, axis)]
    x = _join([*before, x, *after], axis) if before or after else x
    lead = (slice(None),) * axis
    later, earlier = lead + (slice(1, None),), lead + (slice(None, -1),)
    for _ in range(n):
        x = x[later] != x[earlier] if x.dtype == dtypes.bool_ else x[later] - x[earlier]
    return x


def argsort(x, axis: int | None = -1, kind: str | None = None, order=None, *,
            stable: bool | None = None, descending: bool = False) -> Tensor:
    """The indices (int64) that sort along `axis` (None: the flattened tensor), as
    NumPy's ``argsort``; no gradient.

    `kind` and `stable` are checked as NumPy checks them, and the sort is always
    stable: ties keep their order (NumPy's ``kind='stable'``; its default quicksort
    may order ties otherwise), also with `descending` (the standard's: largest
    first, NaN first).
    """
    x = as_tensor(x)
    _check_kind(kind, order, stable)
    x, axis = _along(x, axis, zero_d_as_1d=True)
    if descending:  # the ascending order of the reversed values, reversed
        flipped = _apply("argsort", (x.flip(axis),), axis, x.shape, dtypes.int64)
        return (x.shape[axis] - 1 - flipped).flip(axis)
    return _apply("argsort", (x,), axis, x.shape, dtypes.int64)


def argpartition(x, kth, axis: int | None = -1, kind: str = "introselect",
                 order=None) -> Tensor:
    """The indices (int64) that partition along `axis` (None: the flattened tensor), as
    NumPy's ``argpartition``; no gradient. They arrange the elements as ``partition``
    does (as ``np.partition`` does): NumPy's own argpartition may order each side
    otherwise, and any such order is a partition."""
    x = as_tensor(x)
    np.partition(np.empty(1), 0, kind=kind, order=order)  # NumPy's checks of these
    x, axis = _along(x, axis)
    return _apply("partition_order", (x,), (_kth(kth, x.shape[axis]), axis), x.shape,
                  dtypes.int64)


def sort(x, axis: int | None = -1, kind: str | None = None, order=None, *,
         stable: bool | None = None, descending: bool = False) -> Tensor:
    """A sorted copy along `axis` (None: of the flattened tensor), as NumPy's ``sort``.

    `kind` and `stable` are checked as NumPy checks them; the sort is stable, so the
    gradient, which flows through the sorting permutation, goes to each element
    where NumPy's stable sort puts it (ties in their order). NaN sorts last, or
    first with `descending` (the standard's: largest first, ties in their order).
    """
    x = as_tensor(x)
    _check_kind(kind, order, stable)
    x, axis = _along(x, axis)
    if descending:
        return _permuted(x.flip(axis), "argsort", axis, axis).flip(axis)
    return _permuted(x, "argsort", axis, axis)


def partition(x, kth, axis: int | None = -1, kind: str = "introselect",
              order=None) -> Tensor:
    """A partitioned copy along `axis` (None: of the flattened tensor), as NumPy's
    ``partition``: the elements at the positions `kth` (an int or a sequence) are
    where a sort would put them, smaller ones before and larger ones after, arranged
    exactly as ``np.partition`` arranges them. The gradient flows through that
    permutation.
    """
    x = as_tensor(x)
    np.partition(np.empty(1), 0, kind=kind, order=order)  # NumPy's checks of these
    x, axis = _along(x, axis)
    return _permuted(x, "partition_order", (_kth(kth, x.shape[axis]), axis), axis)


def cumulative_sum(x, /, *, axis: int | None = None, dtype=None,
                   include_initial: bool = False) -> Tensor:
    """NumPy 2's ``cumulative_sum``: `cumsum` along `axis` (which a tensor of more than
    one dimension needs), with the sum of nothing (0) first if `include_initial`."""
    return _cumulative(as_tensor(x), cumsum, 0, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis: int | None = None, dtype=None,
                    include_initial: bool = False) -> Tensor:
    """NumPy 2's ``cumulative_prod``: `cumprod` along `axis`, with 1 first if
    `include_initial`."""
    return _cumulative(as_tensor(x), cumprod, 1, axis, dtype, include_initial)


def _cumulative(x: Tensor, scan, initial, axis, dtype, include_initial: bool) -> Tensor:
    if axis is None:
        if x.ndim > 1:
            raise ValueError("For arrays which have more than one dimension ``axis`` "
                             "argument is required.")
        x, axis = x.reshape(-1), 0
    x = x if dtype is None else x.astype(dtype)
    out = scan(x, axis)
    if dtype is not None and out.dtype != x.dtype:  # (integer scans accumulate in 64 bits)
        out = out.astype(dtype)
    if not include_initial:
        return out
    axis = normalize_axis(axis, out.ndim)
    first = full(out.shape[:axis] + (1,) + out.shape[axis + 1:], initial, out.dtype,
                 out.device)
    return concatenate([first, out], axis)
