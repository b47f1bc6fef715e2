"""What the Array API standard's conformance suite (data-apis/array-api-tests, run by
`tools/array_api_tests.py`) found wrong or missing in numgrad's namespace, each checked
here against NumPy 2's function of the same name: `unstack` along a middle or last axis
of a 3-D array (transposed slices), `vecdot`'s dtype (int64 for int32 operands) and its
broadcast along the contracted axis (an answer where NumPy raises), `finfo`'s NumPy
scalars (the standard's are Python floats), the standard's `conj`, `real`, `imag` and
``Tensor.__complex__``, `clip`'s ``min``/``max`` by position, `reshape`'s ``shape=`` and
``copy=``, and `from_dlpack`'s ``device=`` and ``copy=``."""

import inspect

import numpy as np
import pytest

import numgrad as ng

rng = np.random.default_rng(39)
A3 = rng.standard_normal((2, 3, 4))
A4 = rng.standard_normal((2, 3, 1, 5))


# ---- unstack: the slices along any axis, the other axes in their order --------------

@pytest.mark.parametrize("a", [A3, A4], ids=["3d", "4d"])
def test_unstack_along_every_axis_is_numpys(a):
    for axis in range(-a.ndim, a.ndim):
        got, want = ng.unstack(ng.tensor(a), axis=axis), np.unstack(a, axis=axis)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g.numpy(), w)


def test_unstack_gradient_reaches_each_slice():
    x = ng.tensor(A3, requires_grad=True)
    first, *_, last = ng.unstack(x, axis=2)
    (first * 2 + last).sum().backward()
    want = np.zeros_like(A3)
    want[:, :, 0], want[:, :, -1] = 2, 1
    np.testing.assert_array_equal(x.grad.numpy(), want)


# ---- vecdot: the operands' dtype, no broadcast along the contracted axis ------------

@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.float32,
                                   np.float64, np.bool_])
def test_vecdot_keeps_the_promoted_dtype(dtype):
    a = rng.integers(-3, 4, (2, 3, 4)).astype(dtype)
    b = rng.integers(-3, 4, (3, 4)).astype(dtype)
    for namespace in (ng, ng.linalg):
        got = namespace.vecdot(ng.tensor(a), ng.tensor(b))
        want = np.vecdot(a, b)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


def test_vecdot_of_int8_and_int32_is_int32():
    a, b = np.arange(4, dtype=np.int8), np.arange(4, dtype=np.int32)
    got = ng.vecdot(ng.tensor(a), ng.tensor(b))
    assert got.dtype == np.vecdot(a, b).dtype == np.int32
    assert got.item() == np.vecdot(a, b)


@pytest.mark.parametrize("shapes, axis", [(((2, 3), (1,)), -1), (((2, 3), (3, 1)), -1),
                                          (((1, 3), (2, 3)), 0), (((4,), (3,)), -1)])
def test_vecdot_lengths_along_the_axis_must_be_equal(shapes, axis):
    a, b = (np.ones(s) for s in shapes)
    with pytest.raises(ValueError):
        np.vecdot(a, b, axis=axis)
    for namespace in (ng, ng.linalg):
        with pytest.raises(ValueError, match="lengths along axis"):
            namespace.vecdot(ng.tensor(a), ng.tensor(b), axis=axis)


# ---- finfo: the standard's attributes as Python numbers -----------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_finfo_gives_python_floats_of_numpys_values(dtype):
    got, want = ng.finfo(dtype), np.finfo(dtype)
    for name in ("eps", "max", "min", "smallest_normal"):
        value = getattr(got, name)
        assert type(value) is float, name
        assert value == getattr(want, name), name
    assert type(got.bits) is int and got.bits == want.bits
    assert got.dtype == want.dtype
    assert got.tiny == want.tiny and got.resolution == want.resolution  # NumPy's others
    assert ng.finfo(ng.ones(2, dtype=dtype)).eps == float(want.eps)
    assert "eps=" in repr(got)
    with pytest.raises(AttributeError):
        got.no_such_attribute  # noqa: B018


# ---- conj, real, imag and complex(): real dtypes -------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.int16])
def test_conj_real_imag_are_numpys_for_real_dtypes(dtype):
    a = (A3 * 10).astype(dtype)
    x = ng.tensor(a)
    for name, numpy_function in (("conj", np.conj), ("conjugate", np.conjugate),
                                 ("real", np.real), ("imag", np.imag)):
        got, want = getattr(ng, name)(x), numpy_function(a)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)
        assert got is not x, name  # a new tensor: `got += 1` leaves x as it is


def test_numpys_conj_real_imag_on_a_tensor_dispatch_to_numgrad():
    x = ng.tensor(A3)
    for numpy_function in (np.conj, np.conjugate, np.real, np.imag):
        got = numpy_function(x)
        assert isinstance(got, ng.Tensor)
        np.testing.assert_array_equal(got.numpy(), numpy_function(A3))


def test_conj_and_real_pass_the_gradient_imag_has_none():
    x = ng.tensor(A3, requires_grad=True)
    (ng.real(x) * 2 + ng.conj(x)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full_like(A3, 3.0))
    assert not ng.imag(x).requires_grad


def test_conj_real_imag_of_bools_are_numpys():
    a = np.array([True, False])
    for name, numpy_function in (("conj", np.conj), ("real", np.real), ("imag", np.imag)):
        got, want = getattr(ng, name)(ng.tensor(a)), numpy_function(a)
        assert got.dtype == want.dtype, name  # (conj: int8, real and imag: bool)
        np.testing.assert_array_equal(got.numpy(), want, err_msg=name)


@pytest.mark.parametrize("value", [1.5, -0.0, np.inf, -np.inf, 3, True, False])
def test_complex_of_a_tensor_is_numpys(value):
    a = np.array(value)
    got = complex(ng.tensor(a))
    assert type(got) is complex
    assert got == complex(a)
    assert np.copysign(1, got.real) == np.copysign(1, complex(a).real)


def test_complex_of_nan_is_the_standards():
    """The standard: ``nan + nanj`` (Python's ``complex(nan)`` and NumPy's: ``nan + 0j``)."""
    got = complex(ng.tensor(np.nan))
    assert np.isnan(got.real) and np.isnan(got.imag)
    with pytest.raises(ValueError, match="one element"):
        complex(ng.ones(2))


# ---- clip, reshape: the standard's parameters ---------------------------------------

def test_clip_takes_min_and_max_by_position_and_numpys_names_by_keyword():
    assert list(inspect.signature(ng.clip).parameters)[:3] == ["a", "min", "max"]
    x = ng.tensor(A3)
    want = np.clip(A3, -0.5, 0.5)
    for got in (ng.clip(x, -0.5, 0.5), ng.clip(x, min=-0.5, max=0.5),
                ng.clip(x, a_min=-0.5, a_max=0.5), np.clip(x, -0.5, 0.5),
                np.clip(x, a_min=-0.5, a_max=0.5), np.clip(x, min=-0.5, max=0.5)):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(ng.clip(x, max=0.0).numpy(), np.clip(A3, None, 0.0))


def test_reshape_takes_shape_by_name_and_copy():
    params = inspect.signature(ng.reshape).parameters
    assert list(params)[1] == "shape" and params["copy"].kind is inspect.Parameter.KEYWORD_ONLY
    x = ng.tensor(A3, requires_grad=True)
    for got in (ng.reshape(x, (4, 6)), ng.reshape(x, shape=(4, -1)),
                np.reshape(x, (4, 6)), np.reshape(x, shape=(4, 6)),
                ng.reshape(x, (4, 6), copy=True), ng.reshape(x, (4, 6), copy=False)):
        np.testing.assert_array_equal(got.numpy(), np.reshape(A3, (4, 6)))
    same = ng.reshape(x, A3.shape, copy=True)
    assert same is not x
    (same * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full_like(A3, 3.0))
    with pytest.raises(TypeError, match="order"):
        np.reshape(x, (24,), order="F")


# ---- from_dlpack: device= and copy= ---------------------------------------------------

def test_from_dlpack_copy_true_owns_its_memory_copy_none_shares():
    params = inspect.signature(ng.from_dlpack).parameters
    assert params["device"].kind is params["copy"].kind is inspect.Parameter.KEYWORD_ONLY
    a = np.arange(4.0)
    copied = ng.from_dlpack(a, copy=True)
    shared = ng.from_dlpack(a)
    kept = ng.from_dlpack(a, copy=False, device="cpu")
    a[0] = 99.0
    assert copied.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert shared.tolist() == kept.tolist() == [99.0, 1.0, 2.0, 3.0]
    assert ng.from_dlpack(a, device=ng.__array_namespace_info__().default_device()).device \
        == ng.tensor(a).device
