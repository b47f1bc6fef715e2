"""Backward passes reused by structure: a loop whose backward pass walks an autograd
graph of the same structure at every step (the same operations, static arguments,
shapes, dtypes and devices; new values) runs the VJP rules once. Their lazy graph is
kept as a recipe and made again from the new graph's saved values at later steps.

A pass is keyed by its needed nodes in the engine's order: each node's rule,
argument and edges, and the buffers it starts from (the seeds, and each node's saved
inputs and output), by shape, dtype, device and which of them are one buffer. A
constant among those is keyed by its value too: the rules' work on constants is
folded as it is recorded (`numgrad.lazy.make`), so the recipe holds its result. A pass
that computes anything (a graph realized for its depth) or meets a computed buffer it
did not start from is not kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from numgrad import engine
from numgrad.autograd.graph import AccumulateGrad, Node, OpNode
from numgrad.engine.reuse import Unhashable, hashable
from numgrad.lazy import MAX_DEPTH, LazyBuffer, make
from numgrad.ops import CONST, TABLE, Primitive

#: Recipes kept, least recently used dropped first.
CAPACITY = 256

_recipes: OrderedDict[tuple, Recipe | None] = OrderedDict()
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Recipe:
    """The buffers a backward pass made, from the buffers it started from: `made` has
    ``(op, arg, shape, dtype, device, refs)`` per buffer, in an order that makes sources
    first (``op`` None: a constant whose value is ``arg``); a ref below the number of
    starting buffers is one of those, the others the made buffer ``ref - starts``.
    `delivered` has, per gradient handed to a node (a leaf's, an input's), the node's
    position and the gradient's ref."""

    starts: int
    made: tuple[tuple, ...]
    delivered: tuple[tuple[int, int], ...]
    #: the table rows it makes buffers of (a row replaced since: not reused)
    ops: tuple[Primitive, ...]


def structure(order: list[Node], roots: list[Node], seeds: list[LazyBuffer]):
    """The key of a backward pass over the needed nodes `order` (the engine's order)
    from `seeds` at the nodes `roots`, and the buffers it starts from; (None, None)
    where it cannot be reused (a node that is not a primitive's, hooks, a retained
    gradient, freed saved values, an argument holding a large array)."""
    position = {node: i for i, node in enumerate(order)}
    starts = list(seeds)
    nodes = []
    for node in order:
        if node.hooks or node.retained is not None:
            return None, None
        if type(node) is OpNode:
            if node.saved is None:
                return None, None
            bufs, out = node.saved
            starts.extend(bufs)
            starts.append(out)
            try:
                arg = None if node.arg is None else hashable(node.arg)
            except Unhashable:
                return None, None
            nodes.append((node.op.vjp, arg, *[position.get(n, -1) for n in node.next]))
        elif type(node) is AccumulateGrad:
            nodes.append(None)
        else:
            return None, None
    first: dict[LazyBuffer, int] = {}
    described = []
    for i, buf in enumerate(starts):
        same = first.setdefault(buf, i)
        value = buf.arg if buf.op.kind == CONST and buf.realized is None else None
        described.append((buf.shape, buf.dtype, buf.device.type, same, value))
    return (tuple(nodes), tuple([position.get(r, -1) for r in roots]),
            tuple(described)), starts


def recall(key) -> Recipe | None | bool:
    """The recipe of `key`; None if its pass is not reusable; False if never seen."""
    with _lock:
        recipe = _recipes.get(key, False)
        if recipe is not False:
            _recipes.move_to_end(key)
    if recipe and any(TABLE.get(op.name) is not op for op in recipe.ops):
        return False  # its rules make other operations now: record it again
    return recipe


def remember(key, starts: list[LazyBuffer], delivered: list[tuple[int, LazyBuffer]]
             ) -> None:
    """Keep the recipe of the pass that, from `starts`, handed out `delivered`
    (node position, gradient buffer)."""
    recipe = _recipe(starts, delivered)
    with _lock:
        _recipes[key] = recipe
        if len(_recipes) > CAPACITY:
            _recipes.popitem(last=False)


def clear() -> None:
    """Forget every recipe."""
    with _lock:
        _recipes.clear()


def rebuild(recipe: Recipe, starts: list[LazyBuffer]) -> list[LazyBuffer]:
    """The buffers of `recipe` made from `starts`: the starting buffers, then the made
    ones (a node deeper than `MAX_DEPTH` is computed when made, as when recorded)."""
    bufs = list(starts)
    for op, arg, shape, dtype, device, refs in recipe.made:
        if op is None:
            bufs.append(LazyBuffer.const(arg, shape, dtype, device))
            continue
        buf = make(op, tuple([bufs[r] for r in refs]), arg, shape, dtype, device)
        if buf.depth > MAX_DEPTH:
            engine.realize(buf)
        bufs.append(buf)
    return bufs


def _recipe(starts: list[LazyBuffer], delivered) -> Recipe | None:
    ref: dict[LazyBuffer, int] = {}
    for i, buf in enumerate(starts):
        ref.setdefault(buf, i)
    found: list[LazyBuffer] = []
    seen: set[LazyBuffer] = set()
    stack = [buf for _, buf in delivered]
    while stack:  # what the pass made: everything reached before a starting buffer
        buf = stack.pop()
        if buf in ref or buf in seen:
            continue
        if buf.realized is not None:
            return None  # a computed buffer the pass did not start from
        seen.add(buf)
        found.append(buf)
        stack.extend(buf.srcs)
    found.sort(key=lambda b: b.depth)  # sources first
    made = []
    for buf in found:
        ref[buf] = len(starts) + len(made)
        if buf.op.kind == CONST:
            made.append((None, buf.arg, buf.shape, buf.dtype, buf.device, ()))
        else:
            made.append((buf.op, buf.arg, buf.shape, buf.dtype, buf.device,
                         tuple([ref[s] for s in buf.srcs])))
    ops = tuple({id(m[0]): m[0] for m in made if m[0] is not None}.values())
    return Recipe(len(starts), tuple(made), tuple((i, ref[buf]) for i, buf in delivered), ops)
