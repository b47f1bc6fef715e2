"""The state of a trace (``ng.jit``'s first call): what the recording layer reports to it.

While a thread traces a function, operations record as usual but nothing is
computed: `engine.realize` defers (the trace plans everything at its end), and a
value read (``.numpy()``, ``.item()``, ``bool(t)``) raises. The thread's recorder
(`numgrad.plan.recorder`) tells its `Tracer` which tensors the recording layer reads or
changes in place or gives a new ``.grad`` (`Tracer.saw`) and which tensors the trace
made (`Tracer.wrapped`), so the trace knows the tensors that existed before it (*bound*
tensors: arguments and captured state) and what it did to them. This module sits below
the engine and the Tensor class, which call it; `numgrad.capture` builds on it.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator

from numgrad.lazy import LazyBuffer
from numgrad.plan.recorder import LOCAL


class Tracer:
    """What one trace has seen: the tensors that existed before it, in the order met,
    with their value and ``.grad`` when the trace first met them, and the tensors it
    made (weakly: those that outlive it are new state)."""

    def __init__(self, name: str, arguments: list):
        self.name = name
        #: id -> (tensor, buffer then, .grad then, requires grad then); arguments first
        self.bound: dict[int, tuple] = {}
        self.made: dict[int, weakref.ref] = {}
        self.buffers: set[int] = set()  # of the bound tensors' values and .grads
        for t in arguments:
            self._bind(t)

    def _bind(self, t) -> None:
        if id(t) not in self.bound:
            t._buf = self._own(t._buf)
            if t._grad is not None:
                t._grad._buf = self._own(t._grad._buf)
            self.bound[id(t)] = (t, t._buf, t._grad, t._node is not None)

    def _own(self, buf: LazyBuffer) -> LazyBuffer:
        # Two bound tensors that share a buffer now (a momentum buffer that began as a
        # .grad) may not later: each gets its own buffer object (the same array), so
        # the trace knows which one an operation read. A constant not computed yet
        # (``ng.zeros(4)``) becomes an array, or operations would fold it away.
        if buf.realized is None and not buf.srcs:
            buf = LazyBuffer.load(buf.device.backend.full(buf.shape, buf.arg, buf.dtype),
                                  buf.device)
        elif id(buf) in self.buffers and buf.realized is not None:
            buf = LazyBuffer.load(buf.realized, buf.device)
        self.buffers.add(id(buf))
        return buf

    def saw(self, inputs) -> None:
        """An operation reads `inputs` (tensors, and scalars it passes over): bind the
        tensors that existed before the trace."""
        for t in inputs:
            if id(t) not in self.bound and id(t) not in self.made and hasattr(t, "_buf"):
                self._bind(t)

    def wrapped(self, t) -> None:
        """The recording layer made tensor `t`."""
        self.made[id(t)] = weakref.ref(t)


def current() -> Tracer | None:
    """The tracer of this thread, or None."""
    return LOCAL.recorder.tracer


@contextlib.contextmanager
def tracing(tracer: Tracer) -> Iterator[Tracer]:
    """Trace on this thread with `tracer` inside the block."""
    thread = LOCAL.recorder
    outer, thread.tracer = thread.tracer, tracer
    thread.stop()  # (this thread's tape describes no traced step)
    try:
        yield tracer
    finally:
        thread.tracer = outer
        thread.stop()


def saw(*tensors) -> None:
    """The recording layer reads `tensors`, or is about to change them in place or give
    them a new ``.grad``: this thread's trace, if any, binds those that existed before
    it (`Tracer.saw`)."""
    tracer = LOCAL.recorder.tracer
    if tracer is not None:
        tracer.saw(tensors)


def check_read(what: str) -> None:
    """Raise if this thread is tracing: `what` would read a value not computed yet."""
    tracer = current()
    if tracer is not None:
        raise RuntimeError(
            f"{what} while ng.jit traces '{tracer.name}': values are not computed while "
            f"tracing. Use ng.where for a choice that depends on a value, or move the "
            f"read outside the jitted function")

