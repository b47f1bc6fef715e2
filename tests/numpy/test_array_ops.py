"""SPEC section 2 beyond plain elementwise math, on the CPU target.

Reductions, shape/movement ops, indexing, linear algebra, where and clip, and
gradients through broadcasting. Values are compared with NumPy; gradients with
central finite differences (``ng.gradcheck``) and, for a representative subset,
with the HIPS ``autograd`` package computing the same function.

Tolerances: movement ops and single correctly rounded operations are compared
with rtol=1e-12 (or exactly); anything that sums (reductions, matmul, gradients
summed over broadcast axes) may add in a different order than NumPy, so it also
gets a small absolute tolerance (atol ~1e-13 for O(1) data and at most 64 terms).
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import sampled
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numgrad as ng


def anp_logsumexp(a, axis=None, keepdims=False):
    """log-sum-exp in autograd.numpy (autograd.scipy would need SciPy)."""
    shift = anp.max(a, axis=axis, keepdims=True)
    out = anp.log(anp.sum(anp.exp(a - shift), axis=axis, keepdims=True)) + shift
    return out if keepdims else anp.squeeze(out, axis=axis)

# Summation order may differ from NumPy's pairwise sum: |error| <= n*eps*sum|x|,
# n <= 64, |x| ~ 1 -> a few 1e-14 at worst.
SUM_RTOL = 1e-12
SUM_ATOL = 1e-13
# Gradients of ops that sum (matmul, einsum, reductions, broadcast sum-back)
# are compared with autograd, which sums in its own order.
GRAD_RTOL = 1e-10
GRAD_ATOL = 1e-12


def rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t(a, requires_grad=False):
    return ng.tensor(np.asarray(a), requires_grad=requires_grad)


def check_grads_vs_autograd(ng_fn, anp_fn, arrays, *, rtol=GRAD_RTOL, atol=GRAD_ATOL, seed=123):
    """grad of sum(f(*xs) * w) for a fixed random w, numgrad vs autograd.

    Also checks the forward values against autograd.numpy (i.e. NumPy).
    """
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    tensors = [ng.tensor(a, requires_grad=True) for a in arrays]
    out = ng_fn(*tensors)
    expected_out = np.asarray(anp_fn(*arrays))
    assert tuple(out.shape) == expected_out.shape
    np.testing.assert_allclose(out.detach().numpy(), expected_out, rtol=SUM_RTOL, atol=SUM_ATOL)
    w = np.asarray(np.random.default_rng(seed).standard_normal(expected_out.shape))
    (out * ng.tensor(w)).sum().backward()
    for i, (x, a) in enumerate(zip(tensors, arrays)):
        expected = autograd.grad(lambda *args: anp.sum(anp_fn(*args) * w), i)(*arrays)
        assert x.grad is not None, f"input {i} got no gradient"
        assert tuple(x.grad.shape) == a.shape
        assert x.grad.dtype == np.dtype("float64")
        np.testing.assert_allclose(x.grad.numpy(), expected, rtol=rtol, atol=atol)


def check_movement_grad(ng_fn, np_fn, a, seed=321):
    """Gradient of a pure data-movement op, exactly.

    The reference VJP scatters-adds w back through the same movement applied to
    an array of flat indices, so it needs no autodiff at all.
    """
    a = np.asarray(a, dtype=np.float64)
    x = ng.tensor(a, requires_grad=True)
    out = ng_fn(x)
    moved = np.asarray(np_fn(np.arange(a.size).reshape(a.shape)))
    assert tuple(out.shape) == moved.shape
    w = np.asarray(np.random.default_rng(seed).standard_normal(moved.shape))
    (out * ng.tensor(w)).sum().backward()
    expected = np.zeros(a.size)
    np.add.at(expected, moved.ravel(), w.ravel())
    assert tuple(x.grad.shape) == a.shape
    # each entry is a sum of at most a few w values: exact up to addition order
    np.testing.assert_allclose(x.grad.numpy(), expected.reshape(a.shape), rtol=1e-15, atol=1e-15)


def gradcheck(fn, *arrays):
    inputs = tuple(ng.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays)
    assert ng.gradcheck(fn, inputs) is True


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def np_logsumexp(x, axis=None, keepdims=False):
    m = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out


NP_REDUCTIONS = {
    "sum": np.sum,
    "mean": np.mean,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "var": np.var,
    "std": np.std,
    "logsumexp": np_logsumexp,
}

ANP_REDUCTIONS = {
    "sum": anp.sum,
    "mean": anp.mean,
    "prod": anp.prod,
    "max": anp.max,
    "min": anp.min,
    "var": anp.var,
    "std": anp.std,
    "logsumexp": anp_logsumexp,
}


@st.composite
def array_axis_keepdims(draw, min_dims=0):
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=4))
    ndim = len(shape)
    if ndim == 0:
        axis = None
    else:
        axis = draw(
            st.one_of(
                st.none(),
                st.integers(-ndim, ndim - 1),
                hnp.valid_tuple_axes(ndim, min_size=1),
            )
        )
    keepdims = draw(st.booleans())
    seed = draw(st.integers(0, 2**32 - 1))
    return rand(shape, seed), axis, keepdims


@pytest.mark.parametrize("name", sampled(list(NP_REDUCTIONS), 2))
@given(data=array_axis_keepdims())
def test_reduction_values_match_numpy(name, data):
    a, axis, keepdims = data
    expected = np.asarray(NP_REDUCTIONS[name](a, axis=axis, keepdims=keepdims))
    got = getattr(ng, name)(t(a), axis=axis, keepdims=keepdims)
    assert tuple(got.shape) == expected.shape
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got.numpy(), expected, rtol=SUM_RTOL, atol=SUM_ATOL)
    if name != "logsumexp":  # NumPy has no logsumexp method
        meth = getattr(t(a), name)(axis=axis, keepdims=keepdims)
        np.testing.assert_allclose(meth.numpy(), expected, rtol=SUM_RTOL, atol=SUM_ATOL)


@given(name=st.sampled_from(list(NP_REDUCTIONS)), data=array_axis_keepdims(min_dims=1))
def test_reduction_grads_match_autograd(name, data):
    a, axis, keepdims = data
    if name == "std":
        # std over one element is 0: sqrt's kink, where PyTorch's derivative is nan
        # and autograd's is 0. SPEC follows PyTorch at kinks; compare elsewhere only.
        axes = range(a.ndim) if axis is None else np.atleast_1d(axis)
        assume(np.prod([a.shape[k] for k in axes]) > 1)
    check_grads_vs_autograd(
        lambda x: getattr(ng, name)(x, axis=axis, keepdims=keepdims),
        lambda x: ANP_REDUCTIONS[name](x, axis=axis, keepdims=keepdims),
        [a],
    )


@pytest.mark.parametrize(
    "name, axis, keepdims",
    sampled([
        ("sum", (0, 2), False),
        ("mean", -1, True),
        ("prod", 1, False),
        ("max", 0, False),
        ("min", None, False),
        ("var", (1,), False),
        ("std", -2, True),
        ("logsumexp", 1, False),
    ], 2),
)
def test_reduction_gradcheck(name, axis, keepdims):
    gradcheck(lambda x: getattr(ng, name)(x, axis=axis, keepdims=keepdims), rand((2, 3, 4), 7))


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std_ddof(name):
    a = rand((3, 5), 3)
    x = t(a)
    # default ddof=0 as NumPy (PyTorch differs)
    np.testing.assert_allclose(
        getattr(ng, name)(x, axis=1).numpy(),
        getattr(np, name)(a, axis=1),
        rtol=SUM_RTOL,
        atol=SUM_ATOL,
    )
    np.testing.assert_allclose(
        getattr(x, name)().numpy(), getattr(np, name)(a), rtol=SUM_RTOL, atol=SUM_ATOL
    )
    for axis in (None, 0, (0, 1)):
        np.testing.assert_allclose(
            getattr(ng, name)(x, axis=axis, ddof=1).numpy(),
            getattr(np, name)(a, axis=axis, ddof=1),
            rtol=SUM_RTOL,
            atol=SUM_ATOL,
        )
    gradcheck(lambda v: getattr(ng, name)(v, axis=0, ddof=1), a)
    check_grads_vs_autograd(
        lambda v: getattr(ng, name)(v, axis=1, ddof=1),
        lambda v: getattr(anp, name)(v, axis=1, ddof=1),
        [a],
    )


@pytest.mark.parametrize("name", ["sum", "mean", "max", "var", "logsumexp"])
def test_float32_reductions_and_grads_stay_float32(name):
    a = rand((3, 4), 13).astype(np.float32)
    x = ng.tensor(a, requires_grad=True)
    out = getattr(ng, name)(x, axis=1)
    assert out.dtype == np.dtype("float32")
    ref = NP_REDUCTIONS[name](a.astype(np.float64), axis=1)
    # float32 arithmetic against a float64 reference: float32 tolerance
    np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert x.grad.dtype == np.dtype("float32")
    expected = autograd.grad(lambda v: anp.sum(ANP_REDUCTIONS[name](v, axis=1)))(
        a.astype(np.float64)
    )
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_prod_gradient_with_a_zero():
    # PyTorch's prod handles zeros exactly (no division by x).
    x = t([2.0, 0.0, 3.0], requires_grad=True)
    ng.prod(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 6.0, 0.0], strict=False)
    gradcheck(lambda v: ng.prod(v, axis=1), [[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]])


@pytest.mark.parametrize(
    "name, data, axis, expected",
    [
        ("max", [1.0, 3.0, 3.0], None, [0.0, 0.5, 0.5]),
        ("min", [2.0, -1.0, 5.0, -1.0], None, [0.0, 0.5, 0.0, 0.5]),
        ("max", [[1.0, 1.0], [2.0, 0.0], [4.0, 4.0]], 1, [[0.5, 0.5], [1.0, 0.0], [0.5, 0.5]]),
        ("min", [[1.0, 1.0, 1.0], [2.0, 0.0, 0.0]], -1, [[1 / 3, 1 / 3, 1 / 3], [0.0, 0.5, 0.5]]),
        ("max", [[3.0, 1.0], [3.0, 3.0]], None, [[1 / 3, 0.0], [1 / 3, 1 / 3]]),
    ],
)
def test_max_min_ties_share_gradient_evenly(name, data, axis, expected):
    x = t(data, requires_grad=True)
    getattr(ng, name)(x, axis=axis).sum().backward()
    # 1/count is one correctly rounded division
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-15, atol=0)


def test_logsumexp_large_values_are_stable():
    a = np.array([[1000.0, 1000.0, 990.0], [-1000.0, -1000.0, -1010.0]])
    x = t(a, requires_grad=True)
    out = ng.logsumexp(x, axis=1)
    expected = np_logsumexp(a, axis=1)
    assert np.all(np.isfinite(out.detach().numpy()))
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-14, atol=0)
    out.sum().backward()
    softmax = np.exp(a - expected[:, None])
    np.testing.assert_allclose(x.grad.numpy(), softmax, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "axis, keepdims", [(None, False), (0, False), (-1, False), (1, True), (None, True)]
)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_match_numpy(name, axis, keepdims):
    a = rand((3, 4, 2), 11)
    expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    got = getattr(ng, name)(t(a), axis=axis, keepdims=keepdims)
    assert tuple(got.shape) == np.shape(expected)
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got.numpy(), expected, strict=False)
    meth = getattr(t(a), name)(axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(meth.numpy(), expected, strict=False)


def test_argmax_argmin_ties_go_to_first():
    a = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0], [5.0, 5.0, 5.0]])
    x = t(a)
    np.testing.assert_array_equal(ng.argmax(x, axis=1).numpy(), [1, 0, 0], strict=False)
    np.testing.assert_array_equal(ng.argmin(x, axis=1).numpy(), [0, 2, 0], strict=False)
    np.testing.assert_array_equal(ng.argmax(x, axis=0).numpy(), [2, 2, 2], strict=False)
    np.testing.assert_array_equal(ng.argmin(x, axis=0).numpy(), [0, 1, 1], strict=False)
    assert ng.argmax(x).item() == int(np.argmax(a)) == 6
    assert ng.argmin(x).item() == int(np.argmin(a)) == 5
    i = t(np.array([4, 7, 7, 1], dtype=np.int32))
    assert ng.argmax(i).item() == 1


def test_argmax_has_no_gradient():
    x = t(rand((3, 4)), requires_grad=True)
    idx = ng.argmax(x, axis=1)
    assert idx.requires_grad is False
    assert idx.grad_fn is None
    assert idx.dtype.kind == "i"


@pytest.mark.parametrize(
    "name, dtype, axis",
    [
        ("sum", "int32", None),
        ("sum", "int32", 0),
        ("sum", "bool", None),
        ("sum", "bool", 1),
        ("sum", "int64", 1),
        ("prod", "int32", 1),
        ("max", "int32", None),
        ("min", "int32", 0),
        ("mean", "int32", 1),
        ("mean", "bool", None),
        ("sum", "float32", 0),
        ("mean", "float32", None),
        ("max", "bool", 0),
    ],
)
def test_reduction_dtypes_match_numpy(name, dtype, axis):
    a = (np.arange(12).reshape(3, 4) % 5 - 1).astype(dtype)
    expected = getattr(np, name)(a, axis=axis)
    got = getattr(ng, name)(t(a), axis=axis)
    assert got.dtype == np.asarray(expected).dtype, (
        f"{got.dtype} != NumPy's {np.asarray(expected).dtype}"
    )
    if np.asarray(expected).dtype.kind == "f":
        # float32 sums of small ints are exact; float means are one division
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(got.numpy(), expected, strict=False)


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (-1, True), ((0, 2), False)])
def test_all_any_match_numpy(name, axis, keepdims):
    b = np.array(
        [[[True, True], [False, True], [True, True]], [[False, False], [True, True], [False, True]]]
    )
    f = np.where(b, 2.5, 0.0)
    for a in (b, f):
        expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
        got = getattr(ng, name)(t(a), axis=axis, keepdims=keepdims)
        assert got.dtype == np.dtype(bool)
        np.testing.assert_array_equal(got.numpy(), expected, strict=False)
        assert tuple(got.shape) == np.shape(expected)
    meth = getattr(t(b), name)(axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(
        meth.numpy(), getattr(b, name)(axis=axis, keepdims=keepdims), strict=False
    )


@pytest.mark.parametrize(
    "call, axis_text",
    [
        (lambda x: ng.sum(x, axis=5), "5"),
        (lambda x: ng.mean(x, axis=-4), "-4"),
        (lambda x: ng.max(x, axis=(0, 7)), "7"),
        (lambda x: ng.argmax(x, axis=-5), "-5"),
        (lambda x: x.var(axis=6), "6"),
    ],
    ids=["sum-5", "mean--4", "max-(0,7)", "argmax--5", "var-6"],
)
def test_bad_axis_raises_value_error_naming_axis_and_ndim(call, axis_text):
    x = t(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError) as info:
        call(x)
    msg = str(info.value)
    assert axis_text in msg, msg
    assert "3" in msg, msg  # the ndim


def test_duplicate_axis_raises_value_error():
    with pytest.raises(ValueError):
        ng.sum(t(np.zeros((2, 3))), axis=(0, -2))


# ---------------------------------------------------------------------------
# Shape ops
# ---------------------------------------------------------------------------

A234 = np.arange(24.0).reshape(2, 3, 4) / 7.0


@pytest.mark.parametrize(
    "ng_fn, np_fn",
    [
        (lambda x: x.reshape(4, -1), lambda a: a.reshape(4, -1)),
        (lambda x: x.reshape((-1,)), lambda a: a.reshape((-1,))),
        (lambda x: ng.reshape(x, (3, 2, 4)), lambda a: np.reshape(a, (3, 2, 4))),
        (lambda x: x.reshape(2, -1, 2, 1), lambda a: a.reshape(2, -1, 2, 1)),
        (lambda x: x.transpose(), lambda a: a.transpose()),
        (lambda x: x.transpose(1, 0, 2), lambda a: a.transpose(1, 0, 2)),
        (lambda x: ng.transpose(x, (2, 0, 1)), lambda a: np.transpose(a, (2, 0, 1))),
        (lambda x: x.transpose((0, -1, 1)), lambda a: a.transpose((0, -1, 1))),
        (lambda x: x.swapaxes(0, 2), lambda a: a.swapaxes(0, 2)),
        (lambda x: ng.swapaxes(x, -1, 1), lambda a: np.swapaxes(a, -1, 1)),
        (lambda x: x.T, lambda a: a.T),
        (lambda x: ng.expand_dims(x, 0), lambda a: np.expand_dims(a, 0)),
        (lambda x: ng.expand_dims(x, -1), lambda a: np.expand_dims(a, -1)),
        (lambda x: ng.expand_dims(x, 2), lambda a: np.expand_dims(a, 2)),
        (lambda x: x.ravel(), lambda a: a.ravel()),
        (lambda x: x.transpose(2, 0, 1).flatten(), lambda a: a.transpose(2, 0, 1).flatten()),
        (lambda x: ng.ravel(x.T), lambda a: np.ravel(a.T)),
    ],
    ids=[
        "reshape-4,-1",
        "reshape-(-1,)",
        "reshape-fn",
        "reshape-4d",
        "transpose-none",
        "transpose-102",
        "transpose-fn-201",
        "transpose-neg",
        "swapaxes-02",
        "swapaxes-fn-neg",
        "T",
        "expand_dims-0",
        "expand_dims--1",
        "expand_dims-2",
        "ravel",
        "flatten-of-transpose",
        "ravel-fn-of-T",
    ],
)
def test_shape_ops_values_and_grads(ng_fn, np_fn):
    expected = np_fn(A234)
    got = ng_fn(t(A234))
    assert tuple(got.shape) == expected.shape
    # pure data movement: exact
    np.testing.assert_array_equal(got.numpy(), expected, strict=False)
    check_movement_grad(ng_fn, np_fn, A234)


def test_shape_ops_gradcheck():
    gradcheck(lambda x: x.transpose(2, 0, 1).reshape(4, 6)[1:, ::2] * 1.5, rand((2, 3, 4)))


@pytest.mark.parametrize("shape", [(5, 5), (25,), (2, -1, 5), (-1, -1)])
def test_reshape_wrong_size_raises(shape):
    x = t(A234)
    with pytest.raises(ValueError):
        x.reshape(shape)


def test_broadcast_to_values_and_grad():
    a = rand((3, 1), 1)
    x = t(a, requires_grad=True)
    out = ng.broadcast_to(x, (2, 3, 4))
    np.testing.assert_array_equal(out.detach().numpy(), np.broadcast_to(a, (2, 3, 4)), strict=False)
    w = rand((2, 3, 4), 2)
    (out * t(w)).sum().backward()
    np.testing.assert_allclose(
        x.grad.numpy(), w.sum(axis=(0, 2))[:, None], rtol=SUM_RTOL, atol=SUM_ATOL
    )
    gradcheck(lambda v: ng.broadcast_to(v, (2, 3, 4)), a)


def test_broadcast_to_incompatible_raises_value_error():
    with pytest.raises(ValueError) as info:
        ng.broadcast_to(t(np.zeros((2, 3))), (4, 3))
    msg = str(info.value)
    assert "(2, 3)" in msg and "(4, 3)" in msg, msg


@pytest.mark.parametrize(
    "axis, expected_shape", [(None, (3, 2)), (0, (3, 1, 2)), (-2, (1, 3, 2)), ((0, 2), (3, 2))]
)
def test_squeeze(axis, expected_shape):
    a = rand((1, 3, 1, 2), 4)
    expected = np.squeeze(a, axis=axis)
    assert expected.shape == expected_shape
    got = ng.squeeze(t(a), axis=axis)
    np.testing.assert_array_equal(got.numpy(), expected, strict=False)
    assert tuple(got.shape) == expected_shape
    np.testing.assert_array_equal(t(a).squeeze(axis).numpy(), expected, strict=False)
    check_grads_vs_autograd(
        lambda x: ng.squeeze(x, axis=axis),
        lambda x: anp.squeeze(x, axis=axis),
        [a],
        rtol=1e-12,
        atol=0,
    )


@pytest.mark.parametrize("axis", [1, (0, 1), -1])
def test_squeeze_non_one_axis_raises(axis):
    with pytest.raises(ValueError):
        ng.squeeze(t(np.zeros((1, 3, 2))), axis=axis)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate(axis):
    arrays = [rand((2, 3, 2), 1), rand((2, 3, 2), 2) * 2, rand((2, 3, 2), 3)]
    if axis == 1:
        arrays[1] = rand((2, 1, 2), 5)
    check_grads_vs_autograd(
        lambda *xs: ng.concatenate(xs, axis=axis),
        lambda *xs: anp.concatenate(xs, axis=axis),
        arrays,
        rtol=1e-12,
        atol=0,
    )
    gotlist = ng.concatenate([t(a) for a in arrays], axis=axis)  # a list works too
    np.testing.assert_array_equal(gotlist.numpy(), np.concatenate(arrays, axis=axis), strict=False)


def test_concatenate_mismatch_raises_value_error():
    with pytest.raises(ValueError):
        ng.concatenate([t(np.zeros((2, 3))), t(np.zeros((2, 4)))], axis=0)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack(axis):
    arrays = [rand((3, 2), 1), rand((3, 2), 2)]
    expected = np.stack(arrays, axis=axis)
    got = ng.stack([t(a) for a in arrays], axis=axis)
    assert tuple(got.shape) == expected.shape
    check_grads_vs_autograd(
        lambda *xs: ng.stack(xs, axis=axis),
        lambda *xs: anp.stack(xs, axis=axis),
        arrays,
        rtol=1e-12,
        atol=0,
    )


def test_concatenate_and_stack_take_arrays_beside_tensors_as_numpy_does():
    # (an RNN's input step beside its state: ``concatenate([x_t, h])`` with x_t data)
    a, b = rand((1, 2), 1), rand((1, 3), 2)
    x = t(b, requires_grad=True)
    y = ng.concatenate([a, x], axis=1)
    np.testing.assert_array_equal(y.numpy(), np.concatenate([a, b], axis=1))
    (g,) = ng.grad((y * y).sum(), x)
    np.testing.assert_array_equal(g.numpy(), 2 * b)
    z = ng.stack([a[0, :2], x[0, :2], [1.0, 2.0]])
    np.testing.assert_array_equal(z.numpy(), np.stack([a[0, :2], b[0, :2], [1.0, 2.0]]))
    assert z.device == x.device
    with pytest.raises(TypeError, match="as a sequence"):
        ng.concatenate(5)


def test_stack_mismatch_raises_value_error():
    with pytest.raises(ValueError):
        ng.stack([t(np.zeros((2, 3))), t(np.zeros((3, 2)))])


@pytest.mark.parametrize(
    "sections, axis",
    [(3, 0), (2, 1), ([1, 3], 1), ([2], -1), ([0, 2, 2], 0)],
    ids=[
        "3-sections-axis0",
        "2-sections-axis1",
        "indices-1,3",
        "indices-2-neg-axis",
        "indices-empty-pieces",
    ],
)
def test_split(sections, axis):
    a = rand((6, 4), 8)
    expected = np.split(a, sections, axis=axis)
    x = t(a, requires_grad=True)
    pieces = ng.split(x, sections, axis=axis)
    assert len(pieces) == len(expected)
    loss = None
    ws = []
    for k, (p, e) in enumerate(zip(pieces, expected)):
        assert tuple(p.shape) == e.shape
        np.testing.assert_array_equal(p.detach().numpy(), e, strict=False)
        w = rand(e.shape, 100 + k)
        ws.append(w)
        term = (p * t(w)).sum()
        loss = term if loss is None else loss + term
    loss.backward()
    expected_grad = np.concatenate(ws, axis=axis)
    np.testing.assert_array_equal(x.grad.numpy(), expected_grad, strict=False)


def test_split_uneven_raises_value_error():
    with pytest.raises(ValueError):
        ng.split(t(np.zeros((5, 2))), 2, axis=0)
    with pytest.raises(ValueError):
        ng.split(t(np.zeros((4, 3))), 2, axis=1)


def test_split_gradcheck():
    gradcheck(lambda x: ng.split(x, [1], axis=1)[1] * ng.split(x, [1], axis=1)[0], rand((3, 3)))


# ---------------------------------------------------------------------------
# Indexing
# ---------------------------------------------------------------------------

BASIC_INDICES = [
    pytest.param(1, id="int"),
    pytest.param(-1, id="neg-int"),
    pytest.param((1, -2), id="two-ints"),
    pytest.param((0, 1, 2), id="scalar-element"),
    pytest.param(slice(1, None), id="slice"),
    pytest.param((slice(None), slice(None, None, 2)), id="step-2"),
    pytest.param((slice(None), slice(None, None, -1)), id="neg-step"),
    pytest.param((Ellipsis, slice(3, 0, -2)), id="ellipsis-neg-step-2"),
    pytest.param((None, 1), id="none-int"),
    pytest.param((slice(None), None, slice(1, 3), None), id="nones-between"),
    pytest.param((Ellipsis, 1), id="ellipsis-int"),
    pytest.param((1, Ellipsis, None), id="int-ellipsis-none"),
    pytest.param((-1, slice(None, None, -2), slice(-3, None)), id="mixed"),
]


@pytest.mark.parametrize("index", BASIC_INDICES)
def test_getitem_basic(index):
    a = rand((2, 3, 4), 5)
    expected = a[index]
    got = t(a)[index]
    assert tuple(got.shape) == np.shape(expected)
    np.testing.assert_array_equal(got.numpy(), expected, strict=False)
    check_grads_vs_autograd(lambda x: x[index], lambda x: x[index], [a], rtol=1e-12, atol=0)


ADVANCED_INDICES = [
    pytest.param(lambda: [2, 0], id="list"),
    pytest.param(lambda: np.array([3, -1, 0]), id="ndarray-neg"),
    pytest.param(lambda: (slice(None), [0, 2]), id="slice-list"),
    pytest.param(lambda: ([0, 1, 1], [1, 2, 0]), id="two-arrays"),
    pytest.param(lambda: np.array([[0, 1], [3, 3]]), id="2d-index"),
    pytest.param(lambda: (1, np.array([2, 2, 0])), id="int-and-array-repeated"),
]


@pytest.mark.parametrize("make_index", ADVANCED_INDICES)
def test_getitem_integer_arrays(make_index):
    a = rand((4, 3), 6)
    index = make_index()
    expected = a[index]
    got = t(a)[index]
    assert tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected, strict=False)
    # gradients of repeated indices accumulate (exact sums of at most 2 terms)
    check_grads_vs_autograd(lambda x: x[index], lambda x: x[index], [a], rtol=1e-12, atol=1e-15)


def test_getitem_with_integer_tensor_index():
    a = rand((5, 2), 7)
    idx = ng.tensor([4, 0, 4], dtype="int64")
    got = t(a)[idx]
    np.testing.assert_array_equal(got.numpy(), a[[4, 0, 4]], strict=False)
    idx32 = ng.tensor([1, 3], dtype="int32")
    np.testing.assert_array_equal(t(a)[idx32].numpy(), a[[1, 3]], strict=False)


def test_getitem_repeated_indices_accumulate_gradient():
    x = t(np.arange(5.0), requires_grad=True)
    x[[0, 0, 1]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 1.0, 0.0, 0.0, 0.0], strict=False)
    y = t(np.arange(5.0), requires_grad=True)
    (y[ng.tensor([3, 3, 3, 1])] * t([1.0, 2.0, 4.0, 8.0])).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, 8.0, 0.0, 7.0, 0.0], strict=False)


def test_getitem_gradcheck_advanced():
    gradcheck(lambda x: x[[0, 2, 0], 1:] * x[[1, 1, 2], :2], rand((3, 3)))


@pytest.mark.parametrize("mask_kind", ["ng", "numpy"])
def test_getitem_boolean_mask(mask_kind):
    a = rand((3, 4), 9)
    m = a > 0.2
    mask = ng.tensor(m) if mask_kind == "ng" else m
    got = t(a)[mask]
    np.testing.assert_array_equal(got.numpy(), a[m], strict=False)
    x = t(a, requires_grad=True)
    w = rand(a[m].shape, 10)
    (x[mask] * t(w)).sum().backward()
    expected = np.zeros_like(a)
    expected[m] = w
    np.testing.assert_array_equal(x.grad.numpy(), expected, strict=False)


def test_getitem_boolean_mask_from_comparison_and_rows():
    a = rand((4, 3), 12)
    x = t(a)
    np.testing.assert_array_equal(x[x > 0].numpy(), a[a > 0], strict=False)
    rows = np.array([True, False, True, True])
    np.testing.assert_array_equal(x[rows].numpy(), a[rows], strict=False)
    np.testing.assert_array_equal(
        x[:, ng.tensor([False, True, True])].numpy(), a[:, [False, True, True]], strict=False
    )


# ---------------------------------------------------------------------------
# Linear algebra
# ---------------------------------------------------------------------------

MATMUL_SHAPES = [
    ((3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 3)),
    ((1, 3, 4), (2, 4, 2)),
]


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES, ids=[f"{a}@{b}" for a, b in MATMUL_SHAPES])
def test_matmul(sa, sb):
    a, b = rand(sa, 1), rand(sb, 2)
    expected = np.matmul(a, b)
    got = t(a) @ t(b)
    assert tuple(got.shape) == expected.shape
    np.testing.assert_allclose(got.numpy(), expected, rtol=SUM_RTOL, atol=SUM_ATOL)
    np.testing.assert_allclose(
        ng.matmul(t(a), t(b)).numpy(), expected, rtol=SUM_RTOL, atol=SUM_ATOL
    )
    check_grads_vs_autograd(lambda x, y: x @ y, anp.matmul, [a, b])


def test_matmul_gradcheck_batch_broadcast():
    # (small: the CUDA simulator runs a product per perturbed element, 100 s at 64)
    gradcheck(lambda x, y: x @ y, rand((2, 1, 2, 3), 1), rand((3, 3, 2), 2))


def test_matmul_float32_and_int():
    a = rand((3, 4), 1).astype(np.float32)
    b = rand((4, 2), 2).astype(np.float32)
    got = t(a) @ t(b)
    assert got.dtype == np.dtype("float32")
    # float32 accumulation order differs (BLAS vs NumPy): float32 tolerance
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-5, atol=1e-6)
    i = np.arange(6, dtype=np.int64).reshape(2, 3)
    gi = t(i) @ t(i.T)
    assert gi.dtype == (i @ i.T).dtype
    np.testing.assert_array_equal(gi.numpy(), i @ i.T, strict=True)


@pytest.mark.parametrize(
    "sa, sb, shown",
    [
        ((3, 4), (5, 2), ["(3, 4)", "(5, 2)"]),
        ((2, 3, 4), (2, 3, 4), ["(2, 3, 4)"]),
        ((3,), (4,), ["(3,)", "(4,)"]),
    ],
)
def test_matmul_shape_mismatch_raises_value_error(sa, sb, shown):
    with pytest.raises(ValueError) as info:
        t(np.zeros(sa)) @ t(np.zeros(sb))
    msg = str(info.value)
    for s in shown:
        assert s in msg, msg


def test_matmul_batch_mismatch_raises_value_error():
    with pytest.raises(ValueError) as info:
        t(np.zeros((2, 3, 4))) @ t(np.zeros((3, 4, 2)))
    msg = str(info.value)
    # the operand shapes, or at least the batch shapes that do not broadcast
    assert ("(2, 3, 4)" in msg and "(3, 4, 2)" in msg) or ("(2,)" in msg and "(3,)" in msg), msg


DOT_SHAPES = [
    ((4,), (4,)),
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4,)),
    ((2, 3, 4), (5, 4, 6)),
    ((4,), (2, 4, 3)),
]


@pytest.mark.parametrize("sa, sb", DOT_SHAPES, ids=[f"{a}.{b}" for a, b in DOT_SHAPES])
def test_dot_follows_numpy(sa, sb):
    a, b = rand(sa, 3), rand(sb, 4)
    expected = np.dot(a, b)
    got = ng.dot(t(a), t(b))
    assert tuple(got.shape) == np.shape(expected)
    np.testing.assert_allclose(got.numpy(), expected, rtol=SUM_RTOL, atol=SUM_ATOL)
    np.testing.assert_allclose(t(a).dot(t(b)).numpy(), expected, rtol=SUM_RTOL, atol=SUM_ATOL)
    check_grads_vs_autograd(ng.dot, anp.dot, [a, b])


def test_dot_shape_mismatch_raises_value_error():
    with pytest.raises(ValueError):
        ng.dot(t(np.zeros((3, 4))), t(np.zeros((3, 4))))


@pytest.mark.parametrize("sa, sb", [((3,), (4,)), ((2, 2), (3,))])
def test_outer(sa, sb):
    a, b = rand(sa, 5), rand(sb, 6)
    # one multiply per element: exact
    np.testing.assert_array_equal(ng.outer(t(a), t(b)).numpy(), np.outer(a, b), strict=False)
    # autograd's outer VJP mishandles N-D inputs; NumPy's outer flattens them first
    check_grads_vs_autograd(ng.outer, lambda u, v: anp.outer(anp.ravel(u), anp.ravel(v)), [a, b])
    gradcheck(ng.outer, a, b)


EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i->", [(4,), (4,)]),
    ("ij,jk", [(3, 4), (4, 2)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ij->ji", [(3, 4)]),
]


@pytest.mark.parametrize("subscripts, shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum(subscripts, shapes):
    arrays = [rand(s, 20 + k) for k, s in enumerate(shapes)]
    expected = np.einsum(subscripts, *arrays)
    got = ng.einsum(subscripts, *[t(a) for a in arrays])
    assert tuple(got.shape) == np.shape(expected)
    np.testing.assert_allclose(got.numpy(), expected, rtol=SUM_RTOL, atol=SUM_ATOL)
    check_grads_vs_autograd(
        lambda *xs: ng.einsum(subscripts, *xs), lambda *xs: anp.einsum(subscripts, *xs), arrays
    )


def test_einsum_diagonal():
    # autograd cannot differentiate 'ii->i'; the gradient is diag(w).
    a = rand((3, 3), 30)
    x = t(a, requires_grad=True)
    out = ng.einsum("ii->i", x)
    np.testing.assert_array_equal(out.detach().numpy(), np.einsum("ii->i", a), strict=False)
    w = np.array([1.0, -2.0, 0.5])
    (out * t(w)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.diag(w), strict=False)
    gradcheck(lambda v: ng.einsum("ii->i", v), a)


def test_einsum_gradcheck():
    gradcheck(lambda x, y: ng.einsum("bij,bjk->bik", x, y), rand((2, 2, 3), 1), rand((2, 3, 2), 2))


# ---------------------------------------------------------------------------
# where, clip
# ---------------------------------------------------------------------------


def test_where_broadcasting_values_and_grads():
    cond_np = np.array([[True], [False], [True]])  # (3, 1)
    a_np = rand((1, 4), 1)
    b_np = rand((), 2)
    a = t(a_np, requires_grad=True)
    b = t(b_np, requires_grad=True)
    out = ng.where(ng.tensor(cond_np), a, b)
    expected = np.where(cond_np, a_np, b_np)
    assert tuple(out.shape) == (3, 4)
    np.testing.assert_array_equal(out.detach().numpy(), expected, strict=False)
    w = rand((3, 4), 3)
    (out * t(w)).sum().backward()
    cond_full = np.broadcast_to(cond_np, (3, 4))
    np.testing.assert_allclose(
        a.grad.numpy(),
        np.where(cond_full, w, 0.0).sum(axis=0, keepdims=True),
        rtol=SUM_RTOL,
        atol=SUM_ATOL,
    )
    np.testing.assert_allclose(
        b.grad.numpy(), np.where(cond_full, 0.0, w).sum(), rtol=SUM_RTOL, atol=SUM_ATOL
    )
    assert a.grad.shape == (1, 4)
    assert b.grad.shape == ()


def test_where_numpy_condition_python_scalar_and_gradcheck():
    a = rand((3, 4), 4)
    x = t(a)
    got = ng.where(a > 0, x, 0.0)
    np.testing.assert_array_equal(got.numpy(), np.where(a > 0, a, 0.0), strict=False)
    got2 = ng.where(x < 0, -1.0, x * 2.0)
    np.testing.assert_array_equal(got2.numpy(), np.where(a < 0, -1.0, a * 2.0), strict=False)
    gradcheck(lambda u, v: ng.where(u > v, u * v, v), rand((3, 4), 5), rand((4,), 6))


def test_clip_broadcasting_bounds():
    a = rand((3, 4), 7)
    lo = np.array([[-0.5], [0.0], [-2.0]])
    hi = np.array([0.5, 1.0, 0.25, 2.0])
    np.testing.assert_array_equal(
        ng.clip(t(a), t(lo), t(hi)).numpy(), np.clip(a, lo, hi), strict=False
    )
    np.testing.assert_array_equal(
        ng.clip(t(a), -0.3, 0.3).numpy(), np.clip(a, -0.3, 0.3), strict=False
    )
    np.testing.assert_array_equal(t(a).clip(-0.3, 0.3).numpy(), a.clip(-0.3, 0.3), strict=False)
    np.testing.assert_array_equal(
        ng.clip(t(a), None, 0.1).numpy(), np.clip(a, None, 0.1), strict=False
    )
    np.testing.assert_array_equal(
        ng.clip(t(a), -0.1, None).numpy(), np.clip(a, -0.1, None), strict=False
    )
    x = t(a, requires_grad=True)
    w = rand((3, 4), 8)
    (ng.clip(x, t(lo), t(hi)) * t(w)).sum().backward()
    inside = (a >= lo) & (a <= hi)
    np.testing.assert_array_equal(x.grad.numpy(), np.where(inside, w, 0.0), strict=False)


def test_clip_passes_gradient_at_bounds():
    x = t([-1.0, 0.0, 0.5, 1.0, 2.0], requires_grad=True)
    out = ng.clip(x, 0.0, 1.0)
    np.testing.assert_array_equal(out.detach().numpy(), [0.0, 0.0, 0.5, 1.0, 1.0], strict=False)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 1.0, 0.0], strict=False)


# ---------------------------------------------------------------------------
# Broadcasting
# ---------------------------------------------------------------------------


@given(
    shapes=hnp.mutually_broadcastable_shapes(
        num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=4
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_broadcast_binary_grads_sum_back_to_input_shapes(shapes, seed):
    (sa, sb), result_shape = shapes.input_shapes, shapes.result_shape
    a, b = rand(sa, seed), rand(sb, seed + 1)
    got = t(a) * t(b) - t(b)
    assert tuple(got.shape) == result_shape
    # same two roundings as NumPy; the atol allows a contracted multiply-add
    np.testing.assert_allclose(got.numpy(), a * b - b, rtol=1e-12, atol=1e-14)
    check_grads_vs_autograd(lambda x, y: x * y - y, lambda x, y: x * y - y, [a, b])


@pytest.mark.parametrize(
    "op",
    [
        lambda x, y: x + y,
        lambda x, y: x * y,
        lambda x, y: ng.maximum(x, y),
        lambda x, y: ng.where(x > 0, x, y),
    ],
    ids=["add", "mul", "maximum", "where"],
)
def test_incompatible_broadcast_raises_value_error_naming_shapes(op):
    x = t(np.zeros((2, 3)))
    y = t(np.zeros((4,)))
    with pytest.raises(ValueError) as info:
        op(x, y)
    msg = str(info.value)
    assert "(2, 3)" in msg and "(4,)" in msg, msg


def test_incompatible_broadcast_3d_message():
    with pytest.raises(ValueError) as info:
        t(np.zeros((2, 1, 3))) - t(np.zeros((5, 2)))
    msg = str(info.value)
    assert "(2, 1, 3)" in msg and "(5, 2)" in msg, msg
