"""NumPy's functions that read or write elements by index: take, compress, choose, put.

Each is indexing (`numgrad.primitives._index`, `Tensor.index_put`) or a chain of
`where`, so its gradient is a scatter-add or flows to the choice taken.
"""

from __future__ import annotations

import numpy as np

from numgrad.numpy.creation import as_tensor
from numgrad.numpy.elementwise import where
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor

__all__ = ["take", "compress", "choose", "put"]


def take(a, indices, axis: int | None = None, mode: str = "raise") -> Tensor:
    """The elements of `a` at `indices` along `axis` (of the flattened `a` when None), as
    NumPy's ``take``: an index out of range raises (``mode='raise'``), wraps around
    (``'wrap'``) or is clipped to the ends (``'clip'``). The gradient is a scatter-add.

    >>> ng.take(ng.tensor([[1.0, 2.0], [3.0, 4.0]]), [0, 3]).tolist()
    [1.0, 4.0]
    """
    a = as_tensor(a)
    if axis is None:
        a, axis = a.ravel(), 0
    axis = normalize_axis(axis, a.ndim)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    n = a.shape[axis]
    if mode != "raise":
        if n == 0:
            raise IndexError("take: cannot do a non-empty take from an empty axis")
        indices = indices if isinstance(indices, Tensor) else np.asarray(indices)
        indices = indices % n if mode == "wrap" else indices.clip(0, n - 1)
    return a[(slice(None),) * axis + (indices,)]


def compress(condition, a, axis: int | None = None) -> Tensor:
    """The slices of `a` along `axis` (the elements of the flattened `a` when None) where
    the 1-D `condition` is true, as NumPy's ``compress``: a `condition` shorter than the
    axis leaves the rest out. The gradient is a scatter-add."""
    condition = condition.numpy() if isinstance(condition, Tensor) else np.asarray(condition)
    if condition.ndim != 1:
        raise ValueError(f"compress: condition must be 1-D, got shape {condition.shape}")
    return take(a, np.flatnonzero(condition), axis)


def choose(a, choices, mode: str = "raise") -> Tensor:
    """``choices[a[i]][i]`` for the integer `a`, all broadcast together (NumPy's
    ``choose``): an index out of range raises (``mode='raise'``), wraps around or is
    clipped. A chain of `where`, so differentiable in the choices.

    >>> ng.choose(ng.tensor([1, 0]), [[1.0, 2.0], [3.0, 4.0]]).tolist()
    [3.0, 2.0]
    """
    a = as_tensor(a)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if a.dtype.kind not in "iu":
        raise TypeError(f"choose: the index array must be integer, not {a.dtype}")
    n = len(choices)
    if n == 0:
        raise ValueError("choose: choices must not be empty")
    if mode == "raise":
        values = a.numpy()
        if values.size and (values.min() < 0 or values.max() >= n):
            raise ValueError(f"choose: an index is outside 0..{n - 1} (mode='raise')")
    else:
        a = a % n if mode == "wrap" else a.clip(0, n - 1)
    chosen = where(a == n - 1, choices[n - 1], choices[0])
    for k in range(1, n - 1):
        chosen = where(a == k, choices[k], chosen)
    return chosen


def put(a: Tensor, ind, v, mode: str = "raise") -> None:
    """Set the elements of the tensor `a` at the flat indices `ind` to `v`, in place
    (NumPy's ``put``): `v` repeats when shorter than `ind`; an index out of range raises,
    wraps around or is clipped as `take`'s `mode` says."""
    if not isinstance(a, Tensor):
        raise TypeError(f"put changes a tensor in place; got {type(a).__name__}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"put: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    ind = np.asarray(ind.numpy() if isinstance(ind, Tensor) else ind, np.int64).ravel()
    n = a.size
    if mode == "raise" and ind.size and (ind.min() < -n or ind.max() >= n):
        raise IndexError(f"put: an index is out of range for a tensor of {n} elements")
    ind = ind % n if mode == "wrap" else (ind.clip(0, n - 1) if mode == "clip" else ind)
    v = take(as_tensor(v, device=a.device), np.arange(ind.size), mode="wrap")
    a[...] = a.ravel().index_put(ind, v).reshape(a.shape)
