"""One trace of a jitted function: run it once on lazy tensors, plan the whole call,
and replay that plan.

A trace knows the tensors the call reads that existed before it (*bound* tensors:
the arguments, then the captured ones in the order the trace met them). Its plan is
one `numgrad.plan.bound.Plan` whose source slots, results and effects are *references*
(`numgrad.plan.refs`), resolved at each call:

- ``Outside(j)``: bound tensor ``j``'s value when the call starts;
- ``Grad(j)``: its ``.grad``'s value;
- ``Result(0, s)``: what the plan (the replay's one stage) computed into slot ``s``;
- ``Fixed(array)``: a buffer the trace made from data (``ng.tensor([...])`` inside).

Effects are ``(j, attribute, reference)``: bound tensor ``j``'s value (``"_buf"``)
or ``.grad`` (``"_grad"``, reference None for ``.grad = None``) after the call.
"""

from __future__ import annotations

import gc

from numgrad import engine, kernels
from numgrad.capture import tree
from numgrad.engine.launch import run
from numgrad.engine.realize import LOCK
from numgrad.engine.schedule import schedule
from numgrad.lazy import LazyBuffer
from numgrad.plan import tracing
from numgrad.plan.prepared import PreparedPlan, run_reused
from numgrad.plan.refs import Fixed, Grad, Outside, Ref, ReplayContext, Result
from numgrad.tensor import Tensor


def _state(buf: LazyBuffer, requires_grad: bool, grad) -> tuple:
    """What a captured tensor's guard compares: its value's shape, dtype and device,
    requires_grad, and whether it has a ``.grad``."""
    return buf.shape, buf.dtype, buf.device.type, requires_grad, grad is None


class Trace:
    """The plan of one signature: traced and planned when made (that call's results
    are `take_first`'s), then run by `replay`."""

    def __init__(self, fn, name: str, args: tuple, kwargs: dict, leaves: list):
        self.name = name
        tracer = tracing.Tracer(name, leaves)
        with tracing.tracing(tracer):
            out = fn(*args, **kwargs)
        del args, kwargs
        self.result_spec, results = tree.flatten_results(out, name)
        del out
        bound = list(tracer.bound.values())  # (tensor, value then, .grad then, requires grad)
        #: the bound tensors the arguments do not give, and their state at the trace
        arguments = len(set(map(id, leaves)))
        self.captured = [b[0] for b in bound[arguments:]]
        self.guard = [_state(buf, requires_grad, grad)
                      for _, buf, grad, requires_grad in bound[arguments:]]
        # Values that existed before the trace but were not computed yet are sources.
        engine.realize(*(b[1] for b in bound), *(b[2]._buf for b in bound if b[2] is not None))
        effects = _effects(bound)
        self.has_effects = bool(effects)
        self.history = [r._node is not None for r in results]
        self.devices = [r._buf.device for r in results]
        #: tensors the trace made that outlive it (new state, such as an optimizer's
        #: momentum): this call's plan would not update them, so the next call traces
        #: again, reading them as captured state
        keep = {id(r) for r in results} | {id(t._grad) for t, *_ in bound}
        gc.collect(0)
        self.made_state = any(ref() is not None for i, ref in tracer.made.items()
                              if i not in keep)
        self._plan(bound, [r._buf for r in results], effects)
        self.first = [r._buf.realized for r in results]  # the trace call's own results
        #: result index -> the jitted VJP of that result (`capture.differentiate`)
        self.vjps: dict = {}
        #: which arguments require grad, and the captured tensors that do (set by
        #: the first call that gives the results history)
        self.requiring_grad: tuple | None = None

    def _plan(self, bound: list, results: list[LazyBuffer], effects: list) -> None:
        """Plan the values of `results` and `effects` as one final schedule, run it for
        this call, and keep it (with references to what feeds it) for replays."""
        outputs = results + [b for *_, b in effects if b is not None]
        with LOCK:
            pending = list({id(b): b for b in outputs if not b.is_realized}.values())
            plan, slots = schedule(pending, final=True) if pending else (None, [])
            spy: list = []
            arrays = run(plan, [slots[s].realized for s in plan.sources], spy) if plan else []
            for buf, array in zip(slots, arrays):
                if not buf.is_realized and buf.op.name != "load":
                    buf.set_realized(array)
        self.plan = plan
        sources = set(plan.sources) if plan else set()
        refs = _References(bound, [None if s in sources else b for s, b in enumerate(slots)])
        self.sources = [refs.of(slots[s]) for s in plan.sources] if plan else []
        self.results = [refs.of(b) for b in results]
        self.effects = [(j, attribute, None if b is None else refs.of(b))
                        for j, attribute, b in effects]
        needed = {r.slot for r in self.results + [r for *_, r in self.effects if r]
                  if type(r) is Result}
        if plan:  # prepared from this run, for the slots the calls read and the data
            # it holds (prepared again, if need be, as `run_reused` says)
            runs = plan.runs
            runs.needed = needed
            runs.fixed = {slot: ref.value for slot, ref in zip(plan.sources, self.sources)
                          if type(ref) is Fixed}
            runs.count, runs.tried = 1, kernels.newly_compiled
            with LOCK:
                runs.prepared = PreparedPlan.build(plan, arrays, spy, needed, runs.fixed)

    def matches(self) -> bool:
        """Whether the captured tensors are as they were at the trace."""
        return not self.captured or all(_state(t._buf, t._node is not None, t._grad) == g
                                        for t, g in zip(self.captured, self.guard))

    def replay(self, leaves: list) -> list:
        """Run the plan for arguments `leaves` (unique tensors, in the trace's order);
        apply the effects; returns the result arrays."""
        bound = leaves + self.captured
        pending = []  # values (and .grads) not computed yet: computed first
        for t in bound:
            if t._buf.realized is None:
                pending.append(t._buf)
            if t._grad is not None and t._grad._buf.realized is None:
                pending.append(t._grad._buf)
        if pending:
            engine.realize(*pending)
        at = ReplayContext([t._buf for t in bound], results=[], bound=bound)
        if self.plan is not None:
            sources = [r.array(at) for r in self.sources]
            with LOCK:
                at.results.append(run_reused(self.plan, sources))
        results = [r.array(at) for r in self.results]
        values = [None if ref is None else ref.array(at) for _, _, ref in self.effects]
        for (j, attribute, _), value in zip(self.effects, values):
            t = bound[j]
            if attribute == "_buf":
                t._buf = LazyBuffer.load(value, t._buf.device)
            else:
                t._grad = None if value is None else Tensor._wrap(
                    LazyBuffer.load(value, t._buf.device))
        return results

    def take_first(self) -> list:
        """The results of the call that traced (computed at the trace), once."""
        first, self.first = self.first, None
        return first


def _effects(bound: list) -> list[tuple]:
    """What the trace did to the bound tensors: ``(j, attribute, new buffer or None)``
    for each value (``"_buf"``) or ``.grad`` (``"_grad"``) that is another object now."""
    effects = []
    for j, (t, buf, grad, _) in enumerate(bound):
        if t._buf is not buf:
            effects.append((j, "_buf", t._buf))
        if t._grad is not grad:
            effects.append((j, "_grad", None if t._grad is None else t._grad._buf))
    return effects


class _References:
    """Turns the buffers a trace left into references (see the module docstring)."""

    def __init__(self, bound: list, slots: list):
        self.where: dict[int, Ref] = {}
        for j, (_, buf, grad, _) in enumerate(bound):
            self.where.setdefault(id(buf), Outside(j))
            if grad is not None:
                self.where.setdefault(id(grad._buf), Grad(j))
        self.slot = {id(b): s for s, b in enumerate(slots) if b is not None}

    def of(self, buf: LazyBuffer) -> Ref:
        ref = self.where.get(id(buf))
        if ref is not None:
            return ref
        s = self.slot.get(id(buf))
        return Result(0, s) if s is not None else Fixed(buf.realized)
