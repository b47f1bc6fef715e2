"""Bounded kernel width: where to cut a fusion group that would read too many arrays.

Numba's compile time grows with a kernel's array arguments, faster than linearly
(docs/design.md, "The engine"), so no generated kernel takes more than
`lowering.MAX_KERNEL_ARRAYS` arrays. A group is gathered from its root down to the
computed buffers it reads (`lowering.build_kernel`); a sum of 800 terms written out
would be one group. (A gradient's contributions are stacked from
`autograd.backward.STACK_AT` on: one reduction however many.)

`cuts` finds, from the sources up, the nodes to compute into buffers of their own:
at each node the arrays its value reads inside its kernel are known (those of its
sources, through the views it reads them by); where they pass the limit, its widest
sources are cut, one at a time. The cuts depend on the graph's structure only, and a
long chain is cut into pieces of one structure: a sum of 800 terms becomes a chain of
kernels that each add about 30 terms to the partial sum before them, one program.
"""

from __future__ import annotations

from numgrad.engine.lowering import Kernel, is_piece
from numgrad.engine.reads import gather_key
from numgrad.lazy import LazyBuffer
from numgrad.ops import ELEMENTWISE, REDUCE

#: Cuts change which values are recomputed where, so the graph is placed again and
#: checked; a kernel still too wide after this many rounds of cuts is left as it is
#: (one round sufficed in the graphs measured).
ROUNDS = 4


def cuts(order: list[LazyBuffer], root_of: dict, cheap_roots: set[int], limit: int,
         max_ops: int) -> set[int]:
    """The nodes (by id) of `order` (sources first) to make roots so that no kernel
    reads more than `limit` arrays, given the placement `root_of` (`schedule._place`)
    and the requested values recomputed where they are used (`cheap_roots`).

    An array read is keyed as `lowering.Kernel` keys its inputs: the buffer, the views
    it is read through, and whether the reduction's epilogue reads it (then ``True``;
    ``None`` while that is not known, below any reduction). A group is also kept to
    `max_ops` operations (counted as `schedule._place` counts them, its own nodes but
    views): cut from the consumers down, when full, a group makes each of its sources
    a root of its own (a kernel per term, each an array of the full group).
    """
    reads: dict[int, tuple[frozenset, bool]] = {}  # node -> (arrays, folds a reduction)
    ops: dict[int, int] = {}  # node -> its group's operations up to it
    cut: set[int] = set()

    def here(buf: LazyBuffer) -> bool:  # computed inside the kernel that reads it
        return buf.realized is None and id(buf) not in cut and \
            (root_of[id(buf)] is not buf or id(buf) in cheap_roots)

    def through(src: LazyBuffer) -> tuple[LazyBuffer, tuple]:
        """The node below the fused views `src` reads, and those views (outermost first)."""
        chain = ()
        while not src.is_const and here(src) and _is_view(src):
            chain += ((src.op.name, src.arg),)
            src = src.srcs[0]
        return src, chain

    def part(src: LazyBuffer) -> tuple[frozenset, bool]:
        """What reading `src` inside a kernel adds: its arrays, and whether it folds."""
        node, chain = through(src)
        if node.is_const and node.realized is None:
            return frozenset(), False  # a scalar argument
        if not here(node):
            return frozenset({(id(node), chain, None)}), False
        arrays, folds = reads[id(node)]
        if chain:
            arrays = frozenset((b, chain + c, late) for b, c, late in arrays)
        return arrays, folds

    for buf in order:
        if buf.is_const or _is_view(buf):
            continue
        if gather_key(buf) is not None:  # its table, and one index array per axis
            reads[id(buf)] = (frozenset({(("table", id(buf)), (), None)} | {
                (("index", id(buf), axis), (), None) for axis in range(len(buf.arg))}),
                False)
            ops[id(buf)] = 1
            continue
        group = buf if root_of[id(buf)] is buf else root_of[id(buf)]
        below = [through(s)[0] for s in buf.srcs]
        # (a source of the same group is one of its nodes: a member, not recomputed)
        member = [not n.is_const and here(n) and root_of[id(n)] is group and
                  id(n) not in cheap_roots for n in below]
        while True:
            parts = [part(s) for s in buf.srcs]
            arrays = _join(parts, buf.op.kind == REDUCE)
            size = 1 + sum(ops[id(n)] for n, m in zip(below, member) if m)
            wide = len(arrays) > limit
            if not wide and size <= max_ops:
                break
            # cut its widest source (for the arrays, else for the operations)
            able = [i for i, n in enumerate(below) if not n.is_const and here(n)
                    and not _is_view(n) and (wide or member[i])]
            if not able:
                break
            i = max(able, key=lambda i: len(parts[i][0]) if wide else ops[id(below[i])])
            cut.add(id(below[i]))
            member[i] = False
        reads[id(buf)] = (arrays, buf.op.kind == REDUCE or any(f for _, f in parts))
        ops[id(buf)] = size
    return cut


def _join(parts: list[tuple[frozenset, bool]], reduce: bool) -> frozenset:
    """The arrays a node reads, from those of its sources: below a reduction they are
    read in its loop (``late`` False); beside one, in its epilogue (True)."""
    if reduce:
        return frozenset((b, c, False if late is None else late)
                         for arrays, _ in parts for b, c, late in arrays)
    if not any(folds for _, folds in parts):
        return frozenset().union(*(arrays for arrays, _ in parts))
    return frozenset().union(*(
        arrays if folds else frozenset((b, c, True) for b, c, _ in arrays)
        for arrays, folds in parts))


def _is_view(buf: LazyBuffer) -> bool:
    """A movement read through inside a kernel (a gather reads its table instead)."""
    return buf.op.kind not in ELEMENTWISE and buf.op.kind != REDUCE and gather_key(buf) is None


class Stored:
    """Which outputs of a final plan's kernels count towards their arrays: a final plan
    stores only the values asked for (`wanted`, by id) and those a step not merged into
    their kernel reads.

    With `live`, a value counts until every step that reads it has joined its kernel:
    an upper bound at every point of the merge, so no kernel passes the bound. Without,
    only the steps that cannot join (calls, other loop nests, reads through views or in
    an epilogue) count: the others are hoped to join, as a chain of scalar operations
    and its derivative do (one kernel, where counting would cut it wherever the
    forward values wait for the backward pass); the planner checks and, where the hope
    failed, merges again with `live`. Nor are the pieces of a group cut for its width
    (`cut`: their roots, by id) and the kernels reading them hoped to join:
    `merge_siblings` keeps the pieces apart.
    """

    def __init__(self, items: list[Kernel | LazyBuffer], wanted: set[int], live: bool,
                 cut: set[int] = frozenset()):
        self.wanted, self.live = wanted, live
        self.fixed: set[int] = set()  # read by a step that cannot join its producer
        self.pending: dict[int, int] = {}  # steps that may join, not joined yet
        producer = {id(b): item for item in items if isinstance(item, Kernel)
                    for b, _ in item.stores}
        for item in items:
            if not isinstance(item, Kernel):
                self.fixed.update(id(s) for s in item.srcs)
                continue
            irregular, nest = item.irregular_reads(), (item.loop_shape, item.out.device)
            piece = is_piece(item, cut) or any(id(b) in cut for b in item.inputs)
            for b in {id(b): b for b in (*item.inputs, *item.tables)}.values():
                p = producer.get(id(b))
                if p is None or piece or id(b) in irregular or \
                        (p.loop_shape, p.out.device) != nest:
                    self.fixed.add(id(b))
                else:
                    self.pending[id(b)] = self.pending.get(id(b), 0) + 1

    def counts(self, buf: LazyBuffer) -> bool:
        i = id(buf)
        return i in self.wanted or i in self.fixed or self.live and self.pending.get(i, 0) > 0
