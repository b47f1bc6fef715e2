"""The tape described: what a thread recorded since its last realization, in order (each
pending buffer made and each history node made, as its recorder noted them:
`numgrad.plan.recorder`), described by structure once, when a backward pass asks, so
that an eager step can be recognized as the last one again (`numgrad.plan.step_plans`).

Per buffer its signature (`numgrad.plan.keys`, the engine's: no constant's value, which
a step plan binds, and index arrays by dtype and shape) and where each source comes
from: an earlier buffer of the tape (its position) or one from outside it (``-1 - k``
for the k-th one met); per node its output's position and where each edge goes, the
same way. Two runs of the same code on new values give equal descriptions.
"""

from __future__ import annotations

from dataclasses import dataclass

from numgrad.plan.keys import signature_of


class Describing:
    """A tape's description as it is made, part after part (a cut's, then the rest:
    `numgrad.plan.recorder.Recorder.cut`)."""

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

    def done(self) -> Description:
        """The description made."""
        return Description(tuple(self.entries), tuple(self.nodes), self.where,
                           list(self.outside), self.node_at, list(self.outside_nodes))


def _outside(outside: dict, item) -> int:
    """The ref of `item` (a buffer or a node) from outside the tape: ``-1 - k`` for the
    k-th met, numbered in `outside` as met."""
    ref = outside.get(item)
    if ref is None:
        ref = outside[item] = -1 - len(outside)
    return ref


@dataclass(frozen=True, slots=True)
class Description:
    """A tape by structure (`numgrad.plan.recorder.Recorder.described`)."""

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
