"""Turn a lazy graph into an ordered list of kernels, fusing elementwise work.

A kernel is a maximal group of elementwise nodes (constants inlined as scalar
arguments) rooted at a node that needs its own buffer; an elementwise group that
feeds a reduction fuses into the reduction's loop. A node gets its own buffer
(is a *root*) when it is requested, when it is consumed by two kernels or by a
non-elementwise operation (a movement, a matmul), or when it is not elementwise.
Fusion never fails: it only cuts. ``NUMGRAD_DEBUG=fusion`` logs every cut.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from numgrad.dtypes import SUPPORTED
from numgrad.engine.counters import DEBUG, log
from numgrad.lazy import LazyBuffer
from numgrad.ops import CAST, CONST, ELEMENTWISE, REDUCE

FUSION = os.environ.get("NUMGRAD_FUSION", "1") != "0"
_DTYPE_NAMES = {d: d.name for d in SUPPORTED}  # dtype.name is slow in NumPy


@dataclass(eq=False)
class Kernel:
    """A generated kernel: SSA `code` over array `inputs` and scalar `args`."""

    out: LazyBuffer
    code: list[tuple] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    inputs: list[LazyBuffer] = field(default_factory=list)
    args: list = field(default_factory=list)

    @property
    def reduce(self) -> str | None:
        return self.out.op.name if self.out.op.kind == REDUCE else None

    @property
    def loop_shape(self) -> tuple[int, ...]:
        return self.out.srcs[0].shape if self.reduce else self.out.shape


@dataclass(eq=False)
class BackendOp:
    """A movement, gather or matmul, run by the target's backend function of that name."""

    out: LazyBuffer


def toposort(targets: list[LazyBuffer]) -> list[LazyBuffer]:
    """Unrealized nodes reachable from `targets`, sources before consumers."""
    order, seen = [], set()
    stack = [(t, False) for t in targets if not t.is_realized]
    while stack:
        buf, expanded = stack.pop()
        if expanded:
            order.append(buf)
            continue
        if id(buf) in seen:
            continue
        seen.add(id(buf))
        stack.append((buf, True))
        stack.extend((s, False) for s in buf.srcs if not s.is_realized and id(s) not in seen)
    return order


def schedule(targets: list[LazyBuffer]) -> list[Kernel | BackendOp]:
    """The kernels and backend operations that realize `targets`, in order."""
    order = toposort(targets)
    consumers: dict[int, dict[int, LazyBuffer]] = {id(b): {} for b in order}
    for buf in order:
        for src in buf.srcs:
            if id(src) in consumers:
                consumers[id(src)][id(buf)] = buf
    wanted = {id(t) for t in targets}
    root_of: dict[int, LazyBuffer | None] = {}  # None: a constant inlined where used
    for buf in reversed(order):
        users = consumers[id(buf)].values()
        reason = _why_root(buf, users, wanted, root_of)
        if reason is None:
            root_of[id(buf)] = None if buf.op.kind == CONST else root_of[id(next(iter(users)))]
        else:
            root_of[id(buf)] = buf
            if DEBUG == "fusion" and buf.op.kind in ELEMENTWISE:
                log.debug("cut at %s %s: %s", buf.op.name, buf.shape, reason)
    items: list[Kernel | BackendOp] = []
    for buf in order:
        if root_of[id(buf)] is buf:
            fusible = buf.op.kind in ELEMENTWISE or buf.op.kind == REDUCE
            items.append(_kernel(buf, root_of) if fusible else BackendOp(buf))
    return items


def _why_root(buf, users, wanted, root_of) -> str | None:
    """Why `buf` needs its own buffer, or None when it fuses into its consumer."""
    kind = buf.op.kind
    if id(buf) in wanted:
        return "requested"
    if kind not in ELEMENTWISE:
        return "not elementwise"
    if any(u.op.kind not in ELEMENTWISE and u.op.kind != REDUCE for u in users):
        return "consumed by " + ", ".join(sorted({u.op.name for u in users}))
    if kind == CONST:
        return None
    if not FUSION:
        return "fusion disabled (NUMGRAD_FUSION=0)"
    groups = {id(root_of[id(u)]) for u in users}
    if len(groups) > 1:
        return f"consumed by {len(groups)} kernels"
    return None


def _kernel(root: LazyBuffer, root_of) -> Kernel:
    """Gather `root`'s group into straight-line code, sources first."""
    kernel = Kernel(root)
    position: dict[int, int] = {}
    body = root.srcs[0] if root.op.kind == REDUCE else root

    def inside(buf):
        kind = buf.op.kind
        return not buf.is_realized and kind in ELEMENTWISE and root_of[id(buf)] is root

    stack = [(body, False)]
    while stack:
        buf, expanded = stack.pop()
        if id(buf) in position:
            continue
        if buf.is_const and not buf.is_realized:
            kernel.args.append(buf.arg)
            _emit(kernel, position, buf, ("arg", len(kernel.args) - 1))
        elif not inside(buf):
            kernel.inputs.append(buf)
            _emit(kernel, position, buf, ("in", len(kernel.inputs) - 1))
        elif expanded:
            name = "cast" if buf.op.kind == CAST else buf.op.name
            _emit(kernel, position, buf, (name, *(position[id(s)] for s in buf.srcs)))
        else:
            stack.append((buf, True))
            stack.extend((s, False) for s in reversed(buf.srcs) if id(s) not in position)
    return kernel


def _emit(kernel: Kernel, position: dict, buf: LazyBuffer, instruction: tuple) -> None:
    position[id(buf)] = len(kernel.code)
    kernel.code.append(instruction)
    kernel.dtypes.append(_DTYPE_NAMES[buf.dtype])
