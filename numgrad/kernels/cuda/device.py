"""The CUDA device kernels run on: availability, name, synchronisation, the cache key."""

from __future__ import annotations

import numba
from numba import cuda

#: Numba's simulator (``NUMBA_ENABLE_CUDASIM=1``) runs kernels on the CPU in place of a GPU.
SIMULATOR = bool(numba.config.ENABLE_CUDASIM)

#: This target in kernel cache keys: kernels compile differently per compute capability.
if SIMULATOR:
    key = "cuda-simulator"
elif cuda.is_available():
    key = "cuda-sm{}{}".format(*cuda.get_current_device().compute_capability)
else:
    key = "cuda-unavailable"


#: Why the device cannot be used when `is_available` is False (in ``as_device``'s error).
UNAVAILABLE = ("Numba finds no CUDA GPU (install the driver and numgrad's [cuda] extra, or set "
               "NUMBA_ENABLE_CUDASIM=1 for the simulator)")


def is_available() -> bool:
    """Whether kernels can run: a GPU with a working driver, or the simulator."""
    return cuda.is_available()


def device_name() -> str:
    if SIMULATOR:
        return "Numba's CUDA simulator (kernels run on the CPU)"
    if not is_available():
        return "no CUDA device"
    name = cuda.get_current_device().name  # bytes in older numba-cuda releases, str in newer
    return name.decode() if isinstance(name, bytes) else name


def synchronize() -> None:
    """Wait for every kernel and copy queued so far."""
    cuda.synchronize()


def py_func(kernel):
    """The Python function a ``cuda.jit`` kernel compiles (the simulator keeps it as ``fn``)."""
    return kernel.fn if SIMULATOR else kernel.py_func
