"""Joining and splitting tensors: concatenate, stack and split."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from numgrad import dtypes
from numgrad.primitives import _apply, _as
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("concatenate needs at least one tensor")
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
    """Join tensors of one shape along a new axis."""
    tensors = list(tensors)
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
