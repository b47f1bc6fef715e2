"""Eager steps run again as they were: a training loop that records the same step at every
iteration (the same operations, arguments, shapes and sources; new values) runs its
backward pass and realization as a plan, with no VJP rule run, no backward graph made
and no graph walked.

What a thread recorded since its last realization is on its tape (`numgrad.tape`). At
``backward()``, the tape (with the outside buffers' descriptions, the root, the tensors
changed in place, and the leaves, which must have no ``.grad`` yet) keys a `StepPlan`:
the schedule that the last backward pass of that tape realized, where each of its
sources comes from (an outside buffer), which of its slots are the tape's buffers
(stored into the new ones) and which are the leaves' gradients. ``ng.grad`` keys its
own, with where each input is on the tape, and its plan returns the inputs' gradients. A
pass is kept only when it was a recipe made again (`numgrad.autograd.replay`: no hooks,
no retained gradients, no custom Function, no rule that read a value), so its graph
follows from its structure. Its constants are not keyed: a Python scalar is an argument
(a learning rate that changes at every step replays one plan). Each constant the plan's
steps read is bound at every replay to the tape's constant at its position, or computed
again, as the pass folded it, from the tape's constants; the others are the rules' own,
fixed by the structure. Anything else (another backward's options, a tape broken by a
trace or by an output computed at once, a buffer from outside not computed, a node with
hooks) runs the pass as before.
"""

from __future__ import annotations

import operator
import threading
from dataclasses import dataclass, field
from math import copysign

from numgrad import remembering, tracing
from numgrad.arguments import Unhashable, holds_array
from numgrad.autograd.backward import grad_lock
from numgrad.autograd.graph import AccumulateGrad
from numgrad.autograd.replay import From, filled, index_arrays, taken
from numgrad.engine import counters
from numgrad.engine.lowering import plain_index
from numgrad.engine.prepared import run_reused
from numgrad.engine.realize import LOCK, forget_rebound, rebound_state
from numgrad.engine.steps import Call, Schedule
from numgrad.lazy import MOVES_FOLDED, LazyBuffer, fold, is_fixed
from numgrad.ops import CONST, Primitive
from numgrad.tape import TAPE

#: Step plans kept, least recently used dropped first.
CAPACITY = 64

_plans: dict[Key, StepPlan] = {}
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class StepPlan:
    """What a backward pass of one tape realized, by position."""

    plan: Schedule
    #: per source of `plan`: the outside buffer (its number on the tape) it reads, or a
    #: fixed buffer (`numgrad.lazy.fixed`: a rule's mask or identity), itself
    sources: tuple[int | LazyBuffer, ...]
    #: per slot stored into a tape buffer: (slot, tape position)
    stores: tuple[tuple[int, int], ...]
    #: per gradient handed out: (slot, its target's number, `Segment.targets`)
    grads: tuple[tuple[int, int], ...]
    #: the tape's history nodes (by number) whose saved values the pass freed
    released: tuple[int, ...]
    #: per upload of `plan`: (slot, where its index array is in the tape's arguments)
    uploads: tuple[tuple[int, From], ...] = ()
    #: per call of `plan` that indexes by arrays: (step, its values with a `From` in
    #: place of each array, `replay.taken`)
    bindings: tuple[tuple[int, tuple], ...] = ()
    #: where each index array of `uploads` and `bindings` is
    places: tuple[From, ...] = ()
    #: per step of `plan` that reads constants of the tape: (step, the rules' own
    #: constants' values, and per constant where a bound one comes from, `Constant`,
    #: or None for the rules' own)
    constants: tuple[tuple[int, tuple, tuple], ...] = ()
    #: the tape positions of the constants that `constants` reads
    reads: tuple[int, ...] = ()
    #: in a list of one: the index arrays last bound and `plan` bound to them (a loop
    #: over one batch of labels binds the same arrays at every step), replaced whole
    last: list = field(default_factory=lambda: [((), None)])
    #: likewise: the constants last read, their steps' arguments (per step of
    #: `constants`: (step, its values)), the plan they were bound into, and the result
    last_read: list = field(default_factory=lambda: [((), (), None, None)])

    def bound(self, bufs: list[LazyBuffer]) -> Schedule | None:
        """`plan` with the constants and index arrays of the tape buffers `bufs`; None
        where an upload's would need wrapping or a copy
        (`numgrad.engine.lowering.plain_index`)."""
        plan = self._indexed(bufs)
        if plan is None or not self.constants:
            return plan
        read = tuple([bufs[p].arg for p in self.reads])
        last, args, indexed, bound = self.last_read[0]  # (one read: as `last`)
        same = _same(read, last)
        if same and indexed is plan:
            return bound
        if not same:
            args = tuple((i, [fixed[k] if source is None else bufs[source].arg
                              if type(source) is int else _value(source, bufs)
                              for k, source in enumerate(sources)])
                         for i, fixed, sources in self.constants)
        values = list(plan.values) if plan.values is not None else [None] * len(plan.template)
        for i, bound_args in args:
            values[i] = bound_args
        bound = Schedule(plan.template, plan.slots, plan.sources, plan.uploads, plan.memo,
                         values)
        self.last_read[0] = read, args, plan, bound
        return bound

    def _indexed(self, bufs: list[LazyBuffer]) -> Schedule | None:
        """`plan` with the index arrays of `bufs` (`bound`)."""
        plan = self.plan
        if not self.uploads and not self.bindings:
            return plan
        arrays = [filled(where, bufs) for where in self.places]
        last, bound = self.last[0]  # (one read: another thread may replace it)
        if len(arrays) == len(last) and all(map(operator.is_, arrays, last)):
            return bound
        uploads = []
        for (slot, host), index in zip(plan.uploads, arrays):  # (`places` has them first)
            if index is not host and not plain_index(index):
                return None
            uploads.append((slot, index))
        values = list(plan.values) if plan.values is not None else [None] * len(plan.template)
        for i, parts in self.bindings:
            values[i] = [filled(part, bufs) for part in parts]
        bound = Schedule(plan.template, plan.slots, plan.sources, tuple(uploads), plan.memo,
                         values)
        self.last[0] = arrays, bound
        return bound


@dataclass(frozen=True, slots=True)
class Folded:
    """A constant the backward pass folded (`numgrad.lazy.make`): `op` on the values of
    `sources` (each a `Constant`), as a `dtype` scalar."""

    op: Primitive
    dtype: object
    sources: tuple


#: Where a constant of a plan comes from: the tape's constant at a position (an int),
#: a constant folded from others, one of them the tape's (`Folded`), or a value of the
#: rules' own (a NumPy scalar).
Constant = int | Folded | object


def _value(source: Constant, bufs: list[LazyBuffer]):
    """The value of the constant `source` for the tape buffers `bufs`."""
    if type(source) is int:
        return bufs[source].arg
    if type(source) is Folded:
        return fold(source.op, [_value(s, bufs) for s in source.sources], source.dtype)
    return source


def _source(const: LazyBuffer, position: dict, folds: dict) -> Constant:
    """Where the value of `const`, a constant the pass read, comes from: the tape
    (`position`), a fold of the pass (`folds`, `numgrad.tape.Tape.folds`), or else
    the rules, which wrote it."""
    at = position.get(const)
    if at is not None:
        return at
    how = folds.get(const)
    if how is None:
        return const.arg
    op, sources = how
    if op.name in MOVES_FOLDED:  # (the same value: its source's)
        return _source(sources[0], position, folds)
    sources = tuple(_source(s, position, folds) for s in sources)
    if not any(type(s) is int or type(s) is Folded for s in sources):
        return const.arg  # (folded from the rules' own: fixed too)
    return Folded(op, const.dtype, sources)


def _same(read: tuple, last: tuple) -> bool:
    """Whether two reads of constants are the same values, bit for bit: ``==`` with
    zeros of one sign (a NaN is never the same, unless the same object)."""
    return read == last and all(a or copysign(1.0, a) == copysign(1.0, b)
                                for a, b in zip(read, last))


def _positions(source: Constant):
    """The tape positions whose constants `source` reads."""
    if type(source) is int:
        yield source
    elif type(source) is Folded:
        for s in source.sources:
            yield from _positions(s)


def _bound(consts: list[LazyBuffer], position: dict, folds: dict) -> tuple[tuple, tuple]:
    """For the constants `consts` that a step reads: the values of the rules' own
    (None for the others), and where each of the others comes from (None for the
    rules' own)."""
    sources = [_source(c, position, folds) for c in consts]
    bound = [type(s) is int or type(s) is Folded for s in sources]
    return (tuple(None if b else s for s, b in zip(sources, bound)),
            tuple(s if b else None for s, b in zip(sources, bound)))


def _places(uploads, bindings) -> tuple[From, ...]:
    """Where each index array of `uploads` and `bindings` (`StepPlan`'s) is: the
    uploads' first, in order."""
    found: list[From] = []

    def visit(part) -> None:
        if type(part) is From:
            found.append(part)
        elif type(part) is tuple:
            for p in part:
                visit(p)

    visit(tuple(where for _, where in uploads))
    visit(tuple(parts for _, parts in bindings))
    return tuple(found)


class Key:
    """A step plan's key: a tape's description (a large tuple), its hash found once (a
    tuple's is found again at every lookup)."""

    __slots__ = ("parts", "hash")

    def __init__(self, parts: tuple):
        self.parts, self.hash = parts, hash(parts)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other) -> bool:
        return type(other) is Key and self.hash == other.hash and self.parts == other.parts


@dataclass(slots=True)
class Segment:
    """A tape taken for a backward pass: its key, and what a step plan binds."""

    key: Key
    bufs: list[LazyBuffer]
    outside: list[LazyBuffer]
    nodes: list
    #: the tensors whose gradients the pass computes: the leaves (``backward``, which
    #: adds them into their ``.grad``) or the inputs (``grad``, which returns them)
    targets: list
    #: whether the pass returns the gradients (``grad``)
    returned: bool
    rebound: list
    #: while the pass runs (`Tape.folds`): the constants it folds
    folds: dict = field(default_factory=dict)
    #: the buffers the realization's steps read their constants from
    #: (`numgrad.engine.realize`'s `constants`)
    constants: list = field(default_factory=list)


def take(tensors, plain: bool, inputs=None) -> Segment | None:
    """This thread's tape, taken for a backward pass from `tensors` (a new tape starts):
    a ``backward`` if `inputs` is None, else a ``grad`` of `inputs`; `plain` says
    whether its other options are the defaults. None where no step plan applies (the
    first pass on this thread, other options, a tape that describes no step)."""
    if not remembering.ON:
        return None
    tape = TAPE
    if not tape.active:  # (from this pass on, this thread keeps a tape)
        tape.active = True
        tape.clear()
        return None
    taken = tape.described() if plain and not tracing.ACTIVE and \
        hasattr(tensors, "_node") else None
    tape.clear()
    if taken is None:
        return None
    root = taken.node_at.get(tensors._node)
    if root is None:
        return None
    described = []
    for buf in taken.outside:  # computed: a source (a constant from before: unkeyed)
        if buf.realized is None:
            return None
        described.append((buf.shape, buf.dtype, buf.device.type))
    returned = inputs is not None
    leaves = []
    for node in taken.outside_nodes:  # only leaves with no hooks (and, for backward,
        leaf = node.leaf() if type(node) is AccumulateGrad else None  # no .grad yet)
        if leaf is None or node.hooks or node.retained is not None or \
                not returned and leaf._grad is not None:
            return None
        leaves.append(leaf)
    for node in taken.node_at:
        if node.hooks or node.retained is not None:
            return None
    targets, refs = leaves, None  # (backward: the gradients go to the leaves)
    if returned:  # where each input's gradient goes: a tape node, or a leaf's
        targets = list(inputs) if isinstance(inputs, (tuple, list)) else [inputs]
        outside_nodes = {node: -1 - k for k, node in enumerate(taken.outside_nodes)}
        refs = tuple(taken.node_at.get(t._node, outside_nodes.get(t._node))
                     for t in targets)
        if None in refs:
            return None
    rebound = rebound_state()
    changed = tuple(sorted(taken.where.get(t._buf, -1) for t in rebound))
    if changed and changed[0] < 0:  # (a tensor changed in place before this tape)
        return None
    key = Key((taken.entries, taken.nodes, tuple(described), root, changed, refs))
    return Segment(key, list(taken.where), taken.outside, list(taken.node_at), targets,
                   returned, rebound)


def replay(segment: Segment) -> list | None:
    """Run the step plan of `segment`'s tape, if there is one: its buffers that the plan
    computes stored, its nodes' saved values freed, and the gradients handed to its
    leaves, as the pass it was made from did. Returns the gradients (per target of
    `segment`), or None if no plan ran."""
    with _lock:  # (one lookup: the key's comparison is most of its cost)
        step = _plans.pop(segment.key, None)
        if step is not None:
            _plans[segment.key] = step
    plan = step.bound(segment.bufs) if step is not None else None
    if plan is None:
        return None
    outside = segment.outside
    with LOCK:
        arrays = run_reused(plan, [(outside[k] if type(k) is int else k).realized
                                   for k in step.sources])
        bufs = segment.bufs
        for slot, position in step.stores:
            buf = bufs[position]
            if buf.realized is None:
                buf.set_realized(arrays[slot])
    counters.count(schedules_reused=1, steps_replayed=1)
    forget_rebound(segment.rebound)
    targets, slots = segment.targets, plan.slots
    grads = [None] * len(targets)
    for slot, k in step.grads:
        target = targets[k]
        grads[k] = type(target)._wrap(LazyBuffer.load(arrays[slot], slots[slot].device))
        if not segment.returned:
            with grad_lock:
                target._grad = grads[k]
    nodes = segment.nodes
    for n in step.released:
        nodes[n].release()
    return grads


def remember(segment: Segment | None, ran, handed: list, rebuilt: list) -> None:
    """Keep the step plan of `segment`'s tape: the pass that ran from it (`rebuilt`: its
    needed nodes, if its recipe was made again) and the realization `ran` (the schedule
    and its slots' buffers, `engine.realize`'s result, its steps' constants in
    `segment.constants`), which handed the gradients
    `handed` (pairs of a target tensor and its gradient). Nothing is kept where a
    source, a gradient or a node is not the tape's, or (``grad``) where an input's
    gradient is not the plan's."""
    if segment is None or ran is None or not rebuilt:
        return
    plan, slots = ran
    outside = {buf: k for k, buf in enumerate(segment.outside)}
    sources = []
    for slot in plan.sources:
        k = outside.get(slots[slot])
        if k is None and not is_fixed(slots[slot]):
            return
        sources.append(slots[slot] if k is None else k)
    position = {buf: p for p, buf in enumerate(segment.bufs)}
    stores = tuple((slot, position[buf]) for slot, buf in enumerate(slots) if buf in position)
    slot_of = {buf: slot for slot, buf in enumerate(slots)}
    target_at = {id(target): k for k, target in enumerate(segment.targets)}
    grads = []
    for tensor, grad in handed:
        slot = slot_of.get(grad._buf) if grad is not None else None
        k = target_at.get(id(tensor))
        if slot is None or k is None:
            return
        grads.append((slot, k))
    if segment.returned and len({k for _, k in grads}) != len(segment.targets):
        return
    arrays = index_arrays(segment.bufs)
    try:
        uploads = tuple((slot, taken(host, arrays)) for slot, host in plan.uploads)
        bindings = tuple(_bindings(plan, arrays))
    except Unhashable:  # (an array that is no tape buffer's)
        return
    constants = tuple(
        (i, *_bound(consts, position, segment.folds))
        for i, consts in enumerate(segment.constants)
        if consts and consts[0].op.kind == CONST)  # (a call by arrays: `bindings`)
    constants = tuple(c for c in constants if any(s is not None for s in c[2]))
    reads = sorted({p for _, _, sources in constants for source in sources
                    for p in _positions(source)})  # (the rules' own alone: in `plan`)
    number = {node: n for n, node in enumerate(segment.nodes)}
    released = []
    for node in rebuilt:
        if type(node) is not AccumulateGrad:
            if node not in number:
                return
            released.append(number[node])
    with _lock:
        _plans[segment.key] = StepPlan(plan, tuple(sources), stores, tuple(grads),
                                       tuple(released), uploads, bindings,
                                       _places(uploads, bindings), constants,
                                       tuple(reads))
        if len(_plans) > CAPACITY:
            del _plans[next(iter(_plans))]


def _bindings(plan: Schedule, arrays: dict):
    """Per call of `plan` whose argument holds index arrays: its step and values
    (`Schedule.values`), each array replaced by where it is (`replay.taken`)."""
    for i, call in enumerate(plan.template):
        if type(call) is not Call:
            continue
        values = plan.values[i] if plan.values is not None else None
        if values is None:
            if not holds_array(call.arg):
                continue
            if call.op == "library":  # (its values are not its argument)
                raise Unhashable
            values = [call.arg]
        elif not any(holds_array(v) for v in values):
            continue
        yield i, tuple(taken(v, arrays) for v in values)


def clear() -> None:
    """Forget every step plan."""
    with _lock:
        _plans.clear()
