"""Where a graph recorded too deep is cut: at the same place of a loop's step each time.

A buffer's depth (`numgrad.lazy.LazyBuffer.depth`, its longest chain of pending
sources) is fixed when it is made; a source realized since leaves it too deep, so it is
worked out again (`refresh`) before a graph is cut. A graph deeper than `MAX_DEPTH` is
realized up to a buffer on its longest chain: where that chain repeats (a loop's step),
the buffer at the same place of the step each time, so that the pieces between cuts
are the same graph, and compile the same kernels, however long the loop runs.
"""

from __future__ import annotations

from numgrad import engine, repeats
from numgrad.lazy import MAX_DEPTH, LazyBuffer
from numgrad.ops import CONST, LIBRARY, MATMUL, MOVEMENT
from numgrad.plan import tracing

#: The step of a chain is found where it repeats this many times on each side of the
#: chain's middle.
REPEATS = 2


def cut(buf: LazyBuffer, before=None) -> None:
    """If `buf` is deeper than `MAX_DEPTH` (worked out again where a source was
    realized since it was made), realize its graph up to the buffer `cut_point` picks
    (calling `before` first, if given). Not while this thread traces for ``ng.jit``:
    nothing is computed then (the trace plans it all at its end)."""
    if tracing.current() is not None:
        return
    chain = longest_chain(buf)
    if chain is None:  # (too deep for a source realized since: work it out)
        if refresh(buf) <= MAX_DEPTH:
            return
        chain = longest_chain(buf)
    if before is not None:
        before()
    point = cut_point(chain)
    below = point.depth  # (what is no deeper is not downstream of it)
    engine.realize(point)
    refresh(buf, below)


def longest_chain(buf: LazyBuffer) -> list[LazyBuffer] | None:
    """The pending buffers of `buf`'s longest chain of sources, `buf` first, if their
    depths are exact (each one more than its deepest source's, down to a realized
    buffer or a constant: a chain as long as `buf`'s depth, which no chain exceeds);
    else None."""
    chain = []
    while buf.srcs:
        chain.append(buf)
        srcs = buf.srcs
        deepest = srcs[0]
        for s in srcs:
            if s.depth > deepest.depth:
                deepest = s
        if buf.depth != deepest.depth + 1:
            return None
        buf = deepest
    return chain


def refresh(buf: LazyBuffer, exact: int = 0) -> int:
    """The depth of `buf` worked out again, set on it and its pending sources (those
    at most `exact` deep are taken as they are)."""
    done: set[LazyBuffer] = set()
    stack = [buf]
    while stack:
        b = stack[-1]
        todo = [s for s in b.srcs if s.srcs and s.depth > exact and s not in done]
        if todo:
            stack += todo
            continue
        stack.pop()
        if b not in done:
            done.add(b)
            if b.srcs:
                b.depth = 1 + max([s.depth for s in b.srcs])
    return buf.depth


def cut_point(chain: list[LazyBuffer]) -> LazyBuffer:
    """The buffer to realize a graph up to, on its longest `chain` (`longest_chain`):
    where the chain repeats, the buffer at one place of its step, within a step of its
    top; else its top. The place is one whose value the backend computes by itself (a
    product, a library call: realized early, it leaves the fused kernels around it as
    they are), else one that computes rather than views; of those, the one after which
    the step's (operation, shape) sequence is least."""
    keys = [(b.op.name, b.shape) for b in chain]
    step = repeats.period(repeats.codes(keys, len(keys)), REPEATS, len(keys))
    if step is None or keys[:step] != keys[step:2 * step]:
        return chain[0]
    kinds = [chain[i].op.kind for i in range(step)]
    places = [i for i, kind in enumerate(kinds) if kind in (MATMUL, LIBRARY)] or \
        [i for i, kind in enumerate(kinds) if kind not in (CONST, MOVEMENT)]
    if not places:
        return chain[0]
    return chain[min(places, key=lambda i: keys[i:i + step])]
