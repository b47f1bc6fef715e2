"""SPEC section 1 (tensors and values) on the CPU target.

Creation functions, dtypes and NumPy 2 promotion, attributes, the ways out of a
tensor (numpy/item/tolist/asarray/float/int/bool/len/iter/repr) and the
immutable-buffer semantics of in-place operators.

Every dtype and value is compared with what NumPy gives for the same call.
"""

import numpy as np
import pytest
from budget import sampled

import numgrad as ng

SUPPORTED_DTYPE_NAMES = ("float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                         "uint16", "uint32", "uint64", "bool")


def assert_same_array(t, expected):
    """Shape, dtype and exact values of tensor ``t`` equal the ndarray ``expected``."""
    expected = np.asarray(expected)
    got = t.numpy()
    assert isinstance(got, np.ndarray)
    assert tuple(t.shape) == expected.shape
    assert got.shape == expected.shape
    assert t.dtype == expected.dtype, (t.dtype, expected.dtype)
    assert got.dtype == expected.dtype
    # Creation and copies are exact: no arithmetic happens.
    np.testing.assert_array_equal(got, expected, strict=True)


# ---------------------------------------------------------------------------
# ng.tensor: data kinds and inferred dtypes
# ---------------------------------------------------------------------------

TENSOR_DATA = [
    pytest.param(1.0, id="py-float"),
    pytest.param(3, id="py-int"),
    pytest.param(True, id="py-bool"),
    pytest.param(-2.5, id="py-neg-float"),
    pytest.param([1, 2, 3], id="list-int"),
    pytest.param([[1.0, 2.0], [3.0, 4.0]], id="nested-float"),
    pytest.param([[1, 2.5], [3, 4]], id="nested-mixed-int-float"),
    pytest.param([True, False, True], id="list-bool"),
    pytest.param([[[1], [2]], [[3], [4]]], id="nested-rank3"),
]


@pytest.mark.parametrize("data", TENSOR_DATA)
def test_tensor_from_python_data_matches_numpy(data):
    t = ng.tensor(data)
    expected = np.array(data)
    assert_same_array(t, expected)
    assert t.ndim == expected.ndim
    assert t.size == expected.size


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_tensor_from_ndarray_keeps_dtype(dtype):
    a = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
    t = ng.tensor(a)
    assert_same_array(t, a)


def test_tensor_copies_ndarray_source():
    a = np.arange(4.0)
    t = ng.tensor(a)
    a[0] = 100.0
    a[1:] = -1.0
    assert_same_array(t, np.arange(4.0))


def test_tensor_from_tensor_copies():
    src = ng.tensor([1.0, 2.0, 3.0])
    t = ng.tensor(src)
    assert t is not src
    assert_same_array(t, np.array([1.0, 2.0, 3.0]))
    src += 10.0  # gives src a new value; the copy keeps its own
    assert_same_array(src, np.array([11.0, 12.0, 13.0]))
    assert_same_array(t, np.array([1.0, 2.0, 3.0]))


def test_tensor_from_tensor_with_dtype_casts():
    t = ng.tensor(ng.tensor([1.5, 2.0]), dtype="float32")
    assert_same_array(t, np.array([1.5, 2.0], dtype=np.float32))


def test_from_numpy_values_and_dtype():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ng.from_numpy(a)
    assert_same_array(t, a.copy())
    b = np.linspace(0.0, 1.0, 4, dtype=np.float32)
    assert_same_array(ng.from_numpy(b), b.copy())


@pytest.mark.parametrize(
    "dtype_arg", [np.float32, "float32", np.dtype("float32"), "ng.float32"], ids=str
)
def test_dtype_argument_spellings(dtype_arg):
    if isinstance(dtype_arg, str) and dtype_arg == "ng.float32":
        dtype_arg = ng.float32
    t = ng.tensor([1, 2, 3], dtype=dtype_arg)
    assert_same_array(t, np.array([1, 2, 3], dtype=np.float32))
    z = ng.zeros((2, 2), dtype=dtype_arg)
    assert_same_array(z, np.zeros((2, 2), dtype=np.float32))


def test_ng_dtype_names_compare_equal_to_numpy_dtypes():
    for name in SUPPORTED_DTYPE_NAMES:
        # ng.bool (as np.bool / torch.bool) or ng.bool_ (as np.bool_)
        ng_dtype = (
            getattr(ng, name, None)
            if name != "bool"
            else getattr(ng, "bool", getattr(ng, "bool_", None))
        )
        assert ng_dtype is not None, f"ng.{name} missing"
        assert np.dtype(ng_dtype) == np.dtype(name)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: ng.tensor(np.zeros(3, dtype=np.complex128)), id="complex128-array"),
        pytest.param(lambda: ng.tensor([1.0, 2.0], dtype=np.float16), id="dtype-float16"),
        pytest.param(lambda: ng.tensor([1, 2], dtype="float16"), id="dtype-float16-str"),
        pytest.param(lambda: ng.tensor(np.array([1, 2], dtype=np.float16)), id="float16-array"),
        pytest.param(lambda: ng.tensor(np.array(["a", "b"])), id="string-array"),
        pytest.param(lambda: ng.tensor(1 + 2j), id="py-complex"),
        pytest.param(lambda: ng.zeros((2,), dtype="complex64"), id="zeros-complex64"),
    ],
)
def test_unsupported_dtypes_raise_type_error_naming_supported(make):
    with pytest.raises(TypeError) as info:
        make()
    msg = str(info.value)
    for name in SUPPORTED_DTYPE_NAMES:
        assert name in msg, f"{name!r} not named in: {msg}"


@pytest.mark.parametrize("data", ["abc", object(), {"a": 1}], ids=["str", "object", "dict"])
def test_unsupported_data_raises_type_error(data):
    with pytest.raises(TypeError):
        ng.tensor(data)


@pytest.mark.parametrize(
    "data, dtype",
    [([1, 2], None), ([True, False], None), ([1.0, 2.0], "int32"), ([1.0], "bool")],
)
def test_requires_grad_on_non_float_is_error(data, dtype):
    # SPEC 1: requires_grad=True on a non-floating tensor is an error;
    # SPEC 3: dtype problems are TypeError.
    with pytest.raises(TypeError):
        ng.tensor(data, dtype=dtype, requires_grad=True)


def test_requires_grad_on_float32_is_allowed():
    t = ng.tensor([1.0, 2.0], dtype="float32", requires_grad=True)
    assert t.requires_grad
    assert t.dtype == np.dtype("float32")


# ---------------------------------------------------------------------------
# Creation functions
# ---------------------------------------------------------------------------

CREATION_CASES = [
    ("zeros", (3,), {}),
    ("zeros", ((2, 3),), {}),
    ("zeros", ((2, 3),), {"dtype": "int32"}),
    ("zeros", ((),), {}),
    ("zeros", ((2,),), {"dtype": None}),
    ("ones", ((2,),), {"dtype": None}),
    ("ones", ((2, 1, 3),), {}),
    ("ones", ((2,),), {"dtype": "bool"}),
    ("ones", ((4,),), {"dtype": "int64"}),
    ("full", ((2, 2), 7), {}),
    ("full", ((2, 2), 2.5), {}),
    ("full", ((3,), True), {}),
    ("full", ((2,), 1), {"dtype": "float32"}),
    ("arange", (5,), {}),
    ("arange", (1, 7, 2), {}),
    ("arange", (0.0, 1.0, 0.25), {}),
    ("arange", (5,), {"dtype": "float32"}),
    ("arange", (5, 0, -1), {}),
    ("linspace", (0, 1, 5), {}),
    ("linspace", (-1.0, 1.0, 4), {"dtype": "float32"}),
    ("linspace", (2.0, 3.0, 4), {"endpoint": False}),
    ("eye", (3,), {}),
    ("eye", (2, 3), {}),
    ("eye", (3,), {"dtype": "int32"}),
]


@pytest.mark.parametrize(
    "name, args, kwargs", CREATION_CASES, ids=[f"{n}{a}{k}" for n, a, k in CREATION_CASES]
)
def test_creation_functions_match_numpy(name, args, kwargs):
    t = getattr(ng, name)(*args, **kwargs)
    expected = getattr(np, name)(*args, **kwargs)
    if name == "linspace":
        # linspace computes start + i*step: same formula as NumPy, last bit may differ.
        assert tuple(t.shape) == expected.shape
        assert t.dtype == expected.dtype
        rtol = 1e-6 if expected.dtype == np.float32 else 1e-14
        np.testing.assert_allclose(t.numpy(), expected, rtol=rtol, atol=0)
    else:
        assert_same_array(t, expected)


@pytest.mark.parametrize("dtype", [None, "float32", "int32", "bool"])
def test_empty_shape_and_dtype(dtype):
    t = ng.empty((2, 3), dtype=dtype)
    expected = np.empty((2, 3), dtype=dtype)
    assert tuple(t.shape) == (2, 3)
    assert t.dtype == expected.dtype
    assert t.numpy().shape == (2, 3)


def test_creation_shape_as_int_and_tuple_agree():
    assert ng.zeros(4).shape == ng.zeros((4,)).shape == (4,)
    assert ng.ones(3).shape == (3,)


@pytest.mark.parametrize("src_dtype", ["float32", "float64", "int32", "bool"])
def test_like_functions_match_numpy(src_dtype):
    a = (np.arange(6).reshape(3, 2) % 2).astype(src_dtype)
    t = ng.tensor(a)
    assert_same_array(ng.zeros_like(t), np.zeros_like(a))
    assert_same_array(ng.ones_like(t), np.ones_like(a))
    assert_same_array(ng.full_like(t, 1), np.full_like(a, 1))


def test_a_tensor_fill_value_is_differentiable():
    """``ng.full(shape, t)`` and ``ng.full_like(x, t)`` broadcast a tensor fill value (as
    NumPy broadcasts an array one), and its gradient flows back to it (HIPS autograd's
    ``6 t`` for the sum of three squares)."""
    t = ng.tensor(2.0, requires_grad=True)
    filled = ng.full((3,), t)
    assert filled.requires_grad and filled.shape == (3,)
    (g,) = ng.grad((filled ** 2).sum(), t)
    assert g.item() == 12.0
    x = ng.tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float32")
    like = ng.full_like(x, t)
    assert like.dtype == np.float32 and like.tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert ng.grad(like.sum(), t)[0].item() == 4.0
    row = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = ng.grad((ng.full((2, 3), row) * ng.tensor([[1.0], [10.0]])).sum(), row)
    assert g.tolist() == [11.0, 11.0, 11.0]
    leaf = ng.full((2,), t, requires_grad=True)  # a leaf of its own
    assert leaf.requires_grad and leaf.grad_fn is None and leaf.tolist() == [2.0, 2.0]
    with pytest.raises(ValueError):
        ng.full((2,), ng.tensor([1.0, 2.0, 3.0]))


def test_like_functions_with_dtype():
    t = ng.tensor([[1, 2, 3]], dtype="int32")
    a = np.array([[1, 2, 3]], dtype=np.int32)
    assert_same_array(ng.zeros_like(t, dtype="float64"), np.zeros_like(a, dtype="float64"))
    assert_same_array(ng.ones_like(t, dtype=np.float32), np.ones_like(a, dtype=np.float32))
    assert_same_array(ng.full_like(t, 2.5, dtype="float64"), np.full_like(a, 2.5, dtype="float64"))


def test_creation_uses_the_default_device():
    default = str(ng.get_default_device())  # 'cpu' unless NUMGRAD_TEST_DEVICE says
    for t in (ng.tensor(1.0), ng.zeros(3), ng.arange(3)):
        assert str(t.device) == default
    assert str(ng.tensor([1.0], device="cpu").device) == "cpu"


# ---------------------------------------------------------------------------
# Promotion: NumPy 2 rules, weak Python scalars
# ---------------------------------------------------------------------------

_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b,
    "radd": lambda a, b: b + a,
    "rsub": lambda a, b: b - a,
    "rmul": lambda a, b: b * a,
    "rtruediv": lambda a, b: b / a,
}

# (left dtype, right operand: a Python scalar or a dtype name for a second array, op)
PROMOTION_CASES = [
    ("float32", 2.0, "mul"),
    ("float32", 2, "add"),
    ("float32", 2.0, "rmul"),
    ("float32", 2, "truediv"),
    ("int32", 2, "add"),
    ("int32", 1, "rsub"),
    ("int32", 2.5, "mul"),
    ("int32", "float32", "add"),
    ("int32", "int64", "add"),
    ("int64", "int32", "mul"),
    ("float32", "float64", "add"),
    ("float32", "int64", "mul"),
    ("bool", "bool", "add"),
    ("bool", "bool", "mul"),
    ("bool", 1, "add"),
    ("bool", 1.5, "mul"),
    ("bool", "int32", "add"),
    ("int64", "int64", "truediv"),
    ("int32", "int32", "truediv"),
    ("int32", 2, "truediv"),
    ("int32", 2, "rtruediv"),
    ("float32", "float32", "truediv"),
]


@pytest.mark.parametrize(
    "left, right, op", sampled(PROMOTION_CASES, 2),
    ids=[f"{a}-{b!r}-{o}" for a, b, o in PROMOTION_CASES])
def test_binary_promotion_matches_numpy(left, right, op):
    fn = _OPS[op]
    a = np.array([[1, 2, 3], [4, 0, 1]])
    if "truediv" in op:
        a = a + (a == 0)  # no zero denominators
    a = a.astype(left)
    if isinstance(right, str):
        b = np.array([[3, 1, 2], [1, 5, 2]]).astype(right)
        got = fn(ng.tensor(a), ng.tensor(b))
    else:
        b = right
        got = fn(ng.tensor(a), b)
    expected = fn(a, b)
    assert got.dtype == expected.dtype, f"{got.dtype} != NumPy's {expected.dtype}"
    if expected.dtype.kind == "f":
        # one correctly rounded op on both sides (division of ints via float64)
        rtol = 1e-6 if expected.dtype == np.float32 else 1e-15
        np.testing.assert_allclose(got.numpy(), expected, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(got.numpy(), expected, strict=True)


def test_array_and_list_operands_promote_by_their_own_dtype():
    # Operands that are data (arrays, lists) are loaded as tensors of their own dtype,
    # never promoted by a cached guess from their Python type (float32 + a float64
    # array is float64, whichever came first).
    t = ng.tensor([1.0, 2.0], dtype="float32")
    for other in [np.array([0.5, 1.5], np.float32), np.array([0.5, 1.5]), [0.5, 1.5],
                  np.array([1, 2], np.int32)]:
        got, expected = t + other, np.array([1.0, 2.0], np.float32) + other
        assert got.dtype == expected.dtype, (other, got.dtype, expected.dtype)
        np.testing.assert_array_equal(got.numpy(), expected)  # exact: one rounding each
    assert (ng.tensor([1, 2]) * [1.5, 2.5]).tolist() == [1.5, 5.0]


def test_bool_add_is_logical_or_like_numpy():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    got = ng.tensor(a) + ng.tensor(b)
    expected = np.add(a, b)
    assert expected.dtype == np.bool_
    assert_same_array(got, expected)


# ---------------------------------------------------------------------------
# Attributes
# ---------------------------------------------------------------------------


def test_basic_attributes():
    t = ng.tensor(np.zeros((2, 3, 4)))
    assert t.shape == (2, 3, 4)
    assert isinstance(t.shape, tuple)
    assert t.ndim == 3
    assert t.size == 24
    assert t.dtype == np.dtype("float64")
    assert isinstance(t.dtype, np.dtype)
    assert t.device == ng.get_default_device()
    assert t.requires_grad is False
    assert t.grad is None
    assert t.grad_fn is None
    assert t.is_leaf is True


def test_scalar_attributes():
    t = ng.tensor(2.0)
    assert t.shape == ()
    assert t.ndim == 0
    assert t.size == 1


def test_autograd_attributes_leaf_and_non_leaf():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad is True
    assert x.is_leaf is True
    assert x.grad_fn is None
    assert x.grad is None
    y = x * 2.0
    assert y.requires_grad is True
    assert y.is_leaf is False
    assert y.grad_fn is not None
    # a tensor computed only from tensors that do not require grad is a leaf
    z = ng.tensor([1.0]) * 2.0
    assert z.requires_grad is False
    assert z.is_leaf is True
    assert z.grad_fn is None


def test_T_attribute_reverses_all_axes():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = ng.tensor(a)
    assert t.T.shape == (4, 3, 2)
    assert_same_array(t.T, a.T)
    m = np.arange(6.0).reshape(2, 3)
    assert_same_array(ng.tensor(m).T, m.T)
    v = np.arange(3.0)
    assert_same_array(ng.tensor(v).T, v)


# ---------------------------------------------------------------------------
# Ways out
# ---------------------------------------------------------------------------


def test_numpy_returns_independent_array():
    t = ng.tensor([1.0, 2.0, 3.0])
    a = t.numpy()
    assert isinstance(a, np.ndarray)
    a[0] = 99.0
    a[1:] = -5.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0], strict=False)
    assert t.tolist() == [1.0, 2.0, 3.0]
    # same for a computed (non-leaf, realized) tensor
    y = t * 2.0
    b = y.numpy()
    b[...] = 0.0
    np.testing.assert_array_equal(y.numpy(), [2.0, 4.0, 6.0], strict=False)


def test_numpy_on_tensor_requiring_grad():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    np.testing.assert_array_equal(y.numpy(), [3.0, 6.0], strict=False)


def test_np_asarray():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ng.tensor(a)
    got = np.asarray(t)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, a, strict=True)
    got[0, 0] = 42
    np.testing.assert_array_equal(t.numpy(), a, strict=True)
    f = np.asarray(t, dtype=np.float64)
    np.testing.assert_array_equal(f, a.astype(np.float64), strict=True)


@pytest.mark.parametrize(
    "data, dtype, expected, pytype",
    [
        (2.5, None, 2.5, float),
        ([[2.5]], None, 2.5, float),
        (7, None, 7, int),
        ([3], "int32", 3, int),
        (True, None, True, bool),
        (1.5, "float32", 1.5, float),
    ],
)
def test_item(data, dtype, expected, pytype):
    v = ng.tensor(data, dtype=dtype).item()
    assert type(v) is pytype
    assert v == expected


def test_tolist_matches_numpy():
    for a in (
        np.arange(6.0).reshape(2, 3),
        np.array([[1, 2], [3, 4]], dtype=np.int32),
        np.array([True, False]),
        np.array(3.5),
    ):
        got = ng.tensor(a).tolist()
        assert got == a.tolist()
        flat = got if isinstance(got, list) else [got]
        while flat and isinstance(flat[0], list):
            flat = [v for row in flat for v in row]
        assert [type(v) for v in flat] == [type(v) for v in np.ravel(a).tolist()]


def test_python_scalar_conversions_one_element():
    assert float(ng.tensor(2.5)) == 2.5
    assert type(float(ng.tensor(2.5))) is float
    assert float(ng.tensor([[2.5]])) == 2.5
    assert int(ng.tensor(7)) == 7
    assert int(ng.tensor(2.75)) == 2
    assert int(ng.tensor([-2.75])) == -2
    assert bool(ng.tensor(0.0)) is False
    assert bool(ng.tensor([3])) is True
    assert bool(ng.tensor(True)) is True


@pytest.mark.parametrize(
    "convert", [float, int, bool, lambda t: t.item()], ids=["float", "int", "bool", "item"]
)
def test_python_scalar_conversions_many_elements_raise(convert):
    t = ng.tensor([1.0, 2.0])
    # NumPy raises TypeError (float/int) or ValueError (bool); PyTorch RuntimeError.
    with pytest.raises((ValueError, RuntimeError, TypeError)):
        convert(t)


def test_len_and_iteration():
    a = np.arange(12.0).reshape(3, 4)
    t = ng.tensor(a)
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3
    for row, expected in zip(rows, a):
        assert isinstance(row, type(t))
        assert_same_array(row, expected)
    v = ng.tensor([1, 2, 3])
    items = [e.item() for e in v]
    assert items == [1, 2, 3]
    assert [e.shape for e in v] == [(), (), ()]


def test_len_of_scalar_raises_type_error():
    with pytest.raises(TypeError):
        len(ng.tensor(1.0))


def test_repr_shows_values_dtype_device():
    r = repr(ng.tensor([1.5, 2.25]))
    assert "1.5" in r and "2.25" in r
    assert "float64" in r
    assert f"device='{ng.get_default_device()}'" in r
    r32 = repr(ng.tensor([7, 8], dtype="int32"))
    assert "7" in r32 and "8" in r32 and "int32" in r32


def test_repr_shows_autograd_state():
    x = ng.tensor([1.5, 2.25], requires_grad=True)
    assert "requires_grad=True" in repr(x)
    y = x * 2.0
    ry = repr(y)
    assert "grad_fn" in ry
    assert "3.0" in ry or "3." in ry
    assert "4.5" in ry


# ---------------------------------------------------------------------------
# Immutable buffers and in-place operators
# ---------------------------------------------------------------------------


def test_inplace_add_keeps_identity_and_earlier_slices():
    x = ng.tensor([1.0, 2.0, 3.0, 4.0])
    ident = id(x)
    y = x[0:2]
    z = x * 1.0
    x += 1.0
    assert id(x) == ident
    assert_same_array(x, np.array([2.0, 3.0, 4.0, 5.0]))
    assert_same_array(y, np.array([1.0, 2.0]))
    assert_same_array(z, np.array([1.0, 2.0, 3.0, 4.0]))


def test_inplace_ops_int_dtype_stays():
    x = ng.tensor([1, 2, 3], dtype="int32")
    ident = id(x)
    x *= 2
    x -= 1
    assert id(x) == ident
    assert_same_array(x, np.array([1, 3, 5], dtype=np.int32))


def test_setitem_rebinds_only_x():
    x = ng.tensor([1.0, 2.0, 3.0, 4.0])
    ident = id(x)
    y = x[0:2]
    w = x[:]
    x[0] = 3.0
    assert id(x) == ident
    assert_same_array(x, np.array([3.0, 2.0, 3.0, 4.0]))
    assert_same_array(y, np.array([1.0, 2.0]))
    assert_same_array(w, np.array([1.0, 2.0, 3.0, 4.0]))


def test_setitem_slices_and_broadcast():
    a = np.arange(12.0).reshape(3, 4)
    x = ng.tensor(a)
    x[1:, ::2] = -1.0
    a[1:, ::2] = -1.0
    assert_same_array(x, a)
    x[0] = ng.tensor([9.0, 8.0, 7.0, 6.0])
    a[0] = [9.0, 8.0, 7.0, 6.0]
    assert_same_array(x, a)


def test_inplace_on_leaf_requiring_grad_errors_in_grad_mode():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError):
        x += 1.0
    with pytest.raises(RuntimeError):
        x[0] = 5.0


def test_inplace_on_leaf_requiring_grad_under_no_grad():
    x = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
    ident = id(x)
    y = x[0:2]
    params = [x]
    with ng.no_grad():
        x += 1.0
        x[2] = 0.0
    assert id(x) == ident
    assert params[0] is x
    assert x.requires_grad is True
    assert x.is_leaf is True
    assert x.grad_fn is None
    np.testing.assert_array_equal(x.numpy(), [2.0, 3.0, 0.0], strict=False)
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0], strict=False)
    # the updated parameter still trains
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 6.0, 0.0], strict=False)


def test_state_changed_in_place_is_computed_with_the_next_computation():
    # Reading a computed value computes nothing: the pending update waits for the next
    # realization, which computes it with what it was asked for (one schedule per step).
    w = ng.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    with ng.no_grad():
        w -= 0.5 * w.grad
    with ng.engine.record() as rec:
        assert loss.item() == 5.0
    assert rec.kernels_launched == 0 and w._buf.realized is None
    with ng.engine.record() as rec:
        got = (w * 3.0).numpy()
    assert rec.kernels_launched == 1 and w._buf.realized is not None  # fused with it
    np.testing.assert_array_equal(got, [0.0, 0.0])
    with ng.no_grad():
        w += 1.0
    ng.realize()  # nothing asked for: the state is computed
    assert w._buf.realized is not None
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])


def test_values_saved_for_backward_survive_inplace_change():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([3.0, 5.0])
    loss = (x * w).sum()
    w += 10.0  # w was saved by the multiply; it keeps its old value there
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 5.0], strict=False)
    assert loss.item() == 13.0


def test_inplace_on_non_leaf_keeps_saved_value():
    a = ng.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    c = b * b  # saves b = [1, 2]
    b += 1.0  # allowed on a non-leaf; b is now [2, 3]
    np.testing.assert_array_equal(b.numpy(), [2.0, 3.0], strict=False)
    c.sum().backward()
    # d/da sum((a*1)^2) = 2a, computed from the saved (old) b
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 4.0], strict=False)
    np.testing.assert_array_equal(c.numpy(), [1.0, 4.0], strict=False)


def test_an_unavailable_cuda_device_says_so(monkeypatch):
    cuda = pytest.importorskip("numgrad.kernels.cuda")  # else: not available either
    monkeypatch.setattr(cuda, "is_available", lambda: False)  # as on a machine without a GPU
    with pytest.raises(RuntimeError, match="'cuda' device is not available: Numba finds no "
                                           "CUDA GPU"):
        ng.tensor([1.0], device="cuda")
    with pytest.raises(RuntimeError, match="'cuda' device is not available"):
        ng.zeros(2, device=ng.Device("cuda"))  # (a Device made by hand: checked too)
    with pytest.raises(ValueError, match="'tpu'"):
        ng.tensor([1.0], device="tpu")


# ---- habits of NumPy and PyTorch users ----------------------------------------------

def test_a_one_element_tensor_formats_as_its_value():
    loss = ng.tensor([[0.123456]])
    assert f"{loss:.4f}" == "0.1235" and f"{ng.tensor(3):>3d}" == "  3"
    assert f"{loss}" == str(loss)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        f"{ng.tensor([1.0, 2.0]):.2f}"


def test_round_gives_a_tensor_rounded_to_its_decimals():
    t = ng.tensor([1.23456, -2.5], requires_grad=True)
    r = round(t, 2)
    assert isinstance(r, ng.Tensor) and r.tolist() == [1.23, -2.5]
    assert round(ng.tensor(2.5)).item() == 2.0  # (half to even, as NumPy)


def test_copy_and_clone_are_new_tensors_whose_gradient_flows_back():
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    for c in (x.copy(), x.clone()):
        assert c is not x and not c.is_leaf and c.tolist() == [1.0, 2.0]
    y = x.clone()
    y += 1.0  # (changing the copy leaves the original)
    assert x.tolist() == [1.0, 2.0]
    (y * y).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0]
    plain = ng.tensor([1.0])
    assert plain.copy() is not plain and not plain.copy().requires_grad


def test_matrix_transpose_nbytes_and_itemsize():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = ng.tensor(a, dtype="float32")
    assert t.mT.tolist() == np.swapaxes(a, -1, -2).tolist()
    assert t.nbytes == 96 and t.itemsize == 4
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        _ = ng.tensor([1.0]).mT


def test_numpys_constants():
    assert (ng.pi, ng.e, ng.euler_gamma) == (np.pi, np.e, np.euler_gamma)
    assert ng.inf == np.inf and np.isnan(ng.nan) and ng.newaxis is None
    assert ng.zeros(3)[ng.newaxis].shape == (1, 3)


def test_copy_false_shares_an_arrays_memory_or_refuses():
    a = np.arange(3.0)
    t = ng.tensor(a, copy=False, requires_grad=True)
    assert t.requires_grad and np.shares_memory(np.from_dlpack(t.detach()), a)
    (g,) = ng.grad((t * t).sum(), t)
    assert g.tolist() == [0.0, 2.0, 4.0]
    u = ng.tensor([1.0, 2.0])
    assert ng.tensor(u, copy=False).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="a list cannot be shared without a copy"):
        ng.tensor([1.0, 2.0], copy=False)
    with pytest.raises(ValueError, match="cannot become dtype float32"):
        ng.tensor(a, dtype="float32", copy=False)
    with pytest.raises(ValueError, match="cannot become dtype float32"):
        ng.tensor(u, dtype="float32", copy=False)
    assert ng.tensor(a, copy=True).tolist() == [0.0, 1.0, 2.0]
