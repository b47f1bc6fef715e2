"""The recorder: one per thread, the one place recording reports to.

Each recorded operation finds this thread's recorder once (`LOCAL.recorder`: a
thread-local read costs three times a plain attribute's, so the recording layer hands
the recorder down the operation, `numgrad.primitives._record` to `numgrad.lazy.make`)
and reports to it only while a client listens (`watching`); a trace is told what each
operation reads (`tracer`) before it reads it:

- the tape (`numgrad.plan.tape`): what the thread recorded since its last realization,
  in order, so that an eager step can be recognized as the last one again
  (`numgrad.plan.step_plans`). A thread keeps one once it has run a backward pass
  (`active`);
- a backward pass whose plan may be kept as a step plan: the constants it folds and the
  realizations it runs (`folds`, `ran`), and whether it read a value (`read`);
- a backward pass recorded for reuse (`numgrad.plan.recipes`): each make (`notes`) and
  each cut (`cuts`);
- a trace of ``ng.jit`` (`tracer`, `numgrad.plan.tracing`): the tensors each operation
  reads and makes.

Code that never trains, traces or reuses a backward pass pays that one test per
recorded operation. Each thread records on its own: another thread's work is no part of
this thread's tape, pass or trace.
"""

from __future__ import annotations

import math
import threading

from numgrad.plan.tape import Describing, Description

#: A tape longer than this describes no step (a step records dozens of operations, a
#: long one thousands): it stops, rather than hold every buffer made since the last
#: realization.
MAX_ENTRIES = 10_000
#: A tape kept across realizations (`Recorder.cut`) keeps what they computed alive:
#: past this many bytes of its buffers, a realization starts a new tape instead (a step
#: of large arrays is not worth a plan; inference read by read holds no memory for one).
MAX_HELD_BYTES = 64 << 20


class Recorder:
    """One thread's recorder (`LOCAL.recorder`)."""

    #: whether any client listens: the one test per recorded operation
    watching = False
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
    #: value read; and the pass's cuts, as (number of notes, buffers)
    notes: list | None = None
    cuts: list | None = None
    #: the trace this thread records for ``ng.jit`` (`numgrad.plan.tracing.Tracer`)
    tracer = None
    #: after a step plan's replay, until the next backward pass: its key, its tape's
    #: buffers and the positions of those it computed and did not store (`left`); their
    #: ids, once a realization asks; whether one of them was computed since
    #: (`numgrad.plan.step_plans.take`)
    unstored: tuple | None = None
    unstored_ids: set | None = None
    unstored_read = False

    def __init__(self):
        self.clear()

    def listen(self) -> None:
        """Work out `watching` again (after a client started or stopped listening)."""
        self.watching = self.on or self.in_pass or self.folds is not None or \
            self.notes is not None or self.tracer is not None

    # ---- what recording reports ----------------------------------------------------
    def made(self, buf, op, srcs, arg, pending: bool) -> None:
        """`numgrad.lazy.make` made `buf`, `op` on `srcs` with `arg`: pending, or a
        constant folded or a value computed at once (noted as folds)."""
        if pending:
            if self.on:
                self._note(buf)
        elif self.folds is not None:
            self.folds[buf] = (op, srcs)
        if self.notes is not None:
            self.notes.append((buf, op, srcs, arg))

    def constant(self, buf) -> None:
        """`LazyBuffer.const` made `buf`."""
        if self.on:
            self._note(buf)

    def wrapped(self, t, node) -> None:
        """The recording layer made tensor `t`, with history `node` (or None)."""
        if node is not None and self.on:
            if node.out.realized is None:
                self.nodes.append(node)
            else:  # (an output computed at once, as a scalar loop's: no step)
                self.stop()
        if self.tracer is not None:
            self.tracer.wrapped(t)

    def reading(self, buf) -> None:
        """A value (of `buf`) is read: a backward pass that reads one is not kept (its
        rules' results would hold it: `numgrad.plan.recipes`, `read`); a loss read before
        ``backward()`` cuts the step's tape, which goes on (`cut`)."""
        if self.notes is not None:
            self.notes.append(None)
        if self.in_pass:
            self.read = True
        elif self.on and buf.realized is None:
            self.cut()

    def left(self, key, bufs: list, positions: tuple[int, ...]) -> None:
        """A step plan (of `key`) replayed over the tape `bufs`, leaving those at
        `positions` pending: a realization that computes one of them before the next
        backward pass (`numgrad.engine.realize`, `numgrad.plan.step_plans.take`) says
        the plan should store them. (The tape is held until then.)"""
        self.unstored, self.unstored_ids, self.unstored_read = (key, bufs, positions), \
            None, False

    def computing(self, slots: list) -> None:
        """A realization computes the pending ones of `slots`: note whether one of them
        is a value the last step plan left (`left`)."""
        ids = self.unstored_ids
        if ids is None:
            _, bufs, positions = self.unstored
            ids = self.unstored_ids = {id(bufs[p]) for p in positions}
        if any(id(b) in ids for b in slots if b.realized is None):
            self.unstored_read = True

    # ---- the tape --------------------------------------------------------------------
    def clear(self) -> None:
        """Start an empty tape (a realization, a backward pass)."""
        self.on = self.active and not self.in_pass
        self.listen()
        #: the pending buffers made, and the history nodes made, in order, since the
        #: tape started or was last cut
        self.bufs: list = []
        self.nodes: list = []
        #: whether something the tape does not describe happened (it keys nothing)
        self.broken = False
        #: the description of what came before the last cut (`cut`), if any
        self.before: Describing | None = None
        #: whether the next realization is a cut's
        self.cutting = False
        #: the buffers it may still note (`MAX_ENTRIES` in all)
        self.room = MAX_ENTRIES
        #: the bytes of the buffers described at its cuts (`MAX_HELD_BYTES` at most)
        self.held = 0

    def cut(self) -> None:
        """A realization within a step follows (a cut for depth, `numgrad.primitives`, or
        a value read before ``backward()``, `reading`): the step goes on after it, so the
        tape describes what it holds now, before its buffers are computed (which drops
        their sources), and records on. A tape that holds no history node (no step:
        work under ``no_grad``, whose computed buffers it would keep), or whose buffers
        would pass `MAX_HELD_BYTES`, starts anew at the realization, as at any other."""
        if self.on and (self.nodes or self.before is not None):
            held = self.held + sum(b.dtype.itemsize * math.prod(b.shape) for b in self.bufs)
            described = self.before or Describing()
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
        self.listen()

    def _note(self, buf) -> None:
        if len(self.bufs) < self.room:
            self.bufs.append(buf)
        else:  # (no step: a graph built up, not realized)
            self.stop()

    def described(self) -> Description | None:
        """The tape described by structure (`numgrad.plan.tape.Description`), or None
        where it describes no step: it was stopped, or one of its buffers was computed
        since (by another thread), or a node's output is not one of them."""
        described = self.before or Describing()
        if self.broken or not described.add(self.bufs, self.nodes):
            return None
        return described.done()


class _Local(threading.local):
    def __init__(self):
        self.recorder = Recorder()


#: Each thread's recorder, as ``LOCAL.recorder``.
LOCAL = _Local()


def current() -> Recorder:
    """This thread's recorder."""
    return LOCAL.recorder
