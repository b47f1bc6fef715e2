"""NumPy functions a ported experiment reaches for beyond SPEC §2's list: ``take``,
``broadcast_arrays``, ``hsplit``/``vsplit``/``dsplit``, ``nanvar``/``nanstd``,
``trapezoid``, ``select``, ``polyval``, ``float_power``, ``divmod``, ``positive``,
``rint``, ``argpartition``, ``gradient``, ``convolve``, ``cumulative_sum``/``_prod``,
``isin``, the creation functions ``empty_like``, ``identity``, ``logspace`` and
``geomspace``, and ``all``/``any`` over empty axes: values against NumPy, gradients
against central differences (`ng.gradcheck`) and HIPS autograd, NumPy's calls dispatched
to them, and NumPy's errors.

Tolerances: float64 values to rtol 1e-12 of NumPy's, gradients to rtol 1e-12 of
autograd's; index and shape results exactly.
"""

import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import sampled

import numgrad as ng

nan = np.nan
RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))


def check_grad(f, f_oracle, *arrays):
    """`f`'s gradient of ``sum(f(*tensors) * w)`` against central differences and
    against autograd's of `f_oracle` on the arrays, per input."""
    ts = [ng.tensor(a, requires_grad=True) for a in arrays]
    assert ng.gradcheck(lambda *xs: f(*xs), ts)
    out = f(*ts)
    w = RNG.standard_normal(out.shape)
    (out * ng.tensor(w)).sum().backward()
    want = autograd.grad(lambda *xs: anp.sum(f_oracle(*xs) * w),
                         tuple(range(len(arrays))))(*arrays)
    for t, g in zip(ts, want):
        np.testing.assert_allclose(t.grad.numpy(), g, rtol=1e-12, atol=1e-14)


# ---- take ---------------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_matches_numpy_in_every_mode(axis, mode):
    indices = [0, 2, -1, 1] if mode == "raise" else [0, 7, -9, 2]
    want = np.take(A, indices, axis=axis, mode=mode)
    got = ng.take(ng.tensor(A), indices, axis=axis, mode=mode)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(np.take(ng.tensor(A), indices, axis, mode=mode).numpy(), want)
    by_tensor = ng.take(ng.tensor(A), ng.tensor(np.array(indices)), axis=axis, mode=mode)
    np.testing.assert_array_equal(by_tensor.numpy(), want)


def test_take_gradient_scatters_back_and_repeats_add_up():
    # (autograd's take has no VJP: its indexing is the oracle)
    check_grad(lambda a: ng.take(a, [1, 1, 3], axis=1), lambda a: a[:, [1, 1, 3]], A)
    check_grad(lambda a: ng.take(a, [5, 0, 5]), lambda a: anp.ravel(a)[[5, 0, 5]], A)


def test_take_errors_name_what_is_wrong():
    with pytest.raises(IndexError, match="out of bounds"):
        ng.take(ng.tensor(A), [12])
    with pytest.raises(ValueError, match="mode must be 'raise', 'wrap' or 'clip'"):
        ng.take(ng.tensor(A), [0], mode="bogus")
    with pytest.raises(IndexError, match="empty axis"):
        ng.take(ng.zeros((0,)), [0], mode="wrap")


# ---- broadcasting and splitting -----------------------------------------------------------

def test_broadcast_arrays_matches_numpy_and_sums_gradients_back():
    a, b = RNG.standard_normal((3, 1)), RNG.standard_normal(4)
    got = np.broadcast_arrays(ng.tensor(a), ng.tensor(b))
    want = np.broadcast_arrays(a, b)
    assert isinstance(got, tuple) and len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)
    check_grad(lambda x, y: ng.broadcast_arrays(x, y)[0] * ng.broadcast_arrays(x, y)[1],
               lambda x, y: x * y, a, b)
    with pytest.raises(ValueError):
        ng.broadcast_arrays(ng.ones(3), ng.ones(4))


@pytest.mark.parametrize("name, shape, sections", [
    ("hsplit", (2, 6), 3), ("hsplit", (6,), [1, 4]), ("vsplit", (4, 3), 2),
    ("vsplit", (5, 2), [2]), ("dsplit", (2, 2, 4), 2)])
def test_hsplit_vsplit_dsplit_match_numpy(name, shape, sections):
    a = RNG.standard_normal(shape)
    got, want = getattr(np, name)(ng.tensor(a), sections), getattr(np, name)(a, sections)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)


def test_splits_refuse_what_numpy_refuses():
    with pytest.raises(ValueError, match="vsplit only works on arrays of 2 or more"):
        ng.vsplit(ng.ones(4), 2)
    with pytest.raises(ValueError, match="dsplit only works on arrays of 3 or more"):
        ng.dsplit(ng.ones((2, 2)), 2)
    with pytest.raises(ValueError, match="hsplit only works on arrays of 1 or more"):
        ng.hsplit(ng.tensor(1.0), 1)
    with pytest.raises(ValueError, match="equal sections"):
        ng.hsplit(ng.ones((2, 5)), 2)


# ---- reductions and integration ------------------------------------------------------------

NANS = np.array([[1.0, nan, 3.0, 4.0], [nan, nan, nan, nan], [2.0, 5.0, nan, 1.0]])


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("ddof", [0, 1, 3])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nanvar_and_nanstd_match_numpy(axis, ddof, keepdims):
    with warnings.catch_warnings():  # (NumPy warns of all-NaN slices and dof <= 0)
        warnings.simplefilter("ignore", RuntimeWarning)
        want_var = np.nanvar(NANS, axis=axis, ddof=ddof, keepdims=keepdims)
        want_std = np.nanstd(NANS, axis=axis, ddof=ddof, keepdims=keepdims)
    got_var = ng.nanvar(ng.tensor(NANS), axis=axis, ddof=ddof, keepdims=keepdims)
    got_std = np.nanstd(ng.tensor(NANS), axis=axis, ddof=ddof, keepdims=keepdims)
    for got, want in ((got_var, want_var), (got_std, want_std)):
        assert got.shape == np.shape(want)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, equal_nan=True)


def test_nanvar_gradient_is_that_of_the_values_kept_and_zero_at_nan():
    a = np.array([[1.0, nan, 3.0, 4.0], [2.0, 5.0, nan, 1.0]])
    x = ng.tensor(a, requires_grad=True)
    ng.nanstd(x, axis=1, ddof=1).sum().backward()
    want = np.zeros_like(a)  # per row, autograd's std of the values that are not NaN
    for i, kept in enumerate(~np.isnan(a)):
        want[i, kept] = autograd.grad(lambda v: anp.std(v, ddof=1))(a[i, kept])
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)
    check_grad(lambda v: ng.nanvar(v, axis=0), lambda v: anp.var(v, axis=0), A)


@pytest.mark.parametrize("kind", ["dx", "x 1-D", "x like y", "axis 0"])
def test_trapezoid_matches_numpy_with_gradients(kind):
    y = RNG.standard_normal((3, 5))
    x1 = np.sort(RNG.uniform(0, 4, 5))
    x2 = np.sort(RNG.uniform(0, 4, (3, 5)), axis=1)
    kwargs, oracle_kwargs = {
        "dx": ({"dx": 0.5}, {"dx": 0.5}), "x 1-D": ({"x": x1}, {"x": x1}),
        "x like y": ({"x": ng.tensor(x2)}, {"x": x2}), "axis 0": ({"axis": 0}, {"axis": 0}),
    }[kind]
    got = np.trapezoid(ng.tensor(y), **kwargs)
    np.testing.assert_allclose(got.numpy(), np.trapezoid(y, **oracle_kwargs), rtol=1e-12)
    # Linear in y: the gradient of sum(trapezoid(y)) is NumPy's integral of each unit
    # array (autograd's trapezoid has no VJP).
    t = ng.tensor(y, requires_grad=True)
    ng.trapezoid(t, **kwargs).sum().backward()
    units = np.eye(y.size).reshape((y.size,) + y.shape)
    want = np.array([np.trapezoid(u, **oracle_kwargs).sum() for u in units]).reshape(y.shape)
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-12, atol=1e-15)
    assert ng.gradcheck(lambda v: ng.trapezoid(v, **kwargs), [ng.tensor(y, requires_grad=True)])


# ---- choices and polynomials ---------------------------------------------------------------

def test_select_takes_the_first_condition_that_holds():
    x = RNG.standard_normal(8)
    conds, choices = [x < -0.5, x > 0.5, x < 0], [-x, x * 10, x ** 2]
    want = np.select(conds, choices, default=7.0)
    t = ng.tensor(x)
    got = np.select([t < -0.5, t > 0.5, t < 0], [-t, t * 10, t ** 2], default=7.0)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_grad(lambda v: ng.select([v < -0.5, v > 0.5, v < 0], [-v, v * 10, v ** 2], 7.0),
               lambda v: anp.select([v < -0.5, v > 0.5, v < 0], [-v, v * 10, v ** 2], 7.0),
               x)
    with pytest.raises(ValueError, match="same length"):
        ng.select([t > 0], [t, t])
    with pytest.raises(ValueError, match="empty condition list"):
        ng.select([], [])
    with pytest.raises(TypeError, match="should be boolean"):
        ng.select([t], [t])


def test_polyval_is_horner_and_differentiable_in_coefficients_and_points():
    p, x = np.array([0.5, -2.0, 3.0, 1.0]), RNG.standard_normal(6)
    np.testing.assert_allclose(np.polyval(ng.tensor(p), ng.tensor(x)).numpy(),
                               np.polyval(p, x), rtol=1e-12)
    np.testing.assert_allclose(ng.polyval(list(p), x).numpy(), np.polyval(p, x), rtol=1e-12)
    # (autograd's polyval has no VJP: the sum of powers is the oracle)
    check_grad(ng.polyval, lambda c, v: sum(c[i] * v ** (len(c) - 1 - i)
                                            for i in range(len(c))), p, x)


# ---- elementwise conveniences ----------------------------------------------------------------

def test_float_power_computes_in_float64():
    for a, b in [(np.array([2, 3], np.int32), 2), (np.array([2.0, 9.0], np.float32), 0.5),
                 (2, np.array([3, -1]))]:
        ta = ng.tensor(a) if isinstance(a, np.ndarray) else a
        tb = ng.tensor(b) if isinstance(b, np.ndarray) else b
        got, want = ng.float_power(ta, tb), np.float_power(a, b)
        assert got.dtype == want.dtype == np.float64
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    check_grad(ng.float_power, lambda a, b: a ** b, np.array([0.5, 2.0]),
               np.array([1.5, -0.5]))


def test_divmod_positive_and_rint_match_numpy():
    a, b = np.array([7.5, -7.5, 3.0]), np.array([2.0, 2.0, -0.5])
    q, r = np.divmod(ng.tensor(a), ng.tensor(b))
    np.testing.assert_array_equal(q.numpy(), np.floor_divide(a, b))
    np.testing.assert_array_equal(r.numpy(), np.remainder(a, b))
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5])
    np.testing.assert_array_equal(np.rint(ng.tensor(halves)).numpy(), np.rint(halves))
    x = ng.tensor([1, -2])
    y = np.positive(x)
    assert y is not x and y.tolist() == [1, -2] and y.dtype == x.dtype


def test_creation_functions_match_numpy():
    np.testing.assert_allclose(ng.logspace(0, 3, 4).numpy(), np.logspace(0, 3, 4), rtol=1e-12)
    np.testing.assert_allclose(ng.logspace(1, 2, 3, base=2.0, endpoint=False).numpy(),
                               np.logspace(1, 2, 3, base=2.0, endpoint=False), rtol=1e-12)
    np.testing.assert_allclose(ng.geomspace(1, 1000, 4).numpy(), np.geomspace(1, 1000, 4),
                               rtol=1e-12)
    np.testing.assert_array_equal(ng.identity(3, dtype=ng.int32).numpy(),
                                  np.identity(3, dtype=np.int32))
    e = np.empty_like(ng.ones((2, 3), dtype=ng.float32))
    assert isinstance(e, ng.Tensor) and e.shape == (2, 3) and e.dtype == np.float32


# ---- batch two: order, sampled data, membership, empty logical reductions --------------------

@pytest.mark.parametrize("kth, axis", [(2, -1), ([1, 4], 1), (1, 0), (3, None)])
def test_argpartition_partitions_as_partition_does(kth, axis):
    a = RNG.standard_normal((3, 7))
    idx = np.argpartition(ng.tensor(a), kth, axis=axis)
    assert idx.dtype == np.int64 and not idx.requires_grad
    src = a.ravel() if axis is None else a
    got = np.take_along_axis(src, idx.numpy(), axis=0 if axis is None else axis)
    np.testing.assert_array_equal(got, np.partition(a, kth, axis=axis))


@pytest.mark.parametrize("args, kwargs", [
    ((), {}), ((0.5,), {}), ((0.5, 2.0), {}), ("coordinates", {}),
    ("coordinates", {"edge_order": 2}), ((0.3,), {"edge_order": 2}),
    ((), {"axis": (1, 0)}), ("x only", {"axis": -1})], ids=str)
def test_gradient_matches_numpy(args, kwargs):
    f = RNG.standard_normal((4, 6))
    y, x = np.cumsum(RNG.uniform(0.1, 1, 4)), np.cumsum(RNG.uniform(0.1, 1, 6))
    args = {"coordinates": (y, x), "x only": (x,)}.get(args, args)
    got, want = np.gradient(ng.tensor(f), *args, **kwargs), np.gradient(f, *args, **kwargs)
    got, want = (r if isinstance(r, tuple) else (r,) for r in (got, want))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-13)


def test_gradient_is_differentiable_and_refuses_what_numpy_refuses():
    f, x = RNG.standard_normal(6), np.cumsum(RNG.uniform(0.1, 1, 6))
    assert ng.gradcheck(lambda v, c: ng.gradient(v, c, edge_order=2),
                        [ng.tensor(f, requires_grad=True), ng.tensor(x, requires_grad=True)])
    np.testing.assert_array_equal(ng.gradient(ng.tensor([1, 4, 9, 16])).numpy(),
                                  np.gradient(np.array([1, 4, 9, 16])))
    with pytest.raises(ValueError, match="at least \\(edge_order \\+ 1\\) elements"):
        ng.gradient(ng.tensor([1.0, 2.0]), edge_order=2)
    with pytest.raises(ValueError, match="distances must match"):
        ng.gradient(ng.tensor(f), x[:3])
    with pytest.raises(TypeError, match="invalid number of arguments"):
        ng.gradient(ng.tensor(f), 1.0, 2.0)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n, m", sampled([(7, 3), (3, 7), (5, 1), (4, 4), (6, 2)], 2))
def test_convolve_matches_numpy_and_differentiates_both(mode, n, m):
    a, v = RNG.standard_normal(n), RNG.standard_normal(m)
    np.testing.assert_allclose(np.convolve(ng.tensor(a), ng.tensor(v), mode).numpy(),
                               np.convolve(a, v, mode), rtol=1e-12, atol=1e-14)
    assert ng.gradcheck(lambda x, y: ng.convolve(x, y, mode),
                        [ng.tensor(a, requires_grad=True), ng.tensor(v, requires_grad=True)])


def test_convolve_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="1-D inputs"):
        ng.convolve(ng.ones((2, 2)), ng.ones(2))
    with pytest.raises(ValueError, match="neither input can be empty"):
        ng.convolve(ng.ones(3), ng.ones(0))
    with pytest.raises(ValueError, match="mode must be"):
        ng.convolve(ng.ones(3), ng.ones(2), "circular")


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_an_integer_scan_with_a_dtype_gives_that_dtype(name):
    """(It gave int64: integer scans accumulate in int64, and the result was not cast.)"""
    a = np.array([1, 2, 2**31 - 1], dtype=np.int64)
    for dtype in (np.int32, np.int64, np.float32):
        got = getattr(ng, name)(ng.tensor(a), dtype=dtype, include_initial=True)
        want = getattr(np, name)(a, dtype=dtype, include_initial=True)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("kwargs", [{"axis": 1}, {"axis": 0, "include_initial": True},
                                    {"axis": -1, "include_initial": True, "dtype": np.float32}],
                         ids=str)
def test_cumulative_sum_and_prod_match_numpy(name, kwargs):
    a = RNG.uniform(0.5, 2, (2, 3))
    got, want = getattr(np, name)(ng.tensor(a), **kwargs), getattr(np, name)(a, **kwargs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if want.dtype == np.float32
                               else 1e-12)
    np.testing.assert_array_equal(ng.cumulative_sum(ng.tensor([1, 2]), include_initial=True)
                                  .numpy(), [0, 1, 3])
    with pytest.raises(ValueError, match="``axis`` argument is required"):
        getattr(ng, name)(ng.tensor(a))


def test_isin_matches_numpy_nan_never_found():
    e = np.array([[1.0, nan, 3.0], [2.0, 5.0, 7.0]])
    for tests, invert in [([3, nan, 7], False), ([2.0], True), ([], False)]:
        got = np.isin(ng.tensor(e), tests, invert=invert)
        assert got.dtype == np.bool_ and not got.requires_grad
        np.testing.assert_array_equal(got.numpy(), np.isin(e, tests, invert=invert))
    np.testing.assert_array_equal(ng.isin(ng.tensor([1, 2, 3]), ng.tensor([3, 1])).numpy(),
                                  [True, False, True])


@pytest.mark.parametrize("shape, axis", [((2, 0), -1), ((2, 0), None), ((0, 3), 0),
                                         ((0, 3), 1), ((2, 0), (0, 1))], ids=str)
def test_all_and_any_over_an_empty_axis_are_true_and_false(shape, axis):
    z = np.zeros(shape)
    for name in ("all", "any"):
        for keepdims in (False, True):
            got = getattr(ng.tensor(z), name)(axis, keepdims=keepdims)
            want = getattr(np, name)(z, axis=axis, keepdims=keepdims)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want)
