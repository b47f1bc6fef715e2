"""Primitives applied to tensors: `_apply`, the one place an operation is recorded.

`_apply` makes the output's `LazyBuffer` (its value) and, when grad mode is on
and an input requires grad, its `OpNode` (its history). The other functions put
NumPy's rules (promotion, broadcasting, shape checks) in front of a primitive.
Results take their inputs' class, so this module, like the VJP rules in ops.py,
needs no import of tensor.py; Tensor's methods call it.
"""

from __future__ import annotations

import functools
import math
import numbers
import weakref

import numpy as np

from numgrad import depth, dtypes, lazy
from numgrad.autograd.grad_mode import is_grad_enabled
from numgrad.autograd.graph import OpNode
from numgrad.device import Device, is_cuda_array
from numgrad.lazy import MAX_DEPTH, LazyBuffer
from numgrad.ops import BOOL, TABLE
from numgrad.plan import tracing
from numgrad.plan.recorder import LOCAL, Recorder
from numgrad.shapes import broadcast_shapes, normalize_axes, normalize_axis, reduced_shape
from numgrad.tensor_base import _VALUE_READ, TensorBase

# ---- the one place operations are recorded -----------------------------------------

_new = object.__new__


def _apply(name: str, inputs: tuple[TensorBase, ...], arg, shape, dtype,
           device: Device | None = None):
    """Record primitive `name` on `inputs`: a lazy value and, if needed, a history node.

    The inputs share one device; the result is there too, unless `device` says
    otherwise (a copy between devices).
    """
    recorder = LOCAL.recorder
    if recorder.tracer is not None:
        recorder.tracer.saw(inputs)
    bufs, nodes = [], []
    source = inputs[0]._buf.device
    for t in inputs:
        buf = t._buf
        if buf.device is not source and buf.device != source:
            raise _devices(name, source, buf.device)
        bufs.append(buf)
        nodes.append(t._node)
    return _record(TABLE[name], arg, tuple(bufs), tuple(nodes), type(inputs[0]), shape,
                   dtype, device or source, recorder)


def _record(op, arg, bufs: tuple, nodes: tuple, cls, shape, dtype, device,
            recorder: Recorder):
    """A tensor of class `cls` with `op`'s value on `bufs` (the inputs' values) and, when
    grad mode is on and one of the inputs' history `nodes` is not None, its own, reported
    to this thread's `recorder`.

    This runs for every recorded operation: it builds its objects directly.
    """
    buf = lazy.make(op, bufs, arg, shape, dtype, device, recorder)
    node = OpNode(op, arg, nodes, bufs, buf) if op.vjp is not None and dtype.kind == "f" \
        and nodes.count(None) != len(nodes) and is_grad_enabled() else None
    out = _new(cls)  # (TensorBase._wrap written out)
    out._buf, out._node, out._grad = buf, node, None
    if recorder.watching:
        recorder.wrapped(out, node)
    if buf.depth > MAX_DEPTH:
        depth.cut(buf, recorder.cut if recorder.on else None)
    return out


def _devices(name: str, one: Device, other: Device) -> RuntimeError:
    return RuntimeError(f"{name} got tensors on different devices, '{one}' and '{other}'; "
                        f"move them with .to() first")


# ---- data and constants ------------------------------------------------------------

def _load(data, dtype, device: Device) -> LazyBuffer:
    """A buffer with a copy of `data` (a scalar, nested list, ndarray, tensor, or on CUDA
    a device array of another library) on `device`.

    A tensor's value is taken without its history; `dtype` None keeps the data's dtype.
    """
    if isinstance(data, TensorBase):
        tracing.saw(data)
        x = type(data)._wrap(data._buf)
        x = _cast(x, dtypes.as_dtype(dtype)) if dtype is not None else x
        return (_copy(x, device) if x.device != device else x)._buf
    if device == "cuda" and is_cuda_array(data):  # copied on the device, not through the host
        buf = LazyBuffer.load(device.backend.clone(data), device)
        return _load(TensorBase._wrap(buf), dtype, device) if dtype is not None else buf
    array = np.asarray(data)
    if array.dtype == object:
        raise TypeError(f"cannot make a tensor from {type(data).__name__} data")
    array = array.astype(dtypes.as_dtype(array.dtype if dtype is None else dtype), copy=False)
    return LazyBuffer.load(device.backend.from_numpy(array), device)


def _as_tensor(value, dtype: np.dtype, like: TensorBase):
    """`value` as a tensor of `like`'s class, on its device. Scalars become constants
    (kernel arguments, never arrays): a Python scalar of `dtype`, a NumPy scalar of its
    own dtype."""
    if isinstance(value, TensorBase):
        return value
    if isinstance(value, np.generic):
        buf = LazyBuffer.const(value, (), dtypes.as_dtype(value.dtype), like.device)
    elif isinstance(value, numbers.Number):
        buf = LazyBuffer.const(value, (), dtypes.as_dtype(dtype), like.device)
    else:
        buf = _load(value, None, like.device)
    return type(like)._wrap(buf)


def _shape_arg(args) -> tuple[int, ...]:
    """A shape given as ints or as one sequence (``reshape(2, 3)``, ``reshape((2, 3))``)."""
    shape = args[0] if len(args) == 1 and not isinstance(args[0], numbers.Integral) else args
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"a shape must be a sequence of ints, got {shape!r}") from None


# ---- elementwise, casts and reductions ---------------------------------------------

def _cast(x: TensorBase, dtype: np.dtype):
    return _apply("cast", (x,), dtype.name, x.shape, dtype)


def _as(x: TensorBase, dtype: np.dtype):
    return x if x.dtype == dtype else _cast(x, dtype)


def _copy(x: TensorBase, device: Device):
    return _apply("copy", (x,), x.device, x.shape, x.dtype, device)


#: The common scalar operands, checked before `numbers.Number` (a slower check).
_SCALARS = (int, float, np.generic)

#: (computation dtype, result dtype, operands used as they are) of an elementwise
#: primitive, by its name and its operands' dtypes (tensors) or types (scalars):
#: promotion runs once per signature. Operands are used as they are when all are
#: tensors of the computation dtype (`where`'s condition: bool).
_signatures: dict[tuple, tuple[np.dtype, np.dtype, bool]] = {}


def _signature(op, operands) -> tuple[np.dtype, np.dtype, bool]:
    values = operands[1:] if op.condition else operands
    try:
        dtype = dtypes.result_type(*(v.dtype if isinstance(v, TensorBase) else v
                                     for v in values))
    except TypeError as e:
        raise TypeError(f"{op.name}: {e}") from None
    if op.floating:
        dtype = dtypes.ufunc_float(dtype)
    elif op.name in _COMPARISONS and dtype == dtypes.float64 and dtypes.mix_signs(*(
            v.dtype for v in values if isinstance(v, (TensorBase, np.generic)))):
        return None, dtypes.bool_, False  # (compared exactly: `_compared_exactly`)
    if op.integral and (dtype.kind == "f" or op.no_bools and dtype.kind == "b"):
        raise TypeError(f"{op.name} takes integers{'' if op.no_bools else ' and bools'}, not "
                        f"{dtype}" + (f": {op.no_bools}" if dtype.kind == "b" else ""))
    wanted = [dtypes.bool_] * (len(operands) - len(values)) + [dtype] * len(values)
    as_is = all(isinstance(o, TensorBase) and o.dtype == want
                for o, want in zip(operands, wanted))
    return dtype, dtypes.bool_ if op.result == BOOL else dtype, as_is


#: The rows that compare: uint64 with a signed integer, exactly (as NumPy 2)
_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"})


def _compared_exactly(name: str, x, y):
    """Comparison `name` of uint64 and a signed integer (tensors or NumPy scalars) as
    NumPy 2 makes it: exactly, not in their common dtype (float64, where 2**63 + 1 is
    2**63). The signed operand is compared as uint64 where it is not negative; where it
    is, the answer is that of 0 and -1 in their places."""
    like = x if isinstance(x, TensorBase) else y
    x, y = (_as_tensor(o, None, like) for o in (x, y))
    signed = y if x.dtype == dtypes.uint64 else x
    negative = _elementwise("less", signed, 0)
    if signed is y:
        pair, when_negative = (x, _cast(y, dtypes.uint64)), (0, -1)
    else:
        pair, when_negative = (_cast(x, dtypes.uint64), y), (-1, 0)
    return _elementwise("where", negative, bool(TABLE[name].ref(*when_negative)),
                        _elementwise(name, *pair))


def _elementwise(name: str, *operands):
    """Apply an elementwise primitive with NumPy's promotion and broadcasting.

    This runs for every recorded operation, so the common case (tensors and Python
    scalars) takes one pass: the dtypes come from `_signatures`, tensors of one shape
    and the right dtype are recorded as they are, and only the others (scalars, which
    become constants of the result's shape, casts, broadcasts) take a second.
    """
    recorder = LOCAL.recorder
    if recorder.tracer is not None:
        recorder.tracer.saw(operands)
    key, like, shape, same_shape = [name], None, None, True
    bufs, nodes = [], []
    for o in operands:
        if isinstance(o, TensorBase):
            buf = o._buf
            key.append(buf.dtype)
            if like is None:
                like, shape, device = o, buf.shape, buf.device
            else:
                if buf.shape != shape:
                    same_shape = False
                if buf.device is not device and buf.device != device:
                    raise _devices(name, device, buf.device)
            bufs.append(buf)
            nodes.append(o._node)
        elif isinstance(o, _SCALARS) or isinstance(o, numbers.Number):
            key.append(type(o))
            bufs.append(None)  # (a constant, made below)
            nodes.append(None)
        else:  # data (arrays, lists) is loaded as a tensor first
            return _elementwise(name, *_load_data(operands))
    signature = _signatures.get(tuple(key))
    if signature is None:
        signature = _signatures[tuple(key)] = _signature(TABLE[name], operands)
    dtype, out_dtype, as_is = signature
    if dtype is None:  # uint64 and a signed integer, compared (`_signature`)
        return _compared_exactly(name, *operands)
    op = TABLE[name]
    if not (as_is and same_shape):
        if not same_shape:
            shape = broadcast_shapes(*[o.shape for o in operands if isinstance(o, TensorBase)])
        for i, o in enumerate(operands):
            want = dtypes.bool_ if not i and op.condition else dtype
            if bufs[i] is None:
                bufs[i] = LazyBuffer.const(o, shape, want, device, recorder)
                continue
            if o._buf.dtype is not want and o._buf.dtype != want:
                o = _cast(o, want)
            if o._buf.shape != shape:
                o = _broadcast_to(o, shape)
            bufs[i], nodes[i] = o._buf, o._node
    return _record(op, None, tuple(bufs), tuple(nodes), type(like), shape, out_dtype, device,
                   recorder)


def _load_data(operands) -> list:
    """`operands` with data other than tensors and scalars (arrays, lists) as tensors."""
    like = next(o for o in operands if isinstance(o, TensorBase))
    return [o if isinstance(o, (TensorBase, numbers.Number, np.generic))
            else like._wrap(_load(o, None, like.device)) for o in operands]


def _reduce(name: str, x: TensorBase, axis, keepdims: bool):
    axes, shape, kept = reduction_shapes(x.shape, axis)
    if name in ("max", "min") and any(x.shape[a] == 0 for a in axes):
        raise ValueError(
            f"{name} of an empty axis of a tensor of shape {x.shape} has no identity")
    out = _apply(name, (x,), axes, shape, x.dtype) if axes else _cast(x, x.dtype)
    return _reshape(out, kept) if keepdims else out


def reduction_shapes(shape: tuple[int, ...], axis) -> tuple[tuple[int, ...], tuple, tuple]:
    """The axes a reduction over `axis` of `shape` reduces, and its result's shape
    without and with them kept. (Cached for one int axis or None, the common ones: a
    loop's reductions are the same at every step.)"""
    if axis is None or type(axis) is int:  # (not a bool: normalize_axis refuses those)
        return _reduction_shapes(shape, axis)
    return _reduction_shapes.__wrapped__(shape, axis)


@functools.lru_cache(maxsize=1024)
def _reduction_shapes(shape: tuple[int, ...], axis) -> tuple[tuple[int, ...], tuple, tuple]:
    axes = normalize_axes(axis, len(shape))
    return axes, reduced_shape(shape, axes, False), reduced_shape(shape, axes, True)


# ---- movement ----------------------------------------------------------------------

def _reshape(x: TensorBase, shape: tuple[int, ...]):
    """`x` in `shape`, where one -1 stands for the length that fits."""
    if shape and min(shape) < 0:
        known = math.prod(d for d in shape if d != -1)
        if shape.count(-1) > 1 or any(d < -1 for d in shape):
            raise ValueError(f"invalid shape {shape}")
        if known == 0 or x.size % known:
            raise ValueError(f"cannot reshape a tensor of shape {x.shape} into {shape}")
        shape = tuple(x.size // known if d == -1 else d for d in shape)
    if math.prod(shape) != math.prod(x._buf.shape):
        raise ValueError(f"cannot reshape a tensor of shape {x.shape} into {shape}")
    if x._node is None or not is_grad_enabled():
        # No history to record (a backward pass's own reshapes): a reshape of a pending
        # reshape reshapes its source, and one to the same shape is that value.
        buf = x._buf
        if buf.realized is None and buf.op is _RESHAPE:
            buf = buf.srcs[0]
        if buf is not x._buf or buf.shape == shape:
            tracing.saw(x)
            x = type(x)._wrap(buf)
            if buf.shape == shape:
                return x
    return _apply("reshape", (x,), shape, shape, x.dtype)


_RESHAPE = TABLE["reshape"]


def _permute(x: TensorBase, axes: tuple[int, ...]):
    norm = tuple(normalize_axis(a, x.ndim) for a in axes)
    if sorted(norm) != list(range(x.ndim)):
        raise ValueError(f"axes {axes} are not a permutation of {x.ndim} axes")
    return _apply("permute", (x,), norm, tuple(x.shape[a] for a in norm), x.dtype)


def _broadcast_to(x: TensorBase, shape: tuple[int, ...]):
    """`x` broadcast to `shape`: one expand, which adds the leading axes too (a bias
    added to a batch records one node, as NumPy makes one view)."""
    if broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast a tensor of shape {x.shape} to {shape}")
    return _apply("expand", (x,), shape, shape, x.dtype)


# ---- indexing ----------------------------------------------------------------------

def _index_key(key, shape) -> tuple:
    """`key` with tensors as NumPy arrays and boolean masks as integer arrays.

    NumPy checks the key first, against a probe of `shape`, so a bad key (out of range,
    a float, a mask of the wrong shape, too many indices) raises NumPy's IndexError,
    naming the sizes, before anything is recorded or computed. Masks and float tensors
    are checked by shape and dtype alone, before their values are computed.
    """
    return _checked_key(key, shape)[0]


def _checked_key(key, shape) -> tuple[tuple, tuple[int, ...]]:
    """`_index_key`'s key, and the shape of ``x[key]`` for an `x` of `shape`."""
    one = not isinstance(key, tuple)
    key = (key,) if one else key
    if any(isinstance(k, TensorBase) and k.dtype.kind not in "iu" for k in key):
        _probe(shape)[tuple(_stand_in(k) for k in key)]
    key = tuple(key_array(k) if isinstance(k, TensorBase) else k for k in key)
    result = _probe(shape)[key[0] if one else key].shape  # a lone list: as NumPy reads it
    out = []
    for k in map(_key_array, key):
        if isinstance(k, np.ndarray) and k.dtype == np.bool_ and k.ndim:
            out.extend(map(_frozen, k.nonzero()))
        else:
            out.append(k[()] if isinstance(k, np.ndarray) and k.dtype == np.bool_ else k)
    return tuple(out), result


def _frozen(index: np.ndarray) -> np.ndarray:
    """`index`, an array a key made, read-only and noted as a key's own (a key made
    again of it, as a VJP rule's, keeps it: the engine finds a node's index arrays by
    identity, `numgrad.plan.recipes`)."""
    index.flags.writeable = False
    number = id(index)
    _KEY_ARRAYS[number] = weakref.ref(index, lambda _: _KEY_ARRAYS.pop(number, None))
    return index


def key_array(index: TensorBase) -> np.ndarray:
    """`index`'s value as a key's array (read-only; a key made of it keeps it, with no
    copy of its own): on the CPU, a view of the tensor's array (never changed), the
    same one while the tensor's value lives; elsewhere a copy on the host."""
    if index.device.type != "cpu":
        return _frozen(index.numpy())
    index._read(_VALUE_READ)
    buf = index._buf
    view = getattr(buf, "key_view", None)  # (a loop indexing by the same tensor indexes
    if view is None:                       # by the same array, whose upload is kept)
        view = buf.key_view = _frozen(buf.realized.view())
    return view


#: The arrays keys made (`_frozen`), by id: never changed, so never copied again.
_KEY_ARRAYS: dict[int, weakref.ref] = {}


@functools.lru_cache(maxsize=64)
def index_grid(shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """``np.indices(shape, sparse=True)`` as key arrays (read-only, never copied), the
    same arrays for a shape: a loop's gathers by them and by new indices differ only by
    those (cross-entropy's pick of the labels)."""
    return tuple(map(_frozen, np.indices(shape, sparse=True)))


def _stand_in(k):
    """A key entry with the checks NumPy makes on `k` that need no value: a mask or float
    tensor becomes zeros of its shape and dtype; an integer tensor, a slice (one axis)."""
    if not isinstance(k, TensorBase):
        return k
    if k.dtype.kind in "iu":
        return slice(None)
    return np.broadcast_to(np.zeros((), k.dtype), k.shape)


def _key_array(k):
    """A list or array in a key as a NumPy array of the key's own, read-only: a copy, so
    that changing the caller's array after recording (the value is computed later)
    changes nothing, as in NumPy (an empty list indexes nothing)."""
    if isinstance(k, list):
        k = np.array(k)
        return _frozen(k.astype(np.intp) if k.size == 0 and k.dtype.kind == "f" else k)
    if isinstance(k, np.ndarray):
        made = _KEY_ARRAYS.get(id(k))
        return k if made is not None and made() is k else _frozen(k.copy())
    return k


def _probe(shape) -> np.ndarray:
    """An array of `shape` that takes no memory, for NumPy to check keys against."""
    return _probe_of(tuple(shape))


@functools.lru_cache(maxsize=256)
def _probe_of(shape: tuple[int, ...]) -> np.ndarray:
    # (Kept per shape, read-only: a loop indexes arrays of the same shapes each step.)
    return np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape, (0,) * len(shape),
                                           writeable=False)


def index_shape(shape, key) -> tuple[int, ...]:
    """The shape of ``x[key]`` for x of `shape`, with NumPy's rules and errors."""
    return _probe(shape)[key].shape


def _index(x: TensorBase, key):
    key, shape = _checked_key(key, x.shape)
    y, key = _bool_scalars(x, key)
    return _apply("index", (y,), key, shape if y is x else index_shape(y.shape, key),
                  x.dtype)


def _index_put(x: TensorBase, key, value):
    """A copy of `x` with ``[key]`` set to `value`."""
    y, key = _bool_scalars(x, _index_key(key, x.shape))
    value = _as(_as_tensor(value, x.dtype, x), x.dtype)
    value = _broadcast_to(value, index_shape(y.shape, key))
    out = _apply("index_put", (y, value), key, y.shape, x.dtype)
    return out if y is x else _reshape(out, x.shape)


def _bool_scalars(x: TensorBase, key: tuple):
    """`x` and `key` with each 0-d boolean of the key (``x[True]``) read as NumPy reads it:
    a new length-1 axis there, indexed by ``[0]`` (True) or ``[]`` (False). Targets then
    see only integers, slices, None, Ellipsis and integer arrays."""
    flags = [isinstance(k, (bool, np.bool_)) for k in key]
    if not any(flags):
        return x, key
    rest = x.ndim - sum(not f and k is not None and k is not Ellipsis for k, f in zip(key, flags))
    shape, out, axis = list(x.shape), [], 0
    for k, flag in zip(key, flags):
        if flag:
            shape.insert(axis, 1)
            k = np.arange(int(k))
        axis += rest if k is Ellipsis else k is not None
        out.append(k)
    return _reshape(x, tuple(shape)), tuple(out)
