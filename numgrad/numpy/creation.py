"""Creation functions: tensors from data, constants, ranges and identities."""

from __future__ import annotations

import numpy as np

from numgrad import dtypes
from numgrad.device import as_device
from numgrad.interop import from_dlpack
from numgrad.lazy import LazyBuffer
from numgrad.primitives import _shape_arg
from numgrad.tensor import Tensor


def tensor(data, dtype=None, device=None, requires_grad: bool = False,
           copy: bool | None = None) -> Tensor:
    """A tensor holding a copy of `data` (a scalar, nested list, ndarray or Tensor).

    ``copy=False`` (NumPy's "never copy") shares the memory of an array of the same dtype
    and device instead, as `numgrad.from_dlpack` does (numgrad never writes into it), and
    the value of a tensor; data that cannot be shared as it is raises ValueError.

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.tensor([[1.0, 2.0], [3.0, 4.0]]).sum().item()
    10.0
    """
    if copy is False:
        shared = _shared(data, dtype, device)
        return shared.requires_grad_() if requires_grad else shared
    return Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def _shared(data, dtype, device) -> Tensor:
    """`data` as a tensor without a copy (`tensor`'s ``copy=False``)."""
    if isinstance(data, Tensor):
        kept = data.dtype if dtype is None else dtypes.as_dtype(dtype)
        if kept != data.dtype or as_device(device or data.device) != data.device:
            raise ValueError(f"copy=False: a tensor of dtype {data.dtype} on "
                             f"'{data.device}' cannot become dtype {kept} on "
                             f"'{as_device(device or data.device)}' without a copy")
        return Tensor._wrap(data._buf)
    if not hasattr(data, "__dlpack__"):
        raise ValueError(f"copy=False: a {type(data).__name__} cannot be shared without a "
                         f"copy (an array can); pass copy=None")
    shared = from_dlpack(data)
    if dtype is not None and dtypes.as_dtype(dtype) != shared.dtype or \
            device is not None and as_device(device) != shared.device:
        raise ValueError(f"copy=False: an array of dtype {shared.dtype} on '{shared.device}' "
                         f"cannot become dtype {dtype or shared.dtype} on "
                         f"'{device or shared.device}' without a copy")
    return shared


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
    """A tensor of `shape` filled with `fill_value` (dtype inferred as NumPy does).

    A tensor `fill_value` (a scalar, or any shape that broadcasts to `shape`, as NumPy
    allows) is broadcast, differentiably: the result's gradient flows back to it
    (unless `requires_grad`, which makes the result a leaf of its own).

    Examples
    --------
    >>> import numgrad as ng
    >>> t = ng.tensor(2.0, requires_grad=True)
    >>> ng.grad((ng.full((3,), t) ** 2).sum(), t)[0].item()
    12.0
    """
    shape = _shape_arg((shape,))
    if any(d < 0 for d in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    if isinstance(fill_value, Tensor):
        if requires_grad:
            fill_value = fill_value.numpy()  # (its value: the result is a leaf)
        else:
            return fill_value.to(device, dtype).broadcast_to(shape)
    dtype = _scalar_dtype(fill_value) if dtype is None else dtypes.as_dtype(dtype)
    if requires_grad:  # a parameter: memory, as it will be after its first update
        return Tensor(np.full(shape, fill_value, dtype), device=device, requires_grad=True)
    return Tensor._wrap(LazyBuffer.const(fill_value, shape, dtype, as_device(device)))


def zeros(*size, shape=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of the shape given as ints or one sequence (``zeros(2, 3)``, ``zeros((2,
    3))``) or as `shape`, float64 unless `dtype` is given (as NumPy)."""
    return full(_dims(size, shape), 0, dtype or dtypes.float64, device, requires_grad)


def ones(*size, shape=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of the shape given as `zeros` takes it, float64 unless `dtype` is given."""
    return full(_dims(size, shape), 1, dtype or dtypes.float64, device, requires_grad)


def empty(*size, shape=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Like `zeros` (buffers are never uninitialised in numgrad)."""
    return zeros(*size, shape=shape, dtype=dtype, device=device, requires_grad=requires_grad)


def _dims(size: tuple, shape) -> tuple[int, ...]:
    """A shape given positionally or as ``shape=`` (NumPy's and the standard's name)."""
    if shape is None:
        return _shape_arg(size)
    if size:
        raise TypeError(f"the shape was given twice: {size!r} and shape={shape!r}")
    return _shape_arg((shape,))


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
