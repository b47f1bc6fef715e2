"""Host buffers: NumPy arrays, their views and copies, and NumPy's BLAS for matmul.

The buffer and movement half of the target contract (`numgrad.kernels`) for the CPU,
shared by its two kernel modes: Numba-compiled (`numgrad.kernels.cpu`) and interpreted
(`numgrad.kernels.interpreter`).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from numgrad.kernels import host_pool

__all__ = ["name", "empty", "full", "from_numpy", "to_numpy", "strides", "as_strided",
           "is_view", "copy", "reshape", "permute", "expand", "index", "index_add",
           "index_put", "concatenate", "roll", "matmul", "library", "dlpack", "dlpack_device"]

name = "cpu"


def allocation_error(shape, dtype, device: str = "cpu") -> MemoryError:
    """The `MemoryError` of a buffer of `shape` and `dtype` that `device` cannot hold."""
    shape, dtype = tuple(int(n) for n in shape), np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    return MemoryError(f"cannot allocate a {dtype} buffer of shape {shape} ({nbytes} bytes) "
                       f"on '{device}': not enough memory")


def _allocates(fn):
    """`fn`, with NumPy's failed allocations raised as `allocation_error`."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MemoryError as error:
            if getattr(error, "shape", None) is None:  # NumPy's errors say what it was
                raise
            raise allocation_error(error.shape, error.dtype) from None
    return wrapper


def empty(shape, dtype) -> np.ndarray:
    """A new buffer; large ones reuse pooled memory (`numgrad.kernels.host_pool`)."""
    try:
        return host_pool.empty(tuple(shape), dtype)
    except MemoryError:
        raise allocation_error(shape, dtype) from None


def full(shape, value, dtype) -> np.ndarray:
    """An array of `shape` holding `value`: one element, broadcast."""
    return expand(np.array(value, dtype), shape)


@_allocates
def from_numpy(array: np.ndarray) -> np.ndarray:
    """A private copy of `array`; the caller may mutate theirs afterwards."""
    return np.array(array, copy=True, order="C")


@_allocates
def to_numpy(array: np.ndarray) -> np.ndarray:
    return np.array(array, copy=True)


def strides(array: np.ndarray) -> tuple[int, ...]:
    return array.strides


def as_strided(array: np.ndarray, shape, strides, writeable: bool = False) -> np.ndarray:
    """`array` seen with `shape` and `strides`: writable if `writeable` and `array` is.

    A contiguous array whose reshape has these strides (but where a dimension has
    length 1) is reshaped, and other views of a contiguous array are made by NumPy's
    ndarray constructor: NumPy's as_strided costs about five to nine times more, and
    launches make a view per input.
    """
    shape = tuple(shape)
    if array.flags.c_contiguous and array.size == math.prod(shape) and array.size:
        view = array.reshape(shape)
        if all(a == b or n == 1 for a, b, n in zip(view.strides, strides, shape)):
            view.flags.writeable = writeable and array.flags.writeable
            return view
    if array.flags.c_contiguous:  # NumPy's constructor: 0.3 us against 2.7
        try:
            view = np.ndarray(shape, array.dtype, array, 0, strides)
        except ValueError:  # (reaches outside `array`: negative strides, say)
            pass
        else:
            view.flags.writeable = writeable and array.flags.writeable
            return view
    return np.lib.stride_tricks.as_strided(array, shape, strides, writeable=writeable)


def is_view(array: np.ndarray) -> bool:
    """Whether `array` shares another array's memory (it allocated nothing)."""
    return array.base is not None and not host_pool.is_fresh(array)


def copy(array, source) -> np.ndarray:
    """`array`, a buffer of device `source`, copied here."""
    return source.backend.to_numpy(array)


def dlpack(array: np.ndarray, *, stream=None, max_version=None, dl_device=None, copy=None):
    """`array` as a DLPack capsule: its own memory, unless the consumer cannot be told it
    is read-only (a broadcast constant under the unversioned protocol), then a copy
    (unless ``copy=False``, which raises)."""
    kwargs = dict(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
    try:
        return array.__dlpack__(**kwargs)
    except BufferError:
        if copy is False:
            raise
        return np.array(array).__dlpack__(**{**kwargs, "copy": None})


def dlpack_device() -> tuple[int, int]:
    return (1, 0)  # kDLCPU


# ---- movement and hand-written kernels, by primitive name ------------------------

def reshape(array, shape):
    return array.reshape(shape)


def permute(array, axes):
    return array.transpose(axes)


def expand(array, shape):
    """`array` broadcast to `shape`. Unlike NumPy's broadcast_to, as writable as
    `array`: every array numgrad passes a kernel then has one type, in eager launches
    and in ng.jit's prepared plans (numgrad never writes to an input)."""
    shape = tuple(shape)
    lead = len(shape) - array.ndim
    strides = (0,) * lead + tuple(0 if n == 1 and m != 1 else s for n, m, s in
                                  zip(array.shape, shape[lead:], array.strides))
    return as_strided(array, shape, strides, writeable=True)


def index(array, key):
    result = array[key]
    if isinstance(result, np.ndarray):
        return result
    # An integer per axis gives a NumPy scalar, not a view: keep the 0-d view.
    return array[(*(key if isinstance(key, tuple) else (key,)), Ellipsis)]


@_allocates
def index_add(array, arg, out=None):
    """Zeros of ``arg[1]``'s shape with `array` added at ``arg[0]`` (repeats add up).

    Into `out` if given: zeros where a `basic_key` does not reach (ng.jit's prepared
    plans keep such a buffer and assign into it again at every call).
    """
    key, shape = arg
    if out is None:
        out = np.zeros(shape, array.dtype)
    if basic_key(key):
        out[key] = array  # reaches each element once
    else:
        np.add.at(out, key, array)  # integer arrays may repeat an index
    return out


def basic_key(key) -> bool:
    """Whether `key` is made of slices, integers, None and Ellipsis only."""
    return all(k is None or k is Ellipsis or isinstance(k, (slice, int, np.integer))
               for k in (key if isinstance(key, tuple) else (key,)))


@_allocates
def index_put(array, values, key):
    out = array.copy()
    out[key] = values
    return out


@_allocates
def concatenate(*arrays_and_axis):
    *arrays, axis = arrays_and_axis
    return np.concatenate(arrays, axis=axis)


@_allocates
def roll(array, shifts):
    """`array` shifted cyclically by ``shifts``, ((axis, shift), ...), each shift in
    ``[1, length)``: NumPy's roll as its ``2 ** len(shifts)`` block copies, without its
    argument handling (most of its time on a stencil's arrays)."""
    out = empty(array.shape, array.dtype)
    for dst, src in _roll_blocks(array.shape, shifts):
        out[dst] = array[src]
    return out


@functools.lru_cache(maxsize=1024)
def _roll_blocks(shape: tuple[int, ...], shifts: tuple) -> tuple:
    """The (destination, source) keys of `roll`'s block copies."""
    whole = [slice(None)] * len(shape)
    blocks = [(whole, whole)]
    for axis, shift in shifts:
        n = shape[axis]
        halves = ((slice(shift, None), slice(None, n - shift)),
                  (slice(None, shift), slice(n - shift, None)))
        blocks = [(_at(dst, axis, to), _at(src, axis, of))
                  for dst, src in blocks for to, of in halves]
    return tuple((tuple(dst), tuple(src)) for dst, src in blocks)


def _at(key: list, axis: int, part: slice) -> list:
    """`key` with `part` along `axis`."""
    key = list(key)
    key[axis] = part
    return key


@_allocates
def matmul(a, b, arg=None, out=None):
    """``a @ b``, into `out` if given (an array of the product's shape and dtype that
    ng.jit's prepared plans keep)."""
    if a.ndim == b.ndim >= 2 and a.shape[:-2] == b.shape[:-2] and a.dtype == b.dtype:
        return np.matmul(a, b, out=empty(a.shape[:-1] + b.shape[-1:], a.dtype)
                         if out is None else out)
    return np.matmul(a, b, out=out)


@_allocates
def library(*arrays_and_call):
    """A library primitive (`numgrad.ops.LIBRARY`): ``op.ref(*arrays, arg)``, C-contiguous."""
    *arrays, (op, arg) = arrays_and_call
    result = np.asarray(op.ref(*arrays, arg))
    return result if result.flags.c_contiguous else np.ascontiguousarray(result)
