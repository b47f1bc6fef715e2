"""Backward passes reused by structure: a loop whose backward pass walks an autograd graph
of the same structure at every step (the same operations, static arguments, shapes,
dtypes and devices; new values) runs the VJP rules once. Their lazy graph is kept as a
recipe and made again from the new graph's saved values at later steps.

A pass is keyed by its needed nodes in the engine's order: each node's rule, argument
(as its output's signature, `numgrad.plan.keys.signature`, which the engine's walk
of the same graph then finds made) and edges, and the buffers it starts from (the
seeds, and each node's saved inputs and output), by shape, dtype, device and which of
them are one buffer. The recipe is the
rules' `numgrad.lazy.make` calls, noted as the pass records them (`Recorder.notes`): made
again on new buffers, work on constants folds again, from their new values. So a pass
that computes some of its graph on the way (realized for its depth, or its pending
gradients cut together, `cut`) is rebuilt computing at the same points. One whose rules
read a value, or whose gradients need a buffer from elsewhere (an array loaded during
the pass, other than a fixed one: `numgrad.lazy.fixed`), is not kept.

Index arrays are values too (the key has their shape and dtype, as the engine's
`numgrad.plan.schedules`): a rule's argument that holds a node's index array (the
scatter-add that is indexing's gradient) takes the new node's array.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numgrad import depth, engine, lazy
from numgrad import plan as remembering
from numgrad.arguments import Unhashable, holds_array
from numgrad.autograd.graph import AccumulateGrad, Node, OpNode
from numgrad.lazy import MAX_DEPTH, LazyBuffer, make
from numgrad.ops import CONST, TABLE, Primitive
from numgrad.plan import recorder
from numgrad.plan.cache import Cache
from numgrad.plan.keys import signature
from numgrad.plan.scalar_pass import ScalarPass

#: Recipes kept, by their pass's structure (`structure`); None for a pass that is not
#: reusable
CACHE = Cache("backward recipes", 256)


@dataclass(frozen=True, slots=True)
class Recipe:
    """The buffers a backward pass made, from the buffers it started from: `made` has
    ``(op, arg, shape, dtype, device, refs, sig)`` per buffer, in an order that makes
    sources first (``op`` None: a constant whose value is ``arg``, or ``arg`` itself, a
    fixed buffer, `numgrad.lazy.fixed`); refs number the
    starting buffers first, then the made ones; ``sig`` is the buffer's signature
    (`numgrad.plan.keys.signature`), which a buffer made again as recorded (not
    folded) takes without finding it again. `delivered` has, per gradient handed to a node
    (a leaf's, an input's), the node's position and the gradient's ref."""

    made: tuple[tuple, ...]
    delivered: tuple[tuple[int, int], ...]
    #: the table rows it makes buffers of (a row replaced since: not reused)
    ops: tuple[Primitive, ...]
    #: the pass as Python code, where every buffer it made was one number computed
    #: at once or folded from constants (`numgrad.plan.scalar_pass`); else None
    scalar: ScalarPass | None = None
    #: per `cut`: the number of rows made before it, and the refs it computed
    cuts: tuple[tuple[int, tuple[int, ...]], ...] = ()
    #: the entries of `delivered` that go to leaves (AccumulateGrad nodes)
    leaves: tuple[tuple[int, int], ...] = ()


def structure(order: list[Node], roots: list[Node], seeds: list[LazyBuffer]):
    """The key of a backward pass over the needed nodes `order` (the engine's order)
    from `seeds` at the nodes `roots`, and the buffers it starts from; (None, None)
    where it cannot be reused (a node that is not a primitive's, hooks, a retained
    gradient, freed saved values, an argument holding a large array).

    The key is flat (a tuple of a pass's length is hashed and compared at every
    lookup): per node its rule (`AccumulateGrad` for a leaf's), argument and edges;
    per starting buffer its shape, dtype and device type, or where it was first met.
    A rule is a function and an edge or argument a number or None, so each node's
    entries end where the next rule is.
    """
    where = {node: i for i, node in enumerate(order)}.get  # (None: not a needed node)
    starts = list(seeds)
    nodes: list = []
    add, add_all = nodes.append, nodes.extend
    for node in order:
        if node.hooks or node.retained is not None:
            return None, None
        if type(node) is OpNode:
            bufs, out = node.saved, node.out
            if bufs is None:
                return None, None
            starts += bufs
            starts.append(out)
            arg = node.arg
            if arg is not None:  # by its output's signature: what the engine's walk reads
                arg = out.sig if out.op is node.op else None  # (else: folded, computed)
                if arg is None:
                    arg = signature(node.op, node.arg, out.shape, out.dtype, out.device,
                                    len(bufs))
                    if out.op is node.op:
                        out.sig = arg
                if arg < 0:
                    return None, None
            add(node.op.vjp)
            add(arg)
            add_all(map(where, node.next))
        elif type(node) is AccumulateGrad:
            add(AccumulateGrad)
        else:
            return None, None
    first: dict[LazyBuffer, int] = {}
    described: list = []
    add, add_all = described.append, described.extend
    for i, buf in enumerate(starts):  # a buffer met before: by where it was first met
        j = first.setdefault(buf, i)
        if j == i:
            add_all((buf.shape, buf.dtype, buf.device.type))
        else:
            add(j)
    return (tuple(nodes), tuple(map(where, roots)), tuple(described)), starts


def recall(key) -> Recipe | None | bool:
    """The recipe of `key`; None if its pass is not reusable (or nothing is remembered,
    `numgrad.plan`); False if never seen."""
    if not remembering.ON:
        return None
    recipe = CACHE.get(key, False)
    if recipe and any(TABLE.get(op.name) is not op for op in recipe.ops):
        return False  # its rules make other operations now: record it again
    return recipe


def record(run, key, starts: list[LazyBuffer], order: list[Node]) -> None:
    """Run the pass `run(delivered)` over the nodes `order`, which appends each
    gradient it hands to a node to `delivered` as (node position, buffer), noting what
    it makes (this thread's recorder's `notes`); keep its recipe under `key`. Threads record
    side by side; a pass within a pass being recorded (a rule's own backward pass)
    just runs."""
    thread = recorder.current()
    if thread.notes is not None:
        run(None)
        return
    made: list = []
    delivered: list = []
    cuts: list = []
    try:
        thread.notes, thread.cuts = made, cuts
        thread.listen()
        run(delivered)
    finally:
        thread.notes = thread.cuts = None
        thread.listen()
    recipe = _recipe(starts, made, delivered, cuts, order)
    CACHE.put(key, recipe)


def cut(bufs: list[LazyBuffer]) -> None:
    """Compute `bufs` (a pass's pending gradients) together, noting where if a pass
    is being recorded: it is rebuilt computing them at the same point."""
    thread = recorder.current()
    if thread.cuts is not None:  # (set with the notes, by `record`)
        thread.cuts.append((len(thread.notes), bufs))
    _compute(bufs)


def _compute(bufs: list[LazyBuffer]) -> None:
    """Realize `bufs`, constants left as they are (scalars in kernels, never arrays)."""
    engine.realize(*[b for b in bufs if b.op.kind != CONST])


def gradients(recipe: Recipe, starts: list[LazyBuffer], order: list[Node],
              targets) -> list[tuple[int, LazyBuffer]]:
    """(node position, gradient) per gradient `recipe` hands to a leaf or to one of the
    nodes `targets`, made from `starts` and the nodes `order`: by the pass's Python code
    where it has one and it runs, or else `rebuild`."""
    wanted = recipe.leaves if not targets else [
        (i, ref) for i, ref in recipe.delivered
        if type(order[i]) is AccumulateGrad or order[i] in targets]
    bufs = recipe.scalar.run(starts, [ref for _, ref in wanted]) \
        if recipe.scalar is not None else None
    if bufs is not None:
        return [(i, buf) for (i, _), buf in zip(wanted, bufs)]
    bufs = rebuild(recipe, starts, order)
    return [(i, bufs[ref]) for i, ref in wanted]


def rebuild(recipe: Recipe, starts: list[LazyBuffer], order: list[Node] = ()
            ) -> list[LazyBuffer]:
    """The buffers of `recipe` made from `starts` (and the index arrays of the nodes
    `order`): the starting buffers, then the made ones (a node deeper than `MAX_DEPTH`
    is computed when made, and the recorded `cut`s are computed after the same rows,
    as when recorded)."""
    bufs = list(starts)
    cuts = dict(recipe.cuts)
    for op, arg, shape, dtype, device, refs, sig in recipe.made:
        if op is None:  # (a constant's value, or a fixed buffer)
            bufs.append(arg if type(arg) is LazyBuffer else
                        LazyBuffer.const(arg, shape, dtype, device))
        else:
            if type(arg) is _Taken:
                arg = arg.fill(order)
            buf = make(op, tuple([bufs[r] for r in refs]), arg, shape, dtype, device)
            if buf.op is op:
                buf.sig = sig
            if buf.depth > MAX_DEPTH:
                depth.cut(buf)
            bufs.append(buf)
        if cuts and len(bufs) - len(starts) in cuts:
            _compute([bufs[r] for r in cuts[len(bufs) - len(starts)]])
    return bufs


def _recipe(starts: list[LazyBuffer], made: list, delivered, cuts: list,
            order: list[Node]) -> Recipe | None:
    """The recipe of a pass over the nodes `order` from `starts` that `made` buffers
    (`Recorder.notes`), handed out `delivered` and computed `cuts` (`cut`'s notes);
    None if it read a value (a None note), a gradient needs a buffer from elsewhere
    (an array loaded during the pass) or an argument holds an index array that is no
    node's."""
    if None in made:  # a value was read: what the rules made may depend on it
        return None
    arrays = index_arrays(order)
    ref: dict[LazyBuffer, int] = {}
    for i, buf in enumerate(starts):
        ref.setdefault(buf, i)
    how = {note[0]: note for note in made}
    needed: set[LazyBuffer] = set()
    stack = [buf for _, buf in delivered]
    while stack:  # what the gradients need, back to the starting buffers
        buf = stack.pop()
        if buf in ref or buf in needed:
            continue
        if buf in how:
            stack.extend(how[buf][2])
        elif (buf.op.kind != CONST or buf.realized is not None) and not lazy.is_fixed(buf):
            return None
        needed.add(buf)  # made here, a constant the rules wrote, or a fixed buffer
    recipe: list[tuple] = []

    def refer(buf: LazyBuffer) -> int:
        if buf not in ref:  # a constant the rules wrote (made notes come in order), or
            ref[buf] = len(starts) + len(recipe)  # a fixed buffer: kept itself
            arg = buf if buf.op.kind != CONST else buf.arg
            recipe.append((None, arg, buf.shape, buf.dtype, buf.device, (), None))
        return ref[buf]

    made_as = {}  # per row: the operation its buffer was made as (folded: a constant)
    rows_at = []  # per note: the number of rows made before it
    for buf, op, srcs, arg in made:
        rows_at.append(len(recipe))
        if buf in needed and buf not in ref:
            refs = tuple([refer(s) for s in srcs])
            ref[buf] = len(starts) + len(recipe)
            sig = signature(op, arg, buf.shape, buf.dtype, buf.device, len(refs)) \
                if buf.op is op else None
            made_as[len(recipe)] = buf.op
            if holds_array(arg):
                try:
                    arg = _Taken(taken(arg, arrays))
                except Unhashable:  # an array of the rules' own: its values are structure
                    return None
            recipe.append((op, arg, buf.shape, buf.dtype, buf.device, refs, sig))
    rows_at.append(len(recipe))
    kept_cuts: dict[int, tuple[int, ...]] = {}
    for notes, bufs in cuts:  # (what it computed then that was made by then)
        rows = rows_at[notes]
        refs = tuple(ref[b] for b in bufs if b in ref and ref[b] < len(starts) + rows)
        if rows and refs:
            kept_cuts[rows] = kept_cuts.get(rows, ()) + refs
    handed = tuple((i, refer(buf)) for i, buf in delivered)
    ops = tuple({id(m[0]): m[0] for m in recipe if m[0] is not None}.values())
    scalar = ScalarPass.of(recipe, starts, {r for _, r in handed}, made_as)
    leaves = tuple((i, ref) for i, ref in handed if type(order[i]) is AccumulateGrad)
    return Recipe(tuple(recipe), handed, ops, scalar, tuple(kept_cuts.items()), leaves)


@dataclass(frozen=True, slots=True)
class _Taken:
    """A rule's argument that holds nodes' index arrays: `parts` is the argument with
    a `From` in place of each array."""

    parts: object

    def fill(self, order: list[Node]):
        """The argument, with the arrays of the nodes `order`."""
        return filled(self.parts, order)


class From(tuple):
    """Where an index array was: (position of its node or buffer, path into the
    argument)."""


def index_arrays(order: list) -> dict[int, From]:
    """Where each index array in the arguments of `order` (nodes, or buffers) is, by
    id."""
    found: dict[int, From] = {}

    def visit(arg, where: tuple) -> None:
        if isinstance(arg, np.ndarray):
            found.setdefault(id(arg), From(where))
        elif isinstance(arg, tuple):
            for i, a in enumerate(arg):
                visit(a, where + (i,))

    for position, owner in enumerate(order):
        arg = getattr(owner, "arg", None)  # (an AccumulateGrad has none)
        if arg is not None and holds_array(arg):
            visit(arg, (position,))
    return found


def taken(arg, arrays: dict[int, From]):
    """`arg` with a `From` in place of each array (`Unhashable` if one is no node's)."""
    if isinstance(arg, np.ndarray):
        if id(arg) not in arrays:
            raise Unhashable
        return arrays[id(arg)]
    return tuple(taken(a, arrays) for a in arg) if isinstance(arg, tuple) else arg


def filled(part, order: list):
    """`part` (`taken`'s) with the arrays of `order` (nodes, or buffers) in place."""
    if type(part) is From:
        position, *path = part
        value = order[position].arg
        for i in path:
            value = value[i]
        return value
    return tuple(filled(p, order) for p in part) if type(part) is tuple else part
