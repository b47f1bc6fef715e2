"""CUDA buffers and other libraries: DLPack export (through CuPy), the device's DLPack
code, and buffers over another library's device memory."""

from __future__ import annotations

import numpy as np
from numba import cuda

from numgrad.kernels.cuda import moves, pool
from numgrad.kernels.cuda.device import SIMULATOR
from numgrad.kernels.layout import contiguous_strides


def dlpack(array, *, stream=None, max_version=None, dl_device=None, copy=None):
    """`array` as a DLPack capsule over the same device memory.

    Numba's device arrays speak the CUDA array interface, not DLPack, so the capsule is
    made by CuPy (which keeps `array` alive) when it is installed; without CuPy this
    raises `BufferError` pointing to ``__cuda_array_interface__``, which PyTorch
    (``torch.as_tensor(t, device='cuda')``), CuPy and Numba read without a copy.
    """
    try:
        import cupy
    except ImportError:
        raise BufferError(
            "exporting a CUDA tensor through DLPack needs CuPy (pip install cupy-cuda13x); "
            "without it, consumers can read t.__cuda_array_interface__ without a copy, e.g. "
            "torch.as_tensor(t, device='cuda') or cupy.asarray(t)") from None
    return cupy.asarray(array).__dlpack__(stream=stream, max_version=max_version,
                                          dl_device=dl_device, copy=copy)


def dlpack_device() -> tuple[int, int]:
    """``(2, index)``: kDLCUDA and the current device (0 in the simulator)."""
    return (2, 0 if SIMULATOR else cuda.get_current_device().id)


def adopt(obj):
    """A buffer of this target over `obj`'s device memory, without a copy: a Numba device
    array, or anything Numba reads as one (``__cuda_array_interface__``, DLPack: CuPy,
    PyTorch). Only a C-contiguous array is shared; another layout is copied (through
    the host). Its memory stays `obj`'s: the buffer keeps `obj` alive and never goes
    into the pool."""
    array = obj if _is_numba_array(obj) else cuda.as_cuda_array(obj)
    contiguous = contiguous_strides(array.shape, array.dtype.itemsize)
    if tuple(array.strides) != contiguous and array.size > 1:
        return pool.from_numpy(array.copy_to_host())
    if SIMULATOR:  # the simulator's device arrays hold a host array
        memory = np.ascontiguousarray(array.copy_to_host() if not hasattr(array, "_ary")
                                      else array._ary).reshape(-1).view(np.uint8)
    else:
        memory = array
    block = pool.Block(memory, array.size * array.dtype.itemsize)
    return pool.view(block, 0, array.shape, contiguous, array.dtype)


def clone(obj):
    """A new buffer of this target holding a copy of `obj`'s device memory (see
    `adopt`), copied on the device."""
    source = adopt(obj)
    out = pool.empty(source.shape, source.dtype)
    moves.copy_into(out, source)
    return out


def _is_numba_array(obj) -> bool:
    return type(obj).__name__ in ("DeviceNDArray", "FakeCUDAArray")
