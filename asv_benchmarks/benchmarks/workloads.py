"""Reference workloads shared by the asv benchmarks, ``python -m numgrad bench``
(through ``compare.py``) and ``tools/gpu_table.py``.

Each is written once for any library's arrays, or by hand in NumPy (forward and
analytic gradient), so that numgrad can be timed against them in one run. The
numgrad MLP step is the library's own: ``numgrad.demo.train_step``.
"""

from __future__ import annotations

import math

import numpy as np

import numgrad as ng
from numgrad.demo import train_step

ROSEN_N = 100
MLP_SIZES = (64, 256, 256, 10)
DIGITS_SAMPLES = 1797  # the digits data set: 1797 images of 8x8 pixels, 10 classes
ADAM = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8)


def w1(x, tanh, sigmoid, exp, sqrt):
    """W1's value, written once for any library's arrays and functions."""
    return (tanh(1.5 * x + 0.3) * sigmoid(x) - exp(-x * x) / (1 + x * x)
            + sqrt(x * x + 1)).sum()


def w1b(x, where):
    """W1b's value (a cheap chain), written once for any library's arrays."""
    return (where(x > 0, x, 0.1 * x) * x * 1.5 + 0.5 * x * x - 0.3 * x).sum()


def w1_numpy(a):
    """W1's value and analytic gradient:
    ``sum(tanh(1.5x + 0.3) * sigmoid(x) - exp(-x*x) / (1 + x*x) + sqrt(x*x + 1))``."""
    t = np.tanh(1.5 * a + 0.3)
    s = 1 / (1 + np.exp(-a))
    e = np.exp(-a * a)
    q = 1 + a * a
    r = np.sqrt(a * a + 1)
    value = (t * s - e / q + r).sum()
    grad = (1.5 * (1 - t * t) * s + t * s * (1 - s)
            + 2 * a * e / q + 2 * a * e / (q * q) + a / r)
    return value, grad


def rosenbrock(x):
    """Rosenbrock's function; works on numgrad, NumPy, PyTorch and JAX arrays."""
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


def rosenbrock_hessian_numpy(x):
    """The analytic Hessian of Rosenbrock's function (tridiagonal)."""
    hess = np.diag(-400 * x[:-1], 1) - np.diag(400 * x[:-1], -1)
    diagonal = np.empty_like(x)
    diagonal[0] = 1200 * x[0] ** 2 - 400 * x[1] + 2
    diagonal[-1] = 200
    diagonal[1:-1] = 202 + 1200 * x[1:-1] ** 2 - 400 * x[2:]
    return hess + np.diag(diagonal)


def mlp_logits(x, params, relu):
    """The MLP's logits, ``x @ W + b`` per layer and `relu` between layers, for any
    library (numgrad's is ``numgrad.demo.mlp_logits``)."""
    h = x
    for i in range(0, len(params), 2):
        h = h @ params[i] + params[i + 1]
        h = relu(h) if i < len(params) - 2 else h
    return h


def mlp_weights(sizes=MLP_SIZES, seed=1):
    """Weights and zero biases of an MLP with layer `sizes`, float32."""
    rng = np.random.default_rng(seed)
    weights = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        weights.append((rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32))
        weights.append(np.zeros(n_out, np.float32))
    return weights


def digits_like():
    """The digits data (features / 16) if scikit-learn is installed, else random data
    of the same shape and dtype: a training step's time does not depend on the values."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        rng = np.random.default_rng(0)
        x = rng.integers(0, 17, (DIGITS_SAMPLES, MLP_SIZES[0])) / 16
        y = rng.integers(0, MLP_SIZES[-1], DIGITS_SAMPLES)
    else:
        x, y = load_digits(return_X_y=True)
        x = x / 16
    return x.astype(np.float32), y.astype(np.int64)


def mlp_step(x, y, device=None, sizes=MLP_SIZES, make=None):
    """A function that runs one full-batch numgrad training step of the MLP on
    `device` (``numgrad.demo.train_step``: forward, cross-entropy, backward and Adam)
    from the weights every peer starts from; `make` (such as ``ng.jit``) wraps the
    step first."""
    x, y = ng.tensor(x, device=device), ng.tensor(y, device=device)
    params = [ng.tensor(w, device=device, requires_grad=True) for w in mlp_weights(sizes)]
    optimizer = ng.optim.Adam(params, **ADAM)
    train = (make or (lambda f: f))(lambda x, y: train_step(x, y, params, optimizer)[0])

    def step():
        train(x, y).realize()

    return step


class NumpyMLP:
    """A hand-written forward, backward and Adam step of a 3-layer MLP (float32), its
    matrix products by `matmul` (``tools/w3_matmuls.py`` times them)."""

    def __init__(self, x, y, sizes=MLP_SIZES, matmul=np.matmul):
        self.x, self.y, self.matmul = x, y, matmul
        self.params = mlp_weights(sizes)
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]
        self.t = 0

    def step(self):
        x, y, (w1, b1, w2, b2, w3, b3), mm = self.x, self.y, self.params, self.matmul
        rows = np.arange(len(y))
        z1 = mm(x, w1) + b1
        h1 = np.maximum(z1, 0)
        z2 = mm(h1, w2) + b2
        h2 = np.maximum(z2, 0)
        z3 = mm(h2, w3) + b3
        z3 -= z3.max(axis=1, keepdims=True)
        e = np.exp(z3)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - z3[rows, y])
        d3 = e / total
        d3[rows, y] -= 1
        d3 /= len(y)
        d2 = mm(d3, w3.T) * (z2 > 0)
        d1 = mm(d2, w2.T) * (z1 > 0)
        grads = [mm(x.T, d1), d1.sum(0), mm(h1.T, d2), d2.sum(0), mm(h2.T, d3), d3.sum(0)]
        self.t += 1
        (beta1, beta2), lr, eps = ADAM["betas"], ADAM["lr"], ADAM["eps"]
        step_size = lr / (1 - beta1 ** self.t)
        root_correction = math.sqrt(1 - beta2 ** self.t)
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * g * g
            p -= step_size * m / (np.sqrt(v) / root_correction + eps)
        return loss
