"""The elementwise functions of SPEC §2's wider NumPy surface, beyond the op matrix
(`test_op_matrix.py` checks each row's values, gradients and second order on random
inputs): special values (NaN, ±inf, ±0) and integer promotion against NumPy, the
predicates (isnan, isinf, isfinite, isclose, allclose), ``%`` with
scalars on either side, the composites' gradients against HIPS autograd, the gradients
at kinks, NaN and ties, and a few rows in the CUDA simulator.

Tolerances: special values agree exactly (NaN where NumPy has NaN, the same infinities,
the sign of every zero); finite values to rtol 1e-12 in float64 and 1e-6 in float32
(libm and NumPy's loops may differ in the last bits); integers exactly. Special values
are computed on the CPU target (the Numba kernels, or the interpreter under
``NUMGRAD_CPU_KERNELS=numpy``): the CUDA simulator runs kernels with Python's math
module, which raises where a GPU gives NaN or infinity.
"""

import os
import subprocess
import sys
import textwrap

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import sampled

import numgrad as ng

nan, inf = np.nan, np.inf
RTOL = {np.float32: 1e-6, np.float64: 1e-12}
UNARY = ["sinh", "cosh", "arcsinh", "arccosh", "arctanh", "arcsin", "arccos", "arctan",
         "log2", "log10", "exp2", "deg2rad", "rad2deg", "degrees", "radians", "sinc",
         "nan_to_num"]
BINARY = ["arctan2", "hypot", "logaddexp", "logaddexp2", "fmax", "fmin", "mod", "remainder",
          "fmod", "floor_divide", "heaviside"]
SPECIAL = np.array([nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-300,
                    700.0, -700.0])
PAIRS = np.meshgrid(*[np.array([nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.75])] * 2)


def cpu(a, **kwargs):
    return ng.tensor(a, device="cpu", **kwargs)


def assert_same(got: ng.Tensor, want: np.ndarray, rtol: float, signed_zeros=True) -> None:
    """`got` equals NumPy's `want`: dtype, NaN positions, infinities, zeros' signs."""
    got = got.numpy() if isinstance(got, ng.Tensor) else np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
    if signed_zeros:
        zeros = want == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))


# ---- special values ----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", sampled(UNARY, 2))
def test_unary_special_values(name, dtype):
    a = SPECIAL.astype(dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    assert_same(getattr(ng, name)(cpu(a)), want, RTOL[dtype])


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", sampled(BINARY, 2, start=1))
def test_binary_special_values(name, dtype):
    a, b = (p.ravel().astype(dtype) for p in PAIRS)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
    # np.fmax/np.fmin give either zero for a tie of -0.0 and 0.0, depending on the
    # array's length: numgrad keeps x (next test).
    assert_same(getattr(ng, name)(cpu(a), cpu(b)), want, RTOL[dtype],
                signed_zeros=name not in ("fmax", "fmin"))


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_ignore_nan_and_ties_of_zeros_keep_x(name):
    a = np.array([nan, 1.0, nan, -0.0, 0.0, 2.0])
    b = np.array([3.0, nan, nan, 0.0, -0.0, 2.0])
    got = getattr(ng, name)(cpu(a), cpu(b)).numpy()
    np.testing.assert_array_equal(got, [3.0, 1.0, nan, 0.0, 0.0, 2.0])
    np.testing.assert_array_equal(np.signbit(got[3:5]), [True, False])


def test_mod_sign_follows_the_divisor_and_fmod_the_dividend():
    a = np.array([-3.5, 3.5, -3.5, 3.5, -4.0, 4.0, 1e-20, -1e-20])
    b = np.array([2.0, -2.0, -2.0, 2.0, 2.0, -2.0, 1.0, 1.0])
    x, y = cpu(a), cpu(b)
    assert_same(ng.mod(x, y), np.mod(a, b), 0)  # exact: -0.0 and 0.0 included
    assert_same(ng.fmod(x, y), np.fmod(a, b), 0)
    assert_same(x % y, a % b, 0)


@pytest.mark.parametrize("dtype", [np.int32, np.int64], ids=lambda d: d.__name__)
def test_floor_divide_and_divmod_of_integers_match_numpy(dtype):
    """Exactly, with 0 divisors (0, as NumPy) and the least integer by -1 (wrapped)."""
    info = np.iinfo(dtype)
    values = np.array([-7, -3, -1, 0, 1, 3, 7, info.min, info.max], dtype)
    a, b = (p.ravel() for p in np.meshgrid(values, values))
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(a, b), np.remainder(a, b)
    assert_same(cpu(a) // cpu(b), want_q, 0)
    q, r = divmod(cpu(a), cpu(b))
    assert_same(q, want_q, 0)
    assert_same(r, want_r, 0)
    assert_same(np.floor_divide(cpu(a), 2), a // 2, 0)
    assert_same(7 // cpu(a[a != 0]), 7 // a[a != 0], 0)


def test_floor_divide_in_place_and_its_gradient_is_zero():
    x = cpu([7.5, -7.5, 2.0], requires_grad=True)
    (x // 2.0 * 3.0).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    t = cpu([7, -7])
    before = t + 0  # (taken before: keeps its value)
    t //= 2
    assert t.tolist() == [3, -4] and before.tolist() == [7, -7]


@pytest.mark.parametrize("name, op", [("bitwise_and", "&"), ("bitwise_or", "|"),
                                      ("bitwise_xor", "^")])
def test_bitwise_operators_are_numpys_on_integers_and_bools(name, op):
    """``&``, ``|`` and ``^`` are NumPy's: bitwise on integers (not logical), logical on
    bools; floats raise TypeError, as NumPy's do, before any kernel runs."""
    a, b = np.array([1, 2, -7, 12, 0]), np.array([3, 1, 5, -4, 9], np.int32)
    want = getattr(np, name)(a, b)
    assert_same(eval(f"x {op} y", {"x": cpu(a), "y": cpu(b)}), want, 0)
    assert_same(getattr(ng, name)(cpu(a), 6), getattr(np, name)(a, 6), 0)
    assert_same(getattr(np, name)(cpu(b), cpu(a)), getattr(np, name)(b, a), 0)
    p, q = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert_same(eval(f"x {op} y", {"x": cpu(p), "y": cpu(q)}), getattr(np, name)(p, q), 0)
    assert_same(eval(f"x {op} True", {"x": cpu(p)}), getattr(np, name)(p, True), 0)
    with pytest.raises(TypeError, match=f"{name} takes integers and bools, not float64"):
        eval(f"x {op} y", {"x": cpu([1.0]), "y": cpu([1.0])})


def test_logical_xor_and_heaviside_match_numpy():
    a, b = (p.ravel() for p in PAIRS)
    assert_same(ng.logical_xor(cpu(a), cpu(b)), np.logical_xor(a, b), 0)
    assert_same(np.logical_xor(cpu(a > 0), cpu(b > 0)), np.logical_xor(a > 0, b > 0), 0)
    x = cpu([-1.0, 0.0, -0.0, 2.0, nan], requires_grad=True)
    h0 = cpu([0.5, 0.25, 0.75, 0.5, 0.5], requires_grad=True)
    assert_same(ng.heaviside(x, h0), np.heaviside(x.numpy(), h0.numpy()), 0)
    ng.heaviside(x, h0).sum().backward()
    assert x.grad.tolist() == [0.0] * 5 and h0.grad.tolist() == [0, 1, 1, 0, 0]


# ---- predicates: isnan, isinf, isfinite, isclose, allclose -------------------------------

PREDICATES = ["isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_],
                         ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", PREDICATES)
def test_predicates_match_numpy(name, dtype):
    # floats: the special values, the largest and the smallest subnormal (exact)
    if np.dtype(dtype).kind == "f":
        info = np.finfo(dtype)
        a = np.concatenate([SPECIAL.astype(dtype), [info.max, info.smallest_subnormal]])
    else:
        a = np.array([-3, 0, 1, 7]).astype(dtype)
    x = cpu(a, requires_grad=np.dtype(dtype).kind == "f")
    got = getattr(ng, name)(x)
    assert_same(got, getattr(np, name)(a), 0)
    assert not got.requires_grad and getattr(x, name)().tolist() == got.tolist()


@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("tolerances", [{}, {"rtol": 0.1, "atol": 0.0}, {"atol": 2.0}])
def test_isclose_and_allclose_match_numpy(tolerances, equal_nan):
    a, b = (p.ravel() for p in PAIRS)
    want = np.isclose(a, b, equal_nan=equal_nan, **tolerances)
    got = ng.isclose(cpu(a, requires_grad=True), cpu(b), equal_nan=equal_nan, **tolerances)
    assert_same(got, want, 0)
    assert not got.requires_grad
    for rows in (slice(0, 1), slice(3, 4), slice(None)):  # all close, none, some
        assert ng.allclose(cpu(a[rows]), b[rows], equal_nan=equal_nan, **tolerances) is \
            bool(np.allclose(a[rows], b[rows], equal_nan=equal_nan, **tolerances))


def test_isclose_takes_integers_scalars_lists_and_numpy_calls():
    ints = np.array([1, 2, 3])
    assert_same(ng.isclose(cpu(ints), 1.5, atol=0.6), np.isclose(ints, 1.5, atol=0.6), 0)
    assert_same(ng.isclose(cpu([1.0, 1.1]), [1.0, 1.0]), np.isclose([1.0, 1.1], [1.0, 1.0]), 0)
    assert_same(cpu([1.0, nan]).isclose(cpu([1.0, nan]), equal_nan=True), np.array([True] * 2), 0)
    x = cpu([1.0, inf, nan])
    assert_same(np.isnan(x), np.array([False, False, True]), 0)  # NumPy's ufunc dispatches
    assert np.allclose(x, x, equal_nan=True) is True


# ---- integers and promotion --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("name", sampled(UNARY, 2, start=1))
def test_unary_integer_inputs_promote_as_numpy(name, dtype):
    a = np.array([-3, -1, 0, 1, 2, 5], dtype)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a)
    assert_same(getattr(ng, name)(cpu(a)), want, 1e-12)


@pytest.mark.parametrize("name", sampled(UNARY, 2))
def test_unary_bool_inputs_compute_in_float64(name):
    # NumPy gives float16 for bools; numgrad has no float16 and computes in float64.
    a = np.array([False, True])
    with np.errstate(all="ignore"):
        want = np.nan_to_num(a) if name == "nan_to_num" else getattr(np, name)(a.astype(float))
    assert_same(getattr(ng, name)(cpu(a)), want, 1e-12)


@pytest.mark.parametrize("name", sampled(BINARY, 2))
def test_binary_integer_inputs_follow_numpy(name):
    # negative operands, and zero divisors (NumPy gives 0 for mod and fmod of integers)
    a = np.array([-7, -7, 7, 7, 0, 5, -5, 2**31 - 1, -2**31], np.int32)
    b = np.array([3, -3, 3, -3, 4, 0, 0, -1, -1], np.int64)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(a, b)
        want32 = getattr(np, name)(a, b.astype(np.int32))
    assert_same(getattr(ng, name)(cpu(a), cpu(b)), want, 1e-12)
    assert_same(getattr(ng, name)(cpu(a), cpu(b.astype(np.int32))), want32, 1e-12)


@pytest.mark.parametrize("scalar", [3, -2.5])
@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_mod_python_scalars_are_weak(dtype, scalar):
    a = np.array([-7, -2, 0, 5], dtype)
    for got, want in [(cpu(a) % scalar, a % scalar), (scalar % cpu(a[a != 0]), scalar % a[a != 0])]:
        assert_same(got, want, RTOL.get(want.dtype.type, 0))


def test_functions_take_scalars_and_lists():
    assert_same(ng.remainder(7, -3), np.asarray(np.remainder(7, -3)), 0)
    assert_same(ng.hypot([3, 5], 4), np.hypot([3, 5], 4), 1e-12)
    assert_same(ng.fmax([nan, 1.0], np.array([2.0, nan])), np.fmax([nan, 1.0], [2.0, nan]), 0)
    assert_same(ng.arctan2(1.0, [1.0, -1.0]), np.arctan2(1.0, [1.0, -1.0]), 1e-12)


# ---- the % operator ------------------------------------------------------------------------

def test_mod_operator_with_arrays_and_in_place():
    a, b = np.array([5.5, -5.5, 7.0]), np.array([2.0, 2.0, -3.0])
    assert_same(cpu(a) % cpu(b), a % b, 0)
    got = b % cpu(a)  # ndarray % Tensor defers to Tensor.__rmod__
    assert isinstance(got, ng.Tensor)
    assert_same(got, b % a, 0)
    x = cpu(a)
    alias = x
    x %= 2
    assert x is alias
    assert_same(x, a % 2, 0)
    n = cpu(np.array([7, -7], np.int32))
    n %= 3
    assert_same(n, np.array([1, 2], np.int32), 0)


def test_mod_in_place_on_a_leaf_that_requires_grad():
    w = cpu([5.0, -5.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="in place"):
        w %= 3
    with ng.no_grad():
        w %= 3
    np.testing.assert_array_equal(w.numpy(), [2.0, 1.0])
    assert w.requires_grad and w.is_leaf


def test_nan_to_num_keywords_and_copy():
    a = np.array([nan, inf, -inf, -1.5, 0.0], np.float32)
    for kwargs in ({}, {"nan": 5.0}, {"posinf": 1e300, "neginf": -7}, {"nan": -1, "posinf": 2}):
        with np.errstate(over="ignore"):  # 1e300 is inf in float32, in both
            assert_same(ng.nan_to_num(cpu(a), **kwargs), np.nan_to_num(a, **kwargs), 0)
    x = cpu(a)
    alias = x
    assert ng.nan_to_num(x, copy=False) is alias  # NumPy's copy=False: in place
    assert_same(x, np.nan_to_num(a), 0)
    assert_same(cpu(a).nan_to_num(nan=1.0), np.nan_to_num(a, nan=1.0), 0)


# ---- gradients ---------------------------------------------------------------------------

#: composite -> (autograd oracle, low, high); autograd has no sinc gradient at 0 (NaN)
COMPOSITES = {
    "deg2rad": (anp.deg2rad, -200, 200), "rad2deg": (anp.rad2deg, -4, 4),
    "degrees": (anp.degrees, -4, 4), "radians": (anp.radians, -200, 200),
    "sinc": (anp.sinc, -2.5, 2.5), "nan_to_num": (anp.nan_to_num, -2, 2),
}


@pytest.mark.parametrize("name", COMPOSITES)
def test_composite_gradients_match_autograd(name):
    oracle, lo, hi = COMPOSITES[name]
    fn = getattr(ng, name)
    a = np.random.default_rng(20).uniform(lo, hi, (2, 3))
    x = cpu(a, requires_grad=True)
    assert ng.gradcheck(fn, (x,))
    assert ng.gradgradcheck(fn, (x,))
    w = np.random.default_rng(21).standard_normal(a.shape)
    (fn(x) * cpu(w)).sum().backward()
    want = autograd.grad(lambda v: anp.sum(oracle(v) * w))(a)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-14)


def test_sinc_derivatives_at_and_near_zero():
    x = cpu([0.0, 0.0], requires_grad=True)
    (d1,) = ng.grad(ng.sinc(x).sum(), x, create_graph=True)
    (d2,) = ng.grad(d1.sum(), x)
    np.testing.assert_array_equal(d1.numpy(), [0.0, 0.0])  # sinc'(0) = 0, no 0 / 0
    np.testing.assert_allclose(d2.numpy(), -np.pi ** 2 / 3, rtol=1e-12)
    # either side of the switch to the series (|x| < 1e-4), finite differences agree
    near = cpu([-2e-4, -1e-4, -5e-5, 0.0, 5e-5, 1e-4, 2e-4], requires_grad=True)
    assert ng.gradcheck(ng.sinc, (near,))
    assert ng.gradgradcheck(ng.sinc, (near,))


def test_nan_to_num_passes_the_gradient_where_finite():
    a = np.array([nan, inf, -inf, 1.5, -2.0])
    x = cpu(a, requires_grad=True)
    ng.nan_to_num(x, nan=3.0).sum().backward()
    want = autograd.grad(lambda v: anp.sum(anp.nan_to_num(v)))(a)
    np.testing.assert_array_equal(x.grad.numpy(), want)
    np.testing.assert_array_equal(want, [0, 0, 0, 1, 1])


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_gradients_go_to_the_number_and_ties_share(name):
    a = np.array([nan, 1.0, nan, 2.0, 3.0, -1.0])
    b = np.array([1.0, nan, nan, 2.0, -1.0, 3.0])
    x, y = cpu(a, requires_grad=True), cpu(b, requires_grad=True)
    getattr(ng, name)(x, y).sum().backward()
    want = autograd.grad(lambda u, v: anp.sum(getattr(anp, name)(u, v)), (0, 1))(a, b)
    np.testing.assert_array_equal(x.grad.numpy(), want[0])
    np.testing.assert_array_equal(y.grad.numpy(), want[1])
    np.testing.assert_array_equal(x.grad.numpy()[:4], [0.0, 1.0, 0.0, 0.5])


@pytest.mark.parametrize("name,quotient", [("mod", np.floor), ("fmod", np.trunc)])
def test_mod_and_fmod_divisor_gradients(name, quotient):
    # d/dy is -floor(x / y) for mod and -trunc(x / y) for fmod; they differ where x / y < 0
    a, b = np.array([-3.5, 3.5, -3.5, 7.25]), np.array([2.0, -2.0, -2.0, 2.0])
    x, y = cpu(a, requires_grad=True), cpu(b, requires_grad=True)
    getattr(ng, name)(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(4))
    np.testing.assert_array_equal(y.grad.numpy(), -quotient(a / b))
    mod_dy = autograd.grad(lambda v: anp.sum(anp.mod(a, v)))(b)
    np.testing.assert_array_equal(mod_dy, -np.floor(a / b))  # autograd's rule, for mod


def test_hypot_gradient_is_zero_at_the_origin():
    # hypot(x, 0) = |x| and abs'(0) = 0; autograd gives 0 / 0 = NaN there
    x, y = cpu([0.0, 3.0], requires_grad=True), cpu([0.0, -4.0], requires_grad=True)
    ng.hypot(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.6])
    np.testing.assert_array_equal(y.grad.numpy(), [0.0, -0.8])


# ---- the CUDA target, in Numba's simulator -------------------------------------------------

SIMULATED = textwrap.dedent("""
    import numpy as np
    import numgrad as ng

    a = np.array([-3.5, -0.0, 0.5, 2.25, 7.0])
    b = np.array([2.0, 1.5, -0.75, -2.0, 3.0])
    cases = {
        "sinh": (np.sinh(a), ng.sinh(ng.tensor(a, device="cuda"))),
        "arcsinh": (np.arcsinh(a), ng.tensor(a, device="cuda").arcsinh()),
        "exp2": (np.exp2(a), ng.exp2(ng.tensor(a, device="cuda"))),
        "sinc": (np.sinc(a), ng.sinc(ng.tensor(a, device="cuda"))),
        "nan_to_num": (np.nan_to_num(np.array([np.nan, np.inf, 1.0])),
                       ng.nan_to_num(ng.tensor([np.nan, np.inf, 1.0], device="cuda"))),
    }
    for name in ["arctan2", "hypot", "logaddexp", "logaddexp2", "fmax", "mod", "fmod"]:
        cases[name] = (getattr(np, name)(a, b), getattr(ng, name)(
            ng.tensor(a, device="cuda"), ng.tensor(b, device="cuda")))
    ints = np.array([-7, -7, 7, 7]), np.array([3, -3, 3, -3])
    for name in ["mod", "fmod"]:
        cases[name + "_int"] = (getattr(np, name)(*ints), getattr(ng, name)(
            *(ng.tensor(v, device="cuda") for v in ints)))
    for name, (want, got) in cases.items():
        assert got.device == "cuda" and got.dtype == want.dtype, name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=0, err_msg=name)
        assert (np.signbit(got.numpy()) == np.signbit(want))[want == 0].all(), name
    print("ok", len(cases))
""")


def test_cuda_simulator_values():
    # A process of its own: the simulator is chosen when Numba is imported.
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    run = subprocess.run([sys.executable, "-c", SIMULATED], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["ok", "14"]
