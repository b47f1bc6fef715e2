"""Devices: names, the default device, and the target module that runs each one."""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Iterator
from types import ModuleType

from numgrad import kernels

#: How the CPU runs kernel programs (SPEC §7): the target module of each mode.
CPU_KERNELS = {"numba": "cpu", "numpy": "interpreter", "tiered": "tiered"}
#: The mode where ``NUMGRAD_CPU_KERNELS`` names none.
DEFAULT_CPU_KERNELS = "tiered"


def target_name(device_type: str) -> str:
    """The module of `numgrad.kernels` that runs `device_type`: its own name, except
    that ``NUMGRAD_CPU_KERNELS`` chooses the CPU's."""
    if device_type != "cpu":
        return device_type
    mode = os.environ.get("NUMGRAD_CPU_KERNELS", DEFAULT_CPU_KERNELS)
    if mode not in CPU_KERNELS:
        raise ValueError(f"NUMGRAD_CPU_KERNELS={mode!r}; expected one of "
                         f"{', '.join(map(repr, CPU_KERNELS))}")
    return CPU_KERNELS[mode]


class Device:
    """A device by name (``'cpu'`` or ``'cuda'``); compares equal to its name."""

    __slots__ = ("type", "_backend")

    def __init__(self, type: str):
        self.type, self._backend = type, None

    @property
    def backend(self) -> ModuleType:
        """The target module (`numgrad.kernels`) that allocates, copies and runs kernels
        here; imported on first use."""
        if self._backend is None:
            self._backend = importlib.import_module(f"numgrad.kernels.{target_name(self.type)}")
        return self._backend

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


_DEVICES: dict[str, Device] = {"cpu": Device("cpu")}
_devices_lock = threading.RLock()  # one Device per name, whichever thread asks first
_default = _DEVICES["cpu"]


def as_device(device: str | Device | None) -> Device:
    """The Device for `device`; None means the default device.

    A device name is that of its target module, ``numgrad.kernels.<name>`` (see
    `numgrad.kernels`): ``'cpu'``, ``'cuda'``, or any module that implements the
    target contract. A target whose module has ``is_available()`` returning False
    (``'cuda'`` without a GPU) is an error here, naming what is missing.
    """
    if device is None:
        return _default
    if isinstance(device, Device):
        if _DEVICES.get(device.type) is device:
            return device
        device = device.type  # (one a user made: checked as its name is)
    name = str(device).split(":")[0]
    dev = _DEVICES.get(name)
    if dev is None:
        with _devices_lock:
            dev = _DEVICES.get(name) or _new_device(name, device)
    if not getattr(dev.backend, "is_available", lambda: True)():
        raise RuntimeError(f"the {name!r} device is not available: "
                           f"{getattr(dev.backend, 'UNAVAILABLE', 'no device')}; "
                           f"or use device='cpu'")
    return dev


def _new_device(name: str, device) -> Device:
    """The Device `name`, registered once its target module is found to be one."""
    dev = Device(name)
    module = f"numgrad.kernels.{target_name(name)}"
    try:
        missing = kernels.missing(dev.backend)
    except ModuleNotFoundError as error:
        if error.name != module:
            raise RuntimeError(f"the {name!r} device is not available: {error}") from None
        missing = ["everything"]
    if missing:
        raise ValueError(
            f"unknown device {device!r}; expected 'cpu' or 'cuda' (or a module {module} "
            f"that implements the target contract of numgrad.kernels)")
    _DEVICES[name] = dev
    return dev


def is_cuda_array(obj) -> bool:
    """Whether `obj` is device memory another library holds: one of Numba's device
    arrays, or anything with ``__cuda_array_interface__`` (CuPy, PyTorch on CUDA)."""
    return type(obj).__module__.startswith("numba.cuda") or \
        hasattr(obj, "__cuda_array_interface__")


def cuda_is_available() -> bool:
    """Whether the 'cuda' device can run kernels (a GPU, or NUMBA_ENABLE_CUDASIM=1)."""
    try:
        return importlib.import_module("numgrad.kernels.cuda").is_available()
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
