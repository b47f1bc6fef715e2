"""int8 and int16 (the Array API standard's smaller signed integers): every elementwise
row, cast, reduction and promotion gives NumPy 2's values and dtypes, exactly for
integers and bools (they wrap as NumPy's do), floats at 1e-12 relative (float64) and
4e-7 (float32: NumPy's SIMD loops and libm differ in the last bit). A floating function
of int8 is float32 where NumPy's is float16, which numgrad lacks (docs/decisions.md).

The tests take the integer type under test from the fixtures `dtype` and `other` (the
second operand's type, "same" for `dtype`'s): `tests/numpy/test_unsigned_integers.py` imports
them and runs them on the unsigned types with fixtures of its own. Each pairing compiles a
kernel per row: README's command runs a few (`params`), `.ci/run` every one."""

import os
import warnings

import numpy as np
import pytest
from budget import quick

import numgrad as ng
from numgrad.ops import BINARY, TABLE, UNARY

SMALL = [np.int8, np.int16]
EDGES = {np.int8: [-128, -127, -100, -7, -2, -1, 0, 1, 2, 3, 7, 100, 126, 127],
         np.int16: [-32768, -32767, -1000, -7, -2, -1, 0, 1, 2, 3, 7, 1000, 32766, 32767],
         np.uint8: [0, 1, 2, 3, 7, 100, 126, 127, 128, 129, 254, 255],
         np.uint16: [0, 1, 2, 3, 7, 100, 1000, 32767, 32768, 32769, 65534, 65535],
         np.uint32: [0, 1, 2, 3, 7, 100, 10**6, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 2,
                     2**32 - 1],
         np.uint64: [0, 1, 2, 3, 7, 10**15, 2**53 + 1, 2**63 - 1, 2**63, 2**63 + 1,
                     2**64 - 2, 2**64 - 1]}
#: floats each type holds once truncated (the casts C defines), in float32 too
FLOATS = {np.int8: [0.0, -0.0, 0.7, -0.7, 126.5, -127.9],
          np.int16: [0.0, -0.0, 0.7, -0.7, 126.5, -127.9, 300.7, -300.2, 32767.5, -32768.9],
          np.uint8: [0.0, -0.0, 0.7, -0.7, 126.5, 128.5, 255.9],
          np.uint16: [0.0, -0.0, 0.7, -0.7, 300.7, 40000.5, 65535.9],
          np.uint32: [0.0, -0.0, 0.7, -0.7, 300.7, 40000.5, 2.0**31 + 0.5, 2.0**32 - 256],
          np.uint64: [0.0, -0.0, 0.7, -0.7, 300.7, 2.0**53, 2.0**63 - 1024, 2.0**63,
                      2.0**63 + 2.0**40, 2.0**64 - 2.0**40]}
#: floats no int8 or int16 holds (undefined in C): numgrad gives what NumPy's x86 casts
#: do, through int32 (unsigned types: test_unsigned_integers.py)
OUT_OF_RANGE = [300.7, -300.2, 40000.5, -70000.0, 3e9, 2.0**40 + 3, 1e20, -1e20, np.inf,
                -np.inf, np.nan]
#: Numba's CUDA simulator runs kernels in Python, whose math raises where a GPU gives NaN or
#: inf (log(0), exp(1000)): such values of floating rows are left to the CPU targets (the
#: op matrix tests the rows on CUDA within their domains).
SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" and \
    ng.get_default_device().type == "cuda"
#: rows NumPy does not define on integers, or defines with errors for some of these values
NOT_ON_INTEGERS = {"power"}  # (negative exponents raise: tested on their own below)


@pytest.fixture(params=quick(SMALL, [np.int8]), ids=lambda d: d.__name__)
def dtype(request):
    return request.param


@pytest.fixture(params=quick([np.int8, np.int16, np.int32, np.int64, np.bool_], [np.int8]),
                ids=lambda d: d.__name__)
def other(request):
    return request.param


def _same(got: ng.Tensor, want: np.ndarray) -> None:
    try:
        got = got.numpy()
    except (ValueError, OverflowError) as error:
        if SIMULATED and str(error).endswith(("math domain error", "math range error")):
            pytest.skip("the simulator's math raises where a GPU gives NaN or inf")
        raise
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        rtol = 1e-12 if want.dtype == np.float64 else 4e-7
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    else:
        np.testing.assert_array_equal(got, want)


#: rows whose kernels compile a special function's series (seconds each): on small
#: integers in `.ci/run` only (`budget`; the special functions' own tests run them)
SERIES = ("gammainc", "gammaincc")


def _rows(kind):
    """The rows of `kind` on integers: a third of them in README's command (the floating
    rows and the integral ones alike), every one in `.ci/run`."""
    rows = [r for r in TABLE.values() if r.kind == kind and r.name not in NOT_ON_INTEGERS]
    return quick(rows, [r for r in rows[::3] if r.name not in SERIES])


def _want(row, *arrays):
    """NumPy's (or the row's reference's) value; a floating row's, on the operands as
    the float it computes in: float32 for 8- and 16-bit integers (NumPy's ufuncs: float16
    for 8 bits, float32 for 16), float64 for wider integers and bools."""
    if row.floating:
        common = np.result_type(*arrays)
        wide = np.float32 if common.kind in "iu" and common.itemsize <= 2 else np.float64
        arrays = [a.astype(wide) for a in arrays]  # (-x of an int16 -32768 wraps: not
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # in a float)
        warnings.simplefilter("ignore")
        return np.asarray(row.ref(*arrays))


@pytest.mark.parametrize("row", _rows(UNARY), ids=lambda r: r.name)
def test_every_unary_row_gives_numpys_values_and_dtype(row, dtype):
    a = np.array(EDGES[dtype], dtype)
    want = _want(row, a)
    _same(getattr(ng, {"rint": "round"}.get(row.name, row.name))(ng.tensor(a)), want)


@pytest.mark.parametrize("row", _rows(BINARY), ids=lambda r: r.name)
def test_every_binary_row_gives_numpys_values_and_dtype(row, dtype, other):
    other = dtype if other == "same" else other
    a = np.array(EDGES[dtype], dtype)[:, None]
    b = np.array(EDGES[dtype], dtype)[None, :].astype(other)
    if row.name in ("left_shift", "right_shift"):  # (counts past the widest type too)
        counts = other if other != np.bool_ else np.int8
        b = np.arange(-2 if np.iinfo(counts).min else 0, 70, dtype=counts)[None, :]
    try:
        want = _want(row, a, b)
    except TypeError:  # (uint64 with a signed integer is float64: no bitwise row takes it)
        with pytest.raises(TypeError, match=row.name):
            getattr(ng, row.name)(ng.tensor(a), ng.tensor(b))
        return
    _same(getattr(ng, row.name)(ng.tensor(a), ng.tensor(b)), want)


def test_floating_functions_take_numpys_float_dtypes(dtype):
    # NumPy's: float16 (numgrad's float32) for 8 bits, float32 for 16, float64 for wider
    want = np.float32 if np.dtype(dtype).itemsize <= 2 else np.float64
    x = ng.tensor(np.array([1, 2], dtype))
    assert ng.exp(x).dtype == want and (x / x).dtype == want and ng.erf(x).dtype == want
    assert np.exp(np.array([1], dtype)).dtype in (np.float16, want)
    assert x.mean().dtype == np.mean(np.array([1], dtype)).dtype == np.float64
    assert x.var().dtype == np.var(np.array([1], dtype)).dtype == np.float64


def test_python_scalars_are_weak_and_out_of_range_ones_raise(dtype):
    a = np.array(EDGES[dtype], dtype)
    x = ng.tensor(a)
    for got, want in [(x + 3, a + 3), (5 * x, 5 * a), (x // 7, a // 7), (x - 1.5, a - 1.5),
                      (x > 2, a > 2), (x ** 2, a ** 2), (x % 3, a % 3)]:
        _same(got, want)
    # (NumPy compares with them exactly; numgrad raises there too)
    for out in (int(np.iinfo(dtype).max) + 1, int(np.iinfo(dtype).min) - 1):
        with pytest.raises(OverflowError):
            a + out
        with pytest.raises(OverflowError):
            x + out
        with pytest.raises(OverflowError):
            out * x
        with pytest.raises(OverflowError):
            ng.greater(x, out)


def test_integer_powers(dtype):
    a = np.array(EDGES[dtype], dtype)
    _same(ng.tensor(a) ** ng.tensor(np.array(3, dtype)), a ** np.array(3, dtype))
    # exponents over 2**16 too (Numba's own integer power takes them in float64)
    big = np.array([e for e in EDGES[np.uint64] if e < 2**63] + [65536, 65537], np.int64)
    for b in (a[a >= 0], big):
        with np.errstate(over="ignore"):
            want = a[:, None] ** b[None, :]
        _same(ng.tensor(a[:, None]) ** ng.tensor(b[None, :]), want)
    # a negative exponent: NumPy's ValueError, or its OverflowError for unsigned types
    error = ValueError if np.iinfo(dtype).min else OverflowError
    with pytest.raises(error):
        a ** -1
    with pytest.raises(error):
        ng.tensor(a) ** -1


def test_casts_to_and_from_every_dtype(dtype):
    floats = np.array(FLOATS[dtype] + (OUT_OF_RANGE if dtype in SMALL else []))
    for source in (floats, floats.astype(np.float32), np.array(EDGES[np.int16], np.int64),
                   np.array(EDGES[np.uint64], np.uint64), np.array([True, False])):
        with np.errstate(invalid="ignore"):
            want = source.astype(dtype)  # (NumPy's x86 casts: through int32, wrapped)
        _same(ng.tensor(source).astype(dtype), want)
        _same((ng.tensor(source) * 1).astype(dtype), want)  # (in a kernel)
    a = np.array(EDGES[dtype], dtype)
    for target in ng.__array_namespace_info__().dtypes().values():
        _same((ng.tensor(a) + 0).astype(target), a.astype(target))


def test_reductions_and_scans_take_numpys_dtypes(dtype):
    a = np.array(EDGES[dtype], dtype).reshape(2, -1)
    x = ng.tensor(a)
    for name in ("sum", "prod", "max", "min", "mean", "argmax", "argmin", "cumsum", "cumprod"):
        for axis in (None, 0, 1):
            _same(getattr(ng, name)(x, axis=axis), getattr(np, name)(a, axis=axis))
    _same(ng.sum(x, dtype=dtype), np.sum(a, dtype=dtype))
    _same(ng.sort(x, axis=1), np.sort(a, axis=1))


def test_small_integers_are_dtypes_like_the_others(dtype):
    a = np.array(EDGES[dtype], dtype)
    assert ng.tensor(a).dtype == dtype and ng.zeros(3, dtype=dtype).dtype == dtype
    assert ng.tensor(a).numpy().dtype == dtype
    assert ng.iinfo(dtype).min == np.iinfo(dtype).min
    assert ng.iinfo(dtype).max == np.iinfo(dtype).max
    kind = "signed integer" if np.iinfo(dtype).min else "unsigned integer"
    assert ng.isdtype(dtype, kind) and ng.isdtype(dtype, "integral")
    assert ng.__array_namespace_info__().dtypes(kind=kind)[np.dtype(dtype).name] == dtype
    for each in ng.__array_namespace_info__().dtypes().values():
        assert ng.result_type(dtype, each) == np.result_type(dtype, each)
        assert ng.can_cast(dtype, each) == np.can_cast(dtype, each)
        assert ng.can_cast(each, dtype) == np.can_cast(each, dtype)
    a = a.reshape(2, -1)
    x = ng.tensor(a)
    _same(ng.concatenate([x, x[:1]]), np.concatenate([a, a[:1]]))
    _same(x[:, ::2].T, a[:, ::2].T)
    _same(ng.tensor(np.arange(20.0))[x % 20], np.arange(20.0)[a % 20])  # (an index)
    np.testing.assert_array_equal(np.from_dlpack(x.cpu()), a)
    assert ng.from_dlpack(a).dtype == dtype


def test_a_float_computation_differentiates_through_small_integers(dtype):
    a = np.array(EDGES[dtype], dtype)
    w = ng.tensor(np.linspace(-1, 1, a.size), requires_grad=True)
    loss = (w * ng.tensor(a)).tanh().sum()
    loss.backward()
    want = a * (1 - np.tanh(np.linspace(-1, 1, a.size) * a) ** 2)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-12)
