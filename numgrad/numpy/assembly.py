"""Assembling tensors: stacking, padding, tiling, splitting, rotating, diagonal matrices.

NumPy's functions of these names, with NumPy's arguments, results and errors, built
from concatenate, reshapes, broadcasts, gathers and `where` (see `numgrad.numpy.shaping`),
so each fuses with its neighbours and differentiates with no rule of its own.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Sequence

import numpy as np

from numgrad import dtypes
from numgrad.numpy.creation import full
from numgrad.numpy.elementwise import where
from numgrad.numpy.joining import _tensor, _tensors, concatenate, split
from numgrad.numpy.shaping import copies, take
from numgrad.shapes import broadcast_shapes, normalize_axis
from numgrad.tensor import Tensor

__all__ = [
    "append", "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays",
    "column_stack", "diag", "dsplit", "dstack", "fliplr", "flipud", "hsplit", "hstack",
    "meshgrid", "pad", "rollaxis", "rot90", "take_along_axis", "tile", "vsplit", "vstack",
]


def _join(tensors: list[Tensor], axis: int, name: str, dtype=None,
          casting: str = "same_kind") -> Tensor:
    """`concatenate`, with NumPy's `dtype` and `casting` arguments."""
    if not tensors:
        raise ValueError(f"{name} needs at least one array to concatenate")
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        for t in tensors:
            if not np.can_cast(t.dtype, dtype, casting):
                raise TypeError(f"{name}: cannot cast {t.dtype} to {dtype} with "
                                f"casting={casting!r}")
        tensors = [t.astype(dtype) for t in tensors]
    return concatenate(tensors, axis)


def _atleast(arys, ndim: int):
    def lift(x: Tensor) -> Tensor:
        if x.ndim >= ndim:
            return x
        if ndim == 3 and x.ndim:
            return x.reshape((1,) * (2 - x.ndim) + x.shape + (1,))  # NumPy's (1, n, 1)
        return x.reshape((1,) * (ndim - x.ndim) + x.shape)

    out = tuple(lift(_tensor(a)) for a in arys)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each input with at least one dimension (0-d becomes shape ``(1,)``); one tensor for
    one input, else a tuple. A tensor that already has enough dimensions is returned
    itself, as NumPy returns the array."""
    return _atleast(arys, 1)


def atleast_2d(*arys):
    """Each input with at least two dimensions: ``(n,)`` becomes ``(1, n)``."""
    return _atleast(arys, 2)


def atleast_3d(*arys):
    """Each input with at least three dimensions: ``(n,)`` becomes ``(1, n, 1)`` and
    ``(m, n)`` becomes ``(m, n, 1)``."""
    return _atleast(arys, 3)


def hstack(tup: Sequence, *, dtype=None, casting: str = "same_kind") -> Tensor:
    """Join along the second axis (the first, for 1-D inputs).

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.hstack([ng.ones(2), ng.zeros(1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    ts = [atleast_1d(t) for t in _tensors(tup, "hstack")]
    return _join(ts, 0 if ts and ts[0].ndim == 1 else 1, "hstack", dtype, casting)


def vstack(tup: Sequence, *, dtype=None, casting: str = "same_kind") -> Tensor:
    """Join along the first axis, 1-D inputs as rows."""
    return _join([atleast_2d(t) for t in _tensors(tup, "vstack")], 0, "vstack", dtype, casting)


def dstack(tup: Sequence) -> Tensor:
    """Join along the third axis, after `atleast_3d`."""
    return _join([atleast_3d(t) for t in _tensors(tup, "dstack")], 2, "dstack")


def column_stack(tup: Sequence) -> Tensor:
    """Join along the second axis, 1-D inputs as columns."""
    ts = [t.reshape(-1, 1) if t.ndim < 2 else t for t in _tensors(tup, "column_stack")]
    return _join(ts, 1, "column_stack")


def append(arr, values, axis: int | None = None) -> Tensor:
    """`values` joined to the end of `arr` along `axis`; both flattened when None."""
    arr, values = _tensors([arr, values], "append")
    if axis is None:
        return concatenate([arr.ravel(), values.ravel()], 0)
    return concatenate([arr, values], axis)


def array_split(ary, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Tensor]:
    """Split into `indices_or_sections` pieces, the first ``n % sections`` one element
    longer (an uneven split is allowed, unlike `split`), or at the given indices."""
    x = _tensor(ary)
    n = x.shape[normalize_axis(axis, x.ndim)]
    if isinstance(indices_or_sections, numbers.Integral):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError(f"array_split: the number of sections must be larger than 0, "
                             f"got {sections}")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        indices = np.cumsum(sizes)[:-1].tolist()
    else:
        indices = [operator.index(i) for i in indices_or_sections]
    return split(x, indices, axis)


def hsplit(ary, indices_or_sections) -> list[Tensor]:
    """`split` along the second axis (the first, for 1-D inputs)."""
    x = _tensor(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


def vsplit(ary, indices_or_sections) -> list[Tensor]:
    """`split` along the first axis, of an array of 2 or more dimensions."""
    x = _tensor(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


def dsplit(ary, indices_or_sections) -> list[Tensor]:
    """`split` along the third axis, of an array of 3 or more dimensions."""
    x = _tensor(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


def broadcast_arrays(*args) -> tuple[Tensor, ...]:
    """Each of `args` broadcast to their common shape (NumPy's rules).

    Examples
    --------
    >>> import numgrad as ng
    >>> [t.shape for t in ng.broadcast_arrays(ng.ones((3, 1)), ng.zeros(4))]
    [(3, 4), (3, 4)]
    """
    ts = _tensors(args, "broadcast_arrays")
    shape = broadcast_shapes(*(t.shape for t in ts))
    return tuple(t.broadcast_to(shape) for t in ts)


def flipud(m) -> Tensor:
    """Reverse the first axis."""
    m = _tensor(m)
    if m.ndim < 1:
        raise ValueError("flipud: input must be >= 1-d, got a 0-d tensor")
    return m.flip(0)


def fliplr(m) -> Tensor:
    """Reverse the second axis."""
    m = _tensor(m)
    if m.ndim < 2:
        raise ValueError(f"fliplr: input must be >= 2-d, got shape {m.shape}")
    return m.flip(1)


def rot90(m, k: int = 1, axes: Sequence[int] = (0, 1)) -> Tensor:
    """Rotate by 90 degrees `k` times, from the first of `axes` towards the second."""
    m = _tensor(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError(f"rot90: len(axes) must be 2, got axes={axes}")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError(f"rot90: axes must be different, got axes={axes}")
    if not all(-m.ndim <= a < m.ndim for a in axes):
        raise ValueError(f"rot90: axes={axes} out of range for a tensor of ndim {m.ndim}")
    k = operator.index(k) % 4
    if k == 0:
        return m.reshape(m.shape)
    if k == 2:
        return m.flip(axes)
    order = list(range(m.ndim))
    a, b = normalize_axis(axes[0], m.ndim), normalize_axis(axes[1], m.ndim)
    order[a], order[b] = order[b], order[a]
    if k == 1:
        return m.flip(axes[1]).transpose(order)
    return m.transpose(order).flip(axes[1])


def rollaxis(a, axis: int, start: int = 0) -> Tensor:
    """Move `axis` until it lies before position `start` (NumPy's older `moveaxis`)."""
    a = _tensor(a)
    axis = normalize_axis(axis, a.ndim)
    start = operator.index(start)
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"rollaxis: 'start' must satisfy {-a.ndim} <= start < {a.ndim + 1}, "
                         f"got {start}")
    start = start + a.ndim if start < 0 else start
    return a.moveaxis(axis, start - 1 if axis < start else start)


def tile(A, reps: int | Sequence[int]) -> Tensor:
    """`A` repeated `reps` times along each axis (as a whole, unlike `repeat`); `A` or
    `reps` gets leading ones to match the other's length."""
    x = _tensor(A)
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}")
    ndim = max(len(reps), x.ndim)
    x = x.reshape((1,) * (ndim - x.ndim) + x.shape)
    return copies(x, (1,) * (ndim - len(reps)) + reps, inner=False)


def diag(v, k: int = 0) -> Tensor:
    """The `k`-th diagonal of a 2-D input, or a square matrix with a 1-D input on its
    `k`-th diagonal (zeros elsewhere)."""
    x = _tensor(v)
    k = operator.index(k)
    if x.ndim == 2:
        return x.diagonal(k)
    if x.ndim != 1:
        raise ValueError(f"diag: input must be 1- or 2-d, got shape {x.shape}")
    n = x.shape[0] + abs(k)
    if x.shape[0] == 0:
        return full((n, n), 0, x.dtype, x.device)
    # Row i of the result holds x[i] (k >= 0), column j holds x[j] (k < 0): a gather
    # along one axis, broadcast and masked to the diagonal, in one kernel.
    index = np.minimum(np.arange(n), x.shape[0] - 1)
    index = index.reshape((n, 1) if k >= 0 else (1, n))
    return x[index].where(x.new_tensor(np.eye(n, k=k, dtype=bool)), x.dtype.type(0))


# ---- pad ------------------------------------------------------------------------------

_KEYWORDS = {"constant": {"constant_values"}, "edge": set(), "wrap": set(),
             "reflect": {"reflect_type"}, "symmetric": {"reflect_type"}}
_NUMPY_ONLY = ("empty", "linear_ramp", "maximum", "mean", "median", "minimum")


def pad(array, pad_width: int | Sequence, mode: str = "constant", **kwargs) -> Tensor:
    """Pad with NumPy's `pad_width` forms (an int, ``(before, after)``, or one pair per
    axis) and modes ``'constant'`` (`constant_values`, in the same forms), ``'edge'``,
    ``'reflect'``, ``'symmetric'`` and ``'wrap'`` (the last three with
    ``reflect_type='even'``, NumPy's default).

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.pad(ng.tensor([1.0, 2.0, 3.0]), (2, 1), mode="reflect").tolist()
    [3.0, 2.0, 1.0, 2.0, 3.0, 2.0]
    """
    x = _tensor(array)
    if np.asarray(pad_width).dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be of integral type, got {pad_width!r}")
    widths = _pairs(pad_width, x.ndim, "pad_width", index=True)
    if mode in _NUMPY_ONLY:
        raise NotImplementedError(
            f"pad: mode {mode!r} is not supported; numgrad pads with "
            f"{', '.join(map(repr, _KEYWORDS))}")
    if mode not in _KEYWORDS:
        raise ValueError(f"pad: mode {mode!r} is not supported")
    unknown = set(kwargs) - _KEYWORDS[mode]
    if unknown:
        raise ValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {unknown}")
    if mode == "constant":
        values = _pairs(kwargs.get("constant_values", 0), x.ndim, "constant_values")
        return _pad_constant(x, widths, values)
    if kwargs.get("reflect_type", "even") != "even":
        raise NotImplementedError(
            f"pad: reflect_type={kwargs['reflect_type']!r} is not supported; numgrad "
            f"reflects with NumPy's default 'even'")
    for d, (n, w) in enumerate(zip(x.shape, widths)):
        if n == 0 and w != (0, 0):
            raise ValueError(f"pad: can't extend empty axis {d} of shape {x.shape} using "
                             f"modes other than 'constant'")
    return _gather_padded(x, widths, mode)


def _gather_padded(x: Tensor, widths, mode: str) -> Tensor:
    """Padding whose values are elements of `x`: a gather at the positions NumPy's own pad
    gives a range of indices in that mode (so wide pads repeat as NumPy's do)."""
    return take(x, {d: np.pad(np.arange(n), w, mode)
                    for d, (n, w) in enumerate(zip(x.shape, widths)) if w != (0, 0)})


def _pairs(value, ndim: int, name: str, index: bool = False) -> list[tuple]:
    """NumPy's forms of per-axis (before, after) pairs: a scalar, one pair, or a pair per
    axis (broadcast to ``(ndim, 2)``)."""
    a = np.asarray(value)
    if index:
        a = a.astype(np.intp)
        if a.size and a.min() < 0:
            raise ValueError(f"pad: {name} can't contain negative values, got {value!r}")
    if a.size == 1:
        a = a.reshape(1, 1)
    elif a.size == 2 and a.shape != (2, 1):
        a = a.reshape(1, 2)
    try:
        a = np.broadcast_to(a, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: {name} of shape {a.shape} does not broadcast to one "
                         f"(before, after) pair per axis, ({ndim}, 2)") from None
    return [tuple(pair) for pair in a.tolist()]


def _pad_constant(x: Tensor, widths, values) -> Tensor:
    """Constant padding: the edge gather, replaced by the constants outside `x`, axis
    after axis (so corners take the later axis's constant, as in NumPy); one kernel."""
    shape = tuple(b + n + a for n, (b, a) in zip(x.shape, widths))
    out = full(shape, 0, x.dtype, x.device) if x.size == 0 else _gather_padded(x, widths, "edge")
    for d, ((b, a), (before, after)) in enumerate(zip(widths, values)):
        position = np.arange(shape[d]).reshape([-1 if e == d else 1 for e in range(x.ndim)])
        if b:
            out = where(x.new_tensor(position < b), x.dtype.type(before), out)
        if a:
            out = where(x.new_tensor(position >= b + x.shape[d]), x.dtype.type(after), out)
    return out


def take_along_axis(arr, indices, axis: int | None = -1) -> Tensor:
    """`arr` read at `indices` along `axis` (NumPy's ``take_along_axis``): what
    ``argsort``, ``argmax(keepdims=True)`` or ``argpartition`` give picks the values.

    `indices` holds integers and has `arr`'s number of dimensions; the other
    dimensions broadcast against `arr`'s. Negative indices count from the end, and one
    out of range is NumPy's `IndexError`. With `axis` None, `arr` is read flat and
    `indices` is 1-D. The indices are read (a tensor's values are computed); the
    gradient scatters back to `arr`.

    >>> import numgrad as ng
    >>> x = ng.tensor([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]])
    >>> ng.take_along_axis(x, x.argsort(axis=1)[:, :2], axis=1).tolist()
    [[10.0, 20.0], [40.0, 50.0]]
    """
    arr = _tensor(arr)
    index = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
    if index.dtype.kind not in "iu":
        raise IndexError(f"take_along_axis: indices must be integers, got {index.dtype}")
    if axis is None:
        if index.ndim != 1:
            raise ValueError(f"take_along_axis: with axis=None the indices must be 1-D, got "
                             f"shape {index.shape}")
        return arr.reshape(-1)[index]
    if index.ndim != arr.ndim:
        raise ValueError(f"take_along_axis: indices have {index.ndim} dimensions and arr "
                         f"{arr.ndim}; they must have the same number")
    axis = normalize_axis(axis, arr.ndim)
    key = [index if d == axis else
           np.arange(n).reshape((1,) * d + (n,) + (1,) * (arr.ndim - d - 1))
           for d, n in enumerate(arr.shape)]
    return arr[tuple(key)]


def meshgrid(*xi, copy: bool = True, sparse: bool = False,
             indexing: str = "xy") -> tuple[Tensor, ...]:
    """Coordinate tensors from coordinate vectors (NumPy's ``meshgrid``): one tensor per
    vector, each varying along its own axis.

    With ``indexing="xy"`` (the default) the first two axes are swapped (Cartesian, as
    in NumPy); ``"ij"`` keeps the vectors' order (matrix indexing). With `sparse` each
    keeps length 1 along the other axes. The results are broadcasts of the vectors:
    numgrad's values never change, so `copy` changes nothing but is accepted.

    >>> import numgrad as ng
    >>> xs, ys = ng.meshgrid(ng.tensor([1.0, 2.0, 3.0]), ng.tensor([10.0, 20.0]))
    >>> xs.tolist()
    [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
    >>> ys.tolist()
    [[10.0, 10.0, 10.0], [20.0, 20.0, 20.0]]
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    vectors = [_tensor(x).reshape(-1) for x in xi]
    ndim = len(vectors)
    grids = []
    for i, v in enumerate(vectors):
        at = (1, 0)[i] if indexing == "xy" and ndim > 1 and i < 2 else i
        grids.append(v.reshape((1,) * at + (-1,) + (1,) * (ndim - at - 1)))
    if not sparse:
        shape = np.broadcast_shapes(*(g.shape for g in grids))
        grids = [g.broadcast_to(shape) for g in grids]
    return tuple(grids)
