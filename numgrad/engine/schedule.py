"""Turn a lazy graph into an ordered list of kernels, fusing elementwise work.

A kernel is a maximal group of elementwise nodes rooted at a node that needs its
own buffer (a *root*). Constants are inlined as scalar arguments; reshapes that
only add or drop length-1 axes are free inside a group, and so are broadcasts and
transposes of cheap expressions (their inputs are read through the same views);
a gather ``x[i, j]`` with integer arrays reads its table inside the kernel. An
elementwise group that feeds a reduction runs inside the reduction's loop, and
elementwise consumers of a reduction's result run after it (an *epilogue*):
``((x - y) ** 2).mean()`` is one kernel. A node is a root when it is requested,
cannot be fused (matmul, scatters, other movements), or is consumed by two
kernels, unless it is cheap enough to recompute in each (then it is *inlined*
into both). Fusion never fails: it only cuts. ``NUMGRAD_DEBUG=fusion`` logs every
cut.
"""

from __future__ import annotations

import itertools
import math

from numgrad.arguments import holds_array
from numgrad.engine import width
from numgrad.engine.counters import DEBUG, count, log
from numgrad.engine.lowering import (
    FUSION,
    INLINE,
    MAX_KERNEL_ARRAYS,
    MAX_KERNEL_OPS,
    Kernel,
    arrays,
    build_kernel,
    merge_siblings,
)
from numgrad.engine.reads import gather_key, is_unit_reshape, wrapped_index
from numgrad.engine.steps import Call, Schedule, Slot
from numgrad.lazy import LazyBuffer
from numgrad.ops import CONST, ELEMENTWISE, LIBRARY, MOVEMENT, REDUCE
from numgrad.plan import schedules
from numgrad.plan.bound import Plan

#: A node consumed by several kernels is recomputed in each when its expression
#: (up to the nearest computed buffers) costs at most this many cheap operations
#: (`Primitive.cost`: a function call such as tanh counts 8).
RECOMPUTE_LIMIT = 8

#: A final schedule's kernels may be longer (`MAX_KERNEL_OPS` for others): each cut
#: between two kernels stores and reads again every value that crosses it, and a
#: kernel's compile time and launch cost grow with its array arguments more than with
#: its code (W2's 1,200 scalar operations: 4 kernels with 70 arrays each took 15 s to
#: compile and 89 us to replay, one kernel 1.8 s and 31 us).
FINAL_MAX_KERNEL_OPS = 4096


def _fusible(buf: LazyBuffer, weight: dict[int, int]) -> bool:
    """Whether `buf` can be computed inside a kernel."""
    kind = buf.op.kind
    if kind in ELEMENTWISE or kind == REDUCE or is_unit_reshape(buf) or buf.op.name == "roll":
        return True  # (a roll: its reader reads its source rolled, `Program.in_rolled`)
    if buf.op.name in ("expand", "permute"):
        # Computed per element of the result: only cheap sources, never a buffer; but
        # an expand that adds axes to a computed value is read through, as a unit
        # reshape of it (free) and an expand of that are.
        src = buf.srcs[0]
        if src.is_realized:
            return buf.op.name == "expand" and len(buf.shape) > len(src.shape)
        return weight.get(id(src), 0) <= RECOMPUTE_LIMIT
    return gather_key(buf) is not None


def schedule(targets: list[LazyBuffer], final: bool = False,
             constants: list | None = None) -> tuple[Plan, list[LazyBuffer]]:
    """The plan that computes the unrealized `targets` (a schedule bound to their
    graph, `numgrad.plan.bound.Plan`), and the buffer of each of its slots: the
    computed ones feed its `sources`, the others receive what it computes. A graph of a
    structure scheduled before reuses that schedule (`numgrad.plan.schedules`).

    A `final` schedule (``ng.jit``'s plan) stores only the targets and what its own
    later steps read: the caller will not ask for the other values. It is neither
    taken from nor kept in the cache of schedules.
    """
    walk = schedules.walk(targets)
    order = walk.order
    max_ops = FINAL_MAX_KERNEL_OPS if final else MAX_KERNEL_OPS
    reused = None if final else schedules.recall(walk, constants)
    if reused is not None:
        count(schedules_reused=1)
        return reused
    users: dict[int, dict[int, LazyBuffer]] = {id(b): {} for b in order}
    weight: dict[int, int] = {}  # operations to recompute a node from computed buffers
    for buf in order:
        for src in buf.srcs:
            if id(src) in users:
                users[id(src)][id(buf)] = buf
        if buf.op.kind == REDUCE:
            weight[id(buf)] = RECOMPUTE_LIMIT + 1  # never recomputed
        elif buf.op.name == "roll":  # (its source is stored: it reads it rolled)
            weight[id(buf)] = buf.op.cost
        elif _fusible(buf, weight):
            weight[id(buf)] = buf.op.cost + sum(weight.get(id(s), 0) for s in buf.srcs)
        else:
            weight[id(buf)] = 0  # always computed into its own buffer first
    wanted = {id(t) for t in targets}
    # A group that would read more than MAX_KERNEL_ARRAYS arrays is cut (`width.cuts`)
    # and the graph placed again with those cuts: rare, so the check comes first. The
    # cuts are found in the groups fusion makes without the bound on operations (cut
    # from the consumers down, a full group makes a root of each of its sources). A
    # final plan is checked once merged: the values only its own steps read then
    # become values in registers where their readers join their producers (a scalar
    # chain and its derivative: one kernel of 4 arrays, cut for width 25 kernels).

    def place(forced: set[int], ops: float = max_ops):
        return _groups(order, users, wanted, weight, ops, forced)

    forced: set[int] = set()
    root_of, cheap_roots = place(forced)
    for rounds in itertools.count():
        items = _kernels(order, root_of, cheap_roots)
        merged = _merge_final(items, wanted, max_ops, forced) if FUSION and final else items
        if not FUSION or _bounded(merged) or rounds == width.ROUNDS:
            break
        more = width.cuts(order, *place(forced, math.inf), MAX_KERNEL_ARRAYS - 1,
                          max_ops) - forced
        if not more:
            break
        forced |= more
        root_of, cheap_roots = place(forced)
    if FUSION and final and not _bounded(merged):  # its values counted while they wait
        merged = _merge_final(_kernels(order, root_of, cheap_roots), wanted, max_ops,
                              forced, live=True)
    elif FUSION and not final:
        merged = merge_siblings(items, max_ops, cut=forced)
    items = merged
    frozen, bufs, args, uploads = _freeze(items)
    plan = Plan(frozen)
    if constants is not None:
        constants += args
    count(nodes_scheduled=len(order), scheduler_steps=len(order) + sum(
        item.visits for item in items if isinstance(item, Kernel)))
    if not final:
        schedules.remember(walk, plan, bufs, args, uploads)
    return plan, bufs


def _groups(order, users, wanted, weight, max_ops, forced):
    """Place every node of `order` (consumers first): the root of the group it is
    computed in, INLINE, or itself (a root). Also returns the requested values that
    are recomputed where they are used. `forced` nodes are roots (`width.cuts`)."""
    root_of: dict[int, object] = {}
    has_reduce: set[int] = set()  # kernels that already fold a reduction
    size: dict[int, int] = {}  # operations in each kernel so far
    for buf in reversed(order):
        decision = f"cut for width ({MAX_KERNEL_ARRAYS} arrays, {max_ops} operations)" \
            if id(buf) in forced and id(buf) not in wanted and _fusible(buf, weight) \
            else _place(buf, users[id(buf)].values(), wanted, root_of, has_reduce, weight,
                        size, max_ops)
        if isinstance(decision, str):
            root_of[id(buf)] = buf
            size[id(buf)] = 1
            if DEBUG == "fusion" and _fusible(buf, weight):
                log.debug("cut at %s %s: %s", buf.op.name, buf.shape, decision)
        else:
            root_of[id(buf)] = decision
            if decision is not INLINE and not _is_view(buf):
                size[id(decision)] += 1
        if buf.op.kind == REDUCE:
            has_reduce.add(id(root_of[id(buf)]))
    # A requested value that is cheap is also recomputed where it is used, rather
    # than read back: its kernel and its consumers' can then run as one.
    cheap_roots = {id(b) for b in order if root_of[id(b)] is b and b.op.kind in ELEMENTWISE
                   and weight[id(b)] <= RECOMPUTE_LIMIT and id(b) not in forced}
    return root_of, cheap_roots


def _kernels(order, root_of, cheap_roots) -> list[Kernel | LazyBuffer]:
    """Each root of `order` in turn: its group's kernel, or itself (a call)."""
    items: list[Kernel | LazyBuffer] = []
    for buf in order:
        if root_of[id(buf)] is buf:
            kernel = buf.op.kind in ELEMENTWISE and buf.op.kind != CONST or \
                buf.op.kind == REDUCE or gather_key(buf) is not None
            items.append(build_kernel(buf, root_of, cheap_roots) if kernel else buf)
    return items


def _merge_final(items, wanted, max_ops, cut, live=False):
    """A final plan's kernels merged, storing only what is read later. Its outputs count
    towards a kernel's arrays as `width.Stored` says: without `live`, those only its
    own steps read are hoped to become values there (the caller checks)."""
    merged = merge_siblings(items, max_ops, stored=width.Stored(items, wanted, live, cut),
                            cut=cut)
    _store_only_what_is_read(merged, wanted)
    return merged


def _bounded(items: list[Kernel | LazyBuffer]) -> bool:
    return all(arrays(k) <= MAX_KERNEL_ARRAYS for k in items if isinstance(k, Kernel))


def _store_only_what_is_read(items: list[Kernel | LazyBuffer], wanted: set[int]) -> None:
    """Drop each kernel's stores of values that no later step reads and no one asked
    for (a merged kernel computes them for its own use)."""
    read = set(wanted)
    for item in items:
        srcs = item.inputs + item.tables if isinstance(item, Kernel) else item.srcs
        read.update(id(b) for b in srcs)
    for item in items:
        if isinstance(item, Kernel) and (item.reduce or len(item.stores) > 1):
            kept = [(b, p) for b, p in item.stores if id(b) in read]
            item.stores = kept if kept or item.reduce else item.stores[:1]


def _freeze(items: list[Kernel | LazyBuffer]):
    """Number the buffers that `items` touch and make each item a frozen step; also
    returns the buffer of each slot, what each step's arguments come from (the
    constants a kernel reads as scalars; a call's node, whose argument holds index
    arrays) and each upload's gather, axis and axis length."""
    slot_of: dict[int, int] = {}
    bufs: list[LazyBuffer] = []
    sources, uploads, gathers = [], [], []

    def slot(buf: LazyBuffer) -> int:
        if id(buf) not in slot_of:
            slot_of[id(buf)] = len(bufs)
            if buf.is_realized:
                sources.append(len(bufs))
            elif buf.op.name == "load":  # a gather index (`reads.index_upload`)
                gather, axis, n = buf.arg
                uploads.append((len(bufs), wrapped_index(gather.arg[axis], n)))
                gathers.append(buf.arg)
            bufs.append(buf)
        return slot_of[id(buf)]

    steps, constants = [], []
    copied: set[int] = set()  # the slots of rolls copied so far (`Kernel.freeze`)
    for item in items:
        if isinstance(item, Kernel):
            *copies, launch = item.freeze(slot)
            copies = [c for c in copies if c.output not in copied]
            copied.update(c.output for c in copies)
            steps += [*copies, launch]
            constants += [[]] * len(copies) + [item.arg_nodes]
            continue
        constants.append([item] if item.is_const or holds_array(item.arg) else [])
        if item.is_const:  # a constant needed as an array: a broadcast scalar
            steps.append(Call("full", (), item.arg, slot(item)))
        elif item.op.kind == LIBRARY:
            steps.append(Call("library", tuple(map(slot, item.srcs)), (item.op, item.arg),
                              slot(item)))
        else:
            steps.append(Call(item.op.name, tuple(map(slot, item.srcs)), item.arg, slot(item)))
    slots = tuple(Slot(b.shape, b.dtype, b.device) for b in bufs)
    return Schedule(tuple(steps), slots, tuple(sources), tuple(uploads)), bufs, constants, \
        gathers


def _place(buf, users, wanted, root_of, has_reduce, weight, size, max_ops):
    """The root of the kernel `buf` fuses into, INLINE, or why it is a root (a str)."""
    if id(buf) in wanted:
        return "requested"
    if not _fusible(buf, weight):
        return "not fusible"
    # Consumers that need `buf` as an array: unfusible ones, movements run by the
    # backend, gathers (which read their table whole) and rolls (which read it at
    # other places than their own).
    blocking = [u for u in users if not _fusible(u, weight) or gather_key(u) is not None or
                u.op.name == "roll" or
                root_of[id(u)] is u and u.op.kind not in ELEMENTWISE and u.op.kind != REDUCE]
    if blocking:
        return "consumed by " + ", ".join(sorted({u.op.name for u in blocking}))
    if buf.op.kind == CONST:
        return INLINE
    if not FUSION:
        return "fusion disabled (NUMGRAD_FUSION=0)"
    groups = {id(root_of[id(u)]): root_of[id(u)] for u in users}
    if len(groups) == 1 and INLINE not in groups.values():
        root = next(iter(groups.values()))
        if size[id(root)] >= max_ops and not _is_view(buf):
            return f"its consumer's kernel has {max_ops} operations"
        if buf.op.kind != REDUCE:
            return root
        # A reduction fuses into elementwise consumers (its epilogue), one per kernel.
        if any(u.op.kind == REDUCE for u in users):
            return "consumed by a reduction"
        return "its consumer's kernel already folds a reduction" \
            if id(root) in has_reduce else root
    if buf.op.kind == REDUCE:
        return f"consumed by {len(groups)} kernels"
    # Kernels over buf's own loop nest, at most one of them a reduction, merge into one
    # (`merge_siblings`), which computes it once; elsewhere a costly value is stored
    # rather than recomputed.
    kernels = groups.values()
    if weight[id(buf)] <= RECOMPUTE_LIMIT or INLINE not in kernels and \
            all(_loop(g) == buf.shape for g in kernels) and \
            sum(g.op.kind == REDUCE for g in kernels) <= 1:
        return INLINE
    return f"consumed by {len(groups)} kernels"


def _is_view(buf: LazyBuffer) -> bool:
    """Whether `buf`, fused, changes only how an input is read (no code of its own):
    it does not count towards a kernel's size."""
    return buf.op.kind == MOVEMENT and gather_key(buf) is None


def _loop(root: LazyBuffer) -> tuple[int, ...]:
    return root.srcs[0].shape if root.op.kind == REDUCE else root.shape
