"""CUDA buffers for other libraries: DLPack (through CuPy) and the device's DLPack code."""

from __future__ import annotations

from numba import cuda

from numgrad.kernels.cuda.device import SIMULATOR


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
