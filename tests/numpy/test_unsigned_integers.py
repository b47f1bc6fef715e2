"""uint8, uint16, uint32 and uint64 (the Array API standard's unsigned integers): every
test of `tests/numpy/test_small_integers.py` (each elementwise row at the edges of the type,
casts, reductions, scans, promotion, Python scalars) runs here on the unsigned types,
with this module's `dtype` and `other` fixtures; then what only unsigned types have:
uint64 beside a signed integer, negative Python integers and floats cast from outside
the type's range (docs/decisions.md)."""

import os

import numpy as np
import pytest
from budget import quick, sampled
from test_small_integers import (  # noqa: F401 - run here on the unsigned types
    EDGES,
    _same,
    test_a_float_computation_differentiates_through_small_integers,
    test_casts_to_and_from_every_dtype,
    test_every_binary_row_gives_numpys_values_and_dtype,
    test_every_unary_row_gives_numpys_values_and_dtype,
    test_floating_functions_take_numpys_float_dtypes,
    test_integer_powers,
    test_python_scalars_are_weak_and_out_of_range_ones_raise,
    test_reductions_and_scans_take_numpys_dtypes,
    test_small_integers_are_dtypes_like_the_others,
)

import numgrad as ng

UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
COMPARISONS = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]


@pytest.fixture(params=quick(UNSIGNED, [np.uint64]), ids=lambda d: d.__name__)
def dtype(request):
    return request.param


# (Every pairing is `.ci/run`'s: README's command runs the binary rows on int8 pairs,
# tests/numpy/test_small_integers.py.)
@pytest.fixture(params=quick(["same", np.int8, np.int64, np.bool_], []),
                ids=lambda d: d if isinstance(d, str) else d.__name__)
def other(request):
    return request.param


def test_unsigned_dtypes_are_numgrads():
    assert (ng.uint8, ng.uint16, ng.uint32, ng.uint64) == tuple(map(np.dtype, UNSIGNED))
    assert list(ng.__array_namespace_info__().dtypes(kind="unsigned integer")) == [
        "uint8", "uint16", "uint32", "uint64"]
    assert ng.isdtype(ng.uint8, "integral") and not ng.isdtype(ng.uint8, "signed integer")
    with pytest.raises(TypeError, match="only floating tensors can require grad; this one "
                                        "has dtype uint8"):
        ng.tensor(np.arange(3, dtype=np.uint8), requires_grad=True)


@pytest.mark.parametrize("signed", quick([np.int8, np.int32, np.int64], [np.int64]),
                         ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", sampled(COMPARISONS, 2))
def test_uint64_compares_exactly_with_signed_integers(name, signed):
    """NumPy 2 compares uint64 with int64 exactly, though their common dtype is float64
    (2**63 + 1 and 2**63 are one float64; 2**64 - 1 is no -1)."""
    u = np.array(EDGES[np.uint64], np.uint64)[:, None]
    s = np.array([-2**63, -1, 0, 1, 2**53, 2**63 - 1], np.int64).astype(signed)[None, :]
    for x, y in ((u, s), (s, u)):
        _same(getattr(ng, name)(ng.tensor(x), ng.tensor(y)), getattr(np, name)(x, y))
    for x, y in ((u, s[0, 1]), (s, u[9, 0]), (s[0, 1], u)):  # (NumPy scalars: -1, 2**63 + 1)
        got = getattr(ng, name)(*(ng.tensor(v) if v.ndim else v for v in (x, y)))
        _same(got, getattr(np, name)(x, y))


#: Floats no unsigned type holds (undefined in C), cast by numgrad's compiled kernels as
#: NumPy's scalar casts do on x86: through int32 (uint8, uint16) or int64 (uint32,
#: uint64) below 2**31 or 2**63 in magnitude, wrapping, else that type's minimum (0 in
#: 8, 16 and 32 bits, 2**63); uint64 converts 2**63 up to 2**64 as it is, 0 above. (The
#: interpreter target gives NumPy's array casts: the same but for uint32, whose vector
#: loops take uint64's rule at 32 bits on x86 with AVX-512.)
BEYOND = [-1.0, -300.7, -2.0**31 - 1, -2.0**63, -1e20, 70000.5, 3e9, 2.0**33 + 5,
          2.0**63 - 1024, 2.0**64, 1e20, np.inf, -np.inf, np.nan]
BEYOND_CAST = {
    np.uint8: [255, 212, 0, 0, 0, 112, 0, 0, 0, 0, 0, 0, 0, 0],
    np.uint16: [65535, 65236, 0, 0, 0, 4464, 0, 0, 0, 0, 0, 0, 0, 0],
    np.uint32: [2**32 - 1, 2**32 - 300, 2**31 - 1, 0, 0, 70000, 3 * 10**9, 5, 2**32 - 1024,
                0, 0, 0, 0, 0],
    np.uint64: [2**64 - 1, 2**64 - 300, 2**64 - 2**31 - 1, 2**63, 2**63, 70000, 3 * 10**9,
                2**33 + 5, 2**63 - 1024, 0, 0, 0, 2**63, 2**63]}


def test_floats_beyond_an_unsigned_type_cast_as_documented(dtype):
    want = np.array(BEYOND_CAST[dtype], dtype)
    folded = [ng.full((), value).astype(dtype) for value in BEYOND]  # (constants)
    np.testing.assert_array_equal([t.numpy() for t in folded], want)
    if os.environ.get("NUMGRAD_CPU_KERNELS") == "numpy" and os.environ.get(
            "NUMGRAD_TEST_DEVICE", "cpu") == "cpu":
        return  # (the interpreter's kernels cast as NumPy's arrays do)
    got = (ng.tensor(np.array(BEYOND)) * 1).astype(dtype)  # (in a kernel)
    np.testing.assert_array_equal(got.numpy(), want)
