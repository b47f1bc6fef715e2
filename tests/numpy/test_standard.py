"""The Array API standard's names (`numgrad.standard`) against NumPy 2's functions of the
same names: values exactly (rtol 1e-15 for the transcendental ones), dtypes, and
gradients through the aliases against finite differences."""

import numpy as np
import pytest

import numgrad as ng

rng = np.random.default_rng(8)
A = rng.uniform(-0.9, 0.9, (3, 4))


@pytest.mark.parametrize("name", ["acos", "asin", "atan", "asinh", "atanh"])
def test_inverse_trigonometric_names(name):
    got = getattr(ng, name)(ng.tensor(A))
    np.testing.assert_allclose(got.numpy(), getattr(np, name)(A), rtol=1e-15)
    assert ng.gradcheck(getattr(ng, name), [ng.tensor(A * 0.5, requires_grad=True)])


def test_acosh_atan2_and_pow():
    np.testing.assert_allclose(ng.acosh(ng.tensor(A + 2)).numpy(), np.acosh(A + 2), rtol=1e-15)
    np.testing.assert_allclose(ng.atan2(ng.tensor(A), ng.tensor(A + 1)).numpy(),
                               np.atan2(A, A + 1), rtol=1e-15)
    np.testing.assert_allclose(ng.pow(ng.tensor(A), 3).numpy(), np.pow(A, 3), rtol=1e-15)


def test_joining_and_permuting():
    x = ng.tensor(A)
    np.testing.assert_array_equal(ng.concat([x, x], axis=1).numpy(), np.concat([A, A], axis=1))
    np.testing.assert_array_equal(ng.concat([x, x[0]], axis=None).numpy(),
                                  np.concat([A, A[0]], axis=None))
    np.testing.assert_array_equal(ng.permute_dims(x, (1, 0)).numpy(), np.permute_dims(A, (1, 0)))
    np.testing.assert_array_equal(ng.matrix_transpose(x).numpy(), np.matrix_transpose(A))
    np.testing.assert_array_equal([t.numpy() for t in ng.unstack(x, axis=1)],
                                  np.unstack(A, axis=1))


def test_vecdot_and_its_gradient():
    b = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(ng.vecdot(ng.tensor(A), ng.tensor(b)).numpy(),
                               np.vecdot(A, b), rtol=1e-14)
    c, d = rng.standard_normal((2, 1, 4)), rng.standard_normal((3, 4))  # (other axes broadcast)
    np.testing.assert_allclose(ng.vecdot(ng.tensor(c), ng.tensor(d)).numpy(),
                               np.vecdot(c, d), rtol=1e-14)
    np.testing.assert_allclose(ng.vecdot(ng.tensor(A), ng.tensor(A), axis=0).numpy(),
                               np.vecdot(A, A, axis=0), rtol=1e-14)
    assert ng.gradcheck(ng.vecdot, [ng.tensor(A, requires_grad=True),
                                    ng.tensor(b, requires_grad=True)])


def test_unique_functions_return_the_standards_named_tuples():
    a = np.array([[3, 1, 3], [2, 1, 3]])
    x = ng.tensor(a)
    for name in ("unique_all", "unique_counts", "unique_inverse"):
        got, want = getattr(ng, name)(x), getattr(np, name)(a)
        assert got._fields == want._fields
        for field in want._fields:
            np.testing.assert_array_equal(getattr(got, field).numpy(), getattr(want, field))
    np.testing.assert_array_equal(ng.unique_values(x).numpy(), np.sort(np.unique_values(a)))


def test_dtype_functions_answer_as_numpys():
    f32, i32 = ng.ones(2, dtype="float32"), ng.ones(2, dtype="int32")
    assert ng.finfo(ng.float32).eps == np.finfo(np.float32).eps == ng.finfo(f32).eps
    assert ng.iinfo(i32).max == np.iinfo(np.int32).max
    assert ng.can_cast(ng.int32, ng.float64) and not ng.can_cast(ng.float64, ng.int32)
    assert ng.can_cast(i32, ng.int64)
    assert ng.isdtype(ng.float32, "real floating") and ng.isdtype(ng.int64, "integral")
    assert not ng.isdtype(ng.bool, "numeric")
    assert ng.result_type(f32, 2.0) == np.float32  # (a Python float is weak)
    assert ng.result_type(ng.int32, ng.int64, f32) == np.result_type(np.int32, np.int64,
                                                                      np.float32)
    assert (f32 * 2.0).dtype == ng.result_type(f32, 2.0)


def test_asarray_and_astype():
    x = ng.tensor(A)
    assert ng.asarray(x) is x and ng.asarray(x, copy=True) is not x
    assert ng.asarray([1, 2], dtype="float64").dtype == np.float64
    with pytest.raises(ValueError, match="without a copy"):
        ng.asarray(x, dtype="float32", copy=False)
    assert ng.astype(x, "float32").dtype == np.float32
    assert ng.astype(x, "float64", copy=False) is x
    assert ng.astype(x, "float64") is not x
    np.testing.assert_array_equal(np.astype(x, np.float32).numpy(), A.astype(np.float32))
