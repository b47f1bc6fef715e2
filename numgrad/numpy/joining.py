"""Joining and splitting tensors: concatenate, stack and split."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from numgrad import dtypes
from numgrad.device import get_default_device
from numgrad.numpy.creation import tensor
from numgrad.primitives import _apply, _as
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor


def _tensor(x, device=None) -> Tensor:
    """`x` as a tensor; a (nested) list holding tensors is stacked, keeping their
    history, as HIPS autograd's ``np.array`` does."""
    if isinstance(x, Tensor):
        return x
    if _holds_tensor(x):
        return stack([_tensor(e, device) for e in x])
    return tensor(x, device=device)


def _holds_tensor(x) -> bool:
    return isinstance(x, Tensor) or isinstance(x, (list, tuple)) and any(map(_holds_tensor, x))


def _tensors(arrays, name: str) -> list[Tensor]:
    """`arrays` as tensors; data (lists, ndarrays, scalars) goes to the device of the
    first tensor among them."""
    if not hasattr(arrays, "__getitem__"):
        raise TypeError(f"{name}: the arrays must be passed as a sequence such as a list or "
                        f"tuple, got {type(arrays).__name__}")
    arrays = list(arrays)
    device = next((a.device for a in arrays if isinstance(a, Tensor)), get_default_device())
    return [_tensor(a, device) for a in arrays]


def concatenate(tensors: Sequence[Tensor], axis: int | None = 0) -> Tensor:
    """Join tensors (or arrays: they go to the first tensor's device) along an existing
    axis; ``axis=None`` joins them flattened (NumPy's)."""
    tensors = _tensors(tensors, "concatenate")
    if not tensors:
        raise ValueError("concatenate needs at least one tensor")
    if axis is None:
        tensors, axis = [t.reshape(-1) for t in tensors], 0
    first = tensors[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional tensors cannot be concatenated")
    axis = normalize_axis(axis, first.ndim)
    for t in tensors[1:]:
        if t.ndim != first.ndim or any(
                d != e for i, (d, e) in enumerate(zip(t.shape, first.shape)) if i != axis):
            raise ValueError(
                f"concatenate: shapes {first.shape} and {t.shape} differ outside axis {axis}")
    dtype = dtypes.result_type(*(t.dtype for t in tensors))
    shape = list(first.shape)
    shape[axis] = sum(t.shape[axis] for t in tensors)
    return _apply("concatenate", tuple(_as(t, dtype) for t in tensors), axis, shape, dtype)


def stack(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join tensors (or arrays) of one shape along a new axis."""
    tensors = _tensors(tensors, "stack")
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    if any(t.shape != tensors[0].shape for t in tensors):
        raise ValueError(
            f"stack needs tensors of one shape, got {[t.shape for t in tensors]}")
    axis = normalize_axis(axis, tensors[0].ndim + 1)
    return concatenate([t.expand_dims(axis) for t in tensors], axis)


def split(x: Tensor, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """Split into equal sections (an uneven split raises, as in NumPy) or at indices."""
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, numbers.Integral):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(
                f"cannot split an axis of length {n} into {sections} equal sections")
        bounds = list(range(0, n + 1, n // sections)) if n else [0] * (sections + 1)
    else:
        bounds = [0, *indices_or_sections, n]
    lead = (slice(None),) * axis
    return [x[lead + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:])]
