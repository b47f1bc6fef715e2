"""Function transforms (SPEC §3): ``ng.grad(f)``, ``ng.value_and_grad(f)`` and
``ng.elementwise_grad(f)``, for HIPS autograd and JAX habits.

Gradients are compared with HIPS autograd's on the same function (float64, rtol 1e-12);
arrays in give arrays out, numbers give floats, tensors give tensors.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from numpy.testing import assert_allclose

import numgrad as ng
from numgrad import elementwise_grad, grad, value_and_grad

rng = np.random.default_rng(3)
X = rng.standard_normal(4)


def logistic_loss(w, inputs, targets, m=np):
    """HIPS autograd's README example, written over the array module `m`."""
    predictions = 0.5 * (m.tanh(inputs @ w / 2.0) + 1.0)
    probabilities = predictions * targets + (1 - predictions) * (1 - targets)
    return -m.sum(m.log(probabilities))


def test_a_hips_autograd_program_runs_with_its_import_line_changed():
    inputs = rng.standard_normal((6, 3))
    targets = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    w = np.array([0.1, -0.2, 0.3])
    loss_grad = grad(logistic_loss)
    for _ in range(3):  # (HIPS's training loop: arrays in, arrays out)
        g = loss_grad(w, inputs, targets)
        assert isinstance(g, np.ndarray) and g.shape == w.shape
        want = autograd.grad(logistic_loss)(w, inputs, targets, anp)
        assert_allclose(g, want, rtol=1e-12)
        w = w - 0.1 * g


def test_value_and_grad_drives_scipy_minimize_with_no_glue():
    minimize = pytest.importorskip("scipy.optimize").minimize

    def rosenbrock(x):
        return ((1 - x[:-1]) ** 2 + 100 * (x[1:] - x[:-1] ** 2) ** 2).sum()

    result = minimize(value_and_grad(rosenbrock), np.zeros(3), jac=True, method="BFGS")
    assert result.success
    assert_allclose(result.x, np.ones(3), atol=1e-5)
    value, gradient = value_and_grad(rosenbrock)(X[:3])
    assert isinstance(value, float) and isinstance(gradient, np.ndarray)
    assert value == pytest.approx(rosenbrock(X[:3]), rel=1e-12)


def test_argnum_selects_the_arguments_by_keyword_or_position():
    def f(a, b, c):
        return (a * b * c).sum()

    a, b, c = X[:2], X[2:4], np.array([2.0, -1.0])
    assert_allclose(grad(f)(a, b, c), b * c, rtol=1e-12)
    assert_allclose(grad(f, argnum=1)(a, b, c), a * c, rtol=1e-12)
    assert_allclose(grad(f, 2)(a, b, c), a * b, rtol=1e-12)  # (HIPS: grad(fun, argnum))
    assert_allclose(grad(f, -1)(a, b, c), a * b, rtol=1e-12)
    ga, gc = grad(f, (0, 2))(a, b, c)
    assert_allclose(ga, b * c, rtol=1e-12)
    assert_allclose(gc, a * b, rtol=1e-12)
    with pytest.raises(ValueError, match="argnum 3 is out of range"):
        grad(f, 3)(a, b, c)


def test_keyword_arguments_pass_through_undifferentiated():
    def f(x, scale=1.0):
        return (scale * x ** 2).sum()

    assert_allclose(grad(f)(X, scale=3.0), 6.0 * X, rtol=1e-12)


def test_transforms_nest_to_any_order():
    def f(x):
        return x ** 4

    assert grad(f)(2.0) == pytest.approx(32.0, rel=1e-12)
    assert grad(grad(f))(2.0) == pytest.approx(48.0, rel=1e-12)
    assert grad(grad(grad(f)))(2.0) == pytest.approx(48.0, rel=1e-12)  # 24 x
    want = autograd.grad(autograd.grad(lambda x: anp.sum(anp.sin(x) * x)))(1.3)
    assert grad(grad(lambda x: ng.sin(x) * x))(1.3) == pytest.approx(want, rel=1e-12)


def test_elementwise_grad_is_the_derivative_at_each_element():
    got = elementwise_grad(ng.tanh)(X)
    assert_allclose(got, autograd.elementwise_grad(anp.tanh)(X), rtol=1e-12)
    hessian_diagonal = elementwise_grad(elementwise_grad(lambda x: x ** 3))(X)
    assert_allclose(hessian_diagonal, 6.0 * X, rtol=1e-12)


def test_tensors_in_give_tensors_out_with_no_history_of_their_own():
    x = ng.tensor(X)
    g = grad(lambda t: (t * t).sum())(x)
    assert isinstance(g, ng.Tensor) and not g.requires_grad
    assert_allclose(g.numpy(), 2.0 * X, rtol=1e-12)
    value, g = value_and_grad(lambda t: (t * t).sum())(x)
    assert isinstance(value, ng.Tensor) and not value.requires_grad
    assert not x.requires_grad  # (the argument itself is left alone)


def test_a_tensor_that_requires_grad_keeps_its_history():
    """Inside a graph being recorded, the gradient is recorded too: differentiable again."""
    x = ng.tensor(1.5, requires_grad=True)
    g = grad(lambda t: t ** 3)(x)  # 3 x^2, as a function of x
    assert g.requires_grad
    (h,) = ng.grad(g, x)
    assert h.item() == pytest.approx(9.0, rel=1e-12)


def test_numbers_and_lists_are_taken_as_arrays():
    assert grad(lambda x: x * x)(3.0) == 6.0
    assert isinstance(grad(lambda x: x * x)(3), float)  # (an integer: float64)
    assert_allclose(grad(lambda x: (x * x).sum())([1.0, 2.0]), [2.0, 4.0], rtol=1e-12)
    assert grad(lambda x: 3.0)(1.0) == 0.0  # (independent of its argument: zero)


def test_a_result_that_is_not_a_scalar_is_refused_naming_its_shape():
    with pytest.raises(TypeError, match=r"shape \(4,\).*elementwise_grad"):
        grad(lambda x: x * 2)(X)
    with pytest.raises(TypeError, match="expects a function"):
        ng.value_and_grad(3.0)


def test_the_tensor_form_is_unchanged_and_needs_its_inputs():
    x = ng.tensor(3.0, requires_grad=True)
    (g,) = ng.grad(x * x, x)
    assert g.item() == 6.0 and x.grad is None
    with pytest.raises(TypeError, match="needs the inputs"):
        ng.grad(x * x)
    assert ng.autograd.grad is ng.grad


def test_jacobian_and_hessian_of_a_function_at_one_argument():
    def f(x, scale):
        return ng.tanh(x) * x.sum() * scale

    def f_autograd(x, scale):
        return anp.tanh(x) * anp.sum(x) * scale

    got = ng.jacobian(f)(X, 2.0)
    assert isinstance(got, np.ndarray) and got.shape == (4, 4)
    assert_allclose(got, autograd.jacobian(f_autograd)(X, 2.0), rtol=1e-12, atol=1e-15)
    assert_allclose(ng.jacobian(f, 1)(X, 2.0), f(ng.tensor(X), 1.0).numpy(), rtol=1e-12)

    def g(x):
        return (ng.sin(x) * x).sum()

    want = autograd.hessian(lambda x: anp.sum(anp.sin(x) * x))(X)
    assert_allclose(ng.hessian(g)(X), want, rtol=1e-12, atol=1e-15)
    assert isinstance(ng.hessian(g)(ng.tensor(X)), ng.Tensor)
    # nested: the gradient of the Hessian's sum, as autograd gives it
    nested = autograd.grad(lambda x: anp.sum(autograd.hessian(
        lambda y: anp.sum(anp.sin(y) * y))(x)))(X)
    assert_allclose(grad(lambda x: ng.hessian(g)(x).sum())(X), nested, rtol=1e-12)
