"""Matrix products with NumPy's rules in front of the matmul primitive: 1-D operands,
promotion, broadcast batch dimensions (`numgrad.primitives` records it)."""

from __future__ import annotations

from numgrad import dtypes
from numgrad.primitives import (
    _apply,
    _as,
    _broadcast_to,
    _elementwise,
    _load,
    _permute,
    _reshape,
)
from numgrad.shapes import broadcast_shapes
from numgrad.tensor_base import TensorBase


def _both_tensors(a, b):
    """`a` and `b` as tensors; data (a list, an ndarray) goes to the other one's device."""
    if not isinstance(a, TensorBase):
        a = type(b)._wrap(_load(a, None, b.device))
    if not isinstance(b, TensorBase):
        b = type(a)._wrap(_load(b, None, a.device))
    return a, b


def _matmul(a, b):
    """Matrix product with NumPy's rules: 1-D operands and broadcast batch dimensions."""
    a, b = _both_tensors(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: both operands need at least one dimension; use * for scalars")
    dtype = dtypes.result_type(a.dtype, b.dtype)
    a2 = _reshape(_as(a, dtype), (1, -1)) if a.ndim == 1 else _as(a, dtype)
    b2 = _reshape(_as(b, dtype), (-1, 1)) if b.ndim == 1 else _as(b, dtype)
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} do not align: {a2.shape[-1]} "
            f"(last axis of the first) != {b2.shape[-2]} (second-to-last of the second)")
    a2, b2 = _broadcast_batch("matmul", a2, b2, f"shapes {a.shape} and {b.shape}")
    batch = a2.shape[:-2]
    out = _apply("matmul", (a2, b2), None, batch + (a2.shape[-2], b2.shape[-1]), dtype)
    shape = batch + a.shape[-2:-1] + b.shape[-1:] if b.ndim > 1 else batch + a.shape[-2:-1]
    if a.ndim == 1:
        shape = batch + b.shape[-1:] if b.ndim > 1 else batch
    return _reshape(out, shape) if out.shape != shape else out


def _dot(a, b):
    """NumPy's dot: a product for scalars, matmul up to 2-D, a tensor contraction above."""
    if a.ndim == 0 or b.ndim == 0:
        return _elementwise("multiply", a, b)
    a, b = _both_tensors(a, b)
    if b.ndim <= 2:
        return _matmul(a, b)
    k = b.shape[-2]
    moved = _reshape(_permute(b, (b.ndim - 2, *range(b.ndim - 2), b.ndim - 1)), (k, -1))
    return _reshape(_matmul(a, moved), a.shape[:-1] + b.shape[:-2] + b.shape[-1:])


def _broadcast_batch(name: str, a: TensorBase, b: TensorBase, what: str):
    """Stacks of matrices `a` and `b` with their batch dimensions (all but the last two)
    broadcast together; ValueError naming `name` and `what` where they do not."""
    try:
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"{name}: the batch dimensions of {what} do not broadcast") from None
    a = _broadcast_to(a, batch + a.shape[-2:]) if a.shape[:-2] != batch else a
    b = _broadcast_to(b, batch + b.shape[-2:]) if b.shape[:-2] != batch else b
    return a, b
