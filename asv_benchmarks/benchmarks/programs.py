"""Numeric experiments as their authors write them, for any NumPy-like namespace ``xp``
(NumPy, ``autograd.numpy``, numgrad): small arrays, Python loops of tens of steps,
``roll`` stencils, ``logsumexp`` recursions, a Cholesky factor.

Each program is ``make(xp) -> (loss, x0)``: a scalar loss of one float64 array and the
array to take its gradient at. `gradient` gives the value-and-gradient call of a
library, so one program is timed on numgrad, on HIPS autograd and (forward only) on
NumPy in one run (``bench_programs``).
"""

from __future__ import annotations

import numpy as np


def heat(xp, n: int = 110, steps: int = 50):
    """Explicit diffusion on an ``n x n`` periodic grid: `steps` sweeps of the 5-point
    stencil (four ``roll``\\ s each), the loss the final field's energy; the gradient
    is the initial field's (an adjoint through every sweep)."""
    def loss(u):
        for _ in range(steps):
            u = u + 0.2 * (xp.roll(u, 1, 0) + xp.roll(u, -1, 0) + xp.roll(u, 1, 1)
                           + xp.roll(u, -1, 1) - 4 * u)
        return (u * u).sum()
    return loss, np.random.default_rng(0).standard_normal((n, n))


def hmm(xp, steps: int = 100, states: int = 5, symbols: int = 4):
    """The log likelihood of a hidden Markov model by the forward recursion in log space
    (a ``logsumexp`` per step), its gradient by the transition and emission logits
    (side by side, one row per state): the E step of EM, as forward-backward computes
    it."""
    rng = np.random.default_rng(0)
    observed = rng.integers(0, symbols, steps)

    def log_softmax(a):
        top = a.max(axis=1, keepdims=True)
        return a - top - xp.log(xp.exp(a - top).sum(axis=1, keepdims=True))

    def loss(logits):
        trans = log_softmax(logits[:, :states])
        emit = log_softmax(logits[:, states:])
        alpha = emit[:, observed[0]] - np.log(states)
        for t in range(1, steps):
            a = alpha[:, None] + trans
            top = a.max(axis=0)
            alpha = top + xp.log(xp.exp(a - top).sum(axis=0)) + emit[:, observed[t]]
        top = alpha.max()
        return -(top + xp.log(xp.exp(alpha - top).sum()))
    return loss, rng.standard_normal((states, states + symbols))


def gp(xp, n: int = 60):
    """The negative log marginal likelihood of a Gaussian process with a squared
    exponential kernel, by its Cholesky factor; the gradient by the log length scale,
    log signal variance and log noise."""
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 5, n))
    y = np.sin(t) + 0.1 * rng.standard_normal(n)
    gaps = (t[:, None] - t[None, :]) ** 2

    def loss(params):
        scale, signal, noise = xp.exp(params[0]), xp.exp(params[1]), xp.exp(params[2])
        k = signal * xp.exp(-0.5 * gaps / scale ** 2) + (noise + 1e-6) * np.eye(n)
        c = xp.linalg.cholesky(k)
        a = xp.linalg.solve(c, y)
        log_det = 2 * xp.log(xp.diagonal(c, 0, -1, -2)).sum()
        return 0.5 * ((a * a).sum() + log_det + n * np.log(2 * np.pi))
    return loss, np.array([0.0, 0.0, -2.0])


PROGRAMS = {"heat stencil": heat, "HMM forward": hmm, "GP marginal likelihood": gp}


def gradient(library: str, name: str):
    """A call computing the program `name`'s value and gradient on `library` (``numgrad``
    or ``autograd``), or its value on ``numpy``, as that library's users write it."""
    if library == "numpy":
        loss, x0 = PROGRAMS[name](np)
        return lambda: float(loss(x0))
    if library == "autograd":
        import autograd
        import autograd.numpy as anp

        loss, x0 = PROGRAMS[name](anp)
        step = autograd.value_and_grad(loss)
        return lambda: step(x0)
    import numgrad as ng

    loss, x0 = PROGRAMS[name](ng)
    step = ng.value_and_grad(loss)

    def run():
        value, grad = step(ng.tensor(x0))
        return value.item(), grad.numpy()
    return run
