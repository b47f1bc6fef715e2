"""A stage of a step plan (`numgrad.plan.step_plans`): one realization that a backward
pass ran, and how it binds to the tape of a later step.

A pass may realize several times on its way (its saved values in bands, its gradients
cut for depth, `numgrad.autograd.backward`); each realization is a stage, whose
sources are references (`numgrad.plan.refs`): buffers from outside the tape, values an
earlier stage computed, or fixed arrays. Binding a stage to a new tape gives its
schedule the tape's index arrays (uploads, and the calls that index by arrays) and its
constants: each is the tape's constant at its position (`TapeConstant`), or folded
again, as the pass folded it, from the tape's (`Folded`), or one the rules wrote, fixed
by the structure (`RuleConstant`).
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass, field
from math import copysign

from numgrad.arguments import Unhashable, holds_array
from numgrad.engine.reads import plain_index
from numgrad.engine.steps import Call, Launch, Read, Schedule
from numgrad.lazy import MOVES_FOLDED, LazyBuffer
from numgrad.ops import CONST
from numgrad.plan.bound import Plan
from numgrad.plan.recipes import From, filled, taken
from numgrad.plan.refs import AtOnce, Constant, Folded, Ref, Result, RuleConstant, TapeConstant


@dataclass(frozen=True, slots=True)
class Stage:
    """One realization of a backward pass, by position."""

    plan: Plan
    #: per source of `plan`, where it comes from (`numgrad.plan.refs`): an outside buffer
    #: (`Outside`), a tape buffer computed at a cut of the forward (`OnTape`), a slot an
    #: earlier stage computed (`Result`), a value the pass computed at once (`AtOnce`),
    #: or a fixed array (`Fixed`: a rule's mask or identity)
    sources: tuple[Ref, ...]
    #: per upload of `plan`: (slot, where its index array is in the tape's arguments)
    uploads: tuple[tuple[int, From], ...] = ()
    #: per call of `plan` that indexes by arrays: (step, its values with a `From` in
    #: place of each array, `replay.taken`)
    bindings: tuple[tuple[int, tuple], ...] = ()
    #: where each index array of `uploads` and `bindings` is
    places: tuple[From, ...] = ()
    #: per step of `plan` that reads constants of the tape: (step, the rules' own
    #: constants' values, and per constant where a bound one comes from, a `Constant`
    #: reference, or None for the rules' own)
    constants: tuple[tuple[int, tuple, tuple], ...] = ()
    #: the tape positions of the constants that `constants` reads
    reads: tuple[int, ...] = ()
    #: in a list of one: the index arrays last bound and `plan` bound to them (a loop
    #: over one batch of labels binds the same arrays at every step), replaced whole
    last: list = field(default_factory=lambda: [((), None)])
    #: likewise: the constants last read, their steps' arguments (per step of
    #: `constants`: (step, its values)), the plan they were bound into, and the result
    last_read: list = field(default_factory=lambda: [((), (), None, None)])

    @classmethod
    def of(cls, plan: Plan, sources: tuple, constants: list, arrays: dict,
           position: dict, folds: dict) -> Stage:
        """The stage of the realization that ran `plan` reading `sources` (`Stage`'s),
        whose steps read `constants` (`numgrad.engine.schedule.schedule`'s); `arrays`
        are where the tape's index arrays are (`replay.index_arrays`), `position` the
        tape's buffers' positions, `folds` the pass's (`Recorder.folds`). Raises
        `Unhashable` where an index array is no tape buffer's."""
        uploads = tuple((slot, taken(host, arrays)) for slot, host in plan.uploads)
        bindings = tuple(_bindings(plan, arrays))
        bound = tuple((i, *_bound(consts, position, folds))
                      for i, consts in enumerate(constants)
                      if consts and consts[0].op.kind == CONST)  # (by arrays: `bindings`)
        bound = tuple(c for c in bound if any(s is not None for s in c[2]))
        reads = sorted({p for _, _, where in bound for source in where if source is not None
                        for p in source.positions()})  # (the rules' own alone: in `plan`)
        return cls(plan, sources, uploads, bindings, _places(uploads, bindings), bound,
                   tuple(reads))

    def bound(self, bufs: list[LazyBuffer]) -> Plan | None:
        """`plan` with the constants and index arrays of the tape buffers `bufs`; None
        where an upload's would need wrapping or a copy
        (`numgrad.engine.reads.plain_index`)."""
        plan = self._indexed(bufs)
        if plan is None or not self.constants:
            return plan
        read = tuple([bufs[p].arg for p in self.reads])
        last, args, indexed, bound = self.last_read[0]  # (one read: as `last`)
        same = _same(read, last)
        if same and indexed is plan:
            return bound
        if not same:
            args = tuple((i, [fixed[k] if source is None else source.constant(bufs)
                              for k, source in enumerate(sources)])
                         for i, fixed, sources in self.constants)
        values = list(plan.values) if plan.values is not None else [None] * len(plan.template)
        for i, bound_args in args:
            values[i] = bound_args
        bound = plan.bound(values, plan.uploads)
        self.last_read[0] = read, args, plan, bound
        return bound

    def _indexed(self, bufs: list[LazyBuffer]) -> Plan | None:
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
        bound = plan.bound(values, tuple(uploads))
        self.last[0] = arrays, bound
        return bound


def joined(stages: list[Stage]) -> tuple[list[Stage], list[tuple[int, list[int]]]]:
    """`stages` joined into as few as may be: each run of them whose plans run their
    steps in order over their slots, each stage reading what an earlier one of the run
    computed (its `Result` sources) from the slot that computed it, and the sources
    they share (by reference) once. A run ends before a stage that reads a value
    computed at once from a result of the run (computed between the stages). Returns
    the stages joined and, per stage given, where its slots are: its joined stage's
    number and the slot there of each of its slots.

    A replay then runs one prepared plan rather than one per stage: the values that
    pass between stages are its own buffers, and the views its kernels read of them
    are made once (`numgrad.plan.prepared`), as in a trace's plan (the HMM's 104
    stages: 1,500 views made again at every call)."""
    runs: list[list[int]] = []
    for i, stage in enumerate(stages):
        if not runs or any(type(ref) is AtOnce and _reads(ref, runs[-1])
                           for ref in stage.sources):
            runs.append([])
        runs[-1].append(i)
    where: list = [None] * len(stages)
    return [_joined([stages[i] for i in run], run, where, k) for k, run in
            enumerate(runs)], where


def _joined(stages: list[Stage], numbers: list[int], where: list, k: int) -> Stage:
    """Stages `numbers` (`stages`) as one, the `k`-th, each one's place in it noted in
    `where` (`joined`)."""
    if len(stages) == 1:
        where[numbers[0]] = k, list(range(len(stages[0].plan.slots)))
        return dataclasses.replace(stages[0], sources=tuple(
            rejoined(ref, where) for ref in stages[0].sources))
    slots, sources, refs, steps, values, uploads = [], [], [], [], [], []
    taken_uploads, bindings, constants, shared = [], [], [], {}
    for number, stage in zip(numbers, stages):
        plan = stage.plan
        new: list = [None] * len(plan.slots)
        for slot, ref in zip(plan.sources, stage.sources):
            ref = rejoined(ref, where)
            if type(ref) is Result and ref.stage == k:
                new[slot] = ref.slot
                continue
            if ref not in shared:
                shared[ref] = len(slots)
                sources.append(len(slots))
                refs.append(ref)
                slots.append(plan.slots[slot])
            new[slot] = shared[ref]
        for slot, info in enumerate(plan.slots):
            if new[slot] is None:
                new[slot] = len(slots)
                slots.append(info)
        first = len(steps)
        steps += [_renumbered(step, new) for step in plan.template]
        values += plan.values if plan.values is not None else [None] * len(plan.template)
        uploads += [(new[slot], host) for slot, host in plan.uploads]
        taken_uploads += [(new[slot], host) for slot, host in stage.uploads]
        bindings += [(first + i, parts) for i, parts in stage.bindings]
        constants += [(first + i, *rest) for i, *rest in stage.constants]
        where[number] = k, new
    schedule = Schedule(tuple(steps), tuple(slots), tuple(sources), tuple(uploads))
    plan = Plan(schedule, None if all(v is None for v in values) else values)
    reads = sorted({p for stage in stages for p in stage.reads})
    return Stage(plan, tuple(refs), tuple(taken_uploads), tuple(bindings),
                 _places(taken_uploads, bindings), tuple(constants), tuple(reads))


def rejoined(ref: Ref, where: list) -> Ref:
    """`ref`, which may read results of stages that were joined (`joined`, whose
    `where` says where their slots went), reading the joined stages' instead."""
    if type(ref) is Result:
        k, new = where[ref.stage]
        return Result(k, new[ref.slot])
    if type(ref) is AtOnce:
        return dataclasses.replace(ref, sources=tuple(
            rejoined(s, where) if isinstance(s, Ref) else s for s in ref.sources))
    return ref


def _reads(ref, numbers: list[int]) -> bool:
    """Whether `ref` (an `AtOnce`, or one of its sources) reads a result of the stages
    `numbers`."""
    if type(ref) is Result:
        return ref.stage in numbers
    return type(ref) is AtOnce and any(_reads(s, numbers) for s in ref.sources)


def _renumbered(step: Launch | Call, new: list[int]) -> Launch | Call:
    """`step` over the slots `new` (per slot of its schedule)."""
    if type(step) is Call:
        return Call(step.op, tuple([new[s] for s in step.inputs]), step.arg, new[step.output])
    return dataclasses.replace(
        step, outputs=tuple([new[s] for s in step.outputs]),
        inputs=tuple([Read(new[r.slot], r.views) for r in step.inputs]),
        tables=tuple([new[s] for s in step.tables]))


def source_of(const: LazyBuffer, position: dict, folds: dict) -> Constant:
    """Where the value of `const`, a constant the pass read, comes from: the tape
    (`position`), a fold of the pass (`folds`, `numgrad.plan.recorder.Recorder.folds`), or else
    the rules, which wrote it."""
    at = position.get(const)
    if at is not None:
        return TapeConstant(at)
    how = folds.get(const)
    if how is None:
        return RuleConstant(const.arg)
    op, sources = how
    if op.name in MOVES_FOLDED:  # (the same value: its source's)
        return source_of(sources[0], position, folds)
    sources = tuple(source_of(s, position, folds) for s in sources)
    if all(type(s) is RuleConstant for s in sources):
        return RuleConstant(const.arg)  # (folded from the rules' own: fixed too)
    return Folded(op, const.dtype, sources)


def _same(read: tuple, last: tuple) -> bool:
    """Whether two reads of constants are the same values, bit for bit: ``==`` with
    zeros of one sign (a NaN is never the same, unless the same object)."""
    return read == last and all(a or copysign(1.0, a) == copysign(1.0, b)
                                for a, b in zip(read, last))


def _bound(consts: list[LazyBuffer], position: dict, folds: dict) -> tuple[tuple, tuple]:
    """For the constants `consts` that a step reads: the values of the rules' own
    (None for the others), and where each of the others comes from (None for the
    rules' own)."""
    sources = [source_of(c, position, folds) for c in consts]
    own = [type(s) is RuleConstant for s in sources]
    return (tuple(s.value if o else None for s, o in zip(sources, own)),
            tuple(None if o else s for s, o in zip(sources, own)))


def _places(uploads, bindings) -> tuple[From, ...]:
    """Where each index array of `uploads` and `bindings` (`Stage`'s) is: the uploads'
    first, in order."""
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


def _bindings(plan: Plan, arrays: dict):
    """Per call of `plan` whose argument holds index arrays: its step and values
    (`Plan.values`), each array replaced by where it is (`replay.taken`)."""
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
