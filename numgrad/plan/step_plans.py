"""Eager steps run again as they were: a training loop that records the same step at every
iteration (the same operations, arguments, shapes and sources; new values) runs its
backward pass and realization as a plan, with no VJP rule run, no backward graph made
and no graph walked.

What a thread recorded since its last realization is on its tape (`numgrad.plan.tape`). At
``backward()``, the tape (with the outside buffers' descriptions, the root, the tensors
changed in place, and the leaves, which must have no ``.grad`` yet) keys a `StepPlan`:
the schedule that the last backward pass of that tape realized, where each of its
sources comes from (a reference, `numgrad.plan.refs`: an outside buffer, an earlier
stage's result), which of its slots are the tape's buffers its caller reads (stored
into the new ones: the outputs and the tensors changed in place; every one it computes
once one it left was read, `STORING_ALL`) and which are the leaves' gradients.
``ng.grad`` keys its own, with where each input is on the tape, and its plan returns
the inputs' gradients. A
pass is kept only when its graph follows from its structure (no hooks, no retained
gradients, no custom Function, no rule that read a value: `backward._propagate_or_replay`;
no buffer loaded by a rule, no index array of a rule's own: `remember`). Its constants
are not keyed: a Python scalar is an argument (a learning rate that changes at every
step replays one plan). Each constant the plan's
steps read is bound at every replay to the tape's constant at its position, or computed
again, as the pass folded it, from the tape's constants; the others are the rules' own,
fixed by the structure. Anything else (another backward's options, a tape broken by a
trace or by an output computed at once, a buffer from outside not computed, a node with
hooks) runs the pass as before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from numgrad import plan as remembering
from numgrad.arguments import Unhashable
from numgrad.autograd.backward import grad_lock
from numgrad.autograd.graph import AccumulateGrad
from numgrad.engine import counters
from numgrad.engine.realize import LOCK, forget_rebound, realize, rebound_state
from numgrad.lazy import LazyBuffer, is_fixed
from numgrad.ops import CONST, TABLE
from numgrad.plan import recorder
from numgrad.plan.bound import Plan, Runs
from numgrad.plan.cache import Cache
from numgrad.plan.prepared import nbytes, run_reused
from numgrad.plan.recipes import index_arrays
from numgrad.plan.refs import AtOnce, Fixed, OnTape, Outside, Ref, ReplayContext, Result
from numgrad.plan.stage import Stage, joined, rejoined, source_of

#: Step plans kept, by their tape's description (`Key`)
CACHE = Cache("step plans", 64)
#: The tapes whose step plans store every value of the tape they compute: one of those
#: values was read after a replay that kept it as its own (`replay`, `take`)
STORING_ALL = Cache("step plans storing every value", 64)
#: A stage keeps its intermediates of fewer bytes in buffers of its own, held while its
#: step plan is kept (`_needing`): where a launch's own cost outweighs its work. Larger
#: ones are allocated at each run, or recycled (`numgrad.plan.prepared.HOLDING`).
STAGE_BUFFER_BYTES = 1 << 14


@dataclass(frozen=True, slots=True)
class StepPlan:
    """What a backward pass of one tape realized, by position: its realizations in
    order (`Stage`), joined into one where nothing was computed between them
    (`numgrad.plan.stage.joined`)."""

    stages: tuple[Stage, ...]
    #: per stage of several: the slots of its results that no later stage reads and
    #: that are neither stored nor handed out, let go when the stage has run
    dropped: tuple[tuple[int, ...], ...]
    #: per stage: the results of earlier stages (`Result`) that it is the last to read
    done: tuple[tuple[Result, ...], ...]
    #: per result stored into a tape buffer: (stage, slot, tape position)
    stores: tuple[tuple[int, int, int], ...]
    #: per gradient handed out: where it is (a reference, `numgrad.plan.refs`) and its
    #: target's number (`Segment.targets`)
    grads: tuple[tuple[Ref, int], ...]
    #: the tape's history nodes (by number) whose saved values the pass freed
    released: tuple[int, ...]
    #: the primitive table's generation it was made under (`numgrad.ops.Table`): a row
    #: replaced since makes it stale (its kernels and rules are the old row's)
    generation: int
    #: the tape's buffers (by position) that the stages read, computed when the
    #: forward was cut for depth (`numgrad.plan.recorder.Recorder.cut`)
    cut: tuple[int, ...] = ()
    #: the tape's buffers (by position) the stages compute but do not store
    unstored: tuple[int, ...] = ()


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
    #: while the pass runs (`Recorder.folds`): the constants it folds
    folds: dict = field(default_factory=dict)
    #: while the pass runs (`Recorder.ran`): its realizations, each its schedule, its
    #: slots' buffers and its steps' constants (`numgrad.engine.realize`)
    ran: list = field(default_factory=list)
    #: the tape buffers its plan stores, the values its caller reads (the outputs, what
    #: they view, the tensors changed in place); None: every one the pass computed
    stored: set | None = None


def take(tensors, plain: bool, inputs=None) -> Segment | None:
    """This thread's tape, taken for a backward pass from `tensors` (a new tape starts):
    a ``backward`` if `inputs` is None, else a ``grad`` of `inputs`; `plain` says
    whether its other options are the defaults. None where no step plan applies (the
    first pass on this thread, other options, a tape that describes no step)."""
    if not remembering.ON:
        return None
    tape = recorder.current()  # (this thread's: its tape and its trace)
    if not tape.active:  # (from this pass on, this thread keeps a tape)
        tape.active = True
        tape.clear()
        return None
    taken = tape.described() if plain and tape.tracer is None and \
        hasattr(tensors, "_node") else None
    tape.clear()
    # Values an earlier step left pending that this one reads (a hidden state carried
    # over) are computed first; a constant from before is unkeyed.
    carried = [buf for buf in taken.outside if buf.realized is None] if taken else []
    unkeyed = any(buf.op.kind == CONST for buf in carried)
    if carried and not unkeyed:
        realize(*carried)
    if tape.unstored is not None:  # (the last replay's plan left one that was computed)
        if tape.unstored_read:
            _store_all(tape.unstored[0])
        tape.unstored = None
    if taken is None or unkeyed:
        return None
    root = taken.node_at.get(tensors._node)
    if root is None:
        return None
    described = [(buf.shape, buf.dtype, buf.device.type) for buf in taken.outside]
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
    step = CACHE.get(segment.key)
    if step is None or step.generation != TABLE.generation:
        return None
    bufs = segment.bufs
    plans = [stage.bound(bufs) for stage in step.stages]
    if None in plans or step.cut and any(bufs[p].realized is None for p in step.cut):
        return None  # (a forward cut elsewhere: the pass runs as before)
    results: list[list] = []  # per stage, its slots' arrays (those let go: None)
    at = ReplayContext(segment.outside, bufs, results)
    with LOCK:
        for stage, plan, dropped, done in zip(step.stages, plans, step.dropped, step.done):
            arrays = run_reused(plan, [ref.array(at) for ref in stage.sources])
            results.append(arrays)
            for slot in dropped:
                arrays[slot] = None
            for ref in done:
                results[ref.stage][ref.slot] = None
        for i, slot, position in step.stores:
            buf = bufs[position]
            if buf.realized is None:
                buf.set_realized(results[i][slot])
    if step.unstored:
        recorder.current().left(segment.key, bufs, step.unstored)
    counters.count(schedules_reused=len(plans), steps_replayed=1)
    forget_rebound(segment.rebound)
    targets = segment.targets
    grads = [None] * len(targets)
    for ref, k in step.grads:
        target = targets[k]
        grads[k] = type(target)._wrap(LazyBuffer.load(ref.array(at), target._buf.device))
        if not segment.returned:
            with grad_lock:
                target._grad = grads[k]
    nodes = segment.nodes
    for n in step.released:
        nodes[n].release()
    return grads


def remember(segment: Segment | None, handed: list, structural: list) -> None:
    """Keep the step plan of `segment`'s tape: the pass that ran from it (`structural`:
    its needed nodes, if its gradients follow from its structure), whose realizations are
    `segment.ran`, and which handed the gradients `handed` (pairs of a target tensor
    and its gradient). Nothing is kept where a source, a gradient or a node is neither
    the tape's nor a realization's of the pass, or (``grad``) where an input's gradient
    is not the plan's."""
    if segment is None or not segment.ran or not structural:
        return
    generation = TABLE.generation
    outside = {buf: k for k, buf in enumerate(segment.outside)}
    position = {buf: p for p, buf in enumerate(segment.bufs)}
    arrays = index_arrays(segment.bufs)
    made: dict[LazyBuffer, Result] = {}  # per buffer computed, where
    stages, stores, last_read, cut, unstored = [], [], {}, set(), []
    stored = None if segment.key in STORING_ALL else segment.stored
    folds = segment.folds

    def ref_of(buf: LazyBuffer, i: int):
        """Where stage `i` (or, past the last, the gradients) reads `buf` from (a
        reference), or None."""
        ref = made.get(buf)
        if ref is not None:
            last_read[ref] = i
            return ref
        k = outside.get(buf)
        if k is not None:
            return Outside(k)
        if buf in position:  # computed at a cut of the forward
            cut.add(position[buf])
            return OnTape(position[buf])
        how = folds.get(buf) if buf.realized is not None else None
        if how is not None:  # computed at once by the pass
            op, srcs = how
            refs = [source_of(s, position, folds) if s.realized is None else
                    ref_of(s, i) for s in srcs]
            return None if None in refs else AtOnce(op, buf.dtype, buf.shape, buf.device,
                                                     tuple(refs))
        return Fixed(buf.realized) if is_fixed(buf) else None

    for i, (plan, slots, constants) in enumerate(segment.ran):
        sources = tuple(ref_of(slots[slot], i) for slot in plan.sources)
        if None in sources:
            return
        try:
            stages.append(Stage.of(plan, sources, constants, arrays, position, folds))
        except Unhashable:  # (an array that is no tape buffer's)
            return
        inputs = set(plan.sources).union(slot for slot, _ in plan.uploads)
        for slot, buf in enumerate(slots):
            if slot not in inputs:
                made[buf] = Result(i, slot)
                if buf in position:
                    if stored is None or buf in stored:
                        stores.append((i, slot, position[buf]))
                    else:
                        unstored.append(position[buf])
    target_at = {id(target): k for k, target in enumerate(segment.targets)}
    grads = []
    for tensor, grad in handed:
        ref = ref_of(grad._buf, len(stages)) if grad is not None else None
        k = target_at.get(id(tensor))
        if ref is None or k is None:
            return
        grads.append((ref, k))
    if segment.returned and len({k for _, k in grads}) != len(segment.targets):
        return
    number = {node: n for n, node in enumerate(segment.nodes)}
    released = []
    for node in structural:
        if type(node) is not AccumulateGrad:
            if node not in number:
                return
            released.append(number[node])
    count = len(stages)  # (the gradients' reader: past the last stage)
    stages, where = joined(stages)
    stores = [(where[i][0], where[i][1][slot], position) for i, slot, position in stores]
    grads = [(rejoined(ref, where), k) for ref, k in grads]
    readers = {}  # (what a stage joined with the one that made it reads no more)
    for ref, i in last_read.items():
        ref, i = rejoined(ref, where), where[i][0] if i < count else len(stages)
        if i != ref.stage:
            readers[ref] = i
    last_read = readers
    out = {Result(i, slot) for i, slot, _ in stores}
    kept = out.union(last_read)
    stages = [_needing(stage, {r.slot for r in kept if r.stage == i})
              for i, stage in enumerate(stages)]
    dropped = [() if len(stages) == 1 else
               tuple(s for s in range(len(stage.plan.slots)) if Result(i, s) not in kept)
               for i, stage in enumerate(stages)]
    done = [[] for _ in stages]
    for ref, i in last_read.items():
        if ref not in out and i < len(stages):  # (the gradients' are read at the end)
            done[i].append(ref)
    CACHE.put(segment.key, StepPlan(tuple(stages), tuple(dropped), tuple(map(tuple, done)),
                                    tuple(stores), tuple(grads), tuple(released), generation,
                                    tuple(sorted(cut)), tuple(unstored)))


def _store_all(key: Key) -> None:
    """A value that the step plan of `key` computed and did not store was read: from now
    on its plan stores every value of the tape it computes (made again at its next
    pass)."""
    STORING_ALL.put(key, True)
    CACHE.pop(key)


def _needing(stage: Stage, slots: set[int]) -> Stage:
    """`stage` with runs of its own, whose prepared form computes only the `slots` that
    the step plan reads (and what they need) and those of `STAGE_BUFFER_BYTES` or more,
    which it lets go of once read where the plan does not read them: its smaller
    intermediates are buffers of its own, kept from step to step, and the views its
    kernels read of them are made once (`numgrad.plan.prepared`)."""
    plan = stage.plan
    needed = slots.union(s for s, info in enumerate(plan.slots)
                         if nbytes(info) >= STAGE_BUFFER_BYTES)
    return dataclasses.replace(stage, plan=Plan(plan.schedule, plan.values, plan.uploads,
                                                Runs(needed=needed, handed=slots)))
