"""A deep backward pass cut where its loop repeats.

A long loop's pass is too deep to fuse whole: its saved values are computed, and its
gradients cut, a piece at a time. Cut by a depth count, the pieces start at other
places of the loop's step for other lengths, and each such place is a kernel of its
own. Cut where the pass's nodes repeat, every piece but the first and the last is
one or more whole steps of the loop, the last ends with the loop's end as the first
starts with its start, and a loop of any length makes the same pieces, so launches
the same kernels.
"""

from __future__ import annotations

import numpy as np

from numgrad import repeats
from numgrad.autograd.graph import Node, OpNode

#: A piece is at least this many nodes (whole repeats of the loop's step).
PIECE_NODES = 24
#: A step is found where it repeats this many times on each side of the pass's middle.
MIN_REPEATS = 4
#: A step longer than this many nodes is not looked for (a pass of such steps is cut
#: by depth).
MAX_STEP = 4096


def pieces(order: list[Node]) -> np.ndarray | None:
    """Per node of `order` (the engine's order, sources first), the piece it falls
    in, counted from 0 at the start: the nodes before the loop repeats, then runs of
    whole steps of at least `PIECE_NODES` nodes, then the last 1 to that many steps
    one piece each (so that a loop of any length has pieces of the same few kinds),
    then the nodes after the loop. None if the nodes do not repeat at least
    `MIN_REPEATS` times.

    Nodes are compared by their primitive and output shape (an `AccumulateGrad` by
    its kind): a loop's step is the shortest period of that sequence in the middle of
    the pass, and the loop the stretch around the middle that has that period."""
    codes = repeats.codes(((n.op, n.out and n.out.shape) if type(n) is OpNode else type(n)
                           for n in order), len(order))  # (out None: freed)
    step = repeats.period(codes, MIN_REPEATS, MAX_STEP)
    if step is None:
        return None
    breaks = np.flatnonzero(codes[:-step] != codes[step:])
    middle = len(codes) // 2
    first = int(breaks[breaks < middle].max(initial=-1)) + 1
    end = int(breaks[breaks >= middle].min(initial=len(codes) - step)) + step
    steps = (end - first) // step
    per_piece = -(-PIECE_NODES // step)
    single = (steps - 1) % per_piece + 1  # the loop's last steps: a piece each
    whole = steps - single  # (a multiple of per_piece)
    of_step = np.concatenate([np.arange(whole) // per_piece,
                              whole // per_piece + np.arange(single)])
    number = np.full(len(codes), 2 + of_step[-1])  # (the end's piece)
    number[:first] = 0
    number[first:first + steps * step] = 1 + np.repeat(of_step, step)
    return number
