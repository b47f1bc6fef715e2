"""Capture and replay (SPEC §6): ``ng.jit(fn)`` traces `fn` once per signature and
replays the planned call after.

`JitFunction` keeps the traces of each signature (`numgrad.capture.trace`): the
arguments' structure and tensors (`numgrad.capture.tree`) and the grad mode pick
the list, the captured tensors' state picks the trace. Results that depend on
tensors that require grad get history (`numgrad.capture.differentiate`).
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable

from numgrad import engine
from numgrad import plan as remembering
from numgrad.autograd.grad_mode import is_grad_enabled
from numgrad.capture import tree
from numgrad.capture.differentiate import JitNode, vjp_function
from numgrad.capture.trace import Trace
from numgrad.lazy import LazyBuffer
from numgrad.plan import tracing
from numgrad.plan.cache import Cache
from numgrad.tensor import Tensor

__all__ = ["JitFunction", "jit"]

_TENSOR = {Tensor}
#: A jitted function that has traced this many times warns, once (`RetraceWarning`).
RETRACES_WARNED = 8
#: Signatures whose traces a jitted function keeps, least recently called forgotten first.
SIGNATURES_KEPT = 64


class RetraceWarning(UserWarning):
    """A jitted function traced again and again: its signature keeps changing."""


class JitFunction:
    """A function traced once per signature and replayed after; see `jit`."""

    def __init__(self, fn: Callable):
        functools.update_wrapper(self, fn)
        self.fn = fn
        #: how many times `fn` was traced
        self.traces = 0
        #: per signature, its traces (one per state of the guards, `Trace.matches`)
        self._traces = Cache(f"ng.jit traces of {self.__name__}", SIGNATURES_KEPT)
        self._lock = threading.Lock()  # held to find or make a trace

    def __call__(self, *args, **kwargs):
        if tracing.current() is not None:
            return self.fn(*args, **kwargs)  # inside another trace: inlined
        if not kwargs and {*map(type, args)} <= _TENSOR:  # (the common case, fast)
            leaves, spec = list(args), tree.tensors_spec(len(args))
        else:
            leaves = []
            spec = tree.flatten((args, kwargs), leaves)
        ids = [id(t) for t in leaves]
        if len(set(ids)) == len(ids):
            unique, aliases = leaves, None
        else:
            unique = list({i: t for i, t in zip(ids, leaves)}.values())
            aliases = tuple(map(ids.index, ids))
        key = (spec, aliases, is_grad_enabled(),
               tuple([(b.shape, b.dtype, b.device.type, t._node is not None)
                      for t in leaves for b in (t._buf,)]))
        engine.realize()  # tensors changed in place since the last realization
        with self._lock:
            # (with nothing remembered, `numgrad.plan`, every call is a first)
            traces = self._traces.get(key) if remembering.ON else []
            if traces is None:
                traces = []
                self._traces.put(key, traces)
            for trace in traces:
                if trace.matches():
                    break
            else:
                trace = None
            if trace is None or trace.made_state:
                fresh = Trace(self.fn, self.__name__, *tree.unflatten(spec, iter(leaves)),
                              leaves)
                self.traces += 1
                if self.traces == RETRACES_WARNED and remembering.ON:
                    warnings.warn(
                        f"ng.jit of {self.__name__} has traced {self.traces} times: each new "
                        f"signature traces again, and Python numbers among the arguments "
                        f"are part of it by value; pass a number that changes (a learning "
                        f"rate) as a 0-d tensor, ng.tensor(value), to replay one trace",
                        RetraceWarning, stacklevel=2)
                if trace is not None:  # traced once more, with the new state captured
                    traces.remove(trace)
                    fresh.made_state = False
                traces.append(fresh)
                arrays, trace = fresh.take_first(), fresh
            else:
                arrays = None  # replayed below, outside this function's lock
        if arrays is None:
            arrays = trace.replay(unique)
        results = [Tensor._wrap(LazyBuffer.load(a, d)) for a, d in zip(arrays, trace.devices)]
        if is_grad_enabled() and not trace.has_effects and any(trace.history):
            _attach(trace, self.fn, spec, leaves, results)
        return tree.unflatten(trace.result_spec, iter(results))

    def __repr__(self) -> str:
        return f"<ng.jit of {self.fn!r}: {self.traces} trace(s)>"


def _attach(trace: Trace, fn: Callable, spec, leaves: list, results: list) -> None:
    """Give `results` history to the arguments and captured tensors that require grad."""
    if trace.requiring_grad is None:  # (the signature and guard fix both)
        trace.requiring_grad = ([t._node is not None for t in leaves],
                                [t for t in trace.captured if t._node is not None])
    diff, captured = trace.requiring_grad
    wrt = [t for t, d in zip(leaves, diff) if d] + captured
    if not wrt:  # (the history the trace saw is to tensors it made itself)
        return
    for index, (result, has_history) in enumerate(zip(results, trace.history)):
        if has_history:
            if index not in trace.vjps:
                trace.vjps[index] = vjp_function(fn, jit, spec, index, diff, captured)
            result._node = JitNode(trace.vjps[index], leaves, wrt)


def jit(fn: Callable) -> JitFunction:
    """Trace `fn` once per signature, then replay its planned call (SPEC §6).

    The first call with a given signature (tensor arguments' shapes, dtypes, devices
    and requires_grad; other arguments by value) runs `fn` on lazy tensors, recording
    every operation, backward pass and in-place update, and plans the whole call as
    one schedule. Later calls run that plan without running `fn`'s Python. Tensors
    `fn` reads from its closure are captured: their values are read at every call.

    Examples
    --------
    >>> import numgrad as ng
    >>> @ng.jit
    ... def f(x):
    ...     return (x.sin() ** 2).sum()
    >>> x = ng.tensor([0.5, 1.0])
    >>> round(f(x).item(), 6), round(f(x + 1).item(), 6), f.traces
    (0.937922, 1.821818, 1)
    """
    return JitFunction(fn)
