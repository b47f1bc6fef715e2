"""Devices: names, the default device, and the backend that runs each one."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from types import ModuleType

_TARGETS = {"cpu": "numgrad.kernels.cpu", "cuda": "numgrad.kernels.cuda"}


class Device:
    """A target by name (``'cpu'`` or ``'cuda'``); compares equal to its name."""

    __slots__ = ("type",)

    def __init__(self, type: str):
        self.type = type

    @property
    def backend(self) -> ModuleType:
        """The module in `numgrad.kernels` that allocates, copies and runs kernels here."""
        return importlib.import_module(_TARGETS[self.type])

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = other.split(":")[0]
            return self.type == other
        return isinstance(other, Device) and other.type == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    def __str__(self) -> str:
        return self.type

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"


_DEVICES = {name: Device(name) for name in _TARGETS}
_default = _DEVICES["cpu"]


def as_device(device: str | Device | None) -> Device:
    """The Device for `device`; None means the default device."""
    if device is None:
        return _default
    if isinstance(device, Device):
        return device
    name = str(device).split(":")[0]
    if name not in _DEVICES:
        raise ValueError(f"unknown device {device!r}; expected 'cpu' or 'cuda'")
    dev = _DEVICES[name]
    if name == "cuda" and not cuda_is_available():
        raise RuntimeError(
            "the 'cuda' device is not available: Numba finds no CUDA GPU (install the "
            "driver and numgrad's [cuda] extra, or set NUMBA_ENABLE_CUDASIM=1 for the "
            "simulator; or use device='cpu')")
    return dev


def cuda_is_available() -> bool:
    """Whether the 'cuda' device can run kernels (a GPU, or NUMBA_ENABLE_CUDASIM=1)."""
    try:
        return _DEVICES["cuda"].backend.is_available()
    except ImportError:
        return False


def set_default_device(device: str | Device) -> None:
    """Make `device` the one every creation function uses when given none."""
    global _default
    _default = as_device(device)


def get_default_device() -> Device:
    return _default


@contextlib.contextmanager
def default_device(device: str | Device) -> Iterator[Device]:
    """Within the block, creation functions use `device` by default."""
    global _default
    previous, _default = _default, as_device(device)
    try:
        yield _default
    finally:
        _default = previous
