"""LazyBuffer: a node of the value graph that the engine schedules, fuses and runs."""

from __future__ import annotations

import math
import operator

import numpy as np

from numgrad.dtypes import python_scalar
from numgrad.ops import BINARY, CAST, CONST, ELEMENTWISE, TABLE, TERNARY, UNARY, Primitive
from numgrad.plan.recorder import LOCAL, Recorder

#: A node whose chain of pending (unrealized) sources grows deeper than this is
#: realized when it is created, so long loops never build unbounded graphs.
MAX_DEPTH = 256


class LazyBuffer:
    """One value: an operation on source buffers, or a realized array.

    Once realized, a buffer drops its sources, so a realized graph is just its
    arrays. ``arg`` holds the operation's static argument (axes, a shape, an
    index key, a constant's value). ``sig`` is the engine's number for what the node
    is, less its sources (`numgrad.plan.keys.signature`), found when first walked
    (or given by the backward recipe that made it again). ``key_view``, set only on a
    computed value used as an index, is the read-only view of it that keys are made of
    (`numgrad.primitives.key_array`).
    """

    __slots__ = ("op", "srcs", "arg", "shape", "dtype", "device", "realized", "depth",
                 "sig", "key_view", "__weakref__")

    def __init__(self, op: Primitive, srcs: tuple[LazyBuffer, ...], arg, shape: tuple[int, ...],
                 dtype: np.dtype, device, realized=None):
        self.op, self.srcs, self.arg = op, srcs, arg
        self.shape, self.dtype, self.device = shape, dtype, device
        self.realized, self.sig = realized, None
        if realized is not None:
            self.depth = 0
        else:
            self.depth = 1 + max([s.depth for s in srcs]) if srcs else 1

    @classmethod
    def load(cls, array, device) -> LazyBuffer:
        """A realized buffer holding `array` (already on `device`, never mutated)."""
        return cls(TABLE["load"], (), None, tuple(array.shape), array.dtype, device, array)

    @classmethod
    def const(cls, value, shape, dtype, device, recorder: Recorder | None = None) -> LazyBuffer:
        """A constant of any shape: one scalar, broadcast (no memory until realized),
        reported to `recorder` (this thread's, if not given)."""
        buf = _new(cls)  # __init__ written out: one per scalar operand recorded
        buf.op, buf.srcs, buf.arg, buf.shape, buf.dtype = _CONST, (), dtype.type(value), \
            tuple(shape), dtype
        buf.device, buf.realized, buf.depth, buf.sig = device, None, 1, None
        if recorder is None:
            recorder = LOCAL.recorder
        if recorder.watching:
            recorder.constant(buf)
        return buf

    @property
    def is_realized(self) -> bool:
        return self.realized is not None

    @property
    def is_const(self) -> bool:
        return self.op.kind == CONST

    def set_realized(self, array) -> None:
        """Hold `array` (complete) and drop the sources. Called by the engine under its
        lock; threads that read a buffer without it see `realized` set first, so a
        buffer that looks realized has its whole value."""
        self.realized = array
        self.srcs, self.depth = (), 0

    def __repr__(self) -> str:
        state = "realized" if self.is_realized else f"{len(self.srcs)} srcs"
        return f"<LazyBuffer {self.op.name} {self.shape} {self.dtype} {self.device} {state}>"


def make(op: Primitive, srcs: tuple[LazyBuffer, ...], arg, shape, dtype, device,
         recorder: Recorder | None = None) -> LazyBuffer:
    """A node for `op`, with constants folded: work on constants gives a constant, and
    elementwise work of one element on computed values is computed at once
    (`AT_ONCE`).

    One pass over `srcs` finds both the depth and whether all are constants: this
    runs for every recorded operation, which it reports to `recorder` (this thread's,
    `numgrad.plan.recorder`, if not given).
    """
    if recorder is None:
        recorder = LOCAL.recorder
    depth, folds = 0, bool(srcs)
    for s in srcs:
        if s.depth > depth:
            depth = s.depth
        if folds and (s.op.kind != CONST or s.realized is not None):
            folds = False
    if folds and foldable(op):
        buf = LazyBuffer.const(fold(op, [s.arg for s in srcs], dtype), shape, dtype, device,
                               recorder)
        pending = False
    elif depth > 1 or (buf := _at_once(op, srcs, shape, dtype, device, recorder)) is None:
        buf = _new(LazyBuffer)  # __init__ written out, with the depth found above
        buf.op, buf.srcs, buf.arg, buf.shape, buf.dtype = op, srcs, arg, tuple(shape), dtype
        buf.device, buf.realized, buf.depth, buf.sig = device, None, depth + 1, None
        pending = True
    else:  # (computed at once: noted as a fold is)
        pending = False
    if recorder.watching:
        recorder.made(buf, op, srcs, arg, pending)
    return buf


#: Movements that, on a constant, give a constant (its value, another shape).
MOVES_FOLDED = frozenset({"reshape", "permute", "expand", "roll", "copy"})


def foldable(op: Primitive) -> bool:
    """Whether `op` on constants gives a constant (`make` folds it)."""
    return op.kind in ELEMENTWISE or op.name in MOVES_FOLDED


def fold(op: Primitive, args: list, dtype: np.dtype):
    """The value of `op` (`foldable`) on constants' values `args` (NumPy scalars), as
    a `dtype` scalar."""
    if op.kind not in ELEMENTWISE:  # a movement: the same value
        return dtype.type(args[0])
    exact = _FLOAT64_ARITHMETIC.get(op.name) if dtype is _FLOAT64 else None
    if exact is not None and all(type(a) is np.float64 for a in args):
        try:  # Python's float arithmetic is IEEE double's, as NumPy's (no errstate)
            return _FLOAT64.type(exact(*map(float, args)))
        except ZeroDivisionError:
            pass
    with np.errstate(all="ignore"):
        if op.kind == CAST:
            return dtype.type(args[0])
        value = op.ref(*args)
    return dtype.type(value)


#: The folds of float64 constants that Python's float arithmetic computes exactly
_FLOAT64, _FLOAT64_ARITHMETIC = np.dtype(np.float64), {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "negative": operator.neg}

#: Elementwise work of one element (shape ``()``, ``(1,)``, ...) on the CPU whose
#: operands are computed (realized, or constants), floating or boolean, is computed
#: when recorded, by the expression the kernels inline (`Primitive.expr`) on Python
#: scalars: a loop of scalar operations (W2) costs what Python's arithmetic costs,
#: not a walk, a schedule and a launch per realization. Where Python raises (1 / 0,
#: log(0), an overflow) or gives a complex number, NumPy's reference gives the value,
#: inf or nan as kernels do. Not while ``ng.jit`` traces (`Recorder.tracer`): a trace records
#: everything. Tests of the lazy engine on scalar graphs turn it off.
AT_ONCE = True
_AT_ONCE_KINDS = frozenset({UNARY, BINARY, TERNARY})
#: The dtypes of the operands computed at once: floating and boolean
_SCALAR_DTYPES = frozenset({np.dtype(t) for t in (np.float32, np.float64, np.bool_)})
#: (float32: only by rows whose float32 value is their float64 value rounded,
#: `Primitive.float32_at_once`)
_FLOAT32 = np.dtype(np.float32)
#: per primitive name: (the row, its expression as a Python function)
_expressions: dict[str, tuple[Primitive, object]] = {}


def _at_once(op: Primitive, srcs, shape, dtype, device, recorder) -> LazyBuffer | None:
    """`op` on `srcs` (none deeper than 1), computed into a realized buffer if `op` is
    computed at once (`AT_ONCE`) there; None if not, or if an operand is not
    computed, or is neither floating nor boolean (integers wrap in kernels), or is float32
    where the row's float32 value is not its float64 value rounded."""
    if shape and shape.count(1) != len(shape) or not AT_ONCE or recorder.tracer is not None or \
            device.type != "cpu":
        return None
    expression = _expression(op, len(srcs))
    if expression is None or not op.float32_at_once and dtype == _FLOAT32:
        return None
    values = []
    for s in srcs:
        if s.dtype not in _SCALAR_DTYPES:
            return None
        if s.realized is not None:
            values.append(s.realized.item())
        elif s.op.kind == CONST:
            values.append(python_scalar(s.arg))
        else:
            return None
    return _computed_at_once(expression, op, values, shape, dtype, device)


def _expression(op: Primitive, arity: int):
    """The function of `arity` Python scalars that computes `op` at once, or None."""
    known = _expressions.get(op.name)
    if known is None or known[0] is not op:  # (a row replaced at run time: its own)
        if op.kind not in _AT_ONCE_KINDS or not op.expr:
            return None
        # (the table's own code, as the kernel generator inlines it)
        known = _expressions[op.name] = op, eval(
            f"lambda {', '.join('xyz'[:arity])}: {op.expr}", {"math": math, "np": np})
    return known[1]


def at_once(op: Primitive, values: list, shape, dtype, device) -> LazyBuffer:
    """`op` (computed at once: `_expression`) on the Python scalars `values`, a realized
    buffer."""
    return _computed_at_once(_expression(op, len(values)), op, values, shape, dtype, device)


def _computed_at_once(expression, op: Primitive, values: list, shape, dtype, device):
    try:  # (a complex value raises in `computed`)
        return computed(expression(*values), shape, dtype, device)
    except (ArithmeticError, ValueError, TypeError):
        with np.errstate(all="ignore"):
            return computed(op.ref(*values), shape, dtype, device)


def computed(value, shape, dtype: np.dtype, device) -> LazyBuffer:
    """A realized buffer of one element, `value` (a Python or NumPy scalar) as `dtype`."""
    array = np.array(value, dtype)
    buf = _new(LazyBuffer)  # (LazyBuffer.load written out: one per scalar computed)
    buf.op = _LOAD
    buf.srcs = ()
    buf.arg = buf.sig = None
    buf.shape = shape = tuple(shape)
    buf.dtype = dtype
    buf.device = device
    buf.realized = array.reshape(shape) if shape else array
    buf.depth = 0
    return buf


_new = object.__new__
_CONST, _LOAD = TABLE["const"], TABLE["load"]


#: Realized buffers of arrays that follow from static values alone (a triangle's mask,
#: an identity), one per description: a rule that reads one makes the same graph at
#: every pass, so a recipe or a step plan keeps the buffer itself
#: (`numgrad.plan.recipes`). Emptied when full; a recipe still holding a buffer let
#: go holds its value, which never changes.
_fixed: dict[tuple, LazyBuffer] = {}
_fixed_bufs: set[LazyBuffer] = set()
MAX_FIXED = 256


def fixed(key: tuple, make, device) -> LazyBuffer:
    """The fixed buffer described by `key` on `device`, its array made by ``make()``
    (a function of the static values in `key` only) the first time."""
    key = (*key, device)
    buf = _fixed.get(key)
    if buf is None:
        if len(_fixed) >= MAX_FIXED:
            _fixed.clear()
            _fixed_bufs.clear()
        buf = LazyBuffer.load(device.backend.from_numpy(make()), device)
        _fixed[key] = buf
        _fixed_bufs.add(buf)
    return buf


def is_fixed(buf: LazyBuffer) -> bool:
    """Whether `buf` is one of `fixed`'s buffers."""
    return buf in _fixed_bufs
