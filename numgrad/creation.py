"""Creation functions: tensors from data, constants, ranges and identities."""

from __future__ import annotations

import numpy as np

from numgrad import dtypes
from numgrad.device import as_device
from numgrad.lazy import LazyBuffer
from numgrad.primitives import _shape_arg
from numgrad.tensor import Tensor


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor holding a copy of `data` (a scalar, nested list, ndarray or Tensor).

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.tensor([[1.0, 2.0], [3.0, 4.0]]).sum().item()
    10.0
    """
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def as_tensor(data, device=None) -> Tensor:
    """`data` itself if it is a tensor, else a new tensor of it (on `device`): how the
    NumPy-named functions take their array arguments."""
    return data if isinstance(data, Tensor) else tensor(data, device=device)


def from_numpy(array: np.ndarray, device=None) -> Tensor:
    """A tensor with a copy of `array` (numgrad's buffers are immutable, so it cannot share)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy expects an ndarray, got {type(array).__name__}")
    return tensor(array, device=device)


def _scalar_dtype(value) -> np.dtype:
    return dtypes.as_dtype(np.asarray(value).dtype)


def full(shape, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of `shape` filled with `fill_value` (dtype inferred as NumPy does)."""
    shape = _shape_arg((shape,))
    if any(d < 0 for d in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    dtype = _scalar_dtype(fill_value) if dtype is None else dtypes.as_dtype(dtype)
    if requires_grad:  # a parameter: memory, as it will be after its first update
        return Tensor(np.full(shape, fill_value, dtype), device=device, requires_grad=True)
    return Tensor._wrap(LazyBuffer.const(fill_value, shape, dtype, as_device(device)))


def zeros(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of `shape`, float64 unless `dtype` is given (as NumPy)."""
    return full(_shape_arg(shape), 0, dtype or dtypes.float64, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of `shape`, float64 unless `dtype` is given (as NumPy)."""
    return full(_shape_arg(shape), 1, dtype or dtypes.float64, device, requires_grad)


def empty(*shape, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Like `zeros` (buffers are never uninitialised in numgrad)."""
    return zeros(*shape, dtype=dtype, device=device, requires_grad=requires_grad)


def _like(x: Tensor, fill_value, dtype, device, requires_grad) -> Tensor:
    return full(x.shape, fill_value, x.dtype if dtype is None else dtype,
                x.device if device is None else device, requires_grad)


def zeros_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(x, 0, dtype, device, requires_grad)


def ones_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return _like(x, 1, dtype, device, requires_grad)


def full_like(x: Tensor, fill_value, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    return _like(x, fill_value, dtype, device, requires_grad)


def empty_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Like `zeros_like` (buffers are never uninitialised in numgrad)."""
    return _like(x, 0, dtype, device, requires_grad)


def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
    return tensor(np.arange(start, stop, step, dtype=dtype), device=device)


def linspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None,
             device=None) -> Tensor:
    return tensor(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), device=device)


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             device=None) -> Tensor:
    return tensor(np.logspace(start, stop, num, endpoint, base, dtype), device=device)


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None,
              device=None) -> Tensor:
    return tensor(np.geomspace(start, stop, num, endpoint, dtype), device=device)


def eye(n: int, m: int | None = None, k: int = 0, dtype=dtypes.float64, device=None) -> Tensor:
    return tensor(np.eye(n, m, k, dtype=dtype), device=device)


def identity(n: int, dtype=dtypes.float64, device=None) -> Tensor:
    return eye(n, dtype=dtype, device=device)
