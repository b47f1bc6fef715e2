"""Each kernel a program launches, timed compiled and as NumPy computes it, on the same
arrays: the programs' issue asks that no kernel be slower than NumPy's equivalent call.

NumPy's equivalent of a kernel is the NumPy interpreter target's code for it
(`numgrad.kernels.interpreter`: the same program as whole-array NumPy calls, the
target ``NUMGRAD_CPU_KERNELS=numpy`` runs). `time_kernels` runs a call of the program
once on a CPU target that, at the first launch of each kernel over each shape, times
the compiled kernel (called as prepared plans call it: the function alone, not the
target's launch) and the interpreter's code on that launch's arrays (the least of
`ROUNDS` rounds, each long enough to read the clock well), and returns one
`KernelTime` per distinct launch. Kernels run by prepared plans bypass the target,
so the call is one whose plans are not prepared yet: the remembering layers are off
while it runs (`numgrad.plan.ON`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

#: rounds per measurement (the least is kept), and the least time a round lasts
ROUNDS, ROUND_S = 5, 2e-4


@dataclass
class KernelTime:
    """One kernel over one shape: seconds per launch, compiled and by NumPy."""

    program: object  # numgrad.kernels.codegen.Program
    shape: tuple[int, ...]
    compiled_s: float
    numpy_s: float

    @property
    def ratio(self) -> float:
        return self.compiled_s / self.numpy_s


def _per_call(call) -> float:
    """The least seconds per ``call()`` over `ROUNDS` rounds."""
    call()
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-7)
    n = max(1, int(ROUND_S / once))
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(n):
            call()
        best = min(best, (time.perf_counter() - start) / n)
    return best


class _Timing:
    """The Numba CPU target, timing each new launch against the interpreter's code."""

    def __init__(self, cpu, interpreter):
        self.cpu, self.interpreter, self.times = cpu, interpreter, {}

    def __getattr__(self, name):
        return getattr(self.cpu, name)

    def kernel(self, program, variant):
        return program, self.cpu.kernel(program, variant)

    def launch(self, kernel, variant, outs, shape, inputs, args):
        program, compiled = kernel
        how = self.cpu.launch(compiled, variant, outs, shape, inputs, args)
        key = (program, tuple(shape))
        if key not in self.times:
            interpreter = self.interpreter
            code = interpreter.kernel(program, interpreter.variant(program, shape))
            copies = [np.empty(o.shape, o.dtype) for o in outs]
            threads = self.cpu.threads(variant)
            self.times[key] = KernelTime(program, tuple(shape), _per_call(
                lambda: compiled(*outs, shape, threads, *inputs, *args)),
                _per_call(lambda: interpreter.launch(code, interpreter.ARRAYS, copies, shape,
                                                     inputs, args)))
        return how


def time_kernels(run) -> list[KernelTime]:
    """The kernels one ``run()`` (a program's call, its kernels compiled already)
    launches, each timed compiled and by NumPy, slowest against NumPy first."""
    import numgrad as ng
    from numgrad import plan
    from numgrad.kernels import cpu, interpreter

    device = ng.device.as_device("cpu")
    target, backend, remembering = _Timing(cpu, interpreter), device._backend, plan.ON
    device._backend, plan.ON = target, False
    try:
        run()
    finally:
        device._backend, plan.ON = backend, remembering
    return sorted(target.times.values(), key=lambda t: -t.ratio)
