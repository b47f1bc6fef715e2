"""Schedules reused by structure: a loop that builds the same graph each step (same
operations, shapes, dtypes and devices; new values) schedules it once.

`walk` orders the pending graph and writes its structure as a hashable key:
each node's operation, static argument, shape, dtype, device and sources (by position),
with constants' values, computed buffers' contents and index arrays' contents left
out. A node's description is numbered once (`numgrad.plan.keys`) and the number kept
on it, so the key is a flat tuple of integers, cheap to hash and compare. A remembered
schedule is rebound to a new graph of that structure by position: its slots to the
new buffers, its scalar arguments to the new constants' values, and its gathers'
indices (uploads) and the calls that index by integer arrays to the new graph's
arrays. A loss over new class labels at every step (`cross_entropy` gathers by them)
is then planned once.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

from numgrad import plan as remembering
from numgrad.engine.reads import wrapped_index
from numgrad.lazy import LazyBuffer
from numgrad.plan.bound import Plan
from numgrad.plan.cache import Cache
from numgrad.plan.keys import intern, signature_of


@dataclass(frozen=True, slots=True)
class Walk:
    """A pending graph in a canonical order: `order` (unrealized nodes, sources before
    consumers) and `sources` (computed buffers, first use first). Position ``i >= 0``
    is ``order[i]``, position ``-1 - j`` is ``sources[j]``."""

    order: list[LazyBuffer]
    sources: list[LazyBuffer]
    key: tuple | None

    def __getitem__(self, position: int) -> LazyBuffer:
        return self.order[position] if position >= 0 else self.sources[-1 - position]


@dataclass(frozen=True, slots=True)
class _Entry:
    plan: Plan
    #: the position of each slot's buffer: in the graph, or (an index upload's, made by
    #: the scheduler) ``len(order) + k`` for `stand_ins[k]`, between the nodes and the
    #: computed buffers of `recall`'s list
    slots: tuple[int, ...]
    stand_ins: list[LazyBuffer]
    #: the steps with constants: (step index, the positions of its constants; a call's:
    #: of the node it runs)
    args: tuple[tuple[int, tuple[int, ...]], ...]
    #: per upload: the position of its gather, the index's axis and that axis' length
    uploads: tuple[tuple[int, int, int], ...]
    #: per upload: the last index array rebound and its upload (an index array is
    #: never changed: keys hold arrays of their own, `primitives._key_array`)
    last: list[tuple | None]


#: Schedules kept, by their graph's structure (`Walk.key`)
CACHE = Cache("schedules", 512)


def walk(targets: list[LazyBuffer]) -> Walk:
    """The unrealized nodes reachable from `targets` in topological order (by depth:
    sources before consumers), the computed buffers they read, and the key of their
    structure (None if an argument is of a kind `hashable` does not know).

    The key is flat: per node its signature (`numgrad.plan.keys`, which counts its
    sources)
    then the positions of its sources; then the computed buffers' descriptions, and
    the targets' positions. Buffers are their own keys (by identity: LazyBuffer
    defines no equality), which is faster than keying by ``id``: this runs at every
    realization.
    """
    order: list[LazyBuffer] = []
    seen: set[LazyBuffer] = set()
    stack = []
    for t in targets:
        if t.realized is None and t not in seen:
            seen.add(t)
            stack.append(t)
    while stack:  # found depth first, sorted by depth (stable: deterministic)
        buf = stack.pop()
        order.append(buf)
        for s in buf.srcs:
            if s.realized is None and s not in seen:
                seen.add(s)
                stack.append(s)
    order.sort(key=_depth)
    sources: list[LazyBuffer] = []
    nodes: list[int] = []
    # nodes of `order`, then computed buffers
    position: dict[LazyBuffer, int] = {buf: i for i, buf in enumerate(order)}
    keyed = True
    for buf in order:
        sig = buf.sig
        if sig is None:
            sig = signature_of(buf)
        keyed = keyed and sig >= 0
        nodes.append(sig)
        for s in buf.srcs:
            ref = position.get(s)
            if ref is None:  # a computed buffer
                ref = position[s] = -1 - len(sources)
                sources.append(s)
            nodes.append(ref)
    key = (tuple(nodes), tuple([intern((s.shape, s.dtype, s.device.type)) for s in sources]),
           tuple([position[t] for t in targets])) if keyed else None
    return Walk(order, sources, key)


_depth = operator.attrgetter("depth")


def recall(walk: Walk, constants: list | None = None
           ) -> tuple[Plan, list[LazyBuffer]] | None:
    """The remembered schedule of `walk`'s structure, bound to its buffers and
    constants, or None. `constants`, a list, receives per step the buffers its
    arguments come from (`numgrad.engine.schedule.schedule`'s)."""
    entry = CACHE.get(walk.key) if walk.key is not None and remembering.ON else None
    if entry is None:
        return None
    # position p at at[p] (as `walk[p]`, faster), the stand-ins after the nodes
    at = walk.order + entry.stand_ins + walk.sources[::-1]
    old = entry.plan
    values = [None] * len(old.template)
    for i, refs in entry.args:
        values[i] = [at[p].arg for p in refs]
    if constants is not None:
        bound = dict(entry.args)
        constants += [[at[p] for p in bound.get(i, ())] for i in range(len(values))]
    return old.bound(values, _uploads(entry, at)), [at[p] for p in entry.slots]


def _uploads(entry: _Entry, at: list[LazyBuffer]) -> tuple:
    """The uploads of `entry`'s plan for the gathers of the new graph (`at`, by
    position): each gather's index array, negative indices wrapped."""
    uploads = []
    for j, ((slot, _), (p, axis, n)) in enumerate(zip(entry.plan.uploads, entry.uploads)):
        index, last = at[p].arg[axis], entry.last[j]
        if last is None or last[0] is not index:
            last = entry.last[j] = (index, wrapped_index(index, n))
        uploads.append((slot, last[1]))
    return tuple(uploads)


def remember(walk: Walk, plan: Plan, bufs: list[LazyBuffer],
             constants: list[list[LazyBuffer]], uploads: list[tuple]) -> None:
    """Keep `plan` (whose slots hold `bufs`, whose steps read the scalar `constants`
    or run the node given, per step, and whose uploads are the indices `uploads`:
    per upload its gather node, the index's axis and that axis' length) for later
    graphs of `walk`'s structure."""
    if walk.key is None or not remembering.ON:
        return
    position = {b: i for i, b in enumerate(walk.order)}
    position.update((b, -1 - j) for j, b in enumerate(walk.sources))
    stand_ins = []
    for b in bufs:
        if b not in position:  # an upload's
            position[b] = len(walk.order) + len(stand_ins)
            stand_ins.append(_stand_in(b))
    CACHE.put(walk.key, _Entry(
        plan, tuple(position[b] for b in bufs), stand_ins,
        tuple((i, tuple(position[c] for c in cs)) for i, cs in enumerate(constants) if cs),
        tuple((position[node], axis, n) for node, axis, n in uploads), [None] * len(uploads)))


def _stand_in(upload: LazyBuffer) -> LazyBuffer:
    """An index upload's buffer as kept: its shape, dtype and device (not its gather)."""
    return LazyBuffer(upload.op, (), None, upload.shape, upload.dtype, upload.device)

