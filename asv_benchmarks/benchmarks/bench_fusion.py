"""W1 and W1b: value and gradient of an elementwise chain and its sum, four ways.

Each class times numgrad (eager, and under ``ng.jit``), hand-written NumPy (forward
plus the analytic gradient) and a hand-written single-pass Numba kernel in the same
run, so their ratios are comparable on a noisy machine. `track_` benchmarks report
kernel counts and the peak memory (tracemalloc, which sees NumPy's and numgrad's
buffers) over the input's size.
"""

import math
import os
import subprocess
import sys
import tempfile
import textwrap
import tracemalloc

import numba
import numpy as np

import numgrad as ng

from .workloads import w1, w1_numpy, w1b

SIZES = [10**3, 10**5, 10**7]


# ---- W1: transcendental chain ---------------------------------------------------------

def w1_numgrad(x):
    y = w1(x, ng.tanh, ng.sigmoid, ng.exp, ng.sqrt)
    y.backward()
    return y.item(), x.grad


@ng.jit
def w1_jit(x):
    """W1's value and gradient, captured and replayed (`ng.jit`)."""
    y = w1(x, ng.tanh, ng.sigmoid, ng.exp, ng.sqrt)
    return y, ng.grad(y, x)[0]


@numba.njit(parallel=True, fastmath=False, cache=True)
def w1_fused(a):
    grad = np.empty_like(a)  # a new gradient each call, as numgrad and NumPy make
    total = 0.0
    for i in numba.prange(a.shape[0]):
        x = a[i]
        t = math.tanh(1.5 * x + 0.3)
        s = 1 / (1 + math.exp(-x))
        e = math.exp(-x * x)
        q = 1 + x * x
        r = math.sqrt(x * x + 1)
        total += t * s - e / q + r
        grad[i] = (1.5 * (1 - t * t) * s + t * s * (1 - s)
                   + 2 * x * e / q + 2 * x * e / (q * q) + x / r)
    return total, grad


# ---- W1b: cheap chain -------------------------------------------------------------------

def w1b_numgrad(x):
    y = w1b(x, ng.where)
    y.backward()
    return y.item(), x.grad


@ng.jit
def w1b_jit(x):
    """W1b's value and gradient, captured and replayed (`ng.jit`)."""
    y = w1b(x, ng.where)
    return y, ng.grad(y, x)[0]


def w1b_numpy(a):
    leaky = np.where(a > 0, a, 0.1 * a)
    value = (leaky * a * 1.5 + 0.5 * a * a - 0.3 * a).sum()
    grad = np.where(a > 0, 3.0 * a, 0.3 * a) + a - 0.3
    return value, grad


@numba.njit(parallel=True, fastmath=False, cache=True)
def w1b_fused(a):
    grad = np.empty_like(a)
    total = 0.0
    for i in numba.prange(a.shape[0]):
        x = a[i]
        leaky = x if x > 0 else 0.1 * x
        total += leaky * x * 1.5 + 0.5 * x * x - 0.3 * x
        grad[i] = (3.0 * x if x > 0 else 0.3 * x) + x - 0.3
    return total, grad


class _Chain:
    params = SIZES
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        self.a = np.random.default_rng(0).uniform(-2, 2, n)
        self.x = ng.tensor(self.a, requires_grad=True)
        self.time_numgrad(n)  # compile, or load from the disk cache
        self.time_numgrad_jit(n)  # (a trace the first time)
        self.time_fused_numba(n)

    def time_numgrad(self, n):
        self.x.grad = None
        self.numgrad(self.x)

    def time_numgrad_jit(self, n):
        ng.realize(*self.jitted(self.x))

    def time_numpy(self, n):
        self.numpy(self.a)

    def time_fused_numba(self, n):
        self.fused(self.a)

    def track_kernels(self, n):
        with ng.engine.record() as rec:
            self.time_numgrad(n)
        return rec.kernels_launched

    track_kernels.unit = "kernels"

    def track_peak_memory_over_input(self, n):
        """Peak bytes allocated during value + gradient, over the input's bytes."""
        self.x.grad = None
        tracemalloc.start()
        self.numgrad(self.x)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak / self.a.nbytes

    track_peak_memory_over_input.unit = "x input"

    def track_peak_memory_over_input_numpy(self, n):
        tracemalloc.start()
        self.numpy(self.a)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak / self.a.nbytes

    track_peak_memory_over_input_numpy.unit = "x input"


class W1(_Chain):
    numgrad = staticmethod(w1_numgrad)
    jitted = w1_jit
    numpy = staticmethod(w1_numpy)
    fused = staticmethod(w1_fused)


class W1b(_Chain):
    numgrad = staticmethod(w1b_numgrad)
    jitted = w1b_jit
    numpy = staticmethod(w1b_numpy)
    fused = staticmethod(w1b_fused)


class CubeRoot:
    """``cbrt`` at N = 1e6, which Numba has no function for: the kernel's estimate (by the
    vector exp and log) and Newton step, against NumPy's cbrt."""

    def setup(self):
        self.a = np.random.default_rng(0).standard_normal(10**6)
        self.t = ng.tensor(self.a)
        ng.cbrt(self.t).realize()  # (compiled, or loaded)

    def time_numgrad(self):
        ng.cbrt(self.t).realize()

    def time_numpy(self):
        np.cbrt(self.a)


class PeakMemory:
    """Process peak memory at N = 1e7 (the input is 80 MB)."""

    timeout = 300

    def setup(self):
        self.a = np.random.default_rng(0).uniform(-2, 2, 10**7)
        w1_numgrad(ng.tensor(self.a, requires_grad=True))
        w1b_numgrad(ng.tensor(self.a, requires_grad=True))

    def peakmem_w1(self):
        w1_numgrad(ng.tensor(self.a, requires_grad=True))

    def peakmem_w1b(self):
        w1b_numgrad(ng.tensor(self.a, requires_grad=True))


STARTUP = """
import numpy as np, numgrad as ng
x = ng.tensor(np.linspace(-2, 2, 1000), requires_grad=True)
y = ((1.5 * x + 0.3).tanh() * x.sigmoid() - (-x * x).exp() / (1 + x * x)
     + (x * x + 1).sqrt()).sum()
y.backward()
x.grad.numpy()
"""


class Startup:
    """W1 in a new process: with an empty kernel cache, and with a filled one."""

    timeout = 300
    number = 1
    repeat = 3

    def setup(self):
        self.cache = tempfile.mkdtemp(prefix="numgrad-bench-")
        self._run(self.cache)  # fills the cache for time_warm_start

    def _run(self, cache):
        env = dict(os.environ, NUMGRAD_CACHE_DIR=cache)
        subprocess.run([sys.executable, "-c", textwrap.dedent(STARTUP)], env=env, check=True)

    def time_cold_compile(self):
        self._run(tempfile.mkdtemp(prefix="numgrad-cold-"))

    def time_warm_start(self):
        self._run(self.cache)
