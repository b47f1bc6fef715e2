"""Random programs over broadcasting shapes: numgrad against NumPy and HIPS autograd.

Hypothesis draws inputs of mutually broadcastable shapes and a straight-line program
of elementwise, broadcasting and reduction steps; the value must match NumPy and the
gradient of its sum must match `autograd` (float64, rtol 1e-10: long chains and
different summation orders, still far below any real bug's size).
"""

import autograd
import autograd.numpy as anp
import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import numgrad as ng

UNARY = {
    "tanh": (ng.tanh, anp.tanh),
    "sin": (ng.sin, anp.sin),
    "sigmoid": (ng.sigmoid, lambda a: 1 / (1 + anp.exp(-a))),
    "square": (ng.square, anp.square),
    "softplus": (lambda t: (t.exp() + 1).log(), lambda a: anp.log(anp.exp(a) + 1)),
}
BINARY = {
    "add": (lambda a, b: a + b, lambda a, b: a + b),
    "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b),
    # autograd's own `where` cannot broadcast a 0-d operand's gradient; a mask of
    # the same values gives the same derivative (ties have probability 0).
    "select": (lambda a, b: ng.where(a > b, a, b * 0.5),
               lambda a, b: (a > b) * a + (a <= b) * (b * 0.5)),
}
REDUCE = {
    "sum": (lambda t, ax: t.sum(axis=ax, keepdims=True),
            lambda a, ax: anp.sum(a, axis=ax, keepdims=True)),
    "mean": (lambda t, ax: t.mean(axis=ax, keepdims=True),
             lambda a, ax: anp.mean(a, axis=ax, keepdims=True)),
}


@st.composite
def programs(draw):
    shapes = draw(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                max_side=3)).input_shapes
    steps = []
    for i in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["unary", "binary", "reduce"]))
        values = 2 + i
        if kind == "unary":
            steps.append(("unary", draw(st.sampled_from(sorted(UNARY))),
                          draw(st.integers(0, values - 1))))
        elif kind == "binary":
            steps.append(("binary", draw(st.sampled_from(sorted(BINARY))),
                          draw(st.integers(0, values - 1)), draw(st.integers(0, values - 1))))
        else:
            steps.append(("reduce", draw(st.sampled_from(sorted(REDUCE))),
                          draw(st.integers(0, values - 1))))
    return shapes, steps


def run(steps, inputs, lib: int):
    values = list(inputs)
    for step in steps:
        if step[0] == "unary":
            values.append(UNARY[step[1]][lib](values[step[2]]))
        elif step[0] == "binary":
            values.append(BINARY[step[1]][lib](values[step[2]], values[step[3]]))
        else:
            value = values[step[2]]
            ndim = value.ndim if lib == 0 else anp.ndim(value)
            axis = ndim - 1 if ndim else None
            values.append(REDUCE[step[1]][lib](value, axis))
    return values[-1]


@given(programs(), st.integers(0, 2**16))
def test_random_programs_match_numpy_and_autograd(program, seed):
    shapes, steps = program
    rng = np.random.default_rng(seed)
    arrays = [rng.uniform(-1.5, 1.5, s) for s in shapes]
    tensors = [ng.tensor(a, requires_grad=True) for a in arrays]
    out = run(steps, tensors, 0)
    want = run(steps, arrays, 1)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-10, atol=1e-12)
    grads = ng.grad(out.sum(), tensors, allow_unused=True)
    expected = autograd.grad(lambda *a: anp.sum(run(steps, a, 1)), tuple(range(2)))(*arrays)
    for g, e, a in zip(grads, expected, arrays):
        got = np.zeros_like(a) if g is None else g.numpy()
        assert got.shape == np.shape(a)
        np.testing.assert_allclose(got, e, rtol=1e-10, atol=1e-12)
