"""Tests for custom operations (ng.Function) and ng.gradcheck / ng.gradgradcheck.

SPEC section 3: subclass ``ng.Function`` with static ``forward(ctx, *args)`` and
``backward(ctx, *grads)``; ``ctx.save_for_backward``, ``ctx.saved_tensors``,
``ctx.needs_input_grad``; ``MyFn.apply(...)``. A backward written with numgrad ops
is differentiable again. ``gradcheck``/``gradgradcheck`` return True or raise with
the worst mismatch. CPU target only; float64 throughout.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

import numgrad as ng


def leaf(data, dtype=np.float64):
    return ng.tensor(np.asarray(data, dtype=dtype), requires_grad=True)


def const(data, dtype=np.float64):
    return ng.tensor(np.asarray(data, dtype=dtype))


def val(t):
    return np.asarray(t.numpy())


XS = np.array([0.5, -1.0, 1.5])

# what the ctx of Mul and Scale showed during their last backward
MUL_SEEN = {}
SCALE_SEEN = {}


# ----------------------------------------------------------------------------
# custom Functions used below
# ----------------------------------------------------------------------------


class Exp(ng.Function):
    """exp, saving its output; backward written with numgrad ops."""

    @staticmethod
    def forward(ctx, x):
        y = ng.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class BadExp(ng.Function):
    """exp with a deliberately wrong backward (twice the true gradient)."""

    @staticmethod
    def forward(ctx, x):
        y = ng.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y * 2.0


class Cube(ng.Function):
    """x**3, saving its input; backward written with numgrad ops."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3.0 * x**2


class BadDoubleCube(ng.Function):
    """x**3 whose first derivative is right (3x^2) but whose backward's own
    derivative is wrong: 3 * x * detach(x) differentiates to 3x, not 6x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3.0 * x * x.detach()


class Mul(ng.Function):
    """x * w; records what ctx offers during backward."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad):
        MUL_SEEN["needs_input_grad"] = tuple(ctx.needs_input_grad)
        MUL_SEEN["saved_tensors"] = ctx.saved_tensors
        x, w = ctx.saved_tensors
        gx = grad * w if ctx.needs_input_grad[0] else None
        gw = grad * x if ctx.needs_input_grad[1] else None
        return gx, gw


class Scale(ng.Function):
    """x * k for a Python float k, kept as a ctx attribute."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        SCALE_SEEN["needs_input_grad"] = tuple(ctx.needs_input_grad)
        return grad * ctx.k, None


# ----------------------------------------------------------------------------
# Function: forward, backward, ctx
# ----------------------------------------------------------------------------


def test_function_apply_value_and_history():
    x = leaf(XS)
    y = Exp.apply(x)
    assert_allclose(val(y), np.exp(XS), rtol=1e-12)
    assert y.requires_grad
    assert y.grad_fn is not None
    assert not y.is_leaf


def test_function_backward_fills_leaf_grad():
    x = leaf(XS)
    Exp.apply(x).sum().backward()
    assert_allclose(val(x.grad), np.exp(XS), rtol=1e-12)


def test_function_saved_tensors_is_a_tuple_of_the_saved_values():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    Mul.apply(x, w).sum().backward()
    saved = MUL_SEEN["saved_tensors"]
    assert isinstance(saved, tuple) and len(saved) == 2
    assert_allclose(val(saved[0]), [1.0, 2.0], rtol=0)
    assert_allclose(val(saved[1]), [3.0, 4.0], rtol=0)


def test_function_needs_input_grad_and_none_gradient():
    x, w = leaf([1.0, 2.0]), const([3.0, 4.0])
    Mul.apply(x, w).sum().backward()
    assert MUL_SEEN["needs_input_grad"] == (True, False)
    assert_allclose(val(x.grad), [3.0, 4.0], rtol=1e-12)
    assert w.grad is None


def test_function_with_non_tensor_argument():
    x = leaf([1.0, 2.0])
    Scale.apply(x, 3.0).sum().backward()
    assert SCALE_SEEN["needs_input_grad"] == (True, False)
    assert_allclose(val(x.grad), [3.0, 3.0], rtol=1e-12)


def test_function_takes_numpy_arrays_as_tensors():
    """``MyFn.apply(k + 1)`` with an array ``k``: the array reaches forward as a tensor (a
    constant), so forward may save it."""
    x = leaf([1.0, 2.0])
    Mul.apply(x, np.array([3.0, 4.0])).sum().backward()
    assert MUL_SEEN["needs_input_grad"] == (True, False)
    assert_allclose(val(x.grad), [3.0, 4.0], rtol=1e-12)
    assert_allclose(val(Mul.apply(np.array([1.0, 2.0]), np.array([3.0, 4.0]))), [3.0, 8.0])


def test_saving_what_is_not_a_tensor_is_refused_naming_it():
    class SavesAnArray(ng.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, np.ones(2))
            return x * 2.0

    with pytest.raises(TypeError, match="argument 1 is a ndarray"):
        SavesAnArray.apply(leaf([1.0, 2.0]))


def test_function_without_grad_inputs_has_no_history():
    y = Exp.apply(const(XS))
    assert not y.requires_grad
    assert y.grad_fn is None
    assert_allclose(val(y), np.exp(XS), rtol=1e-12)


def test_function_under_no_grad_has_no_history():
    x = leaf(XS)
    with ng.no_grad():
        y = Exp.apply(x)
    assert not y.requires_grad
    assert y.grad_fn is None


def test_function_composes_with_builtin_ops_chain_rule():
    x, w = leaf(XS), leaf([2.0, 3.0, -1.0])
    (Exp.apply(x * 2.0) * w).sum().backward()
    expected = 2.0 * np.exp(2.0 * XS) * np.array([2.0, 3.0, -1.0])
    assert_allclose(val(x.grad), expected, rtol=1e-12)
    assert_allclose(val(w.grad), np.exp(2.0 * XS), rtol=1e-12)


def test_function_second_backward_through_freed_graph_is_runtime_error():
    x = leaf([0.5])
    y = Exp.apply(x)
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_function_retain_graph_allows_second_backward():
    x = leaf([0.5])
    y = Exp.apply(x)
    y.backward(retain_graph=True)
    y.backward()
    assert_allclose(val(x.grad), 2.0 * np.exp([0.5]), rtol=1e-12)


def test_function_backward_is_differentiable_again_saved_input():
    x = leaf(XS)
    (g1,) = ng.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert g1.grad_fn is not None
    (g2,) = ng.grad(g1.sum(), x)
    assert_allclose(val(g1), 3.0 * XS**2, rtol=1e-12)
    assert_allclose(val(g2), 6.0 * XS, rtol=1e-12)


def test_function_backward_is_differentiable_again_saved_output():
    x = leaf(XS)
    (g1,) = ng.grad(Exp.apply(x).sum(), x, create_graph=True)
    (g2,) = ng.grad(g1.sum(), x)
    assert_allclose(val(g1), np.exp(XS), rtol=1e-12)
    assert_allclose(val(g2), np.exp(XS), rtol=1e-12)


def test_function_backward_without_create_graph_has_no_history():
    x = leaf(XS)
    (g,) = ng.grad(Cube.apply(x).sum(), x)
    assert not g.requires_grad
    assert g.grad_fn is None


# ----------------------------------------------------------------------------
# gradcheck / gradgradcheck
# ----------------------------------------------------------------------------


def test_gradcheck_true_on_builtin_composite():
    x, w = leaf(XS), leaf([0.3, -0.7, 1.2])
    assert ng.gradcheck(lambda a, b: (ng.tanh(a) * b).sum(), (x, w)) is True


def test_gradcheck_true_on_vector_output():
    x = leaf(XS)
    assert ng.gradcheck(lambda a: ng.sin(a) * a, (x,)) is True


def test_gradcheck_accepts_explicit_tolerances():
    x = leaf(XS)
    result = ng.gradcheck(lambda a: ng.sin(a) * a, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)
    assert result is True


def test_gradcheck_true_on_custom_function():
    x = leaf(XS)
    assert ng.gradcheck(Exp.apply, (x,)) is True


def test_gradcheck_does_not_touch_grad():
    x = leaf(XS)
    ng.gradcheck(Exp.apply, (x,))
    assert x.grad is None


def test_gradcheck_raises_on_wrong_backward():
    x = leaf(XS)
    with pytest.raises((RuntimeError, ValueError, AssertionError)) as excinfo:
        ng.gradcheck(BadExp.apply, (x,))
    assert "mismatch" in str(excinfo.value).lower(), str(excinfo.value)


def test_gradgradcheck_true_on_builtin_composite():
    x = leaf(XS)
    assert ng.gradgradcheck(lambda a: ng.sin(a) * a, (x,)) is True


def test_gradgradcheck_true_on_custom_function_with_numgrad_backward():
    x = leaf(XS)
    assert ng.gradgradcheck(Cube.apply, (x,)) is True


def test_gradcheck_passes_but_gradgradcheck_raises_on_wrong_double_backward():
    x = leaf(XS)
    assert ng.gradcheck(BadDoubleCube.apply, (x,)) is True
    with pytest.raises((RuntimeError, ValueError, AssertionError)) as excinfo:
        ng.gradgradcheck(BadDoubleCube.apply, (x,))
    assert "mismatch" in str(excinfo.value).lower(), str(excinfo.value)
