"""int8 and int16 (the Array API standard's smaller signed integers): every elementwise
row, cast, reduction and promotion gives NumPy 2's values and dtypes, exactly for
integers and bools (they wrap as NumPy's do), floats at 1e-12 relative (float64) and
4e-7 (float32: NumPy's SIMD loops and libm differ in the last bit). A floating function
of int8 is float32 where NumPy's is float16, which numgrad lacks (docs/decisions.md)."""

import warnings

import numpy as np
import pytest

import numgrad as ng
from numgrad.ops import BINARY, TABLE, UNARY

SMALL = [np.int8, np.int16]
EDGES = {np.int8: [-128, -127, -100, -7, -2, -1, 0, 1, 2, 3, 7, 100, 126, 127],
         np.int16: [-32768, -32767, -1000, -7, -2, -1, 0, 1, 2, 3, 7, 1000, 32766, 32767]}
#: rows NumPy does not define on integers, or defines with errors for some of these values
NOT_ON_INTEGERS = {"power"}  # (negative exponents raise: tested on their own below)


def _same(got: ng.Tensor, want: np.ndarray) -> None:
    got = got.numpy()
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        rtol = 1e-12 if want.dtype == np.float64 else 4e-7
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, want)


def _rows(kind):
    return [r for r in TABLE.values() if r.kind == kind and r.name not in NOT_ON_INTEGERS]


def _want(row, *arrays):
    """NumPy's (or the row's reference's) value; a floating row's, on the operands as
    the float it computes in: float32 for int8 and int16 (NumPy's ufuncs: float16 for
    int8, float32 for int16), float64 for wider integers and bools."""
    if row.floating:
        common = np.result_type(*arrays)
        wide = np.float32 if common.kind == "i" and common.itemsize <= 2 else np.float64
        arrays = [a.astype(wide) for a in arrays]  # (-x of an int16 -32768 wraps: not
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # in a float)
        warnings.simplefilter("ignore")
        return np.asarray(row.ref(*arrays))


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
@pytest.mark.parametrize("row", _rows(UNARY), ids=lambda r: r.name)
def test_every_unary_row_gives_numpys_values_and_dtype(row, dtype):
    a = np.array(EDGES[dtype], dtype)
    want = _want(row, a)
    _same(getattr(ng, {"rint": "round"}.get(row.name, row.name))(ng.tensor(a)), want)


@pytest.mark.parametrize("other", [np.int8, np.int16, np.int32, np.int64, np.bool_],
                         ids=lambda d: d.__name__)
@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
@pytest.mark.parametrize("row", _rows(BINARY), ids=lambda r: r.name)
def test_every_binary_row_gives_numpys_values_and_dtype(row, dtype, other):
    a = np.array(EDGES[dtype], dtype)[:, None]
    b = np.array(EDGES[dtype], dtype)[None, :].astype(other)
    if row.name in ("left_shift", "right_shift"):
        b = np.arange(-2, 20, dtype=other if other != np.bool_ else np.int8)[None, :]
    want = _want(row, a, b)
    _same(getattr(ng, row.name)(ng.tensor(a), ng.tensor(b)), want)


def test_floating_functions_take_numpys_float_dtypes():
    # NumPy's: float16 (numgrad's float32) for int8, float32 for int16, float64 for wider
    for dtype, want in ((np.int8, np.float32), (np.int16, np.float32), (np.int32, np.float64)):
        x = ng.tensor(np.array([1, 2], dtype))
        assert ng.exp(x).dtype == want and (x / x).dtype == want and ng.erf(x).dtype == want
        assert np.exp(np.array([1], dtype)).dtype in (np.float16, want)
        assert x.mean().dtype == np.mean(np.array([1], dtype)).dtype == np.float64


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_python_scalars_are_weak_and_out_of_range_ones_raise(dtype):
    a = np.array(EDGES[dtype], dtype)
    x = ng.tensor(a)
    for got, want in [(x + 3, a + 3), (5 * x, 5 * a), (x // 7, a // 7), (x - 1.5, a - 1.5),
                      (x > 2, a > 2), (x ** 2, a ** 2), (x % 3, a % 3)]:
        _same(got, want)
    big = int(np.iinfo(dtype).max) + 1
    with pytest.raises(OverflowError):
        a + big
    with pytest.raises(OverflowError):
        x + big


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_integer_powers(dtype):
    a = np.array(EDGES[dtype], dtype)
    _same(ng.tensor(a) ** ng.tensor(np.array(3, dtype)), a ** np.array(3, dtype))
    with pytest.raises(ValueError):
        a ** np.array(-1, dtype)
    with pytest.raises(ValueError):
        ng.tensor(a) ** -1


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_casts_to_and_from_every_dtype(dtype):
    floats = np.array([0.0, -0.0, 0.7, -0.7, 126.5, -127.9, 300.7, -300.2, 40000.5, -70000.0,
                       1e20, -1e20, np.inf, -np.inf, np.nan])
    for source in (floats, floats.astype(np.float32), np.array(EDGES[np.int16], np.int64),
                   np.array([True, False])):
        with np.errstate(invalid="ignore"):
            want = source.astype(dtype)  # (NumPy's x86 casts: through int64, wrapped)
        _same(ng.tensor(source).astype(dtype), want)
        _same((ng.tensor(source) * 1).astype(dtype), want)  # (in a kernel)
    a = np.array(EDGES[dtype], dtype)
    for target in ng.__array_namespace_info__().dtypes().values():
        _same((ng.tensor(a) + 0).astype(target), a.astype(target))


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_reductions_and_scans_take_numpys_dtypes(dtype):
    a = np.array(EDGES[dtype], dtype).reshape(2, 7)
    x = ng.tensor(a)
    for name in ("sum", "prod", "max", "min", "mean", "argmax", "argmin", "cumsum", "cumprod"):
        for axis in (None, 0, 1):
            _same(getattr(ng, name)(x, axis=axis), getattr(np, name)(a, axis=axis))
    _same(ng.sum(x, dtype=dtype), np.sum(a, dtype=dtype))
    _same(ng.sort(x, axis=1), np.sort(a, axis=1))


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_small_integers_are_dtypes_like_the_others(dtype):
    a = np.array(EDGES[dtype], dtype)
    assert ng.tensor(a).dtype == dtype and ng.zeros(3, dtype=dtype).dtype == dtype
    assert ng.tensor(a).numpy().dtype == dtype
    assert ng.iinfo(dtype).min == np.iinfo(dtype).min
    assert ng.isdtype(dtype, "signed integer") and ng.isdtype(dtype, "integral")
    signed = ng.__array_namespace_info__().dtypes(kind="signed integer")
    assert signed[np.dtype(dtype).name] == dtype
    assert ng.result_type(dtype, ng.int32) == np.result_type(dtype, np.int32)
    assert ng.can_cast(dtype, ng.int64) and not ng.can_cast(ng.int64, dtype)
    x = ng.tensor(a.reshape(2, 7))
    _same(ng.concatenate([x, x[:1]]), np.concatenate([a.reshape(2, 7), a.reshape(2, 7)[:1]]))
    _same(x[:, ::2].T, a.reshape(2, 7)[:, ::2].T)
    np.testing.assert_array_equal(np.from_dlpack(x.cpu()), a.reshape(2, 7))
    assert ng.from_dlpack(a).dtype == dtype


@pytest.mark.parametrize("dtype", SMALL, ids=lambda d: d.__name__)
def test_a_float_computation_differentiates_through_small_integers(dtype):
    a = np.array(EDGES[dtype], dtype)
    w = ng.tensor(np.linspace(-1, 1, a.size), requires_grad=True)
    loss = (w * ng.tensor(a)).tanh().sum()
    loss.backward()
    want = a * (1 - np.tanh(np.linspace(-1, 1, a.size) * a) ** 2)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12)
