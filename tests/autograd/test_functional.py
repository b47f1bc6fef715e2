"""ng.functional (SPEC §3): jacobian, hessian, vjp, jvp, hvp.

Oracles: the HIPS ``autograd`` package (autograd.jacobian, autograd.hessian) on the
same functions written with autograd.numpy, and analytic derivatives. Return
structure follows torch.autograd.functional.

Tolerances: the functions are small float64 programs differentiated in a different
operation order than autograd's, so values agree to rtol 1e-12 with an atol of
1e-12 times the result's scale (sums of a few terms of size <= 1e3 for Rosenbrock).
vectorize=True and vectorize=False run the same VJP rules and agree to rtol 1e-12.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numpy.testing import assert_allclose

import numgrad as ng
from numgrad import functional as F

RTOL = 1e-12

rng = np.random.default_rng(7)
X3 = rng.uniform(-1, 1, 3)
A23 = rng.standard_normal((2, 3))
B32 = rng.standard_normal((3, 2))


def close(actual, expected, rtol=RTOL):
    """Compare a tensor with an array; atol scales with the expected values."""
    expected = np.asarray(expected, dtype=np.float64)
    atol = 1e-12 * max(1.0, float(np.abs(expected).max(initial=0.0)))
    assert tuple(actual.shape) == expected.shape
    assert_allclose(actual.numpy(), expected, rtol=rtol, atol=atol)


def rosen(x, xp=None):
    """Rosenbrock's function, for numgrad tensors (xp=None) or autograd.numpy."""
    terms = 100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2
    return terms.sum() if xp is None else xp.sum(terms)


def vec_fn(x, xp=None):
    """R^3 -> R^3, every output depending on every input."""
    return (x.sin() if xp is None else xp.sin(x)) * (x * x).sum()


def mat_fn(a, xp=None):
    """(2, 3) -> (2, 2): a matrix of a matrix, to check block shapes."""
    return (a @ B32).tanh() if xp is None else xp.tanh(xp.dot(a, B32))


def pair_fn(a, b, xp=None):
    """Two inputs, two outputs: a (3,) -> (3,) and a (2, 3) x (3,) -> (2,)."""
    if xp is None:
        return a.exp() * b.sum(), (b @ a).sin()
    return xp.exp(a) * xp.sum(b), xp.sin(xp.dot(b, a))


# ---- jacobian -------------------------------------------------------------------

@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_of_vector_function_matches_autograd(vectorize):
    jac = F.jacobian(vec_fn, ng.tensor(X3), vectorize=vectorize)
    close(jac, autograd.jacobian(lambda x: vec_fn(x, anp))(X3))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_block_shape_is_out_shape_plus_in_shape(vectorize):
    jac = F.jacobian(mat_fn, ng.tensor(A23), vectorize=vectorize)
    assert jac.shape == (2, 2, 2, 3)
    close(jac, autograd.jacobian(lambda a: mat_fn(a, anp))(A23))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_tuple_outputs_and_inputs_give_tuple_of_tuples(vectorize):
    jac = F.jacobian(pair_fn, (ng.tensor(X3), ng.tensor(A23)), vectorize=vectorize)
    assert isinstance(jac, tuple) and len(jac) == 2
    assert all(isinstance(row, tuple) and len(row) == 2 for row in jac)
    for i in range(2):
        for j in range(2):
            expected = autograd.jacobian(lambda a, b, i=i: pair_fn(a, b, anp)[i], j)(X3, A23)
            close(jac[i][j], expected)


def test_jacobian_unwraps_single_tensor_levels():
    x = ng.tensor(X3)
    both = F.jacobian(lambda t: (t * 2, t.sum()), x)  # tuple out, single in
    assert isinstance(both, tuple) and [j.shape for j in both] == [(3, 3), (3,)]
    per_input = F.jacobian(lambda a, b: a.sum() * b.sum(), (x, ng.tensor(A23)))
    assert isinstance(per_input, tuple) and [j.shape for j in per_input] == [(3,), (2, 3)]
    single = F.jacobian(lambda t: t * 2, x)
    assert isinstance(single, ng.Tensor)
    close(single, 2 * np.eye(3))


def test_jacobian_of_scalars_has_scalar_blocks():
    x = ng.tensor(0.5)
    jac = F.jacobian(lambda t: t.sin(), x)
    assert jac.shape == ()
    close(jac, np.cos(0.5))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_vectorize_agrees_with_rows_in_float32(vectorize):
    x = ng.tensor(X3.astype(np.float32))
    jac = F.jacobian(vec_fn, x, vectorize=vectorize)
    assert jac.dtype == np.float32
    expected = autograd.jacobian(lambda t: vec_fn(t, anp))(X3)
    assert_allclose(jac.numpy(), expected, rtol=1e-5, atol=1e-6)  # float32 rounding


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_backward_passes_one_batched_or_one_per_row(monkeypatch, vectorize):
    calls = []
    real_grad = F.grad

    def counting_grad(*args, **kwargs):
        calls.append(kwargs.get("is_grads_batched", False))
        return real_grad(*args, **kwargs)

    monkeypatch.setattr(F, "grad", counting_grad)
    F.jacobian(mat_fn, ng.tensor(A23), vectorize=vectorize)
    assert calls == ([True] if vectorize else [False] * 4)


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_is_zero_for_an_unused_input_and_a_constant_output(vectorize):
    jac = F.jacobian(lambda a, b: (a * 2, ng.ones(2)), (ng.tensor(X3), ng.tensor(A23)),
                     vectorize=vectorize)
    close(jac[0][0], 2 * np.eye(3))
    for block, shape in [(jac[0][1], (3, 2, 3)), (jac[1][0], (2, 3)), (jac[1][1], (2, 2, 3))]:
        close(block, np.zeros(shape))


def test_jacobian_strict_refuses_independence():
    x, y = ng.tensor(X3), ng.tensor(A23)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.jacobian(lambda a, b: a * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        F.jacobian(lambda a: ng.ones(2), x, strict=True)
    with pytest.raises(ValueError, match="strict=True and vectorize=True"):
        F.jacobian(lambda a: a * 2, x, strict=True, vectorize=True)


def test_jacobian_rejects_non_tensors():
    with pytest.raises(TypeError, match="inputs given to jacobian"):
        F.jacobian(lambda a: a, [ng.tensor(X3)])
    with pytest.raises(TypeError, match="outputs of the function"):
        F.jacobian(lambda a: [a], ng.tensor(X3))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_create_graph_is_differentiable_back_to_the_input(vectorize):
    x = ng.tensor(X3, requires_grad=True)
    jac = F.jacobian(lambda t: t ** 3, x, create_graph=True, vectorize=vectorize)
    assert jac.requires_grad
    close(jac, np.diag(3 * X3 ** 2))
    (g,) = ng.grad(jac.sum(), x)
    close(g, 6 * X3)  # d/dx of sum(diag(3 x^2))


def test_jacobian_without_create_graph_has_no_history_and_leaves_inputs_alone():
    x = ng.tensor(X3, requires_grad=True)
    jac = F.jacobian(lambda t: t ** 3, x)
    assert not jac.requires_grad and jac.grad_fn is None
    assert x.grad is None and x.is_leaf


# ---- hessian --------------------------------------------------------------------

@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_of_rosenbrock_n10_matches_autograd(vectorize):
    x0 = np.random.default_rng(10).uniform(-1.5, 1.5, 10)
    hess = F.hessian(rosen, ng.tensor(x0), vectorize=vectorize)
    close(hess, autograd.hessian(lambda x: rosen(x, anp))(x0))


def test_hessian_of_rosenbrock_n100_vectorized_matches_autograd():
    x0 = np.random.default_rng(100).uniform(-1.5, 1.5, 100)
    hess = F.hessian(rosen, ng.tensor(x0), vectorize=True)
    close(hess, autograd.hessian(lambda x: rosen(x, anp))(x0))


def test_hessian_vectorize_true_and_false_agree_for_tuple_inputs():
    def fn(a, b):
        return (b @ a).sin().sum() * a.exp().sum()

    inputs = (ng.tensor(X3), ng.tensor(A23))
    rows = F.hessian(fn, inputs)
    batched = F.hessian(fn, inputs, vectorize=True)
    shapes = [[(3, 3), (3, 2, 3)], [(2, 3, 3), (2, 3, 2, 3)]]
    for i in range(2):
        for j in range(2):
            assert rows[i][j].shape == batched[i][j].shape == shapes[i][j]
            close(batched[i][j], rows[i][j].numpy())
            expected = autograd.jacobian(
                autograd.grad(lambda a, b: anp.sum(anp.sin(anp.dot(b, a))) *
                              anp.sum(anp.exp(a)), i), j)(X3, A23)
            close(rows[i][j], expected)


def test_hessian_needs_a_one_element_output():
    with pytest.raises(ValueError, match=r"one element.*\(3,\)"):
        F.hessian(lambda t: t * t, ng.tensor(X3))
    with pytest.raises(TypeError, match="single Tensor"):
        F.hessian(lambda t: (t.sum(),), ng.tensor(X3))


def test_hessian_of_a_linear_function_is_zero_and_strict_refuses_it():
    close(F.hessian(lambda t: t.sum() * 2, ng.tensor(X3)), np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="strict=True"):
        F.hessian(lambda t: t.sum() * 2, ng.tensor(X3), strict=True)


# ---- vjp, jvp, hvp --------------------------------------------------------------

def test_vjp_is_v_times_jacobian_for_tuple_outputs():
    x, b = ng.tensor(X3), ng.tensor(A23)
    v = (ng.tensor(rng.standard_normal(3)), ng.tensor(rng.standard_normal(2)))
    outputs, (va, vb) = F.vjp(pair_fn, (x, b), v)
    jac = F.jacobian(pair_fn, (x, b))
    expected_a = sum(np.tensordot(v[i].numpy(), jac[i][0].numpy(), axes=1) for i in range(2))
    expected_b = sum(np.tensordot(v[i].numpy(), jac[i][1].numpy(), axes=1) for i in range(2))
    close(va, expected_a)
    close(vb, expected_b)
    close(outputs[0], np.exp(X3) * A23.sum())
    assert not outputs[0].requires_grad and not va.requires_grad


def test_vjp_without_v_for_a_scalar_output_is_the_gradient():
    out, g = F.vjp(lambda t: (t * t).sum(), ng.tensor(X3))
    close(out, (X3 * X3).sum())
    close(g, 2 * X3)


def test_vjp_checks_v_at_the_boundary():
    x = ng.tensor(X3)
    with pytest.raises(ValueError, match="v can be omitted only"):
        F.vjp(lambda t: t * 2, x)
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(3,\)"):
        F.vjp(lambda t: t * 2, x, ng.ones(2))
    with pytest.raises(ValueError, match="v has 1 tensors, but the function's output has 2"):
        F.vjp(pair_fn, (x, ng.tensor(A23)), (ng.ones(3),))


def test_jvp_is_jacobian_times_v():
    x = ng.tensor(A23)
    v = rng.standard_normal((2, 3))
    out, jv = F.jvp(mat_fn, x, ng.tensor(v))
    jac = F.jacobian(mat_fn, x).numpy()
    close(jv, np.tensordot(jac, v, axes=2))
    close(out, np.tanh(A23 @ B32))


def test_jvp_with_tuple_inputs_and_outputs():
    inputs = (ng.tensor(X3), ng.tensor(A23))
    v = (rng.standard_normal(3), rng.standard_normal((2, 3)))
    _, jv = F.jvp(pair_fn, inputs, tuple(ng.tensor(a) for a in v))
    jac = F.jacobian(pair_fn, inputs)
    for i in range(2):
        expected = np.tensordot(jac[i][0].numpy(), v[0], axes=1) + \
            np.tensordot(jac[i][1].numpy(), v[1], axes=2)
        close(jv[i], expected)


def test_jvp_without_v_for_a_scalar_input_is_the_derivative():
    _, d = F.jvp(lambda t: t.sin() * 3, ng.tensor(0.25))
    close(d, 3 * np.cos(0.25))


@pytest.mark.parametrize("n", [3, 10])
def test_hvp_is_hessian_times_v(n):
    x0 = np.random.default_rng(n).uniform(-1.5, 1.5, n)
    v = np.random.default_rng(n + 1).standard_normal(n)
    out, hv = F.hvp(rosen, ng.tensor(x0), ng.tensor(v))
    hess = F.hessian(rosen, ng.tensor(x0), vectorize=True).numpy()
    close(hv, hess @ v)
    close(out, rosen(x0, np))


def test_hvp_with_tuple_inputs_matches_the_hessian_blocks():
    def fn(a, b):
        return (b @ a).sin().sum() * a.exp().sum()

    inputs = (ng.tensor(X3), ng.tensor(A23))
    v = (rng.standard_normal(3), rng.standard_normal((2, 3)))
    _, (ha, hb) = F.hvp(fn, inputs, tuple(ng.tensor(a) for a in v))
    hess = F.hessian(fn, inputs, vectorize=True)
    close(ha, np.tensordot(hess[0][0].numpy(), v[0], 1) +
          np.tensordot(hess[0][1].numpy(), v[1], 2))
    close(hb, np.tensordot(hess[1][0].numpy(), v[0], 1) +
          np.tensordot(hess[1][1].numpy(), v[1], 2))


def test_hvp_create_graph_gives_a_differentiable_result():
    x = ng.tensor(X3, requires_grad=True)
    _, hv = F.hvp(lambda t: (t ** 4).sum(), x, ng.ones(3), create_graph=True)
    close(hv, 12 * X3 ** 2)
    (g,) = ng.grad(hv.sum(), x)
    close(g, 24 * X3)


def test_products_keep_results_on_the_input_device_and_dtype():
    x = ng.tensor(X3.astype(np.float32))
    _, vj = F.vjp(vec_fn, x, ng.ones(3, dtype=ng.float32))
    _, jv = F.jvp(vec_fn, x, ng.ones(3, dtype=ng.float32))
    _, hv = F.hvp(lambda t: vec_fn(t).sum(), x, ng.ones(3, dtype=ng.float32))
    for t in (vj, jv, hv):
        assert t.dtype == np.float32 and t.device == x.device


def test_vjp_and_jvp_create_graph_give_differentiable_results():
    x = ng.tensor(X3, requires_grad=True)
    _, vj = F.vjp(lambda t: t ** 3, x, ng.ones(3), create_graph=True)
    _, jv = F.jvp(lambda t: t ** 3, x, ng.ones(3), create_graph=True)
    for result in (vj, jv):
        close(result, 3 * X3 ** 2)
        (g,) = ng.grad(result.sum(), x)
        close(g, 6 * X3)


def test_products_in_strict_mode_refuse_independent_inputs():
    inputs = (ng.tensor(X3), ng.tensor(A23))
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.vjp(lambda a, b: a.sin().sum(), inputs, strict=True)
    with pytest.raises(RuntimeError, match="strict=True"):
        F.jvp(lambda a, b: a.sin(), inputs, (ng.ones(3), ng.ones((2, 3))), strict=True)
    with pytest.raises(RuntimeError, match="strict=True"):
        F.hvp(lambda a, b: a.sin().sum(), inputs, (ng.ones(3), ng.ones((2, 3))), strict=True)
    # Without strict, the independent input gets zeros.
    _, (ha, hb) = F.hvp(lambda a, b: a.sin().sum(), inputs, (ng.ones(3), ng.ones((2, 3))))
    close(ha, -np.sin(X3))
    close(hb, np.zeros((2, 3)))


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_create_graph_gives_third_derivatives(vectorize):
    x = ng.tensor(X3, requires_grad=True)
    hess = F.hessian(lambda t: (t ** 4).sum(), x, create_graph=True, vectorize=vectorize)
    close(hess, np.diag(12 * X3 ** 2))
    (g,) = ng.grad(hess.sum(), x)
    close(g, 24 * X3)
