"""Transforms and training: W4 (the Hessian of Rosenbrock) and an MLP training step.

Each numgrad benchmark sits next to a NumPy reference measured in the same run:
Rosenbrock's Hessian written out analytically, and a hand-written forward,
backward and Adam step for the MLP.
"""

import math

import numpy as np

import numgrad as ng

N_ROSEN = 100
MLP_SIZES = (64, 256, 256, 10)
N_SAMPLES = 1797  # the digits data set: 1797 images of 8x8 pixels, 10 classes
LR, BETAS, EPS = 1e-3, (0.9, 0.999), 1e-8


def rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def rosenbrock_hessian_numpy(x):
    """The analytic Hessian of Rosenbrock's function (tridiagonal)."""
    hess = np.diag(-400 * x[:-1], 1) - np.diag(400 * x[:-1], -1)
    diagonal = np.empty_like(x)
    diagonal[0] = 1200 * x[0] ** 2 - 400 * x[1] + 2
    diagonal[-1] = 200
    diagonal[1:-1] = 202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]
    return hess + np.diag(diagonal)


class RosenbrockHessian:
    """W4: the full Hessian of Rosenbrock's function, n = 100, float64."""

    def setup(self):
        self.x0 = np.random.default_rng(0).uniform(-1.5, 1.5, N_ROSEN)
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


def digits_like():
    """The digits data (features / 16) if scikit-learn is installed, else random data
    of the same shape and dtype: the step's time does not depend on the values."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        rng = np.random.default_rng(0)
        x = rng.integers(0, 17, (N_SAMPLES, MLP_SIZES[0])) / 16
        y = rng.integers(0, MLP_SIZES[-1], N_SAMPLES)
    else:
        x, y = load_digits(return_X_y=True)
        x = x / 16
    return x.astype(np.float32), y.astype(np.int64)


def init_weights():
    rng = np.random.default_rng(1)
    weights = []
    for n_in, n_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        weights.append((rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32))
        weights.append(np.zeros(n_out, np.float32))
    return weights


class NumpyMLP:
    """A hand-written forward, backward and Adam step in NumPy (float32, in place)."""

    def __init__(self, x, y):
        self.x, self.y = x, y
        self.params = init_weights()
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def step(self):
        x, y, (w1, b1, w2, b2, w3, b3) = self.x, self.y, self.params
        rows = np.arange(len(y))
        z1 = x @ w1 + b1
        h1 = np.maximum(z1, 0)
        z2 = h1 @ w2 + b2
        h2 = np.maximum(z2, 0)
        z3 = h2 @ w3 + b3
        z3 -= z3.max(axis=1, keepdims=True)
        e = np.exp(z3)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - z3[rows, y])
        d3 = e / total
        d3[rows, y] -= 1
        d3 /= len(y)
        d2 = (d3 @ w3.T) * (z2 > 0)
        d1 = (d2 @ w2.T) * (z1 > 0)
        grads = [x.T @ d1, d1.sum(0), h1.T @ d2, d2.sum(0), h2.T @ d3, d3.sum(0)]
        self.t += 1
        step_size = LR / (1 - BETAS[0] ** self.t)
        root_correction = math.sqrt(1 - BETAS[1] ** self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= BETAS[0]
            m += (1 - BETAS[0]) * g
            v *= BETAS[1]
            v += (1 - BETAS[1]) * g * g
            p -= step_size * m / (np.sqrt(v) / root_correction + EPS)
        return loss


class MLPTrainingStep:
    """One full-batch step of a 64-256-256-10 MLP on digits-shaped data, float32:
    forward, cross-entropy, backward and Adam."""

    def setup(self):
        x, y = digits_like()
        self.x, self.y = ng.tensor(x), ng.tensor(y)
        self.params = [ng.tensor(w, requires_grad=True) for w in init_weights()]
        self.opt = ng.optim.Adam(self.params, lr=LR, betas=BETAS, eps=EPS)
        self.reference = NumpyMLP(x, y)
        for _ in range(2):  # compile (or load) the kernels first
            self.time_numgrad()
            self.time_numpy()

    def time_numgrad(self):
        h = self.x
        for i in range(0, len(self.params), 2):
            h = h @ self.params[i] + self.params[i + 1]
            h = h.relu() if i < len(self.params) - 2 else h
        loss = ng.nn.functional.cross_entropy(h, self.y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def time_numpy(self):
        self.reference.step()

    def track_kernels_numgrad(self):
        with ng.engine.record() as rec:
            self.time_numgrad()
        return rec.kernels_launched

    track_kernels_numgrad.unit = "kernels"
