"""Launch configuration: threads and blocks per launch, and the one call every launch makes."""

from __future__ import annotations

import numba

from numgrad.kernels.cuda import ptx

#: Threads per block; a power of two (block reductions halve it).
MAX_THREADS = 256
#: Blocks of a grid-stride launch, at most.
MAX_BLOCKS = 4096


def threads(work: int) -> int:
    """Threads per block for `work` items: a power of two, at most MAX_THREADS."""
    return min(MAX_THREADS, 1 << max(0, work - 1).bit_length())


def configured(kernel, blocks, threads):
    """``kernel[blocks, threads]`` without numba-cuda's low-occupancy warning: a small
    tensor gets a small grid on purpose, and the warning would fire at every launch."""
    warns = numba.config.CUDA_LOW_OCCUPANCY_WARNINGS
    numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0
    try:
        return kernel[blocks, threads]
    finally:
        numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = warns


def _start(kernel, blocks, threads, args) -> None:
    configured(kernel, blocks, threads)(*args)


#: ``start(kernel, blocks, threads, args)`` launches ``kernel[blocks, threads](*args)``;
#: every kernel of this target starts here. Logged for the PTX check only when
#: ``NUMGRAD_CUDA_KERNEL_LOG`` was set at import: otherwise it costs nothing more.
start = ptx.recording(_start) if ptx.LOG else _start


def over(kernel, work: int, args) -> None:
    """Launch `kernel`, a grid-stride loop, over `work` items."""
    n = threads(work)
    start(kernel, max(1, min(-(-work // n), MAX_BLOCKS)), n, args)
