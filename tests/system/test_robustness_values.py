"""Robustness of values and indexing (SPEC §9): NumPy's index errors, NaN, infinities and
signed zeros through every op as NumPy gives them, and einsum with ellipsis.

Index errors must be NumPy's (type and message, which names the sizes) and must come at
the call, before any kernel runs. Special values are compared with NumPy by value (NaN
positions equal; -0.0 equals 0.0). Gradients are not meaningful at NaN, so they are
checked at finite points near the kinks against the `autograd` package.
"""

import itertools
import os
import warnings

import autograd
import autograd.numpy as anp
import autograd.scipy.special as asp
import numpy as np
import pytest
import scipy.special as sp
from budget import quick, sampled, slow

import numgrad as ng
from numgrad import ops

F = ng.nn.functional
ON_CUDA = os.environ.get("NUMGRAD_TEST_DEVICE") == "cuda"
# Numba's CUDA simulator runs kernels through Python's `math`, which raises where a GPU
# (and NumPy) give NaN or inf (math.sqrt(-1.0), math.floor(inf)): special values are
# checked on the CPU targets and on a real GPU only.
host_only = pytest.mark.skipif(
    ON_CUDA and os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
    reason="the CUDA simulator's math raises on NaN and inf")

# ---- index errors ------------------------------------------------------------------

SHAPE = (3, 4)
T, FL = True, False


def mask(axis, size, mask_size):
    return (f"along axis {axis}; size of axis is {size} but size of corresponding boolean "
            f"axis is {mask_size}")


def oob(index, axis, size):
    return f"index {index} is out of bounds for axis {axis} with size {size}"


BAD_KEYS = {
    # key: the part of NumPy's message that names the sizes
    "mask_1d_short": (np.array([T, FL]), mask(0, 3, 2)),
    "mask_list": ([T, FL], mask(0, 3, 2)),
    "mask_long": (np.array([T, FL, T, T]), mask(0, 3, 4)),
    "mask_2d": (np.ones((3, 3), bool), mask(1, 4, 3)),
    "mask_2d_rows": (np.ones((2, 4), bool), mask(0, 3, 2)),
    "mask_after_slice": ((slice(None), np.array([T, FL])), mask(1, 4, 2)),
    "mask_after_ellipsis": ((Ellipsis, [T, FL, T]), mask(1, 4, 3)),
    "mask_after_none": ((None, np.array([T, FL])), mask(0, 3, 2)),
    "mask_then_int_array": ((np.array([T, FL, T]), np.array([0, 5])), oob(5, 1, 4)),
    "int_array_high": (np.array([0, 3]), oob(3, 0, 3)),
    "int_array_low": (np.array([0, -4]), oob(-4, 0, 3)),
    "int_list": ([0, 7], oob(7, 0, 3)),
    "int_array_axis1": ((slice(None), [1, 4]), oob(4, 1, 4)),
    "int_array_axis1_low": ((0, np.array([-5])), oob(-5, 1, 4)),
    "int_2d_array": (np.array([[0, 1], [2, 3]]), oob(3, 0, 3)),
    "int_high": (3, oob(3, 0, 3)),
    "int_low": (-4, oob(-4, 0, 3)),
    "int_axis1": ((0, 4), oob(4, 1, 4)),
    "int_after_ellipsis": ((Ellipsis, -5), oob(-5, 1, 4)),
    "int_after_none": ((None, 3), oob(3, 0, 3)),
    "float": (1.0, "only integers, slices"),
    "float_in_tuple": ((0, 1.5), "only integers, slices"),
    "float_array": (np.array([0.0, 1.0]), "arrays used as indices must be of integer"),
    "float_list": ([0.0, 1.0], "only integers, slices"),
    "too_many": ((0, 0, 0), "array is 2-dimensional, but 3 were indexed"),
    "too_many_ellipsis": ((0, Ellipsis, 0, 0), "array is 2-dimensional, but 3 were indexed"),
    "too_many_mask": ((0, np.ones((4, 1), bool)), "array is 2-dimensional, but 3 were indexed"),
    "two_ellipses": ((Ellipsis, Ellipsis), "an index can only have a single ellipsis"),
}
TENSOR_KEYS = {
    # a function making the key (tensors are made in the test), the message's part
    "bool_tensor": (lambda: ng.tensor([T, FL]), mask(0, 3, 2)),
    "bool_tensor_2d": (lambda: ng.tensor(np.ones((3, 5), bool)), mask(1, 4, 5)),
    "bool_tensor_axis1": (lambda: (slice(None), ng.tensor([T, FL, T])), mask(1, 4, 3)),
    "int_tensor": (lambda: ng.tensor([0, 3]), oob(3, 0, 3)),
    "int_tensor_low": (lambda: ng.tensor([-4]), oob(-4, 0, 3)),
    "int_tensor_axis1": (lambda: (1, ng.tensor([2, -5])), oob(-5, 1, 4)),
    "float_tensor": (lambda: ng.tensor([0.0, 1.0]), "arrays used as indices must be of integer"),
    "mask_and_int_tensor": (lambda: (ng.tensor([T, FL]), ng.tensor([0])), mask(0, 3, 2)),
}


def _numpy_key(key):
    if isinstance(key, tuple):
        return tuple(_numpy_key(k) for k in key)
    return key.numpy() if isinstance(key, ng.Tensor) else key


def _numpy_message(key) -> str:
    with pytest.raises(IndexError) as info:
        np.zeros(SHAPE)[_numpy_key(key)]
    return str(info.value)


def _all_bad_keys():
    for name, (key, fragment) in BAD_KEYS.items():
        yield pytest.param(lambda key=key: key, fragment, id=name)
    for name, (make, fragment) in TENSOR_KEYS.items():
        yield pytest.param(make, fragment, id=name)


def _raises_at_the_call(action, key, fragment):
    message = _numpy_message(key)
    assert fragment in message  # the table says what NumPy says
    with ng.engine.record() as rec, pytest.raises(IndexError) as info:
        action()
    assert str(info.value) == message
    assert rec.kernels_launched == 0 and rec.kernels_interpreted == 0


@pytest.mark.parametrize("make_key,fragment", list(_all_bad_keys()))
def test_getitem_bad_key_raises_numpys_index_error(make_key, fragment):
    x = ng.tensor(np.arange(12.0).reshape(SHAPE))
    key = make_key()
    _raises_at_the_call(lambda: x[key], key, fragment)
    _raises_at_the_call(lambda: (x * 2)[key], key, fragment)  # a lazy tensor too


@pytest.mark.parametrize("make_key,fragment", list(_all_bad_keys()))
def test_setitem_and_index_put_bad_key_raise_numpys_index_error(make_key, fragment):
    x = ng.tensor(np.arange(12.0).reshape(SHAPE))
    key = make_key()

    def setitem():
        x[key] = 1.0

    _raises_at_the_call(setitem, key, fragment)
    _raises_at_the_call(lambda: x.index_put(key, 0.0), key, fragment)
    np.testing.assert_array_equal(x.numpy(), np.arange(12.0).reshape(SHAPE))  # unchanged


def test_bad_key_with_grad_raises_before_recording():
    w = ng.tensor(np.ones(SHAPE), requires_grad=True)
    with ng.engine.record() as rec, pytest.raises(IndexError, match="boolean axis is 2"):
        (w * 3)[[True, False]]
    assert rec.kernels_launched == 0


def test_lazy_mask_of_the_wrong_shape_raises_before_it_is_computed():
    x = ng.tensor(np.arange(12.0).reshape(SHAPE))
    rows = (x > 5)[:2]  # not computed yet
    with ng.engine.record() as rec, pytest.raises(IndexError, match=mask(0, 3, 2)):
        x[rows]
    assert rec.kernels_launched == 0


@pytest.mark.parametrize("key", [
    pytest.param([], id="empty_list"),
    pytest.param(np.array([T, FL, T]), id="mask"),
    pytest.param(np.arange(12).reshape(SHAPE) % 3 == 0, id="mask_2d"),
    pytest.param((np.array([T, FL, T]), np.array([0, -1])), id="mask_and_int_array"),
    pytest.param((slice(None), [FL, T, T, FL]), id="mask_axis1"),
    pytest.param((np.array([-1, -3]),), id="negative"),
    pytest.param((Ellipsis, None, -1), id="ellipsis_none"),
    pytest.param(np.True_, id="scalar_true"),
    pytest.param(False, id="scalar_false"),
    pytest.param((0, np.True_), id="int_scalar_true"),
    pytest.param((Ellipsis, np.False_), id="ellipsis_scalar_false"),
    pytest.param((np.True_, Ellipsis, 1), id="scalar_true_ellipsis_int"),
    pytest.param(([0, 1], True, [1, 2]), id="scalar_true_between_arrays"),
    pytest.param((None, True, 1, np.False_), id="none_scalars_int"),
    pytest.param((1, [T, FL, T, T], np.True_), id="mask_then_scalar_true"),
])
def test_good_keys_match_numpy(key):
    a = np.arange(12.0).reshape(SHAPE)
    np.testing.assert_array_equal(ng.tensor(a)[key].numpy(), a[key])
    np.testing.assert_array_equal(((ng.tensor(a) * 2)[key] + 1).numpy(), a[key] * 2 + 1)
    b = a.copy()
    b[key] = -1.0
    x = ng.tensor(a)
    x[key] = -1.0
    np.testing.assert_array_equal(x.numpy(), b)
    w = ng.tensor(a, requires_grad=True)
    (w[key] * 3).sum().backward()
    want = np.zeros(SHAPE)
    np.add.at(want, key, 3.0)
    np.testing.assert_array_equal(w.grad.numpy(), want)


@pytest.mark.parametrize("value", [True, False])
def test_zero_dim_bool_tensor_key(value):
    a = np.arange(12.0).reshape(SHAPE)
    np.testing.assert_array_equal(ng.tensor(a)[ng.tensor(value)].numpy(), a[np.bool_(value)])
    np.testing.assert_array_equal(ng.tensor(a)[0, ng.tensor(value)].numpy(), a[0, value])


def test_changing_a_key_array_after_recording_changes_nothing():
    # Values are computed later than NumPy computes them: the key holds a copy, so the
    # caller's array can change meanwhile (NumPy's x[idx] has read it already).
    x = ng.tensor(np.arange(5.0))
    idx, mask = np.array([0, 1]), np.array([T, FL, T, FL, FL])
    picked, masked, put = x[idx] * 2, x[mask], x.index_put(idx, 7.0)
    idx[:] = [3, 4]
    mask[:] = True
    assert picked.tolist() == [0.0, 2.0] and masked.tolist() == [0.0, 2.0]
    assert put.tolist() == [7.0, 7.0, 2.0, 3.0, 4.0]


def test_bool_tensor_mask_gradient():
    a = np.arange(12.0).reshape(SHAPE)
    x = ng.tensor(a, requires_grad=True)
    mask = ng.tensor(a % 5 == 0)
    (x[mask] * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2.0 * (a % 5 == 0))


# ---- NaN, infinities and signed zeros ----------------------------------------------

SPECIAL = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.5, 0.5, -0.5, 2.5, 1e-300])
PAIRS = np.array(list(itertools.product(SPECIAL, SPECIAL))).T
ROWS = np.array(list(itertools.product(SPECIAL[:6], repeat=3)))  # every row of 3 specials


def _same(got, want, rtol=1e-13):
    got, want = np.asarray(got.numpy() if isinstance(got, ng.Tensor) else got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def _np(fn, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn(*args)


UNARY = {
    "relu": (ng.relu, lambda a: np.maximum(a, 0.0)),
    "abs": (ng.abs, np.abs), "sign": (ng.sign, np.sign), "negative": (ng.negative, np.negative),
    "floor": (ng.floor, np.floor), "ceil": (ng.ceil, np.ceil), "round": (ng.round, np.round),
    "trunc": (ng.trunc, np.trunc), "signbit": (ng.signbit, np.signbit), "cbrt": (ng.cbrt, np.cbrt),
    "round_1": (lambda t: ng.round(t, 1), lambda a: np.round(a, 1)),
    "square": (ng.square, np.square), "sqrt": (ng.sqrt, np.sqrt), "exp": (ng.exp, np.exp),
    "expm1": (ng.expm1, np.expm1), "log": (ng.log, np.log), "log1p": (ng.log1p, np.log1p),
    "reciprocal": (ng.reciprocal, np.reciprocal), "sin": (ng.sin, np.sin),
    "cos": (ng.cos, np.cos), "tan": (ng.tan, np.tan), "tanh": (ng.tanh, np.tanh),
    "sigmoid": (ng.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
    "logical_not": (ng.logical_not, np.logical_not),
    "clip": (lambda t: t.clip(-1, 1), lambda a: np.clip(a, -1, 1)),
    "clip_min": (lambda t: t.clip(-1), lambda a: np.clip(a, -1, None)),
    "clip_max": (lambda t: t.clip(None, 1), lambda a: np.clip(a, None, 1)),
    "clip_nan_min": (lambda t: t.clip(np.nan, 1), lambda a: np.clip(a, np.nan, 1)),
    "clip_nan_max": (lambda t: t.clip(-1, float("nan")), lambda a: np.clip(a, -1, np.nan)),
    "clip_inf": (lambda t: t.clip(-np.inf, np.inf), lambda a: np.clip(a, -np.inf, np.inf)),
}


@host_only
@pytest.mark.parametrize("name", sampled(list(UNARY), 2))
def test_unary_special_values_match_numpy(name):
    fn, ref = UNARY[name]
    _same(fn(ng.tensor(SPECIAL)), _np(ref, SPECIAL))


def test_relu_of_nan_is_nan_and_keeps_relu_prime_zero_at_zero():
    x = ng.tensor([np.nan, 0.0, -0.0, 2.0, -1.0], requires_grad=True)
    y = x.relu()
    _same(y, np.array([np.nan, 0.0, 0.0, 2.0, 0.0]))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[1:], [0.0, 0.0, 1.0, 0.0])


BINARY = ["maximum", "minimum", "add", "subtract", "multiply", "divide", "power", "equal",
          "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
          "logical_or"]


@host_only
@pytest.mark.parametrize("name", sampled(list(BINARY), 2))
def test_binary_special_values_match_numpy(name):
    a, b = PAIRS
    _same(getattr(ng, name)(ng.tensor(a), ng.tensor(b)), _np(getattr(np, name), a, b))


@host_only
def test_clip_with_tensor_bounds_and_where_match_numpy():
    a, b = PAIRS
    ta, tb = ng.tensor(a), ng.tensor(b)
    _same(ng.clip(ta, tb, 1.0), _np(np.clip, a, b, 1.0))
    _same(ng.clip(ta, -1.0, tb), _np(np.clip, a, -1.0, b))
    _same(ng.clip(ta, tb, tb), _np(np.clip, a, b, b))
    _same(ng.clip(ta, np.full(a.shape, np.nan), None), _np(np.clip, a, np.nan, None))
    _same(ng.where(ta > tb, ta, tb), np.where(a > b, a, b))
    _same(ng.where(ta, ta, tb), np.where(a.astype(bool), a, b))  # NaN is true, as in NumPy
    _same(ta.all(), np.all(a))
    _same(ng.tensor(SPECIAL[:1]).any(), np.any(SPECIAL[:1]))


REDUCTIONS = ["max", "min", "argmax", "argmin", "sum", "prod", "mean", "var", "std"]


@host_only
@pytest.mark.parametrize("name", sampled(REDUCTIONS, 2))
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_of_special_values_match_numpy(name, axis):
    got = getattr(ng.tensor(ROWS), name)(axis=axis)
    _same(got, _np(getattr(np, name), ROWS, axis))


@host_only
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_logsumexp_of_special_values_matches_scipy(axis):
    _same(ng.tensor(ROWS).logsumexp(axis=axis), _np(sp.logsumexp, ROWS, axis))


def _softmax_ref(a, axis=-1):
    # NumPy's value of exp(x) / sum(exp(x)) (the inputs are too small to overflow).
    e = np.exp(a)
    return e / e.sum(axis, keepdims=True)


@host_only
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_and_log_softmax_of_special_values_match_numpy(axis):
    x = ng.tensor(ROWS)
    _same(F.softmax(x, axis), _np(_softmax_ref, ROWS, axis))
    _same(F.log_softmax(x, axis), _np(lambda a: a - sp.logsumexp(a, axis, keepdims=True), ROWS))
    # the log of softmax where neither is NaN or infinite
    log_of = _np(lambda a: np.log(_softmax_ref(a, axis)), ROWS)
    got = F.log_softmax(x, axis).numpy()
    finite = np.isfinite(log_of) & np.isfinite(got)
    np.testing.assert_allclose(got[finite], log_of[finite], rtol=1e-13, atol=1e-15)


@host_only
def test_cross_entropy_with_special_logits_matches_numpy():
    logits = ROWS[::7]
    target = np.arange(len(logits)) % 3
    want = _np(lambda a: sp.logsumexp(a, 1) - a[np.arange(len(a)), target], logits)
    got = F.cross_entropy(ng.tensor(logits), ng.tensor(target), reduction="none")
    _same(got, want)
    _same(F.cross_entropy(ng.tensor(logits), ng.tensor(target)), np.mean(want))
    probs = _np(_softmax_ref, np.random.default_rng(0).standard_normal(logits.shape))
    want = _np(lambda a: -(probs * (a - sp.logsumexp(a, 1, keepdims=True))).sum(1), logits)
    _same(F.cross_entropy(ng.tensor(logits), ng.tensor(probs), reduction="none"), want)


@host_only
@pytest.mark.parametrize("dtype", quick(["int32", "int64"], ["int64"]))
def test_floats_no_integer_holds_convert_to_its_minimum(dtype):
    # NumPy's casts on x86: inf, nan and floats out of the type's range give its minimum,
    # others truncate (LLVM leaves the conversion undefined: a kernel gave -1 or INT_MIN
    # for an integer 1 / 0 by the kernel around it). Exact.
    values = np.array([np.inf, -np.inf, np.nan, 1e30, -1e30, 3e9, -3e9, 2.0**31, -2.0**31,
                       2.7, -2.7, -0.0])
    lowest, limit = np.iinfo(dtype).min, 2.0 ** (np.iinfo(dtype).bits - 1)
    fits = np.abs(values) < limit
    expected = np.where(fits, np.trunc(np.where(fits, values, 0)), lowest).astype(dtype)
    np.testing.assert_array_equal(ng.tensor(values).astype(dtype).numpy(), expected)
    # 1 / 0 among every unary primitive, computed together (where NUMGRAD_MATH=libm's
    # int64 kernel gave -1)
    x = ng.tensor(np.array([-(2**31), -2, -1, 0, 1, 2, 2**31 - 1], dtype))
    names = [p.name for p in ops.TABLE.values() if p.kind == ops.UNARY]
    outs = [getattr(ng, "round" if name == "rint" else name)(x) for name in names]
    ng.realize(*outs)
    np.testing.assert_array_equal(outs[names.index("reciprocal")].numpy(),
                                  np.array([0, 0, -1, lowest, 1, 0, 0], dtype))


@host_only
def test_fused_chains_propagate_nan_like_numpy():
    a = ROWS
    x = ng.tensor(a)
    chain = ((x * 2).relu() + 1).clip(0.5, 3.0)
    want = _np(lambda v: np.clip(np.maximum(v * 2, 0) + 1, 0.5, 3.0), a)
    _same(chain, want)
    _same(chain.sum(axis=1), want.sum(axis=1))
    _same(chain.max(axis=0), want.max(axis=0))
    _same((x.abs().sqrt() - x.sign()).mean(axis=1),
          _np(lambda v: (np.sqrt(np.abs(v)) - np.sign(v)).mean(axis=1), a))
    _same(ng.maximum(x, 0.0).min(axis=1) + x.var(axis=1),
          _np(lambda v: np.maximum(v, 0.0).min(axis=1) + v.var(axis=1), a))
    _same((x - x.max(axis=1, keepdims=True)).exp().sum(axis=1),
          _np(lambda v: np.exp(v - v.max(axis=1, keepdims=True)).sum(axis=1), a))


# ---- gradients at finite points near the special values ----------------------------

NEAR = np.array([-2.0, -1.0 - 1e-3, -1.0 + 1e-3, -1e-3, -1e-9, 1e-9, 1e-3, 0.7, 1 + 1e-3,
                 1e3, -1e3])


def _grad_matches_autograd(ng_fn, anp_fn, *arrays, rtol=1e-12):
    ts = [ng.tensor(a, requires_grad=True) for a in arrays]
    ng.sum(ng_fn(*ts) * ng.tensor(np.linspace(0.5, 1.5, ng_fn(*ts).size)
                                  .reshape(ng_fn(*ts).shape))).backward()

    def scalar(*xs):
        out = anp_fn(*xs)
        return anp.sum(out * np.linspace(0.5, 1.5, np.size(out)).reshape(np.shape(out)))

    for i, t in enumerate(ts):
        np.testing.assert_allclose(t.grad.numpy(), autograd.grad(scalar, i)(*arrays),
                                   rtol=rtol, atol=1e-300)


NEAR_GRADS = {
    "relu": (ng.relu, lambda a: anp.maximum(a, 0.0)),
    "abs": (ng.abs, anp.abs),
    "sign": (ng.sign, anp.sign), "round": (ng.round, anp.round), "floor": (ng.floor, anp.floor),
    "ceil": (ng.ceil, anp.ceil),
    "clip": (lambda t: t.clip(-1, 1), lambda a: anp.clip(a, -1, 1)),
    "sqrt_abs": (lambda t: t.abs().sqrt(), lambda a: anp.sqrt(anp.abs(a))),
    "sigmoid": (ng.sigmoid, lambda a: 0.5 * (anp.tanh(a / 2) + 1)),
}


@pytest.mark.filterwarnings("ignore:Output seems independent of input")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # autograd's sigmoid at -1e3
@pytest.mark.parametrize("name", NEAR_GRADS)
def test_gradients_near_kinks_match_autograd(name):
    _grad_matches_autograd(*NEAR_GRADS[name], NEAR)


def test_binary_and_reduction_gradients_near_ties_match_autograd():
    a = NEAR.reshape(-1, 1)
    b = np.array([[-1.0, 1e-9, 1.0 + 2e-3]])
    for name in ("maximum", "minimum"):
        _grad_matches_autograd(getattr(ng, name), getattr(anp, name), a, b)
    rows = NEAR[:10].reshape(2, 5)
    for name in ("max", "min", "var", "std", "prod", "mean"):
        for axis in (None, 1):
            _grad_matches_autograd(lambda t, n=name, ax=axis: getattr(t, n)(axis=ax),
                                   lambda v, n=name, ax=axis: getattr(anp, n)(v, axis=ax),
                                   rows, rtol=1e-10)
    _grad_matches_autograd(lambda t: t.logsumexp(axis=1),
                           lambda v: asp.logsumexp(v, axis=1), rows)


def test_softmax_gradients_with_large_logits_match_autograd():
    logits = np.array([[1e3, -1e3, 0.0, 999.0], [-1e-9, 1e-9, 5.0, -700.0]])
    target = np.array([0, 3])

    def anp_log_softmax(v):
        return v - asp.logsumexp(v, axis=1, keepdims=True)

    _grad_matches_autograd(F.log_softmax, anp_log_softmax, logits)
    _grad_matches_autograd(F.softmax, lambda v: anp.exp(anp_log_softmax(v)), logits)
    _grad_matches_autograd(
        lambda t: F.cross_entropy(t, ng.tensor(target)),
        lambda v: -anp.mean(anp_log_softmax(v)[np.arange(2), target]), logits)


def test_prod_gradient_with_zeros_is_the_product_of_the_others():
    x = ng.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1e-9, -2.0, 5.0]], requires_grad=True)
    x.prod(axis=1).sum().backward()
    np.testing.assert_allclose(
        x.grad.numpy(), [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [-10.0, 5e-9, -2e-9]], rtol=1e-15)
    _grad_matches_autograd(lambda t: t.prod(axis=1), lambda v: anp.prod(v, axis=1),
                           np.array([[1e-9, -2.0, 5.0], [-1e-3, 3.0, 1e3]]))


# ---- einsum with ellipsis ----------------------------------------------------------

EINSUM = [
    # (subscripts, shapes, the same contraction spelled out for autograd or None)
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)], None),
    ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 2)], "...ij,...jk->...ik"),
    ("...ij,...jk->...ik", [(2, 3), (3, 2)], None),
    ("...ij,...jk->...ik", [(1, 2, 3), (3, 3, 2)], None),
    ("...i->...", [(2, 3, 2)], None),
    ("...i,...i->...", [(2, 1, 3), (4, 3)], None),
    ("...i", [(2, 3)], "...i->...i"),
    ("i...", [(2, 3)], "i...->...i"),
    ("...ij", [(2, 3, 2)], "...ij->...ij"),
    ("...,...", [(2, 3), (3,)], "...,...->..."),
    ("...i,...i", [(2, 1, 3), (4, 3)], "...i,...i->..."),
    ("i...->...", [(2, 3)], None),
    ("i->...i", [(3,)], None),
    ("...i->i", [(3,)], None),
    ("ba...->...ab", [(2, 3, 2)], None),
    ("b...a,a...", [(2, 3, 1, 2), (2, 3, 1)], "b...a,a...->...b"),
    ("ij,ij->ij", [(2, 1), (2, 3)], None),
    ("...ii->...i", [(2, 3, 3)], None),
    ("i...i", [(3, 2, 3)], None),
]


def _einsum_case(subscripts, shapes):
    rng = np.random.default_rng(len(subscripts) + len(shapes))
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("subscripts,shapes,explicit",  # (4 of the first 8 in README's command)
                         sampled(EINSUM[:8], 2) + [slow(*case) for case in EINSUM[8:]],
                         ids=[f"{s}{shapes}" for s, shapes, _ in EINSUM])
def test_einsum_with_ellipsis_matches_numpy_and_autograd(subscripts, shapes, explicit):
    arrays = _einsum_case(subscripts, shapes)
    want = np.einsum(subscripts, *arrays)
    got = ng.einsum(subscripts, *[ng.tensor(a) for a in arrays])
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14)
    if "ii" not in subscripts and "i...i" not in subscripts:  # autograd's einsum VJP
        _grad_matches_autograd(  # cannot take repeated indices
            lambda *ts: ng.einsum(subscripts, *ts),
            lambda *xs: anp.einsum(explicit or subscripts, *xs), *arrays)
    tensors = tuple(ng.tensor(a, requires_grad=True) for a in arrays)
    assert ng.gradcheck(lambda *ts: ng.einsum(subscripts, *ts), tensors)


@pytest.mark.parametrize("subscripts,shapes,match", [
    ("...i->i", [(2, 3)], "no '...'"),
    ("...i,...i->...", [(2, 3), (5, 3)], "sizes 2 and 5"),
    ("...ij", [(2,)], "subscripts '...ij'"),
    (".ij", [(2, 2)], "not part of one ellipsis"),
    ("...i...", [(2, 2)], "not part of one ellipsis"),
    ("i->..i", [(2,)], "not part of one ellipsis"),
    ("ii", [(2, 3)], "sizes 2 and 3"),
    ("ij->k", [(2, 3)], "'k'"),
    ("ij->ii", [(2, 3)], "'i' is repeated"),
])
def test_einsum_errors_where_numpy_raises(subscripts, shapes, match):
    arrays = [np.ones(s) for s in shapes]
    with pytest.raises(ValueError):
        np.einsum(subscripts, *arrays)
    with pytest.raises(ValueError, match=match):
        ng.einsum(subscripts, *[ng.tensor(a) for a in arrays])
