"""Tensor: creation, operators and methods. Records history and lazy values; runs nothing.

Every operation lands in `_apply`, which makes the output's `LazyBuffer` (its
value) and, when grad mode is on and an input requires grad, its `OpNode` (its
history). Composites (relu, var, softmax-style reductions, einsum, ...) are built
from primitives here, so they fuse and differentiate with no rule of their own.
"""

from __future__ import annotations

import math
import numbers
import weakref
from collections.abc import Sequence

import numpy as np

from numgrad import dtypes, engine, lazy
from numgrad.autograd.grad_mode import is_grad_enabled
from numgrad.autograd.graph import AccumulateGrad, Node, OpNode
from numgrad.device import Device, as_device
from numgrad.lazy import MAX_DEPTH, LazyBuffer
from numgrad.ops import BOOL, TABLE, TERNARY
from numgrad.shapes import broadcast_shapes, normalize_axes, normalize_axis, reduced_shape

Scalar = int | float | bool


class Tensor:
    """An n-dimensional array with a lazily computed value and a recorded history.

    Create tensors with `numgrad.tensor`, `numgrad.zeros`, ...; values are computed
    when needed (``.numpy()``, ``.item()``, printing) by fused, compiled kernels.
    """

    __slots__ = ("_buf", "_node", "_grad", "__weakref__")
    __array_priority__ = 1000  # ndarray <op> Tensor defers to Tensor's reflected op

    def __init__(self, data, dtype=None, device=None, requires_grad: bool = False):
        t = creation.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
        self._buf, self._node, self._grad = t._buf, None, None
        if requires_grad:
            self.requires_grad_()

    @classmethod
    def _wrap(cls, buf: LazyBuffer, node: Node | None = None) -> Tensor:
        t = object.__new__(cls)
        t._buf, t._node, t._grad = buf, node, None
        return t

    # ---- attributes ----------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._buf.shape

    @property
    def ndim(self) -> int:
        return len(self._buf.shape)

    @property
    def size(self) -> int:
        return math.prod(self._buf.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._buf.dtype

    @property
    def device(self) -> Device:
        return self._buf.device

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
        self._grad = value

    @property
    def T(self) -> Tensor:
        return self.transpose()

    # ---- values out ----------------------------------------------------------------
    def realize(self) -> Tensor:
        """Compute this tensor's value now (it is otherwise computed when needed)."""
        engine.realize(self._buf)
        return self

    def numpy(self) -> np.ndarray:
        """A NumPy copy of the value; changing it never changes the tensor."""
        self.realize()
        return self.device.backend.to_numpy(self._buf.realized)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    def item(self) -> Scalar:
        self._check_one_element("item()")
        return self.numpy().reshape(()).item()

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

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

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
            out = _apply("copy", (out,), out.device, out.shape, out.dtype, as_device(device))
        return out

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self) -> Tensor:
        return self.to("cuda")

    def astype(self, dtype) -> Tensor:
        """A copy converted to `dtype` (differentiable between floating dtypes)."""
        dtype = dtypes.as_dtype(dtype)
        return _apply("cast", (self,), dtype.name, self.shape, dtype)

    def _as(self, dtype: np.dtype) -> Tensor:
        return self if self.dtype == dtype else self.astype(dtype)

    def new_tensor(self, data) -> Tensor:
        """A tensor from `data` on this tensor's device (dtype inferred from `data`)."""
        return creation.tensor(data, device=self.device)

    def zeros_like(self) -> Tensor:
        return creation.full(self.shape, 0, dtype=self.dtype, device=self.device)

    def ones_like(self) -> Tensor:
        return creation.full(self.shape, 1, dtype=self.dtype, device=self.device)

    # ---- elementwise ---------------------------------------------------------------
    def exp(self) -> Tensor: return _elementwise("exp", self)
    def expm1(self) -> Tensor: return _elementwise("expm1", self)
    def log(self) -> Tensor: return _elementwise("log", self)
    def log1p(self) -> Tensor: return _elementwise("log1p", self)
    def sqrt(self) -> Tensor: return _elementwise("sqrt", self)
    def reciprocal(self) -> Tensor: return _elementwise("reciprocal", self)
    def sin(self) -> Tensor: return _elementwise("sin", self)
    def cos(self) -> Tensor: return _elementwise("cos", self)
    def tan(self) -> Tensor: return _elementwise("tan", self)
    def tanh(self) -> Tensor: return _elementwise("tanh", self)
    def sigmoid(self) -> Tensor: return _elementwise("sigmoid", self)
    def sign(self) -> Tensor: return _elementwise("sign", self)
    def floor(self) -> Tensor: return _elementwise("floor", self)
    def ceil(self) -> Tensor: return _elementwise("ceil", self)
    def logical_not(self) -> Tensor: return _elementwise("logical_not", self)
    def abs(self) -> Tensor: return _elementwise("abs", self)

    def square(self) -> Tensor:
        return self * self

    def relu(self) -> Tensor:
        # where, not maximum: relu'(0) = 0 as in PyTorch.
        return self.where(self > 0, 0)

    def round(self, decimals: int = 0) -> Tensor:
        """Round half to even, as NumPy does; integers are returned unchanged."""
        if self.dtype.kind != "f":
            return self.astype(self.dtype)
        if decimals == 0:
            return _elementwise("rint", self)
        scale = 10.0 ** decimals
        return _elementwise("rint", self * scale) / scale

    def clip(self, min=None, max=None) -> Tensor:  # noqa: A002 - NumPy's names
        """Limit values to ``[min, max]``; the gradient passes at the bounds."""
        out = self
        if min is not None:
            out = where(out < min, min, out)
        if max is not None:
            out = where(out > max, max, out)
        return out

    def where(self, condition, other) -> Tensor:
        """``where(condition, self, other)``, as PyTorch's ``Tensor.where``."""
        return where(condition, self, other)

    def __neg__(self) -> Tensor:
        if self.dtype == dtypes.bool_:
            raise TypeError("negative of a bool tensor is not supported; use logical_not()")
        return _elementwise("negative", self)

    negative = __neg__

    def __pos__(self) -> Tensor:
        return self.astype(self.dtype)

    def __abs__(self) -> Tensor:
        return self.abs()

    def __invert__(self) -> Tensor:
        if self.dtype != dtypes.bool_:
            raise TypeError(f"~ is defined for bool tensors only, not {self.dtype}")
        return self.logical_not()

    def __add__(self, other) -> Tensor: return _elementwise("add", self, other)
    def __radd__(self, other) -> Tensor: return _elementwise("add", other, self)
    def __sub__(self, other) -> Tensor: return _elementwise("subtract", self, other)
    def __rsub__(self, other) -> Tensor: return _elementwise("subtract", other, self)
    def __mul__(self, other) -> Tensor: return _elementwise("multiply", self, other)
    def __rmul__(self, other) -> Tensor: return _elementwise("multiply", other, self)
    def __truediv__(self, other) -> Tensor: return _elementwise("divide", self, other)
    def __rtruediv__(self, other) -> Tensor: return _elementwise("divide", other, self)
    def __pow__(self, other) -> Tensor: return power(self, other)
    def __rpow__(self, other) -> Tensor: return power(other, self)
    def __matmul__(self, other) -> Tensor: return linalg.matmul(self, other)
    def __rmatmul__(self, other) -> Tensor: return linalg.matmul(other, self)
    def __and__(self, other) -> Tensor: return _elementwise("logical_and", self, other)
    def __rand__(self, other) -> Tensor: return _elementwise("logical_and", other, self)
    def __or__(self, other) -> Tensor: return _elementwise("logical_or", self, other)
    def __ror__(self, other) -> Tensor: return _elementwise("logical_or", other, self)
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
        self._buf = new._buf
        if not self.is_leaf or new.requires_grad:
            self._node = new._node
        return self

    def __setitem__(self, key, value) -> None:
        self._rebind(self.index_put(key, value))

    # ---- reductions ----------------------------------------------------------------
    def sum(self, axis=None, keepdims: bool = False, dtype=None) -> Tensor:
        x = self if dtype is None else self.astype(dtype)
        if x.dtype.kind in "bi" and dtype is None:
            x = x._as(dtypes.int64)  # NumPy sums bool and int32 in int64
        return _reduce("sum", x, axis, keepdims)

    def prod(self, axis=None, keepdims: bool = False) -> Tensor:
        x = self._as(dtypes.int64) if self.dtype.kind in "bi" else self
        return _reduce("prod", x, axis, keepdims)

    def max(self, axis=None, keepdims: bool = False) -> Tensor:
        return _reduce("max", self, axis, keepdims)

    def min(self, axis=None, keepdims: bool = False) -> Tensor:
        return _reduce("min", self, axis, keepdims)

    def mean(self, axis=None, keepdims: bool = False) -> Tensor:
        x = self._as(dtypes.to_float(self.dtype))
        return x.sum(axis, keepdims) / _count(self.shape, axis)

    def var(self, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
        """Variance with NumPy's default ``ddof=0``."""
        x = self._as(dtypes.to_float(self.dtype))
        centered = x - x.mean(axis, keepdims=True)
        return (centered * centered).sum(axis, keepdims) / (_count(self.shape, axis) - ddof)

    def std(self, axis=None, ddof: int = 0, keepdims: bool = False) -> Tensor:
        return self.var(axis, ddof, keepdims).sqrt()

    def logsumexp(self, axis=None, keepdims: bool = False) -> Tensor:
        """``log(sum(exp(x)))``, shifted by the maximum so it cannot overflow."""
        x = self._as(dtypes.to_float(self.dtype))
        shift = x.max(axis, keepdims=True).detach()
        shift = shift.where((shift - shift) == 0, 0)  # an infinite max shifts by 0
        out = (x - shift).exp().sum(axis, keepdims=True).log() + shift
        return out if keepdims else out.squeeze(normalize_axes(axis, self.ndim))

    def argmax(self, axis=None, keepdims: bool = False) -> Tensor:
        """Index of the first maximum (of the first NaN, if any), as NumPy."""
        return self._arg_extreme("max", axis, keepdims)

    def argmin(self, axis=None, keepdims: bool = False) -> Tensor:
        return self._arg_extreme("min", axis, keepdims)

    def _arg_extreme(self, which: str, axis, keepdims: bool) -> Tensor:
        x = self.detach()
        if axis is None:
            out = x.ravel()._arg_extreme(which, 0, False)
            return out.reshape((1,) * self.ndim) if keepdims else out
        axis = normalize_axis(axis, self.ndim)
        n = self.shape[axis]
        positions = creation.arange(n, device=self.device).reshape(
            tuple(n if d == axis else 1 for d in range(self.ndim)))
        hit = (x == getattr(x, which)(axis, keepdims=True)) | (x != x)
        return where(hit, positions, n).min(axis, keepdims)

    def all(self, axis=None, keepdims: bool = False) -> Tensor:
        return _reduce("min", self._as(dtypes.bool_), axis, keepdims)

    def any(self, axis=None, keepdims: bool = False) -> Tensor:
        return _reduce("max", self._as(dtypes.bool_), axis, keepdims)

    # ---- shape ---------------------------------------------------------------------
    def reshape(self, *shape) -> Tensor:
        shape = _shape_arg(shape)
        known = math.prod(d for d in shape if d != -1)
        if shape.count(-1) > 1 or any(d < -1 for d in shape):
            raise ValueError(f"invalid shape {shape}")
        if -1 in shape:
            if known == 0 or self.size % known:
                raise ValueError(f"cannot reshape a tensor of shape {self.shape} into {shape}")
            shape = tuple(self.size // known if d == -1 else d for d in shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape a tensor of shape {self.shape} into {shape}")
        return _movement("reshape", self, shape, shape)

    def transpose(self, *axes) -> Tensor:
        """Permute the axes; with none given, reverse them (``.T``)."""
        axes = _shape_arg(axes) if axes and axes != (None,) else tuple(range(self.ndim))[::-1]
        norm = tuple(normalize_axis(a, self.ndim) for a in axes)
        if sorted(norm) != list(range(self.ndim)):
            raise ValueError(f"axes {axes} are not a permutation of {self.ndim} axes")
        return _movement("permute", self, norm, tuple(self.shape[a] for a in norm))

    permute = transpose

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        axes = list(range(self.ndim))
        a, b = normalize_axis(axis1, self.ndim), normalize_axis(axis2, self.ndim)
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(tuple(axes))

    def broadcast_to(self, shape) -> Tensor:
        shape = _shape_arg((shape,))
        if broadcast_shapes(self.shape, shape) != shape:
            raise ValueError(f"cannot broadcast a tensor of shape {self.shape} to {shape}")
        x = self
        if x.ndim < len(shape):
            x = x.reshape((1,) * (len(shape) - x.ndim) + x.shape)
        return _movement("expand", x, shape, shape)

    def sum_to_shape(self, shape) -> Tensor:
        """Sum over the axes that broadcasting `shape` to this tensor's shape added."""
        shape = tuple(shape)
        if self.shape == shape:
            return self
        lead = self.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, d in enumerate(shape) if d == 1 and self.shape[lead + i] != 1)
        return self.sum(axes, keepdims=True).reshape(shape)

    def expand_dims(self, axis) -> Tensor:
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        ndim = self.ndim + len(axes)
        axes = normalize_axes(axes, ndim)
        dims = iter(self.shape)
        return self.reshape(tuple(1 if d in axes else next(dims) for d in range(ndim)))

    def squeeze(self, axis=None) -> Tensor:
        """Remove length-1 axes (the given ones must have length 1, as in NumPy)."""
        if axis is None:
            axes = tuple(d for d, n in enumerate(self.shape) if n == 1)
        else:
            axes = normalize_axes(axis, self.ndim)
            for a in axes:
                if self.shape[a] != 1:
                    raise ValueError(
                        f"cannot squeeze axis {a} of length {self.shape[a]}; only axes of "
                        f"length 1 can be squeezed (shape {self.shape})")
        return self.reshape(tuple(n for d, n in enumerate(self.shape) if d not in axes))

    def ravel(self) -> Tensor:
        return self.reshape(-1)

    flatten = ravel

    def __getitem__(self, key) -> Tensor:
        key = _index_key(key, self.shape)
        return _apply("index", (self,), key, index_shape(self.shape, key), self.dtype)

    def index_add(self, key, shape) -> Tensor:
        """Zeros of `shape` with this tensor added at ``[key]`` (the VJP of indexing)."""
        key = _index_key(key, shape)
        if index_shape(shape, key) != self.shape:
            raise ValueError(
                f"a tensor of shape {self.shape} does not fit the index of a tensor of "
                f"shape {tuple(shape)}")
        return _apply("index_add", (self,), (key, tuple(shape)), tuple(shape), self.dtype)

    def index_put(self, key, value) -> Tensor:
        """A copy with ``[key]`` set to `value` (NumPy's ``x[key] = value``, out of place)."""
        key = _index_key(key, self.shape)
        value = _as_tensor(value, self.dtype, self.device)._as(self.dtype)
        value = value.broadcast_to(index_shape(self.shape, key))
        return _apply("index_put", (self, value), key, self.shape, self.dtype)

    def dot(self, other) -> Tensor:
        return linalg.dot(self, other)


class _HookHandle:
    """Returned by `Tensor.register_hook`; ``remove()`` unregisters the hook."""

    def __init__(self, node: Node, hook):
        self._node = weakref.ref(node)
        node.hooks[id(self)] = hook

    def remove(self) -> None:
        node = self._node()
        if node is not None:
            node.hooks.pop(id(self), None)


# ---- the one place operations are recorded -----------------------------------------

def _apply(name: str, inputs: tuple[Tensor, ...], arg, shape, dtype,
           device: Device | None = None) -> Tensor:
    """Record primitive `name` on `inputs`: a lazy value and, if needed, a history node.

    The inputs share one device; the result is there too, unless `device` says
    otherwise (a copy between devices).
    """
    op = TABLE[name]
    source = inputs[0].device
    for t in inputs[1:]:
        if t.device != source:
            raise RuntimeError(
                f"{name} got tensors on different devices, '{source}' and '{t.device}'; "
                f"move them with .to() first")
    buf = lazy.make(op, tuple(t._buf for t in inputs), arg, shape, dtype, device or source)
    node = None
    if op.vjp is not None and dtype.kind == "f" and is_grad_enabled():
        if any(t._node is not None for t in inputs):
            node = OpNode(op, arg, inputs, buf)
    if buf.depth > MAX_DEPTH:
        engine.realize(buf)
    return Tensor._wrap(buf, node)


def _movement(name: str, x: Tensor, arg, shape) -> Tensor:
    return _apply(name, (x,), arg, shape, x.dtype)


def _as_tensor(value, dtype: np.dtype, device: Device) -> Tensor:
    """`value` as a tensor. Scalars become constants (kernel arguments, never arrays):
    a Python scalar of `dtype`, a NumPy scalar of its own dtype."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.generic):
        return creation.full((), value, dtype=dtypes.as_dtype(value.dtype), device=device)
    if isinstance(value, numbers.Number):
        return creation.full((), value, dtype=dtype, device=device)
    return creation.tensor(value, device=device)


def _operand_dtype(value):
    return value.dtype if isinstance(value, Tensor) else value


def _elementwise(name: str, *operands) -> Tensor:
    """Apply an elementwise primitive with NumPy's promotion and broadcasting."""
    op = TABLE[name]
    tensors = [o for o in operands if isinstance(o, Tensor)]
    device = tensors[0].device
    values = operands[1:] if op.kind == TERNARY else operands
    try:
        dtype = dtypes.result_type(*(_operand_dtype(v) for v in values))
    except TypeError as e:
        raise TypeError(f"{name}: {e}") from None
    if op.floating:
        dtype = dtypes.to_float(dtype)
    inputs = [_as_tensor(v, dtype, device)._as(dtype) for v in values]
    if op.kind == TERNARY:
        inputs.insert(0, _as_tensor(operands[0], dtypes.bool_, device)._as(dtypes.bool_))
    shape = broadcast_shapes(*(t.shape for t in inputs))
    inputs = [t if t.shape == shape else t.broadcast_to(shape) for t in inputs]
    out_dtype = dtypes.bool_ if op.result == BOOL else dtype
    return _apply(name, tuple(inputs), None, shape, out_dtype)


def _reduce(name: str, x: Tensor, axis, keepdims: bool) -> Tensor:
    axes = normalize_axes(axis, x.ndim)
    if name in ("max", "min") and any(x.shape[a] == 0 for a in axes):
        raise ValueError(
            f"{name} of an empty axis of a tensor of shape {x.shape} has no identity")
    out = _apply(name, (x,), axes, reduced_shape(x.shape, axes, False), x.dtype) if axes \
        else x.astype(x.dtype)
    return out.reshape(reduced_shape(x.shape, axes, True)) if keepdims else out


def _count(shape, axis) -> int:
    return math.prod(shape[a] for a in normalize_axes(axis, len(shape)))


def _shape_arg(args) -> tuple[int, ...]:
    shape = args[0] if len(args) == 1 and not isinstance(args[0], numbers.Integral) else args
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"a shape must be a sequence of ints, got {shape!r}") from None


# ---- indexing ----------------------------------------------------------------------

def _index_key(key, shape) -> tuple:
    """`key` with tensors as NumPy arrays and boolean masks as integer arrays."""
    key = key if isinstance(key, tuple) else (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            k = k.numpy()
        elif isinstance(k, (list, np.ndarray)):
            k = np.asarray(k)
        if isinstance(k, np.ndarray):
            if k.dtype == np.bool_:
                out.extend(k.nonzero())
                continue
            if k.dtype.kind not in "iu":
                raise IndexError(f"arrays used as indices must be integer or bool, not {k.dtype}")
        out.append(k)
    return tuple(out)


def index_shape(shape, key) -> tuple[int, ...]:
    """The shape of ``x[key]`` for x of `shape`, with NumPy's rules and errors."""
    dummy = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), tuple(shape), (0,) * len(shape))
    return dummy[key].shape


# ---- module-level operations -------------------------------------------------------

def where(condition, x, y) -> Tensor:
    """Elements of `x` where `condition` holds, else of `y` (broadcasting)."""
    return _elementwise("where", condition, x, y)


def power(x, y) -> Tensor:
    """``x ** y``; integer tensors to negative integer powers are an error, as in NumPy."""
    if isinstance(y, numbers.Integral) and y < 0 and isinstance(x, Tensor) \
            and x.dtype.kind in "bi":
        raise ValueError("integers to negative integer powers are not allowed")
    if isinstance(x, Tensor) and isinstance(y, numbers.Real) and y == 2 \
            and dtypes.result_type(x.dtype, y) == x.dtype:
        return x * x  # NumPy's fast path too: the same bits as power(x, 2)
    return _elementwise("power", x, y)


def concatenate(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("concatenate needs at least one tensor")
    first = tensors[0]
    if first.ndim == 0:
        raise ValueError("zero-dimensional tensors cannot be concatenated")
    axis = normalize_axis(axis, first.ndim)
    for t in tensors[1:]:
        if t.ndim != first.ndim or any(
                d != e for i, (d, e) in enumerate(zip(t.shape, first.shape)) if i != axis):
            raise ValueError(
                f"concatenate: shapes {first.shape} and {t.shape} differ outside axis {axis}")
    dtype = dtypes.result_type(*(t.dtype for t in tensors))
    shape = list(first.shape)
    shape[axis] = sum(t.shape[axis] for t in tensors)
    return _apply("concatenate", tuple(t._as(dtype) for t in tensors), axis, shape, dtype)


def stack(tensors: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join tensors of one shape along a new axis."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    if any(t.shape != tensors[0].shape for t in tensors):
        raise ValueError(
            f"stack needs tensors of one shape, got {[t.shape for t in tensors]}")
    axis = normalize_axis(axis, tensors[0].ndim + 1)
    return concatenate([t.expand_dims(axis) for t in tensors], axis)


def split(x: Tensor, indices_or_sections, axis: int = 0) -> list[Tensor]:
    """Split into equal sections (an uneven split raises, as in NumPy) or at indices."""
    axis = normalize_axis(axis, x.ndim)
    n = x.shape[axis]
    if isinstance(indices_or_sections, numbers.Integral):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(
                f"cannot split an axis of length {n} into {sections} equal sections")
        bounds = list(range(0, n + 1, n // sections)) if n else [0] * (sections + 1)
    else:
        bounds = [0, *indices_or_sections, n]
    lead = (slice(None),) * axis
    return [x[lead + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:])]


def realize(*tensors: Tensor) -> None:
    """Compute the values of `tensors` now, in one schedule."""
    engine.realize(*(t._buf for t in tensors))


# These build Tensors and Tensor methods use them: modules, imported last.
from numgrad import creation, linalg  # noqa: E402
