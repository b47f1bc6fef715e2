"""Batched seeds (`is_grads_batched=True`): every row equals its own backward pass.

Each VJP rule keeps a gradient's leading batch dimension; these programs touch every
movement and reduction rule. Tolerance: rows agree to rtol 1e-12 (same float64
operations, possibly fused differently).
"""

import numpy as np
import pytest

import numgrad as ng

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4))
B = rng.standard_normal((4, 2))

PROGRAMS = {
    "elementwise": lambda x: (x.tanh() * x).exp(),
    "matmul": lambda x: (x @ ng.tensor(B)).sin(),
    "reductions": lambda x: ng.stack([x.sum(0), x.max(0), x.prod(0), x.mean(0)]),
    "movement": lambda x: x.T.reshape(2, 6)[:, ::2] * 2,
    "broadcast": lambda x: x.sum(1, keepdims=True) * x,
    "broadcast_adding_axes": lambda x: x[0] * ng.tensor(rng.standard_normal((2, 5, 4))),
    "gather_concat": lambda x: ng.concatenate([x[[0, 0, 2]], x[1:]], axis=0).var(axis=1),
    "setitem_like": lambda x: x.index_put((slice(0, 1),), 0.0) * x,
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_batched_rows_match_one_pass_each(name):
    fn = PROGRAMS[name]
    x = ng.tensor(A, requires_grad=True)
    out = fn(x)
    seeds = rng.standard_normal((3,) + out.shape)
    (batched,) = ng.grad(out, x, ng.tensor(seeds), retain_graph=True, is_grads_batched=True)
    assert batched.shape == (3,) + x.shape
    for row, seed in enumerate(seeds):
        (one,) = ng.grad(out, x, ng.tensor(seed), retain_graph=True)
        np.testing.assert_allclose(batched.numpy()[row], one.numpy(), rtol=1e-12, atol=1e-14)


def test_batched_seed_shape_is_checked_at_the_boundary():
    x = ng.tensor(A, requires_grad=True)
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        ng.grad(x * 2, x, ng.ones(2, 4, 3), is_grads_batched=True)
