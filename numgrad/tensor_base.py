"""TensorBase: a tensor's state (its lazy value and history node) and its value read out.

`numgrad.tensor.Tensor` adds the operations. The base exists so that the layer
that records operations (`numgrad.primitives`) can know tensors without importing
the Tensor class, which is built on it.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from numgrad import engine
from numgrad.autograd.grad_mode import is_grad_enabled
from numgrad.autograd.graph import Node
from numgrad.device import Device
from numgrad.lazy import LazyBuffer
from numgrad.numpy import dispatch
from numgrad.plan import tracing
from numgrad.plan.recorder import LOCAL

Scalar = int | float | bool


#: Why a trace refuses a value read
_VALUE_READ = "a value was read (.numpy(), .item(), float(), bool(), ...)"


class Size(int):
    """A tensor's number of elements (NumPy's ``size``) that also answers PyTorch's
    ``size()`` and ``size(dim)`` when called. One per shape (`of`): the engine reads
    sizes at every backward step and reshape."""

    def __new__(cls, shape: tuple[int, ...]) -> Size:
        size = super().__new__(cls, math.prod(shape))
        size._of = shape  # (not `shape`: np.shape(size) would read it)
        return size

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def of(shape: tuple[int, ...]) -> Size:
        return Size(shape)

    def __getnewargs__(self) -> tuple:
        return (self._of,)

    def __call__(self, dim: int | None = None):
        return self._of if dim is None else self._of[dim]


class TensorBase:
    """What every tensor holds: a lazy value (`LazyBuffer`) and a history node (`Node`).

    Its attributes and the methods that read the value out are documented with
    `numgrad.Tensor`, which adds the operations.
    """

    __slots__ = ("_buf", "_node", "_grad", "__weakref__")

    @classmethod
    def _wrap(cls, buf: LazyBuffer, node: Node | None = None):
        """A tensor of this class with value `buf` and history `node` (no copy)."""
        t = object.__new__(cls)
        t._buf, t._node, t._grad = buf, node, None
        tracer = LOCAL.recorder.tracer
        if tracer is not None:
            tracer.wrapped(t)
        return t

    # ---- attributes ----------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._buf.shape

    @property
    def ndim(self) -> int:
        return len(self._buf.shape)

    @property
    def size(self) -> Size:
        """The number of elements, an int (NumPy's ``size``); called, PyTorch's ``size()``:
        ``t.size()`` is the shape and ``t.size(d)`` the length of axis `d`."""
        return Size.of(self._buf.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._buf.dtype

    @property
    def device(self) -> Device:
        return self._buf.device

    # ---- values out ----------------------------------------------------------------
    def realize(self) -> TensorBase:
        """Compute this tensor's value now (it is otherwise computed when needed)."""
        engine.realize(self._buf)
        return self

    def _read(self, what: str) -> None:
        """Compute the value, to be read: a trace refuses that (`what` says why), and a
        backward pass that reads it is then not kept, as a recipe or as a step plan (its
        rules' results would hold the value: `numgrad.plan.recorder.Recorder.reading`)."""
        thread = LOCAL.recorder
        if thread.watching:
            tracing.check_read(what)
            thread.reading(self._buf)
        self.realize()

    def numpy(self) -> np.ndarray:
        """A NumPy copy of the value; changing it never changes the tensor."""
        self._read(_VALUE_READ)
        return self.device.backend.to_numpy(self._buf.realized)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """``np.asarray(t)``, ``np.array(t)``: a copy of the value (the caller owns it).

        For a tensor that requires grad (grad mode on) this warns
        (`numgrad.numpy.dispatch.GradientDroppedWarning`), naming the function converting it:
        its result has no gradient. ``t.numpy()`` and ``t.detach()`` read the value
        without a warning."""
        if self._node is not None and is_grad_enabled():
            dispatch.warn_dropped()
        if copy is False:
            raise ValueError("a tensor's value cannot be shared with NumPy without a copy "
                             "(numgrad's buffers are immutable); use np.asarray(t) or t.numpy()")
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def item(self) -> Scalar:
        self._check_one_element("item()")
        self._read(_VALUE_READ)
        value = self._buf.realized  # (a host array is read as it is: no copy)
        return (value if self.device.type == "cpu" else self.device.backend.to_numpy(value)).item()

    def tolist(self):
        return self.numpy().tolist()

    def _check_one_element(self, what: str) -> None:
        if self.size != 1:
            raise ValueError(
                f"{what} needs a tensor with one element; this one has shape {self.shape}")

    def __float__(self) -> float:
        self._check_one_element("float()")
        return float(self.item())

    def __int__(self) -> int:
        self._check_one_element("int()")
        return int(self.item())

    def __complex__(self) -> complex:
        """The one element as a Python complex (the Array API standard's ``__complex__``):
        ``x + 0j``; NaN is ``nan + nanj``, as the standard says (Python's ``complex(nan)``
        and NumPy's are ``nan + 0j``)."""
        self._check_one_element("complex()")
        value = float(self.item())
        return complex(value, value) if math.isnan(value) else complex(value, 0.0)

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of a tensor with shape {self.shape} is ambiguous; "
                f"use .any() or .all()")
        return bool(self.item())

    def __index__(self) -> int:
        if self.dtype.kind not in "iub":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self)

    # ---- working with other libraries (SPEC §8) ------------------------------------
    def __array_ufunc__(self, ufunc, method: str, *inputs, **kwargs):
        """NumPy's ufuncs on tensors (NEP 13): ``np.exp(t)``, ``a + t`` (``a`` an ndarray)
        and ``np.add.reduce(t)`` call numgrad's function of the same name and return a
        tensor; see `numgrad.numpy.dispatch`."""
        return dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """NumPy's other functions on tensors (NEP 18): ``np.sum(t, axis=0)``,
        ``np.concatenate([t, u])``, ``np.linalg.solve(A, t)`` call numgrad's function of
        the same name; one numgrad does not have raises TypeError naming it."""
        return dispatch.array_function(func, types, args, kwargs)

    def __reduce__(self):
        """Pickle by value: the value, dtype, device name and requires_grad (not the
        history). Unpickling where the device does not exist raises, naming it."""
        return type(self), (self.numpy(), self.dtype.name, str(self.device), self._node is not None)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The value as a DLPack capsule, sharing this tensor's memory where its target
        can (numgrad never writes a computed buffer; the consumer must not either)."""
        self._read("__dlpack__ reads a value")
        return self.device.backend.dlpack(self._buf.realized, stream=stream,
                                          max_version=max_version, dl_device=dl_device,
                                          copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        """``(device type, index)`` in DLPack's codes: ``(1, 0)`` CPU, ``(2, n)`` CUDA."""
        return self.device.backend.dlpack_device()

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA array interface of a CUDA tensor's value (no copy); CPU tensors have
        none (AttributeError, so ``hasattr`` is False)."""
        if self.device != "cuda":
            raise AttributeError("only CUDA tensors have __cuda_array_interface__; this one "
                                 f"is on '{self.device}'")
        self._read("__cuda_array_interface__ reads a value")
        return self._buf.realized.__cuda_array_interface__

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]
