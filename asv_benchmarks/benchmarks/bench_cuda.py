"""The CUDA target: W1, an MLP training step and matmul on device='cuda', float32.

Every class is skipped (its setup raises NotImplementedError) where there is no CUDA
device, and under Numba's simulator (NUMBA_ENABLE_CUDASIM=1), whose timings mean
nothing. Kernel launches are asynchronous, so every benchmark ends with
``ng.cuda.synchronize()``. `track_` benchmarks report rates from the best of five
wall-clock runs: GB/s against the minimum memory traffic, and TFLOP/s.
"""

import math
import os
import time

import numpy as np

import numgrad as ng

from .workloads import digits_like, mlp_step, w1

try:  # asv >= 0.6: skip from inside a benchmark (a NotImplementedError subclass)
    from asv_runner.benchmarks.mark import SkipNotImplemented
except ImportError:
    SkipNotImplemented = NotImplementedError


def require_cuda():
    """Skip the benchmark (asv treats NotImplementedError from setup as a skip)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        raise NotImplementedError("CUDA simulator (NUMBA_ENABLE_CUDASIM=1): timings mean nothing")
    if not ng.cuda.is_available():
        raise NotImplementedError("no CUDA device")


def best_seconds(fn, repeat=5):
    """The best of `repeat` wall-clock runs of `fn` (which synchronizes the device)."""
    best = math.inf
    for _ in range(repeat):
        ng.cuda.synchronize()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def uniform_float32(n, seed=0):
    """n float32 values in [-2, 2), made without a float64 temporary."""
    a = np.random.default_rng(seed).random(n, dtype=np.float32)
    a *= 4
    a -= 2
    return a


class CudaW1:
    """W1's value and gradient on the GPU, next to a device copy of the same size
    (one read and one write: the bandwidth W1 can at best reach)."""

    params = [10**6, 10**8]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        require_cuda()
        self.x = ng.tensor(uniform_float32(n), device="cuda", requires_grad=True)
        for _ in range(2):  # compile (or load) the kernels first
            self.time_w1(n)
            self.time_copy(n)

    def time_w1(self, n):
        self.x.grad = None
        y = w1(self.x, ng.tanh, ng.sigmoid, ng.exp, ng.sqrt)
        y.backward()
        y.item()
        self.x.grad.realize()
        ng.cuda.synchronize()

    def time_copy(self, n):
        (self.x.detach() * 1).realize()
        ng.cuda.synchronize()

    def track_w1_gbps(self, n):
        """Reads x once and writes its gradient once: 2 * n * 4 bytes at least."""
        return 2 * n * 4 / best_seconds(lambda: self.time_w1(n)) / 1e9

    track_w1_gbps.unit = "GB/s"

    def track_copy_gbps(self, n):
        return 2 * n * 4 / best_seconds(lambda: self.time_copy(n)) / 1e9

    track_copy_gbps.unit = "GB/s"


class CudaMLP:
    """MLPTrainingStep (bench_transforms) on the GPU: one full-batch step of a
    64-256-256-10 MLP on digits-shaped data, float32: forward, cross-entropy,
    backward and Adam."""

    timeout = 300

    def setup(self):
        require_cuda()
        self.step = mlp_step(*digits_like(), device="cuda")
        for _ in range(2):  # compile (or load) the kernels first
            self.time_numgrad()

    def time_numgrad(self):
        self.step()
        ng.cuda.synchronize()

    def track_kernels_numgrad(self):
        with ng.engine.record() as rec:
            self.time_numgrad()
        return rec.kernels_launched

    track_kernels_numgrad.unit = "kernels"


class CudaMatmul:
    """``a @ b``, square float32 matrices on the GPU, next to CuPy's (when installed)."""

    params = [1024, 4096]
    param_names = ["n"]
    timeout = 300

    def setup(self, n):
        require_cuda()
        rng = np.random.default_rng(0)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        self.a, self.b = ng.tensor(a, device="cuda"), ng.tensor(b, device="cuda")
        try:
            import cupy
        except ImportError:
            self.cupy = None
        else:
            self.cupy = cupy
            self.a_cupy, self.b_cupy = cupy.asarray(a), cupy.asarray(b)
            self.time_cupy(n)  # loads cuBLAS
        for _ in range(2):  # compile (or load) the kernels first
            self.time_numgrad(n)

    def time_numgrad(self, n):
        (self.a @ self.b).realize()
        ng.cuda.synchronize()

    def time_cupy(self, n):
        if self.cupy is None:
            raise SkipNotImplemented("cupy is not installed")
        self.cupy.matmul(self.a_cupy, self.b_cupy)
        self.cupy.cuda.Device().synchronize()

    def track_tflops(self, n):
        return 2 * n**3 / best_seconds(lambda: self.time_numgrad(n)) / 1e12

    track_tflops.unit = "TFLOP/s"
