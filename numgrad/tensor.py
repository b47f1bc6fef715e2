"""Tensor: its attributes, operators, autograd and device methods. Records history and
lazy values; runs nothing.

Each operator calls its primitive's application in `numgrad.primitives`, where
`_apply` makes the output's `LazyBuffer` (its value) and, when grad mode is on and an
input requires grad, its `OpNode` (its history). Tensor's NumPy and PyTorch methods
(``exp``, ``sum``, ``reshape``, ...) are the functions of `numgrad.numpy` and the
composites beside them, bound by one table (`numgrad.methods`) when numgrad is imported.
"""

from __future__ import annotations

import weakref

import numpy as np

from numgrad import dtypes, engine
from numgrad.autograd.grad_mode import is_grad_enabled
from numgrad.autograd.graph import AccumulateGrad, Node
from numgrad.device import as_device
from numgrad.lazy import LazyBuffer
from numgrad.matmul_rules import _dot, _matmul
from numgrad.plan import tracing
from numgrad.primitives import (
    _apply,
    _cast,
    _copy,
    _elementwise,
    _index,
    _index_key,
    _index_put,
    _load,
    index_shape,
)
from numgrad.tensor_base import TensorBase


class Tensor(TensorBase):
    """An n-dimensional array with a lazily computed value and a recorded history.

    Create tensors with `numgrad.tensor`, `numgrad.zeros`, ...; values are computed
    when needed (``.numpy()``, ``.item()``, printing) by fused, compiled kernels.
    ``shape``, ``ndim``, ``size``, ``dtype`` and ``device`` come from `TensorBase`.
    """

    __slots__ = ()
    __array_priority__ = 1000  # ndarray <op> Tensor defers to Tensor's reflected op

    def __init__(self, data, dtype=None, device=None, requires_grad: bool = False):
        self._buf, self._node, self._grad = _load(data, dtype, as_device(device)), None, None
        if requires_grad:
            self.requires_grad_()

    # ---- attributes ----------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._node is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self.requires_grad_(flag)

    @property
    def grad_fn(self) -> Node | None:
        return None if isinstance(self._node, AccumulateGrad) else self._node

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"grad must be a Tensor or None, got {type(value).__name__}")
            if value.shape != self.shape:
                raise ValueError(f"grad has shape {value.shape}; expected {self.shape}")
            if value.device != self.device:
                raise RuntimeError(f"grad is on '{value.device}'; expected '{self.device}'")
        tracing.saw(self)
        self._grad = value

    @property
    def T(self) -> Tensor:
        return self.transpose()

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped: a stack of matrices transposed (PyTorch's and the
        Array API's ``mT``)."""
        if self.ndim < 2:
            raise ValueError(f"mT needs at least 2 dimensions; this tensor has shape "
                             f"{self.shape}")
        return self.swapaxes(-1, -2)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes of the value (NumPy's ``nbytes``: elements times item size)."""
        return self.size * self.dtype.itemsize

    def copy(self) -> Tensor:
        """A new tensor of the same value, differentiable (PyTorch's ``clone``): its
        gradient flows back to this one. (Values are immutable: nothing is copied.)"""
        return +self if self.requires_grad else Tensor._wrap(self._buf)

    clone = copy

    # ---- values out (reading them is TensorBase's) -----------------------------------
    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"``: a one-element tensor's value formatted as its Python
        scalar is (``str(t)`` for an empty `spec`)."""
        if not spec:
            return str(self)
        self._check_one_element(f"format spec {spec!r}")
        return format(self.item(), spec)

    def __round__(self, ndigits: int | None = None) -> Tensor:
        """``round(t, n)``: the tensor rounded to `n` decimals (a tensor, as PyTorch's
        ``round`` gives; ``round(t.item(), n)`` gives a float)."""
        return self.round(0 if ndigits is None else ndigits)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        extra = f"dtype={self.dtype.name}, device='{self.device}'"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{self.grad_fn.name}>"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}, {extra})"

    __hash__ = object.__hash__

    # ---- autograd ------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs=None) -> None:
        """Add the gradient of this tensor with respect to each leaf into its ``.grad``.

        See `numgrad.autograd.backward`.
        """
        from numgrad.autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """The same value with no history (it does not require grad)."""
        tracing.saw(self)
        return Tensor._wrap(self._buf)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Make this leaf record operations on it (or stop); returns self."""
        if not self.is_leaf:
            raise RuntimeError(
                "requires_grad can only be changed on leaf tensors; use detach() for a "
                "non-leaf")
        if requires_grad and not dtypes.is_float(self.dtype):
            raise TypeError(
                f"only floating tensors can require grad; this one has dtype {self.dtype}")
        self._node = AccumulateGrad(self) if requires_grad else None
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in ``.grad`` during backward."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad() on a tensor that does not require grad")
        if not self.is_leaf:
            self._node.retained = weakref.ref(self)

    def register_hook(self, hook) -> _HookHandle:
        """Call ``hook(grad)`` when this tensor's gradient is computed.

        The hook may return a Tensor to use instead. Returns a handle whose
        ``remove()`` unregisters it.
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that does not require grad")
        return _HookHandle(self._node, hook)

    # ---- devices and dtypes --------------------------------------------------------
    def to(self, device=None, dtype=None) -> Tensor:
        """This tensor on `device` and/or as `dtype` (self when nothing changes).

        A copy between devices is differentiable: the gradient flows back to this
        tensor's device.
        """
        out = self
        if dtype is not None and dtypes.as_dtype(dtype) != self.dtype:
            out = out.astype(dtype)
        if device is not None and as_device(device) != self.device:
            out = _copy(out, as_device(device))
        return out

    def to_device(self, device, /, *, stream=None) -> Tensor:
        """This tensor on `device` (the standard's name for ``to(device)``); `stream`
        must be None (numgrad runs on each device's default stream)."""
        if stream is not None:
            raise ValueError(f"to_device: numgrad takes no stream, got {stream!r}")
        return self.to(device)

    def __array_namespace__(self, /, *, api_version: str | None = None):
        """The namespace of the Python Array API standard for this tensor: `numgrad`
        itself (its version: ``numgrad.__array_api_version__``; code written for the
        standard, and libraries that support it, such as SciPy under
        ``SCIPY_ARRAY_API=1``, find numgrad's functions through it)."""
        import numgrad
        if api_version is not None and api_version not in numgrad.numpy.standard.API_VERSIONS:
            raise ValueError(f"numgrad has no namespace for Array API version "
                             f"{api_version!r}; it has {numgrad.numpy.standard.API_VERSIONS}")
        return numgrad

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self) -> Tensor:
        return self.to("cuda")

    def astype(self, dtype) -> Tensor:
        """A copy converted to `dtype` (differentiable between floating dtypes)."""
        return _cast(self, dtypes.as_dtype(dtype))

    def new_tensor(self, data) -> Tensor:
        """A tensor from `data` on this tensor's device (dtype inferred from `data`)."""
        return Tensor(data, device=self.device)

    def zeros_like(self) -> Tensor:
        return Tensor._wrap(LazyBuffer.const(0, self.shape, self.dtype, self.device))

    def ones_like(self) -> Tensor:
        return Tensor._wrap(LazyBuffer.const(1, self.shape, self.dtype, self.device))

    # ---- operators ---------------------------------------------------------------
    # (-x, +x, abs(x), ~x and ** are numgrad.numpy.elementwise's functions, bound by
    # numgrad.methods: each checks its operand first)
    def __add__(self, other) -> Tensor: return _elementwise("add", self, other)
    def __radd__(self, other) -> Tensor: return _elementwise("add", other, self)
    def __sub__(self, other) -> Tensor: return _elementwise("subtract", self, other)
    def __rsub__(self, other) -> Tensor: return _elementwise("subtract", other, self)
    def __mul__(self, other) -> Tensor: return _elementwise("multiply", self, other)
    def __rmul__(self, other) -> Tensor: return _elementwise("multiply", other, self)
    def __truediv__(self, other) -> Tensor: return _elementwise("divide", self, other)
    def __rtruediv__(self, other) -> Tensor: return _elementwise("divide", other, self)
    def __mod__(self, other) -> Tensor: return _elementwise("mod", self, other)
    def __rmod__(self, other) -> Tensor: return _elementwise("mod", other, self)
    def __floordiv__(self, other) -> Tensor: return _elementwise("floor_divide", self, other)
    def __rfloordiv__(self, other) -> Tensor: return _elementwise("floor_divide", other, self)
    def __divmod__(self, other) -> tuple: return self // other, self % other
    def __rdivmod__(self, other) -> tuple: return other // self, other % self
    def __matmul__(self, other) -> Tensor: return _matmul(self, other)
    def __rmatmul__(self, other) -> Tensor: return _matmul(other, self)
    # &, | and ^ are NumPy's: bitwise on integers, logical on bools (floats: TypeError)
    def __and__(self, other) -> Tensor: return _elementwise("bitwise_and", self, other)
    def __rand__(self, other) -> Tensor: return _elementwise("bitwise_and", other, self)
    def __or__(self, other) -> Tensor: return _elementwise("bitwise_or", self, other)
    def __ror__(self, other) -> Tensor: return _elementwise("bitwise_or", other, self)
    def __xor__(self, other) -> Tensor: return _elementwise("bitwise_xor", self, other)
    def __rxor__(self, other) -> Tensor: return _elementwise("bitwise_xor", other, self)
    # << and >> are NumPy 2's on integers (floats, and a bool by a bool: TypeError)
    def __lshift__(self, other) -> Tensor: return _elementwise("left_shift", self, other)
    def __rlshift__(self, other) -> Tensor: return _elementwise("left_shift", other, self)
    def __rshift__(self, other) -> Tensor: return _elementwise("right_shift", self, other)
    def __rrshift__(self, other) -> Tensor: return _elementwise("right_shift", other, self)
    def __eq__(self, other) -> Tensor: return _elementwise("equal", self, other)  # type: ignore[override]
    def __ne__(self, other) -> Tensor: return _elementwise("not_equal", self, other)  # type: ignore[override]
    def __lt__(self, other) -> Tensor: return _elementwise("less", self, other)
    def __le__(self, other) -> Tensor: return _elementwise("less_equal", self, other)
    def __gt__(self, other) -> Tensor: return _elementwise("greater", self, other)
    def __ge__(self, other) -> Tensor: return _elementwise("greater_equal", self, other)

    # In-place operators give this object a new value; nothing else sees the change.
    def __iadd__(self, other) -> Tensor: return self._rebind(self + other)
    def __isub__(self, other) -> Tensor: return self._rebind(self - other)
    def __imul__(self, other) -> Tensor: return self._rebind(self * other)
    def __itruediv__(self, other) -> Tensor: return self._rebind(self / other)
    def __ipow__(self, other) -> Tensor: return self._rebind(self ** other)
    def __imod__(self, other) -> Tensor: return self._rebind(self % other)
    def __ifloordiv__(self, other) -> Tensor: return self._rebind(self // other)
    def __imatmul__(self, other) -> Tensor: return self._rebind(self @ other)
    def __iand__(self, other) -> Tensor: return self._rebind(self & other)
    def __ior__(self, other) -> Tensor: return self._rebind(self | other)
    def __ixor__(self, other) -> Tensor: return self._rebind(self ^ other)
    def __ilshift__(self, other) -> Tensor: return self._rebind(self << other)
    def __irshift__(self, other) -> Tensor: return self._rebind(self >> other)

    def _rebind(self, new: Tensor) -> Tensor:
        if self.requires_grad and self.is_leaf and is_grad_enabled():
            raise RuntimeError(
                "a leaf tensor that requires grad cannot be changed in place while grad "
                "mode is on; do it under ng.no_grad() (as an optimizer step does)")
        if new.shape != self.shape:
            raise ValueError(
                f"an in-place result of shape {new.shape} does not fit a tensor of shape "
                f"{self.shape}")
        if new.dtype != self.dtype:
            if not np.can_cast(new.dtype, self.dtype, "same_kind"):
                raise TypeError(
                    f"cannot store a {new.dtype} result in place in a {self.dtype} tensor")
            new = new.astype(self.dtype)
        tracing.saw(self)
        self._buf = new._buf
        if not self.is_leaf or new.requires_grad:
            self._node = new._node
        engine.rebound(self)
        return self

    def __setitem__(self, key, value) -> None:
        self._rebind(self.index_put(key, value))

    # ---- indexing and products ------------------------------------------------------
    def __getitem__(self, key) -> Tensor:
        return _index(self, key)

    def index_put(self, key, value) -> Tensor:
        """A copy with ``[key]`` set to `value` (NumPy's ``x[key] = value``, out of place)."""
        return _index_put(self, key, value)

    def dot(self, other) -> Tensor:
        """NumPy's dot: a product for scalars, matmul up to 2-D, a contraction above."""
        return _dot(self, other)

    # ---- for the VJP rules in ops.py only --------------------------------------------
    def _sum_to_shape(self, shape) -> Tensor:
        """Sum over the axes that broadcasting `shape` to this tensor's shape added."""
        shape = tuple(shape)
        if self.shape == shape:
            return self
        lead = self.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(shape) if d == 1 and self.shape[lead + i] != 1)
        return self.sum(axes).reshape(shape)

    def _index_add(self, key, shape) -> Tensor:
        """Zeros of `shape` with this tensor added at ``[key]`` (the VJP of indexing)."""
        key = _index_key(key, shape)
        if index_shape(shape, key) != self.shape:
            raise ValueError(
                f"a tensor of shape {self.shape} does not fit the index of a tensor of "
                f"shape {tuple(shape)}")
        return _apply("index_add", (self,), (key, tuple(shape)), tuple(shape), self.dtype)


class _HookHandle:
    """Returned by `Tensor.register_hook`; ``remove()`` unregisters the hook."""

    def __init__(self, node: Node, hook):
        self._node = weakref.ref(node)
        if node.hooks is None:
            node.hooks = {}
        node.hooks[id(self)] = hook

    def remove(self) -> None:
        node = self._node()
        if node is not None and node.hooks:
            node.hooks.pop(id(self), None)


# ---- module-level operations -------------------------------------------------------

def realize(*tensors: Tensor) -> None:
    """Compute the values of `tensors` now, in one schedule."""
    engine.realize(*(t._buf for t in tensors))

