"""The Array API's integer elementwise functions and nextafter: ``~``/`invert`, ``<<`` and
``>>`` (`left_shift`, `right_shift`) and `nextafter`, each one row of the primitive table.

Values are NumPy 2's exactly (bit for bit for nextafter, NaN in the same places), shift
counts outside ``[0, bits)`` included; result dtypes are NumPy's, Python scalars on
either side weak; wrong dtypes raise TypeError naming the dtype before any kernel runs.
Arrays are small: the module runs in Numba's CUDA simulator too.
"""

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import numgrad as ng

INTS = (np.int32, np.int64)
FLOATS = (np.float32, np.float64)


def _int_values(dtype):
    info = np.iinfo(dtype)
    return st.one_of(st.integers(info.min, info.max),
                     st.sampled_from([info.min, info.min + 1, -2, -1, 0, 1, 2, info.max]))


def _counts(dtype):
    """Shift counts: in range, at and past the bit width, negative, extreme."""
    info, bits = np.iinfo(dtype), np.iinfo(dtype).bits
    edges = [-bits - 1, -bits, -33, -32, -31, -1, 0, 1, 31, 32, 33, bits - 1, bits,
             bits + 1, 2 * bits, info.min, info.max]
    return st.one_of(st.integers(-2 * bits, 2 * bits), st.sampled_from(edges),
                     st.integers(info.min, info.max))


def _same_bits(got, want) -> None:
    """`got` (a tensor) is `want` (NumPy's) to the bit: dtype, shape, bits, and NaN in
    the same places (NaN payloads aside)."""
    got = got.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(want) if want.dtype.kind == "f" else np.zeros(want.shape, bool)
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), nan)
    as_int = {4: np.int32, 8: np.int64}[want.dtype.itemsize]
    np.testing.assert_array_equal(got.view(as_int)[~nan], want.view(as_int)[~nan])


# ---- <<, >> and ~ on integers --------------------------------------------------------

@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.__name__)
@given(data=st.data())
def test_shifts_and_invert_equal_numpys(dtype, data):
    x = data.draw(hnp.arrays(dtype, 8, elements=_int_values(dtype)))
    y = data.draw(hnp.arrays(dtype, 8, elements=_counts(dtype)))
    tx, ty = ng.tensor(x), ng.tensor(y)
    _same_bits(tx << ty, x << y)
    _same_bits(tx >> ty, x >> y)
    _same_bits(~tx, ~x)
    _same_bits(ng.left_shift(x, ty), np.left_shift(x, y))
    _same_bits(ng.right_shift(tx, y), np.right_shift(x, y))


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.__name__)
def test_every_count_from_minus_to_twice_the_width(dtype):
    bits = np.iinfo(dtype).bits
    counts = np.arange(-bits - 2, 2 * bits + 3, dtype=dtype)
    x = np.array([np.iinfo(dtype).min, -5, -1, 1, 5, np.iinfo(dtype).max], dtype).reshape(-1, 1)
    _same_bits(ng.tensor(x) << ng.tensor(counts), x << counts)
    _same_bits(ng.tensor(x) >> ng.tensor(counts), x >> counts)


def test_numpy_gives_zero_or_the_sign_past_the_width():
    # what the rows are written to match (NumPy 2; C leaves these shifts undefined)
    x = np.array([-5, 5], np.int64)
    assert (x << 64).tolist() == (x << -1).tolist() == [0, 0]
    assert (x >> 64).tolist() == (x >> -1).tolist() == [-1, 0]
    assert ((ng.tensor(x) << 64).tolist(), (ng.tensor(x) >> -1).tolist()) == ([0, 0], [-1, 0])


@pytest.mark.parametrize("left,right", [
    (np.int32, np.int32), (np.int32, np.int64), (np.int64, np.int32), (bool, np.int32),
    (np.int64, bool)], ids=str)
def test_result_dtypes_are_numpys_and_broadcast(left, right):
    a = np.array([[1], [-3], [7]], left)
    b = np.array([0, 1, 2, 3], right)
    for got, want in [(ng.tensor(a) << ng.tensor(b), a << b),
                      (ng.tensor(a) >> ng.tensor(b), a >> b)]:
        _same_bits(got, want)


@pytest.mark.parametrize("dtype", [*INTS, bool], ids=lambda d: np.dtype(d).name)
def test_python_int_scalars_are_weak_on_either_side(dtype):
    a = np.array([1, 0, 1, 1], dtype) if dtype is bool else np.array([-9, -1, 0, 13], dtype)
    t = ng.tensor(a)
    for got, want in [(t << 3, a << 3), (3 << t, 3 << a), (t >> 1, a >> 1),
                      (-100 >> t, -100 >> a), (t << 40, a << 40), (t >> 70, a >> 70),
                      (ng.left_shift(5, t), np.left_shift(5, a)),
                      (ng.right_shift(t, 2), np.right_shift(a, 2))]:
        _same_bits(got, want)


def test_python_int_scalars_out_of_the_dtype_raise_as_numpys():
    a = np.array([1, 2], np.int32)
    with pytest.raises(OverflowError):
        a << 2**40
    with pytest.raises(OverflowError):
        ng.tensor(a) << 2**40


def test_invert_flips_integers_and_negates_bools():
    i = np.array([0, 5, -1, np.iinfo(np.int32).min], np.int32)
    b = np.array([True, False])
    for fn in (lambda t: ~t, ng.invert, ng.bitwise_not, ng.bitwise_invert, lambda t: t.invert()):
        _same_bits(fn(ng.tensor(i)), np.invert(i))
        got = fn(ng.tensor(b))
        assert got.dtype == ng.bool_ and got.tolist() == [False, True]


def test_in_place_shifts_give_this_tensor_the_new_value():
    t = ng.tensor(np.array([1, -8], np.int64))
    same = t
    t <<= 2
    t >>= 1
    assert t is same and t.tolist() == [2, -16]


def test_numpy_and_the_standard_reach_them_by_name():
    a = np.array([3, -4], np.int32)
    t = ng.tensor(a)
    xp = t.__array_namespace__()
    for got, want in [(np.left_shift(t, 2), a << 2), (np.right_shift(t, 1), a >> 1),
                      (np.invert(t), ~a), (np.bitwise_left_shift(t, 2), a << 2),
                      (xp.bitwise_left_shift(t, 2), a << 2),
                      (xp.bitwise_right_shift(t, 1), a >> 1), (xp.bitwise_invert(t), ~a)]:
        assert isinstance(got, ng.Tensor)
        _same_bits(got, want)


# ---- errors, before any kernel runs -------------------------------------------------

@pytest.mark.parametrize("call,message", [
    (lambda i, f: i << f, "left_shift takes integers, not float64"),  # (int32, float32)
    (lambda i, f: f >> f, "right_shift takes integers, not float32"),
    (lambda i, f: i << 1.5, "left_shift takes integers, not float64"),
    (lambda i, f: ng.left_shift(f, 2), "left_shift takes integers, not float32"),
    (lambda i, f: ~f, "invert (~) takes integers and bools, not float32"),
    (lambda i, f: ng.bitwise_invert(f), "not float32"),
    (lambda i, f: (i > 0) << (i > 1), "left_shift takes integers, not bool: NumPy shifts "
                                      "bools in int8"),
    (lambda i, f: ng.right_shift(i > 0, True), "not bool"),
])
def test_wrong_dtypes_raise_type_error_naming_them_before_any_kernel(call, message):
    i = ng.tensor(np.array([1, 2], np.int32))
    f = ng.tensor(np.array([1.0, 2.0], np.float32))
    ng.realize(i, f)
    with ng.engine.record() as rec:
        with pytest.raises(TypeError, match=re.escape(message)):
            call(i, f)
    assert rec.kernels_launched == 0 and rec.kernels_compiled == 0


# ---- fusion and gradients -----------------------------------------------------------

def test_a_chain_of_shifts_and_bitwise_ops_is_one_kernel():
    a = np.array([3, -7, 12, 1 << 20, -1, 0], np.int64)
    b = np.array([1, 0, 5, -2, 9, 63], np.int64)
    x, y = ng.tensor(a), ng.tensor(b)
    ng.realize(x, y)
    with ng.engine.record() as rec:
        got = ((x << 2) ^ ~y) >> 1
        got.numpy()
    assert rec.kernels_launched == 1
    _same_bits(got, ((a << 2) ^ ~b) >> 1)


def test_integer_work_inside_a_float_gradient_leaves_backward_alone():
    k = np.array([0, 1, 2, 3, 5], np.int64)
    a = np.array([0.5, -1.5, 2.0, 3.25, -0.75])
    x = ng.tensor(a, requires_grad=True)
    ik = ng.tensor(k)
    weight = ((ik << 1) ^ ~ik) >> 1  # integers: no gradient
    loss = (x * weight.astype(ng.float64) + ng.nextafter(x, math.inf) * x).sum()
    loss.backward()
    w = (((k << 1) ^ ~k) >> 1).astype(np.float64)
    np.testing.assert_allclose(x.grad.numpy(), w + np.nextafter(a, np.inf) + a, rtol=1e-15,
                               atol=1e-15)
    np.testing.assert_allclose(loss.item(), np.sum(a * w + np.nextafter(a, np.inf) * a),
                               rtol=1e-15)


def test_nextafter_gradient_is_one_for_x_and_zero_for_y():
    a, b = np.array([1.0, -2.0, 0.0]), np.array([3.0, -np.inf, -1.0])
    x, y = ng.tensor(a, requires_grad=True), ng.tensor(b, requires_grad=True)
    gx, gy = ng.grad(ng.nextafter(x, y).sum(), [x, y])
    assert gx.tolist() == [1.0, 1.0, 1.0] and gy.tolist() == [0.0, 0.0, 0.0]
    x32 = ng.tensor(np.float32([0.5, 2.0]), requires_grad=True)
    out = ng.nextafter(x32, 1.0)  # float32 stays float32 beside a Python float
    assert out.dtype == ng.float32 and out.requires_grad
    out.sum().backward()
    assert x32.grad.tolist() == [1.0, 1.0]
    assert ng.gradcheck(lambda s, t: ng.nextafter(s, t),
                        (ng.tensor([0.3, -1.2], requires_grad=True),
                         ng.tensor([2.0, -5.0], requires_grad=True)))


# ---- nextafter ----------------------------------------------------------------------

def _specials(dtype) -> np.ndarray:
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    return np.array([0.0, -0.0, tiny, -tiny, 2 * tiny, info.smallest_normal,
                     -info.smallest_normal, info.smallest_normal * 2, 1.0, -1.0, 0.5, 2.0,
                     1.5, info.max, -info.max, np.inf, -np.inf, np.nan], dtype)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_nextafter_of_every_pair_of_special_values(dtype):
    s = _specials(dtype)
    x, y = s.reshape(-1, 1), s.reshape(1, -1)  # (not s[:, None]: the CUDA simulator
    # cannot copy such a view to its device)
    with np.errstate(over="ignore"):
        want = np.nextafter(x, y)
    _same_bits(ng.nextafter(ng.tensor(x), ng.tensor(y)), want)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@given(data=st.data())
def test_nextafter_equals_numpys_bit_for_bit(dtype, data):
    width = np.finfo(dtype).bits
    floats = st.floats(width=width, allow_nan=True, allow_infinity=True, allow_subnormal=True)
    x = data.draw(hnp.arrays(dtype, 6, elements=floats))
    y = data.draw(hnp.arrays(dtype, 6, elements=st.one_of(
        floats, st.sampled_from([0.0, -0.0, np.inf, -np.inf]))))
    with np.errstate(over="ignore"):
        want, want_scalar = np.nextafter(x, y), np.nextafter(x, y[0])
    _same_bits(ng.nextafter(ng.tensor(x), ng.tensor(y)), want)
    _same_bits(ng.nextafter(ng.tensor(x), y[0].item()), want_scalar)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_nextafter_of_one_element_is_the_dtypes_neighbour(dtype):
    # (one element is computed when recorded, in Python's floats, for most rows: not
    # float32's neighbour, which float64 arithmetic rounds back to x)
    for x, y in [(1.0, 2.0), (1.0, 0.0), (0.0, -1.0), (-np.inf, 0.0), (3.0, np.nan)]:
        got = ng.nextafter(ng.tensor(dtype(x)), ng.tensor(dtype(y)))
        _same_bits(got, np.asarray(np.nextafter(dtype(x), dtype(y))))
        _same_bits(ng.nextafter(ng.tensor(dtype(x)), y), np.asarray(np.nextafter(dtype(x), y)))


def test_nextafter_of_integers_is_float64s_as_numpys():
    a, b = np.array([1, -3, 0], np.int32), np.array([2, -4, -1], np.int64)
    _same_bits(ng.nextafter(ng.tensor(a), ng.tensor(b)), np.nextafter(a, b))
    _same_bits(ng.nextafter(ng.tensor(a), 0.5), np.nextafter(a, 0.5))
