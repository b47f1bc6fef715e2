"""The tape: what a thread recorded since its last realization, in order, so that an eager
step can be recognized as the last one again (`numgrad.plan.step_plans`).

Recording only appends: each pending buffer made (`lazy.make`, `LazyBuffer.const`) and
each history node made (`primitives._apply`). `Tape.described` then describes them by
structure, once, when a backward pass asks: per buffer its signature
(`numgrad.plan.keys`, the engine's: no constant's value, which a step plan binds, and
index arrays by dtype and shape) and where each source comes from: an earlier buffer of
the tape (its position) or one from outside it (``-1 - k`` for the k-th one met); per
node its output's position and where each edge goes, the same way. Two runs of the
same code on new values give equal descriptions.

A thread keeps a tape once it has run a backward pass (`Tape.active`): code that never
trains, and a tape that describes nothing (`Tape.stop`), pays one attribute test per
recorded operation.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

from numgrad.plan.keys import signature_of

#: A tape longer than this describes no step (a step records dozens of operations, a
#: long one thousands): it stops, rather than hold every buffer made since the last
#: realization.
MAX_ENTRIES = 10_000
#: A tape kept across realizations (`Tape.cut`) keeps what they computed alive: past
#: this many bytes of its buffers, a realization starts a new tape instead (a step of
#: large arrays is not worth a plan; inference read by read holds no memory for one).
MAX_HELD_BYTES = 64 << 20


class Tape(threading.local):
    """One thread's tape (a `threading.local`: each thread has its own)."""

    #: whether this thread keeps a tape (set by its first backward pass)
    active = False
    #: whether it records one now: active, the tape not stopped, and no backward pass
    #: running (`in_pass`)
    on = False
    #: whether a backward pass runs on this thread (its buffers are no step's, though it
    #: realizes some on its way)
    in_pass = False
    #: while a backward pass that may become a step plan runs: each constant folded
    #: (`numgrad.lazy.make`), with its operation and sources, so that the plan computes
    #: it again from new constants
    folds: dict | None = None
    #: likewise: each realization the pass runs (`numgrad.engine.realize`)
    ran: list | None = None
    #: whether a value was read during the backward pass now running (its rules'
    #: results may depend on it: it keeps no step plan)
    read = False
    #: while this thread records a backward pass for reuse (`numgrad.plan.recipes`):
    #: each `numgrad.lazy.make` call, as (buffer, op, srcs, arg), and None for each
    #: value read; and the pass's cuts, as (number of notes, buffers). Another thread's
    #: work is not noted: it is no part of this pass.
    notes: list | None = None
    cuts: list | None = None

    def __init__(self):
        self.clear()

    def clear(self) -> None:
        """Start an empty tape (a realization, a backward pass)."""
        self.on = self.active and not self.in_pass
        #: the pending buffers made, and the history nodes made, in order, since the
        #: tape started or was last cut
        self.bufs: list = []
        self.nodes: list = []
        #: whether something the tape does not describe happened (it keys nothing)
        self.broken = False
        #: the description of what came before the last cut (`cut`), if any
        self.before: _Describing | None = None
        #: whether the next realization is a cut's
        self.cutting = False
        #: the buffers it may still note (`MAX_ENTRIES` in all)
        self.room = MAX_ENTRIES
        #: the bytes of the buffers described at its cuts (`MAX_HELD_BYTES` at most)
        self.held = 0

    def cut(self) -> None:
        """A realization within a step follows (a cut for depth, `numgrad.primitives`, or
        a value read before ``backward()``, `numgrad.tensor_base`): the step goes on after
        it, so the tape describes what it holds now, before its buffers are computed
        (which drops their sources), and records on. A tape that holds no history node
        (no step: work under ``no_grad``, whose computed buffers it would keep), or whose
        buffers would pass `MAX_HELD_BYTES`, starts anew at the realization, as at any
        other."""
        if self.on and (self.nodes or self.before is not None):
            held = self.held + sum(b.dtype.itemsize * math.prod(b.shape) for b in self.bufs)
            described = self.before or _Describing()
            if held <= MAX_HELD_BYTES and described.add(self.bufs, self.nodes):
                self.before, self.bufs, self.nodes = described, [], []
                self.cutting, self.room, self.held = True, MAX_ENTRIES - described.count, held

    def realizing(self) -> None:
        """A realization starts: a new tape, unless it is a cut's (`cut`)."""
        if self.cutting:
            self.cutting = False
        else:
            self.clear()

    def stop(self) -> None:
        """Record nothing until the next `clear`: something the tape cannot describe
        happened (a trace, an output computed at once, more than `MAX_ENTRIES`
        buffers), so it keys nothing. (Its buffers are let go.)"""
        self.clear()
        self.on, self.broken = False, True

    def made(self, buf) -> None:
        """Note the pending buffer `buf`, just made."""
        if len(self.bufs) < self.room:
            self.bufs.append(buf)
        else:  # (no step: a graph built up, not realized)
            self.stop()

    def node(self, node) -> None:
        """Note the history node `node`, just made (of an output computed at once, as a
        scalar loop's are: stop, that loop records no step)."""
        if node.out.realized is None:
            self.nodes.append(node)
        else:
            self.stop()

    def described(self) -> Description | None:
        """The tape described by structure (`Description`), or None where it describes
        no step: it was stopped, or one of its buffers was computed since (by another
        thread), or a node's output is not one of them."""
        described = self.before or _Describing()
        if self.broken or not described.add(self.bufs, self.nodes):
            return None
        return Description(tuple(described.entries), tuple(described.nodes),
                           described.where, list(described.outside), described.node_at,
                           list(described.outside_nodes))


class _Describing:
    """A tape's description as it is made, part after part (`Tape.cut`)."""

    def __init__(self):
        self.entries: list = []
        self.nodes: list = []
        self.where: dict = {}
        self.outside: dict = {}
        self.node_at: dict = {}
        self.outside_nodes: dict = {}

    @property
    def count(self) -> int:
        """The number of buffers described."""
        return len(self.where)

    def add(self, bufs: list, nodes: list) -> bool:
        """Describe the next part of the tape, the pending buffers `bufs` and history
        nodes `nodes`; False where it describes no step (a buffer computed already, a
        node's output not a buffer of the tape)."""
        where, outside = self.where, self.outside
        add = self.entries.append
        for position, buf in enumerate(bufs, len(where)):
            sig = buf.sig
            if sig is None:
                sig = signature_of(buf)
            if buf.realized is not None or sig < 0:
                return False
            add(sig)
            for s in buf.srcs:
                ref = where.get(s)
                add(_outside(outside, s) if ref is None else ref)
            where[buf] = position
        node_at, outside_nodes = self.node_at, self.outside_nodes
        add = self.nodes.append
        for node in nodes:
            position = where.get(node.out) if node.out is not None else None
            if position is None:  # (freed by a pass, or made before a realization)
                return False
            add(position)
            add(len(node.next))
            for n in node.next:
                ref = node_at.get(n) if n is not None else None
                add(_outside(outside_nodes, n) if ref is None and n is not None
                    else ref)  # (no edge: None)
            node_at[node] = position
        return True


def _outside(outside: dict, item) -> int:
    """The ref of `item` (a buffer or a node) from outside the tape: ``-1 - k`` for the
    k-th met, numbered in `outside` as met."""
    ref = outside.get(item)
    if ref is None:
        ref = outside[item] = -1 - len(outside)
    return ref


@dataclass(frozen=True, slots=True)
class Description:
    """A tape by structure (`Tape.described`)."""

    #: per buffer, flat: its signature (`numgrad.plan.keys`, which counts its sources)
    #: and its sources' refs
    entries: tuple
    #: per history node, flat: its output's position, its number of edges, their refs
    nodes: tuple
    #: the tape's buffers: buffer -> position
    where: dict
    #: the buffers from outside the tape, by first use (ref ``-1 - k``: the k-th)
    outside: list
    #: the tape's nodes: node -> its output's position
    node_at: dict
    #: the nodes from outside the tape (the leaves'), by first use
    outside_nodes: list


#: The tape of each thread.
TAPE = Tape()
