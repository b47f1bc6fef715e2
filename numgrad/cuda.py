"""``ng.cuda``: the CUDA device: whether it can run here, its name, synchronisation
and the buffer pool."""

from __future__ import annotations

from numgrad.device import cuda_is_available as is_available


def _backend():
    from numgrad.kernels import cuda

    return cuda


def device_name() -> str:
    """The GPU's name, or what stands in for one (the simulator)."""
    return _backend().device_name() if is_available() else "no CUDA device"


def synchronize() -> None:
    """Wait until every queued kernel and copy has finished (kernels run
    asynchronously: time them with this)."""
    if is_available():
        _backend().synchronize()


def memory_stats() -> dict[str, int]:
    """The buffer pool's counters: device ``allocations`` made, blocks ``reuses``
    and ``bytes_reserved`` (held by the pool, in use or free)."""
    return dict(_backend().pool_stats)


def empty_cache() -> None:
    """Give the pool's unused device memory back."""
    _backend().empty_cache()


__all__ = ["device_name", "empty_cache", "is_available", "memory_stats", "synchronize"]
