"""Lowering: the nodes of each fusion group into one kernel's straight-line code, and
kernels into the frozen steps of a `Schedule`.

`Kernel` is the scheduler's scratch record of one group while it is built and
merged with its siblings; `Kernel.freeze` turns it into a `Launch`, whose `Program`
is the one kernel IR every target renders.
"""

from __future__ import annotations

import bisect
import math
import os
from collections.abc import Callable, Set
from dataclasses import dataclass, field

from numgrad.dtypes import NAMES as _DTYPE_NAMES
from numgrad.engine.reads import gather_key, index_upload, rolled_read, view_key
from numgrad.engine.steps import Call, Launch, Read
from numgrad.kernels.codegen import Program
from numgrad.lazy import LazyBuffer
from numgrad.ops import CAST, ELEMENTWISE, REDUCE, TABLE

FUSION = os.environ.get("NUMGRAD_FUSION", "1") != "0"
#: Compile time grows with a kernel's size, so a group stops growing here; long
#: repetitive chains are then cut into pieces of one structure, compiled once.
MAX_KERNEL_OPS = 256
#: Numba's compile time grows with a kernel's array arguments faster than linearly
#: (docs/design.md: 0.14 s for 8, 0.35 s for 32, 2 s for 128, 16 s for 250), so no
#: kernel reads and writes more than this many arrays: fusion groups are cut
#: (`engine.width`) and kernels over one loop nest stop merging (`merge_siblings`).
MAX_KERNEL_ARRAYS = 32
#: Kernels that call vector math (rows of `VECTOR_MATH_COST` or more: exp, tanh, ...,
#: inlined as vector code on the CPU) over at least `VECTOR_MATH_FROM` elements merge up
#: to this many arrays: past it LLVM stopped vectorizing their loops (ten `exp(x_i + b)`
#: over 1000 elements, 21 arrays, took 5.6 us a stream where nine took 1.3:
#: docs/design.md). Shorter loops gain nothing from vectors and keep merging.
VECTOR_MATH_ARRAYS, VECTOR_MATH_COST, VECTOR_MATH_FROM = 20, 8, 64
INLINE = object()  # root_of marker: computed inside every kernel that uses it


@dataclass(eq=False)
class Kernel:
    """A generated kernel: straight-line code over array `inputs` and scalar `args`.

    `code` runs at every point of the loop nest and `stores` says which of its
    values are written to which outputs of the loop's full shape. With a reduction,
    the value at position `folded` is also folded into an accumulator by `reduce`
    over the reduced (innermost) dimensions; then `epilogue` runs once per output
    element, with ``("acc",)`` for the reduced value, and writes `out`. Inputs read
    by the epilogue (`in_epilogue`) span the kept dimensions only. Each input is read
    through `views`, the movement nodes between it and the kernel (outermost first);
    `tables` are arrays read whole by gathers.
    """

    out: LazyBuffer
    reduce: LazyBuffer | None = None
    folded: int = -1
    stores: list[tuple[LazyBuffer, int]] = field(default_factory=list)
    code: list[tuple] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    epilogue: list[tuple] = field(default_factory=list)
    epilogue_dtypes: list[str] = field(default_factory=list)
    inputs: list[LazyBuffer] = field(default_factory=list)
    in_epilogue: list[bool] = field(default_factory=list)
    views: list[tuple[LazyBuffer, ...]] = field(default_factory=list)
    tables: list[LazyBuffer] = field(default_factory=list)
    args: list = field(default_factory=list)
    arg_nodes: list[LazyBuffer] = field(default_factory=list)  # the constant of each arg
    _arg_index: dict[int, int] = field(default_factory=dict)
    #: the planner's steps spent on this kernel (graph nodes visited, hosts tried),
    #: counted by `numgrad.engine.record` as ``scheduler_steps``
    visits: int = 0
    #: made when the kernel first absorbs another, then kept up to date: the first
    #: position of each instruction, the index of each input, and the position
    #: stored to each output (by the buffer's id)
    _emitted: dict[tuple, int] | None = None
    _input_index: dict[tuple, int] = field(default_factory=dict)
    _stored: dict[int, int] = field(default_factory=dict)
    _vector_math: bool | None = None

    def arg(self, const: LazyBuffer) -> int:
        """The index of the scalar argument holding constant `const` (added if new)."""
        if id(const) not in self._arg_index:
            self._arg_index[id(const)] = len(self.args)
            self.args.append(const.arg)
            self.arg_nodes.append(const)
        return self._arg_index[id(const)]

    @property
    def calls_vector_math(self) -> bool:
        """Whether its code calls a row of `VECTOR_MATH_COST` or more (exp, tanh, ...)."""
        if self._vector_math is None:
            self._vector_math = any(ins[0] in TABLE and TABLE[ins[0]].cost >= VECTOR_MATH_COST
                                    for ins in self.code)
        return self._vector_math

    @property
    def loop_shape(self) -> tuple[int, ...]:
        return self.reduce.srcs[0].shape if self.reduce else self.out.shape

    @property
    def reduced_axes(self) -> tuple[int, ...]:
        return tuple(self.reduce.arg) if self.reduce else ()

    @property
    def kept_shape(self) -> tuple[int, ...]:
        axes = self.reduced_axes
        return tuple(d for i, d in enumerate(self.loop_shape) if i not in axes)

    def region_shape(self, i: int) -> tuple[int, ...]:
        """The shape input `i` is read at: the kept dimensions (epilogue) or the loop's."""
        return self.kept_shape if self.in_epilogue[i] else self.loop_shape

    @property
    def outputs(self) -> list[LazyBuffer]:
        """The reduction's output (if any), then the full-shape outputs."""
        return ([self.out] if self.reduce else []) + [buf for buf, _ in self.stores]

    def absorb(self, other: Kernel) -> None:
        """Compute `other` (over this kernel's loop nest) here too.

        Its code joins this kernel's loop body, and its reduction (this kernel has
        none then) joins with its epilogue. Inputs, tables and subexpressions the
        two share are read and computed once, and `other`'s reads of this kernel's
        outputs become the values themselves.
        """
        self._index()
        self._vector_math = None
        body = self._remap(other, other.code, other.dtypes, self.code, self.dtypes,
                           self._emitted, self._stored, epilogue=False)
        for buf, p in other.stores:
            self.stores.append((buf, body[p]))
            self._stored[id(buf)] = body[p]
        if other.reduce:
            self.out, self.reduce, self.folded = other.out, other.reduce, body[other.folded]
            self.epilogue, self.epilogue_dtypes = [], []
            self._remap(other, other.epilogue, other.epilogue_dtypes, self.epilogue,
                        self.epilogue_dtypes, {}, {}, epilogue=True)

    def writes(self, buf: LazyBuffer) -> bool:
        """Whether this kernel writes `buf` (over its loop nest)."""
        self._index()
        return id(buf) in self._stored

    def _index(self) -> None:
        if self._emitted is None:
            self._emitted = {}
            for pos, typed in enumerate(zip(self.code, self.dtypes)):
                self._emitted.setdefault(typed, pos)
            self._input_index = {
                (id(b), view_key(v), late): i for i, (b, v, late) in
                enumerate(zip(self.inputs, self.views, self.in_epilogue))}
            self._stored = {id(buf): pos for buf, pos in self.stores}

    def _remap(self, other, code, dtypes, into, into_dtypes, emitted, stored, epilogue):
        """Append `other`'s `code` to `into`, renumbered for this kernel."""
        inputs = self._input_index
        moved: dict[int, int] = {}
        for pos, (ins, dtype) in enumerate(zip(code, dtypes)):
            name, *operands = ins
            if name == "in":
                buf, views = other.inputs[operands[0]], other.views[operands[0]]
                if not views and id(buf) in stored:
                    moved[pos] = stored[id(buf)]
                    continue
                key = (id(buf), view_key(views), epilogue)
                if key not in inputs:
                    inputs[key] = len(self.inputs)
                    self.inputs.append(buf)
                    self.views.append(views)
                    self.in_epilogue.append(epilogue)
                ins = ("in", inputs[key])
            elif name == "arg":
                ins = ("arg", self.arg(other.arg_nodes[operands[0]]))
            elif name == "gather":
                table = other.tables[operands[0]]
                if table not in self.tables:
                    self.tables.append(table)
                ins = ("gather", self.tables.index(table), *(moved[p] for p in operands[1:]))
            elif name != "acc":
                ins = (name, *(moved[p] for p in operands))
            if (ins, dtype) not in emitted:
                emitted[(ins, dtype)] = len(into)
                into.append(ins)
                into_dtypes.append(dtype)
            moved[pos] = emitted[(ins, dtype)]
        return moved

    def freeze(self, slot: Callable[[LazyBuffer], int]) -> list[Launch | Call]:
        """This kernel as frozen steps; `slot` numbers each buffer it touches. An
        elementwise kernel reads an input through one roll rolled (`rolled_read`);
        another roll is a step of its own before the launch (a copy, the backend's
        ``roll``), and other movements are views the launch makes."""
        loop, reduced = self.loop_shape, self.reduced_axes
        steps, reads, rolled = [], [], []
        for buf, views, late in zip(self.inputs, self.views, self.in_epilogue):
            shifts = () if self.reduce or late else rolled_read(views, loop)
            copied = None if shifts else \
                next((i for i, v in enumerate(views) if v.op.name == "roll"), None)
            if shifts:
                views = ()
            elif copied is not None:  # (below it, nothing: a roll reads a computed buffer)
                roll, views = views[copied], views[:copied]
                steps.append(Call("roll", (slot(buf),), roll.arg, slot(roll)))
                buf = roll
            rolled.append(shifts)
            reads.append(Read(slot(buf), view_key(views)))
        program = Program(
            code=tuple(self.code),
            dtypes=tuple(self.dtypes),
            stores=tuple(pos for _, pos in self.stores),
            folded=self.folded,
            in_dtypes=tuple(_DTYPE_NAMES[b.dtype] for b in self.inputs),
            arg_dtypes=tuple(type(a).__name__ for a in self.args),
            reduce=self.reduce.op.name if self.reduce else None,
            epilogue=tuple(self.epilogue),
            epilogue_dtypes=tuple(self.epilogue_dtypes),
            in_epilogue=tuple(self.in_epilogue),
            table_dtypes=tuple(_DTYPE_NAMES[t.dtype] for t in self.tables),
            kept_rank=len(loop) - len(reduced),
            reduced_rank=len(reduced),
            in_rolled=tuple(rolled) if any(rolled) else (),
        )
        return steps + [Launch(program, loop, reduced, tuple(map(slot, self.outputs)),
                               tuple(reads), tuple(map(slot, self.tables)), tuple(self.args))]

    def irregular_reads(self) -> set[int]:
        """The buffers (by id) read here other than at the loop's own index in the
        body: through a view, in the epilogue, or whole (a gather's table)."""
        return {id(b) for b, v, late in zip(self.inputs, self.views, self.in_epilogue)
                if v or late} | {id(t) for t in self.tables}


def arrays(kernel: Kernel) -> int:
    """The arrays `kernel` reads or writes: its inputs, tables and outputs."""
    return len(kernel.inputs) + len(kernel.tables) + len(kernel.stores) + \
        (kernel.reduce is not None)


def merge_siblings(items: list[Kernel | LazyBuffer], max_ops: int = MAX_KERNEL_OPS,
                   max_arrays: int = MAX_KERNEL_ARRAYS, stored=None,
                   cut: Set[int] = frozenset()) -> list[Kernel | LazyBuffer]:
    """Let kernels over the same loop nest run as one, with several outputs.

    `items` are kernels and the buffers that the target's functions compute (movements,
    matmul), in order.
    A loss and its gradient, or a parameter and its optimizer state, then take one
    pass over their common inputs. A kernel joins the earliest kernel (of the same
    loop nest, at most one reduction between them) that runs after everything it
    reads, or that computes what it reads at the same index.

    Kernels that may still host others are kept per loop nest, in order, so each
    kernel looks only at those from the last producer of what it reads on: the
    first that has room (`max_ops` operations, `max_arrays` arrays read or written;
    a final plan's outputs count as `stored` (`width.Stored`) says, an eager plan's
    all) takes it.
    The pieces of a group cut for its width (`cut`: their roots, by id) stay apart:
    merged again, a sum of 800 terms would be one kernel of a new structure for each
    length, rather than kernels of one structure.
    """
    merged: list[Kernel | LazyBuffer] = []
    made_by: dict[int, int] = {}  # buffer -> index in `merged` of what computes it
    kept: dict[int, int] = {}  # kernel (index in `merged`) -> outputs that count
    pieces: set[int] = set()  # kernels (indices in `merged`) holding a piece of a cut
    # (loop nest, device) -> indices of open kernels: all of them, those without a reduction
    hosts: dict[tuple, tuple[list[int], list[int]]] = {}
    for item in items:
        if not isinstance(item, Kernel):
            merged.append(item)
            made_by[id(item)] = len(merged) - 1
            continue
        every, unreduced = hosts.setdefault((item.loop_shape, item.out.device), ([], []))
        piece = is_piece(item, cut)
        outputs = sum(stored is None or stored.counts(b) for b in item.outputs)
        host = _host(merged, unreduced if item.reduce else every, item, made_by, max_ops,
                     max_arrays - outputs, kept, stored, pieces if piece else ())
        if host is None:
            merged.append(item)
            host = len(merged) - 1
            kept[host] = outputs
            every.append(host)
            if not item.reduce:
                unreduced.append(host)
        else:
            kept[host] += outputs - _joined(merged[host], item, stored)
            merged[host].absorb(item)
            if item.reduce:
                _close(unreduced, host)
            if len(merged[host].code) >= 2 * max_ops:  # full
                _close(every, host)
                _close(unreduced, host)
        if piece:
            pieces.add(host)
        for buf in item.outputs:
            made_by[id(buf)] = host
    return merged


def is_piece(kernel: Kernel, cut: Set[int]) -> bool:
    """Whether `kernel` (not merged yet) is a piece of a group cut for its width (`cut`:
    the roots of the pieces, by id)."""
    return id(kernel.out) in cut


def _close(candidates: list[int], host: int) -> None:
    i = bisect.bisect_left(candidates, host)
    if i < len(candidates) and candidates[i] == host:
        del candidates[i]


def _host(merged: list, candidates: list[int], item: Kernel, made_by: dict[int, int],
          max_ops: int, max_arrays: int, kept: dict[int, int], stored,
          apart: Set[int]):
    """The first of `candidates` (indices in `merged`, increasing, none of `apart`) that
    can compute `item` too, or None: one that runs after everything `item` reads, or
    the last producer of what it reads when that stores each such value and `item`
    reads it at the loop's own index; and has room for its code and for the arrays it
    reads (`max_arrays`: what is left beside the outputs of `item` that count; less by
    `MAX_KERNEL_ARRAYS - VECTOR_MATH_ARRAYS` where either calls vector math over a long
    loop)."""
    reads = [*item.inputs, *item.tables]
    latest = max([made_by.get(id(b), -1) for b in reads], default=-1)
    long = math.prod(item.loop_shape) >= VECTOR_MATH_FROM
    for i in range(bisect.bisect_left(candidates, latest), len(candidates)):
        item.visits += 1
        h = candidates[i]
        k = merged[h]
        if len(k.code) + len(item.code) > 2 * max_ops or h in apart:
            continue
        if h == latest:
            irregular = item.irregular_reads()
            if not all(made_by.get(id(b)) != h or k.writes(b) and id(b) not in irregular
                       for b in reads):
                continue
        limit = max_arrays - (MAX_KERNEL_ARRAYS - VECTOR_MATH_ARRAYS) if long and \
            (item.calls_vector_math or k.calls_vector_math) else max_arrays
        if len(k.inputs) + len(k.tables) + kept[h] + _new_reads(k, item) - \
                _joined(k, item, stored, look=True) > limit:
            continue
        return h
    return None


def _new_reads(host: Kernel, item: Kernel) -> int:
    """The inputs and tables `item` would add to `host`'s (not those it shares, nor
    `host`'s outputs read at the loop's own index: these are values there)."""
    host._index()
    index, stored = host._input_index, host._stored
    return sum(not (not v and id(b) in stored) and (id(b), view_key(v), late) not in index
               for b, v, late in zip(item.inputs, item.views, item.in_epilogue)) + \
        sum(t not in host.tables for t in item.tables)


def _joined(host: Kernel, item: Kernel, stored, look: bool = False) -> int:
    """The outputs of `host` that stop counting when `item` joins it (`item` is the
    last step to read them: `Stored.live`); unless `look`, `item` is then joining."""
    if stored is None:
        return 0
    host._index()
    freed = 0
    for b in {id(b): b for b in item.inputs if id(b) in host._stored}.values():
        n = stored.pending.get(id(b), 0)
        if stored.live and n == 1 and id(b) not in stored.wanted and id(b) not in stored.fixed:
            freed += 1
        if not look and n:
            stored.pending[id(b)] = n - 1
    return freed


def build_kernel(root: LazyBuffer, root_of, cheap_roots: set[int]) -> Kernel:
    """Gather `root`'s group into straight-line code, sources first."""
    kernel = Kernel(root)
    if root.op.kind == REDUCE:
        kernel.reduce = root
        kernel.epilogue.append(("acc",))
        kernel.epilogue_dtypes.append(_DTYPE_NAMES[root.dtype])
    else:
        position = _gather(kernel, root, root_of, root, cheap_roots)
    if kernel.reduce is None:
        kernel.stores.append((root, position))
        return kernel
    if kernel.reduce is not root:  # what was gathered so far runs after the loop
        kernel.epilogue, kernel.epilogue_dtypes = kernel.code, kernel.dtypes
        kernel.code, kernel.dtypes = [], []
        kernel.in_epilogue = [True] * len(kernel.inputs)
    kernel.folded = _gather(kernel, kernel.reduce.srcs[0], root_of, root, cheap_roots)
    return kernel


def _gather(kernel: Kernel, start: LazyBuffer, root_of, root: LazyBuffer,
            cheap_roots: set[int]) -> int:
    """Emit the code computing `start` within `root`'s kernel; return its position.

    Below a fused movement node the values are read through it: each stack entry
    carries the chain of movements above it, and so does each input.
    """
    position: dict[tuple, int] = {}
    emitted: dict[tuple, int] = {}  # common subexpressions are computed once
    loaded: dict[tuple, int] = {}  # the position of each input read

    def emit(key: tuple, dtype, instruction: tuple) -> int:
        typed = (instruction, _DTYPE_NAMES[dtype])
        if typed not in emitted or instruction[0] == "in":
            emitted[typed] = len(kernel.code)
            kernel.code.append(instruction)
            kernel.dtypes.append(typed[1])
        position[key] = emitted[typed]
        return position[key]

    def load(buf: LazyBuffer, views: tuple, key: tuple) -> int:
        read = (id(buf), view_key(views))  # one input per buffer and view, however made
        if read in loaded:
            position[key] = loaded[read]
        else:
            kernel.inputs.append(buf)
            kernel.in_epilogue.append(False)
            kernel.views.append(views)
            loaded[read] = emit(key, buf.dtype, ("in", len(kernel.inputs) - 1))
        return loaded[read]

    stack = [(start, (), False)]
    while stack:
        kernel.visits += 1
        buf, views, expanded = stack.pop()
        key = (id(buf), tuple(id(v) for v in views))
        if key in position:
            continue
        place = None if buf.is_realized else root_of[id(buf)]
        here = place is root or place is INLINE or place is not None and FUSION and \
            id(place) in cheap_roots and not any(v.op.name == "roll" for v in views)
        if buf.is_const and not buf.is_realized:
            emit(key, buf.dtype, ("arg", kernel.arg(buf)))
        elif here and buf.op.kind == REDUCE and buf is not start:
            kernel.reduce = buf
            emit(key, buf.dtype, ("acc",))
        elif not here or buf.op.kind == REDUCE:
            load(buf, views, key)
        elif gather_key(buf) is not None:
            # The table is read whole; the index arrays are inputs like any other.
            table = buf.srcs[0]
            kernel.tables.append(table)
            indices = [load(index_upload(buf, axis, n, table.device), views, (id(k), key))
                       for axis, (k, n) in enumerate(zip(buf.arg, table.shape))]
            emit(key, buf.dtype, ("gather", len(kernel.tables) - 1, *indices))
        elif buf.op.kind not in ELEMENTWISE:  # a fused movement: read through it
            inner = views + (buf,)
            src_key = (id(buf.srcs[0]), tuple(id(v) for v in inner))
            if src_key in position:
                position[key] = position[src_key]
            elif not expanded:
                stack.append((buf, views, True))
                stack.append((buf.srcs[0], inner, False))
            else:
                position[key] = position[src_key]
        elif not expanded:
            stack.append((buf, views, True))
            stack.extend((s, views, False) for s in reversed(buf.srcs)
                         if (id(s), key[1]) not in position)
        else:
            name = "cast" if buf.op.kind == CAST else buf.op.name
            emit(key, buf.dtype, (name, *(position[(id(s), key[1])] for s in buf.srcs)))
    return position[(id(start), ())]
