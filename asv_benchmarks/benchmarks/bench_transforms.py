"""Transforms and training: W4 (the Hessian of Rosenbrock) and an MLP training step.

Each numgrad benchmark sits next to a NumPy reference measured in the same run:
Rosenbrock's Hessian written out analytically, and a hand-written forward,
backward and Adam step for the MLP.
"""


import numpy as np

import numgrad as ng

from .workloads import (
    ROSEN_N,
    NumpyMLP,
    digits_like,
    mlp_step,
    rosenbrock,
    rosenbrock_hessian_numpy,
)


class RosenbrockHessian:
    """W4: the full Hessian of Rosenbrock's function, n = 100, float64."""

    def setup(self):
        self.x0 = np.random.default_rng(0).uniform(-1.5, 1.5, ROSEN_N)
        self.x = ng.tensor(self.x0)
        self.time_vectorized()  # compile (or load) the kernels first
        self.time_row_by_row()

    def time_vectorized(self):
        ng.functional.hessian(rosenbrock, self.x, vectorize=True).realize()

    def time_row_by_row(self):
        ng.functional.hessian(rosenbrock, self.x).realize()

    def time_numpy_analytic(self):
        rosenbrock_hessian_numpy(self.x0)

    def track_kernels_vectorized(self):
        with ng.engine.record() as rec:
            self.time_vectorized()
        return rec.kernels_launched

    track_kernels_vectorized.unit = "kernels"


class MLPTrainingStep:
    """One full-batch step of a 64-256-256-10 MLP on digits-shaped data, float32:
    forward, cross-entropy, backward and Adam."""

    def setup(self):
        x, y = digits_like()
        self.step = mlp_step(x, y)
        self.reference = NumpyMLP(x, y)
        for _ in range(2):  # compile (or load) the kernels first
            self.time_numgrad()
            self.time_numpy()

    def time_numgrad(self):
        self.step()

    def time_numpy(self):
        self.reference.step()

    def track_kernels_numgrad(self):
        with ng.engine.record() as rec:
            self.time_numgrad()
        return rec.kernels_launched

    track_kernels_numgrad.unit = "kernels"
