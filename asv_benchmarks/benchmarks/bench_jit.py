"""``ng.jit`` (capture and replay) on the workloads of issue 11, beside eager numgrad.

W2 is the Horner polynomial's value and derivative (398 recorded operations), W3 the
MLP training step (``numgrad.demo.train_step``: forward, cross-entropy, backward,
Adam), W4 Rosenbrock's Hessian (``functional.hessian(vectorize=True)``), and the
empty plan ten kernels on ten elements: what a replay costs with no work.
``tools/jit_table.py`` prints the same workloads beside PyTorch and JAX.
"""

from __future__ import annotations

import numpy as np

import numgrad as ng

from .bench_overhead import horner
from .workloads import ROSEN_N, digits_like, mlp_step, rosenbrock


def w2(x):
    """W2: the polynomial and its derivative."""
    value = horner(x)
    (grad,) = ng.grad(value, x)
    return value, grad


def w3(make=ng.jit):
    """W3: a function running one training step (made with `make`: ng.jit or eager)."""
    return mlp_step(*digits_like(), make=make)


def w4(x):
    """W4: Rosenbrock's Hessian."""
    return ng.functional.hessian(rosenbrock, x, vectorize=True)


def empty_plan(x):
    """Ten kernels on ten elements: each step reads the last one's value (a
    reduction), so none fuses into another."""
    for _ in range(10):
        x = x + x.sum()
    return x


def _warm(call):
    for _ in range(3):  # trace, the second trace of state that appears, a replay
        call()


class Jit:
    """Eager calls and jitted replays of each workload (ratios in one run)."""

    params = [["W2", "W3", "W4", "empty plan"], ["eager", "jit"]]
    param_names = ["workload", "mode"]

    def setup(self, workload, mode):
        # asv runs setup before every timed call; each call is made (and warmed) once
        # per process, so that a sample times a warm replay, not the first after a trace.
        if (workload, mode) not in _CALLS:
            _CALLS[workload, mode] = _make(workload, mode)
        self.call = _CALLS[workload, mode]

    def time_call(self, workload, mode):
        self.call()

    def track_compiled_per_call(self, workload, mode):
        with ng.engine.record() as rec:
            self.call()
        return rec.kernels_compiled

    track_compiled_per_call.unit = "kernels"

    def track_bytes_per_call(self, workload, mode):
        with ng.engine.record() as rec:
            self.call()
        return rec.bytes_allocated

    track_bytes_per_call.unit = "bytes"


#: (workload, mode) -> the call `Jit` times, made once per process
_CALLS: dict = {}


def _make(workload: str, mode: str):
    make = ng.jit if mode == "jit" else (lambda f: f)
    if workload == "W3":
        call = w3(make)
    else:
        fn = {"W2": w2, "W4": w4, "empty plan": empty_plan}[workload]
        x = {"W2": ng.tensor(0.7, requires_grad=True),
             "W4": ng.tensor(np.random.default_rng(0).uniform(-1, 1, ROSEN_N)),
             "empty plan": ng.tensor(np.ones(10))}[workload]
        step = make(fn)

        def call():
            return ng.realize(*_tensors(step(x)))
    _warm(call)
    return call


class TraceW3:
    """The first call of a new W3 step: tracing, planning (its kernels and segments
    compiled before, in memory) and one step's work."""

    number, repeat = 1, 5

    def setup(self):
        _warm(w3())
        self.call = w3()

    def time_first_call(self):
        self.call()


def _tensors(out):
    return out if isinstance(out, tuple) else (out,)
