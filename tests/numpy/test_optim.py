"""ng.optim (SPEC §3): SGD, Adam, AdamW against hand-computed PyTorch updates.

The loss ``sum(a * p**2) / 2 + sum(b * p)`` has gradient ``a * p + b``, so each
step's gradient is known in closed form and the reference runs PyTorch's update
formulas in NumPy. Tolerance: rtol 1e-12 in float64 (the same operations, fused
and ordered as the engine chooses).
"""

import gc

import numpy as np
import pytest
from numpy.testing import assert_allclose

import numgrad as ng

RTOL = 1e-12
A = np.array([0.5, 1.0, 2.0, 3.0])
B = np.array([0.1, -0.2, 0.3, -0.4])
P0 = np.array([1.0, -2.0, 0.5, 0.25])


def loss_fn(p):
    return (ng.tensor(A) * p * p).sum() / 2 + (ng.tensor(B) * p).sum()


def run(opt_cls, steps=3, **kwargs):
    """Take `steps` optimizer steps on the quadratic loss; return the values seen."""
    p = ng.tensor(P0, requires_grad=True)
    opt = opt_cls([p], **kwargs)
    values = []
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(p).backward()
        opt.step()
        values.append(p.numpy())
    return p, opt, values


def sgd_reference(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                  steps=3):
    p, buf, values = P0.copy(), None, []
    for _ in range(steps):
        d = A * p + B + weight_decay * p
        if momentum:
            buf = d.copy() if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - lr * d
        values.append(p)
    return values


def adam_reference(lr, betas, eps, weight_decay, decoupled, steps=3):
    p, m, v, values = P0.copy(), np.zeros(4), np.zeros(4), []
    for t in range(1, steps + 1):
        g = A * p + B
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        m_hat, v_hat = m / (1 - betas[0] ** t), v / (1 - betas[1] ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        values.append(p)
    return values


# ---- updates against the formulas ------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.1, "momentum": 0.9, "dampening": 0.3},
    {"lr": 0.05, "momentum": 0.8, "nesterov": True},
    {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.01},
    {"lr": 0.1, "weight_decay": 0.1, "momentum": 0.9, "nesterov": True},
], ids=["plain", "momentum", "dampening", "nesterov", "weight_decay", "all"])
def test_sgd_steps_match_pytorch_formulas(kwargs):
    _, _, values = run(ng.optim.SGD, **kwargs)
    for got, expected in zip(values, sgd_reference(**kwargs)):
        assert_allclose(got, expected, rtol=RTOL)


@pytest.mark.parametrize("opt_cls, kwargs", [
    (ng.optim.Adam, {"lr": 0.1}),
    (ng.optim.Adam, {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.1}),
    (ng.optim.AdamW, {"lr": 0.1}),
    (ng.optim.AdamW, {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6, "weight_decay": 0.3}),
], ids=["adam", "adam_l2", "adamw_default_decay", "adamw"])
def test_adam_steps_match_pytorch_formulas(opt_cls, kwargs):
    _, opt, values = run(opt_cls, **kwargs)
    decoupled = opt_cls is ng.optim.AdamW
    expected = adam_reference(kwargs["lr"], kwargs.get("betas", (0.9, 0.999)),
                              kwargs.get("eps", 1e-8),
                              kwargs.get("weight_decay", 1e-2 if decoupled else 0.0), decoupled)
    for got, want in zip(values, expected):
        assert_allclose(got, want, rtol=RTOL)
    assert opt.state[0]["step"] == 3


def test_defaults_are_pytorchs():
    p = ng.tensor(P0, requires_grad=True)
    adam, adamw = ng.optim.Adam([p]), ng.optim.AdamW([p])
    assert (adam.lr, adam.betas, adam.eps, adam.weight_decay) == (1e-3, (0.9, 0.999), 1e-8, 0.0)
    assert adamw.weight_decay == 1e-2


def test_step_updates_in_place_and_keeps_dtype():
    p = ng.tensor(P0.astype(np.float32), requires_grad=True)
    opt = ng.optim.Adam([p], lr=0.1)
    before = p
    loss_fn(p).backward()
    opt.step()
    assert p is before and p.is_leaf and p.requires_grad
    assert p.dtype == np.float32 and opt.state[0]["exp_avg"].dtype == np.float32
    expected = adam_reference(0.1, (0.9, 0.999), 1e-8, 0.0, False, steps=1)[0]
    assert_allclose(p.numpy(), expected, rtol=1e-6)  # float32 rounding


def test_step_realizes_parameters_and_state_and_skips_params_without_grad():
    p, q = ng.tensor(P0, requires_grad=True), ng.tensor(P0, requires_grad=True)
    opt = ng.optim.SGD([p, q], lr=0.1, momentum=0.9)
    loss_fn(p).backward()
    opt.step()
    assert p._buf.is_realized and opt.state[0]["momentum_buffer"]._buf.is_realized
    assert opt.state[1] == {}
    assert_allclose(q.numpy(), P0, rtol=0)


def test_zero_grad_sets_none_by_default_or_zeros():
    p = ng.tensor(P0, requires_grad=True)
    opt = ng.optim.SGD([p], lr=0.1)
    loss_fn(p).backward()
    loss_fn(p).backward()  # without zero_grad, gradients add up
    assert_allclose(p.grad.numpy(), 2 * (A * P0 + B), rtol=RTOL)
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.shape == (4,)
    assert_allclose(p.grad.numpy(), np.zeros(4), rtol=0)
    loss_fn(p).backward()
    assert_allclose(p.grad.numpy(), A * P0 + B, rtol=RTOL)
    opt.zero_grad()
    assert p.grad is None


# ---- validation at the boundary ---------------------------------------------------

@pytest.mark.parametrize("make, name", [
    (lambda ps: ng.optim.SGD(ps, lr=-0.1), "lr"),
    (lambda ps: ng.optim.SGD(ps, lr=0.1, momentum=-1), "momentum"),
    (lambda ps: ng.optim.SGD(ps, lr=0.1, weight_decay=-1), "weight_decay"),
    (lambda ps: ng.optim.SGD(ps, lr=0.1, nesterov=True), "nesterov"),
    (lambda ps: ng.optim.SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True),
     "nesterov"),
    (lambda ps: ng.optim.Adam(ps, lr=float("nan")), "lr"),
    (lambda ps: ng.optim.Adam(ps, betas=(1.0, 0.999)), r"betas\[0\]"),
    (lambda ps: ng.optim.Adam(ps, betas=(0.9, -0.1)), r"betas\[1\]"),
    (lambda ps: ng.optim.Adam(ps, betas=(0.9,)), "betas"),
    (lambda ps: ng.optim.Adam(ps, eps=-1e-8), "eps"),
    (lambda ps: ng.optim.AdamW(ps, weight_decay=-0.01), "weight_decay"),
])
def test_bad_hyperparameters_raise_value_error_naming_them(make, name):
    with pytest.raises(ValueError, match=name):
        make([ng.tensor(P0, requires_grad=True)])


def test_bad_parameter_lists_are_refused():
    p = ng.tensor(P0, requires_grad=True)
    with pytest.raises(ValueError, match="does not require grad"):
        ng.optim.SGD([p, ng.tensor(P0)], lr=0.1)
    with pytest.raises(ValueError, match="not a leaf"):
        ng.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="empty"):
        ng.optim.Adam([])
    with pytest.raises(ValueError, match="more than once"):
        ng.optim.Adam([p, p])
    with pytest.raises(TypeError, match="iterable of Tensors"):
        ng.optim.Adam(p)
    with pytest.raises(TypeError, match="parameter 0"):
        ng.optim.Adam([P0])
    with pytest.raises(TypeError, match="lr"):
        ng.optim.SGD([p], lr="0.1")


# ---- a training loop stays flat -------------------------------------------------

@pytest.mark.slow
def test_200_step_training_loop_keeps_graph_and_memory_flat():
    rng = np.random.default_rng(0)
    x = ng.tensor(rng.standard_normal((32, 4)))
    y = ng.tensor(rng.integers(0, 3, 32))
    sizes = [4, 16, 16, 3]  # 403 parameters
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        params.append(ng.tensor(rng.standard_normal((n_in, n_out)) / np.sqrt(n_in),
                                requires_grad=True))
        params.append(ng.zeros(n_out, requires_grad=True))
    opt = ng.optim.Adam(params, lr=1e-2)

    def step():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i] + params[i + 1]
            h = h.relu() if i < len(params) - 2 else h
        loss = ng.nn.functional.cross_entropy(h, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    losses, objects = [], {}
    for i in range(1, 201):
        losses.append(step())
        # Nothing pending after a step: parameters and state are computed buffers.
        assert all(p._buf.is_realized for p in params)
        assert all(t._buf.is_realized for s in opt.state for t in s.values()
                   if isinstance(t, ng.Tensor))
        if i in (20, 200):
            gc.collect()
            objects[i] = len(gc.get_objects())
    # A graph kept per step would add hundreds of objects per step (36,000 over 180);
    # the bound leaves room for one-off caches.
    assert objects[200] - objects[20] < 1000, objects
    assert losses[-1] < 0.5 * losses[0]


def test_a_jitted_adam_steps_later_calls_compile_nothing_new(numba_cpu, monkeypatch):
    # The biases (ng.zeros with requires_grad) and Adam's moments are memory from the
    # start, not broadcast constants until their first update: the first call reads
    # what later calls read, so its kernels are theirs. (When they were constants,
    # the second call compiled 10 kernel structures of its own.)
    from numgrad.demo import init_mlp, train_step
    from numgrad.kernels import cache

    monkeypatch.setattr(cache, "_memory", {})
    rng = np.random.default_rng(0)
    params = init_mlp([8, 16, 3], rng)
    assert params[1]._buf.is_realized and params[1]._buf.realized.strides == (4,)
    opt = ng.optim.Adam(params, lr=1e-2)
    step = ng.jit(lambda x, y: train_step(x, y, params, opt))
    x = ng.tensor(rng.standard_normal((5, 8)).astype(np.float32))
    y = ng.tensor([0, 1, 2, 0, 1])
    counts = []
    for _ in range(3):
        with ng.engine.record() as rec:
            step(x, y)[0].item()
        counts.append(rec.kernels_compiled + rec.disk_hits)
    assert counts[0] > 0 and counts[1:] == [0, 0]
    assert opt.state[1]["step"].item() == 3.0
