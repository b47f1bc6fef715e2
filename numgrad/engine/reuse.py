"""Schedules reused by structure: a loop that builds the same graph each step (same
operations, shapes, dtypes and devices; new values) schedules it once.

`structure` walks the pending graph once and writes its structure as a hashable key:
each node's operation, static argument, shape, dtype, device and sources (by position),
with constants' values and computed buffers' contents left out. A remembered schedule
is rebound to a new graph of that structure by position: its slots to the new buffers,
its scalar arguments to the new constants' values. Graphs whose arguments hold arrays
(integer-array indexing) are not remembered.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from numgrad.engine.steps import Call, Launch, Schedule
from numgrad.lazy import LazyBuffer

#: Schedules kept, least recently used dropped first.
CAPACITY = 512


class Unhashable(Exception):
    """A static argument that holds data (an index array): the graph is not keyed."""


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
    plan: Schedule
    slots: tuple[int, ...]  # the position of each slot's buffer
    args: tuple[tuple[int, ...], ...]  # per step: the positions of its constants


_plans: OrderedDict[tuple, _Entry] = OrderedDict()


def structure(order: list[LazyBuffer], targets: list[LazyBuffer]) -> Walk:
    """The walk of `order` (a topological order of the unrealized nodes reachable
    from `targets`), with its key (None if an argument holds data)."""
    position: dict[int, int] = {}
    sources: list[LazyBuffer] = []
    nodes = []
    try:
        for i, buf in enumerate(order):
            refs = []
            for s in buf.srcs:
                if id(s) not in position:  # a computed buffer
                    position[id(s)] = -1 - len(sources)
                    sources.append(s)
                    nodes.append((s.shape, s.dtype, s.device))
                refs.append(position[id(s)])
            position[id(buf)] = i
            arg = None if buf.is_const else _hashable(buf.arg)
            nodes.append((buf.op.name, arg, buf.shape, buf.dtype, buf.device, tuple(refs)))
        key = (tuple(nodes), tuple(position[id(t)] for t in targets))
    except Unhashable:
        key = None
    return Walk(order, sources, key)


def recall(walk: Walk) -> tuple[Schedule, list[LazyBuffer]] | None:
    """The remembered schedule of `walk`'s structure, bound to its buffers and
    constants, or None."""
    entry = _plans.get(walk.key) if walk.key is not None else None
    if entry is None:
        return None
    _plans.move_to_end(walk.key)
    steps = tuple(step if not refs else _with_args(step, [walk[p].arg for p in refs])
                  for step, refs in zip(entry.plan.steps, entry.args))
    plan = dataclasses.replace(entry.plan, steps=steps)
    return plan, [walk[p] for p in entry.slots]


def remember(walk: Walk, plan: Schedule, bufs: list[LazyBuffer],
             constants: list[list[LazyBuffer]]) -> None:
    """Keep `plan` (whose slots hold `bufs`, and whose steps read the scalar
    `constants`, per step) for later graphs of `walk`'s structure."""
    if walk.key is None or plan.uploads:
        return
    position = {id(b): i for i, b in enumerate(walk.order)}
    position.update((id(b), -1 - j) for j, b in enumerate(walk.sources))
    _plans[walk.key] = _Entry(plan, tuple(position[id(b)] for b in bufs),
                              tuple(tuple(position[id(c)] for c in cs) for cs in constants))
    if len(_plans) > CAPACITY:
        _plans.popitem(last=False)


def clear() -> None:
    """Forget every remembered schedule."""
    _plans.clear()


def _with_args(step: Launch | Call, values: list):
    if isinstance(step, Launch):
        return dataclasses.replace(step, args=tuple(values))
    return dataclasses.replace(step, arg=values[0])  # a constant filled into a buffer


def _hashable(arg):
    """`arg` as a hashable value (slices as tuples); `Unhashable` if it holds data."""
    if isinstance(arg, tuple):
        return tuple(_hashable(a) for a in arg)
    if isinstance(arg, slice):
        return ("slice", arg.start, arg.stop, arg.step)
    if isinstance(arg, np.ndarray):
        raise Unhashable
    try:
        hash(arg)
    except TypeError:
        raise Unhashable from None
    return arg
