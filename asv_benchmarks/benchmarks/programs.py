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

    def loss(logits):
        trans = _log_softmax(xp, logits[:, :states])
        emit = _log_softmax(xp, logits[:, states:])
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


def _unpack(flat, shapes: list[tuple[int, ...]]) -> list:
    """The arrays of `shapes` laid end to end in the vector `flat` (one array to
    differentiate by, as a SciPy optimiser hands it over)."""
    out, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        out.append(flat[start:start + size].reshape(shape))
        start += size
    return out


def _weights(shapes, seed: int = 0) -> np.ndarray:
    """Initial weights for `shapes`, end to end: each scaled by its fan-in."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.standard_normal(int(np.prod(s))) / np.sqrt(s[0])
                           for s in shapes])


def _log_softmax(xp, a):
    top = a.max(axis=-1, keepdims=True)
    return a - top - xp.log(xp.exp(a - top).sum(axis=-1, keepdims=True))


def _characters(length: int, vocab: int, seed: int = 0) -> np.ndarray:
    """A one-hot character sequence, ``(length, vocab)``: a noisy cycle through the
    alphabet, so that the next character is learnable."""
    rng = np.random.default_rng(seed)
    codes = (np.arange(length) + (rng.random(length) < 0.2)) % vocab
    return np.eye(vocab)[codes]


def rnn(xp, length: int = 50, vocab: int = 20, hidden: int = 32):
    """A character RNN's cross entropy of each next character, through `length` steps of
    ``tanh(x W + h U + b)``; the gradient by all its weights."""
    text = _characters(length, vocab)
    shapes = [(vocab, hidden), (hidden, hidden), (1, hidden), (hidden, vocab), (1, vocab)]

    def loss(flat):
        w, u, b, v, c = _unpack(flat, shapes)
        h, total = np.zeros((1, hidden)), 0.0
        for t in range(length - 1):
            h = xp.tanh(text[t:t + 1] @ w + h @ u + b)
            total = total - (_log_softmax(xp, h @ v + c) * text[t + 1]).sum()
        return total
    return loss, _weights(shapes)


def lstm(xp, length: int = 30, vocab: int = 20, hidden: int = 16):
    """An LSTM's cross entropy of each next character (four gates from one product per
    step); the gradient by all its weights."""
    text = _characters(length, vocab, seed=1)
    shapes = [(vocab + hidden, 4 * hidden), (1, 4 * hidden), (hidden, vocab), (1, vocab)]

    def sigmoid(a):
        return 0.5 * (xp.tanh(0.5 * a) + 1)

    def loss(flat):
        w, b, v, c = _unpack(flat, shapes)
        h, cell, total = np.zeros((1, hidden)), np.zeros((1, hidden)), 0.0
        for t in range(length - 1):
            gates = xp.concatenate([text[t:t + 1], h], axis=1) @ w + b
            i, f = sigmoid(gates[:, :hidden]), sigmoid(gates[:, hidden:2 * hidden])
            o, g = sigmoid(gates[:, 2 * hidden:3 * hidden]), xp.tanh(gates[:, 3 * hidden:])
            cell = f * cell + i * g
            h = o * xp.tanh(cell)
            total = total - (_log_softmax(xp, h @ v + c) * text[t + 1]).sum()
        return total
    return loss, _weights(shapes)


def mixture(xp, n: int = 300, k: int = 3, d: int = 2):
    """The negative log likelihood of a Gaussian mixture with diagonal covariances
    (a ``logsumexp`` over components per point), by means, log scales and mixing
    logits."""
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((k, d)) * 3
    data = centres[rng.integers(0, k, n)] + rng.standard_normal((n, d))
    shapes = [(k, d), (k, d), (k,)]

    def loss(flat):
        means, log_scales, logits = _unpack(flat, shapes)
        z = (data[:, None, :] - means) / xp.exp(log_scales)
        per = -0.5 * (z * z).sum(axis=2) - log_scales.sum(axis=1) \
            + _log_softmax(xp, logits) - 0.5 * d * np.log(2 * np.pi)
        top = per.max(axis=1, keepdims=True)
        return -(top + xp.log(xp.exp(per - top).sum(axis=1, keepdims=True))).sum()
    return loss, np.concatenate([rng.standard_normal(k * d), np.zeros(k * d), np.zeros(k)])


def bayesian_net(xp, n: int = 50, hidden: int = 20, samples: int = 10):
    """Black-box variational inference for a 1-20-1 tanh network: the negative ELBO
    by the reparametrization trick over fixed noise (`samples` weight draws), by the
    weights' means and log scales."""
    rng = np.random.default_rng(0)
    x = np.linspace(-3, 3, n)[:, None]
    y = np.sin(x) + 0.1 * rng.standard_normal((n, 1))
    shapes = [(1, hidden), (hidden,), (hidden, 1), (1,)]
    size = sum(int(np.prod(s)) for s in shapes)
    noise = rng.standard_normal((samples, size))

    def loss(flat):
        mean, log_scale = flat[:size], flat[size:]
        total = 0.0
        for s in range(samples):
            w1, b1, w2, b2 = _unpack(mean + xp.exp(log_scale) * noise[s], shapes)
            residual = xp.tanh(x @ w1 + b1) @ w2 + b2 - y
            total = total + 50.0 * (residual * residual).sum()
        kl = 0.5 * (xp.exp(2 * log_scale) + mean * mean - 1 - 2 * log_scale).sum()
        return total / samples + kl
    return loss, np.concatenate([_weights(shapes), np.full(size, -3.0)])


def neural_ode(xp, steps: int = 50, batch: int = 16, hidden: int = 16):
    """A neural ODE by RK4: `steps` steps of a tanh MLP vector field on a batch of 2-D
    states, the loss the final states' distance to their targets; the gradient by the
    field's weights (back through every stage)."""
    rng = np.random.default_rng(0)
    start = rng.standard_normal((batch, 2))
    target = start @ np.array([[0.0, 1.0], [-1.0, 0.0]])  # a quarter turn
    shapes = [(2, hidden), (1, hidden), (hidden, 2), (1, 2)]
    dt = 1.0 / steps

    def loss(flat):
        w1, b1, w2, b2 = _unpack(flat, shapes)

        def field(z):
            return xp.tanh(z @ w1 + b1) @ w2 + b2
        z = rk4(field, start, dt, steps)
        return ((z - target) ** 2).sum()
    return loss, _weights(shapes)


def rk4(field, z, dt: float, steps: int):
    """`steps` classical Runge-Kutta steps of size `dt` of ``dz/dt = field(z)`` from `z`."""
    for _ in range(steps):
        k1 = field(z)
        k2 = field(z + 0.5 * dt * k1)
        k3 = field(z + 0.5 * dt * k2)
        k4 = field(z + dt * k3)
        z = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return z


def vae(xp, batch: int = 32, pixels: int = 64, hidden: int = 32, latent: int = 2):
    """A variational autoencoder's negative ELBO on a batch of binary 8x8 images
    (Bernoulli likelihood, one reparametrized draw of fixed noise), by the encoder's
    and decoder's weights."""
    rng = np.random.default_rng(0)
    images = (rng.random((batch, pixels)) < 0.3).astype(float)
    noise = rng.standard_normal((batch, latent))
    shapes = [(pixels, hidden), (1, hidden), (hidden, 2 * latent), (1, 2 * latent),
              (latent, hidden), (1, hidden), (hidden, pixels), (1, pixels)]

    def loss(flat):
        e1, c1, e2, c2, d1, f1, d2, f2 = _unpack(flat, shapes)
        code = xp.tanh(images @ e1 + c1) @ e2 + c2
        mean, log_scale = code[:, :latent], code[:, latent:]
        z = mean + xp.exp(log_scale) * noise
        logits = xp.tanh(z @ d1 + f1) @ d2 + f2
        # log p(x | z) of a Bernoulli by its logits: x l - log(1 + e^l), stably
        top = xp.maximum(logits, 0)
        likelihood = (images * logits - top - xp.log(xp.exp(-top) + xp.exp(logits - top)))
        kl = 0.5 * (xp.exp(2 * log_scale) + mean * mean - 1 - 2 * log_scale)
        return (kl.sum() - likelihood.sum()) / batch
    return loss, _weights(shapes)


def convnet(xp, batch: int = 32, side: int = 8, filters: int = 4, classes: int = 10):
    """A small convnet's cross entropy on 8x8 images: one 3x3 convolution (as nine
    shifted slices), ReLU, a linear layer; the gradient by the filters and weights."""
    rng = np.random.default_rng(0)
    images = rng.random((batch, side, side))
    labels = np.eye(classes)[rng.integers(0, classes, batch)]
    inner = side - 2
    shapes = [(3, 3, filters), (filters,), (inner * inner * filters, classes), (classes,)]

    def loss(flat):
        w, b, v, c = _unpack(flat, shapes)
        maps = b
        for i in range(3):
            for j in range(3):
                maps = maps + images[:, i:i + inner, j:j + inner, None] * w[i, j]
        features = xp.maximum(maps, 0).reshape((batch, -1))
        return -(_log_softmax(xp, features @ v + c) * labels).sum() / batch
    return loss, _weights(shapes)


PROGRAMS = {"heat stencil": heat, "HMM forward": hmm, "GP marginal likelihood": gp,
            "character RNN": rnn, "LSTM": lstm, "Gaussian mixture": mixture,
            "Bayesian neural net": bayesian_net, "neural ODE (RK4)": neural_ode,
            "VAE": vae, "convnet": convnet}


def gradient(library: str, name: str):
    """A call computing the program `name`'s value and gradient on `library` (``numgrad``
    or ``autograd``), or its value on ``numpy``, as that library's users write it; on
    ``numgrad-jit``, numgrad's call traced once by ``ng.jit`` and replayed."""
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
    if library == "numgrad-jit":
        step = ng.jit(step)
    elif library != "numgrad":
        raise ValueError(f"unknown library {library!r}")

    def run():
        value, grad = step(ng.tensor(x0))
        return value.item(), grad.numpy()
    return run


def peer_calls(library: str, name: str) -> list:
    """`gradient(library, name)` as a list, for a `benchmarks.peers.PeerProcess`: a peer
    timed in a process of its own, away from numgrad's OpenMP settings."""
    return [gradient(library, name)]
