"""NumPy's statistics and gathers that a ported experiment meets: quantile, percentile,
median, average, ptp, count_nonzero, cov, corrcoef, take_along_axis, meshgrid, and the
elementwise trunc (fix), signbit, copysign and cbrt.

Values against NumPy (float64, rtol 1e-12; shapes and dtypes equal), gradients against
central finite differences (`ng.gradcheck`'s tolerances) and, where HIPS autograd
differentiates the same function, against it (rtol 1e-12); NumPy's errors for bad
arguments, raised before anything runs.
"""

import decimal
import math
import os
import warnings

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import sampled

import numgrad as ng

rng = np.random.default_rng(11)
A = rng.standard_normal((4, 5, 6))
METHODS = ["linear", "lower", "higher", "nearest", "midpoint"]


@pytest.mark.parametrize("method", sampled(METHODS, 2))
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("q", [0.5, [0.0, 0.1, 0.9, 1.0]], ids=str)
def test_quantile_matches_numpy(q, axis, method):
    for keepdims in (False, True):
        got = ng.quantile(ng.tensor(A), q, axis=axis, method=method, keepdims=keepdims)
        want = np.quantile(A, q, axis=axis, method=method, keepdims=keepdims)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("method", sampled(METHODS, 2, start=1))
@pytest.mark.parametrize("axis", [None, 0, (0, 2)], ids=str)
@pytest.mark.parametrize("name,scale", [("nanquantile", 1.0), ("nanpercentile", 100.0)])
def test_nan_quantiles_skip_nan_as_numpy(name, scale, axis, method):
    a = A.copy()
    a[a > 1.0] = np.nan
    a[1, :, 2] = np.nan  # slices with no value at all: NaN (NumPy warns)
    for q in (0.3, [0.0, 0.5, 1.0]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = getattr(np, name)(a, np.asarray(q) * scale, axis=axis, method=method)
        got = getattr(ng, name)(ng.tensor(a), np.asarray(q) * scale, axis=axis, method=method)
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_nanmedian_values_and_gradient():
    a = A[0].copy()
    a[0, 1] = a[2, 4] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for axis in (None, 0, 1):
            np.testing.assert_allclose(ng.nanmedian(ng.tensor(a), axis=axis).numpy(),
                                       np.nanmedian(a, axis=axis), rtol=1e-12)
    x = ng.tensor(a, requires_grad=True)
    (g,) = ng.grad(ng.nanmedian(x, axis=1).sum(), x)
    assert np.all(g.numpy()[np.isnan(a)] == 0)  # no gradient to a NaN
    clean = ng.tensor(A[0, :4, :3], requires_grad=True)
    assert ng.gradcheck(lambda t: ng.nanmedian(t, axis=0).sum(), (clean,))


def test_percentile_median_integers_nan_and_dispatch():
    i = rng.integers(-5, 5, (3, 8))
    for got, want in [(ng.percentile(ng.tensor(A), [25, 50, 75], axis=1),
                       np.percentile(A, [25, 50, 75], axis=1)),
                      (ng.median(ng.tensor(A), axis=(1, 2)), np.median(A, axis=(1, 2))),
                      (ng.median(ng.tensor(i)), np.median(i)),  # integers: float64
                      (np.median(ng.tensor(A), axis=0), np.median(A, axis=0))]:
        assert isinstance(got, ng.Tensor) and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    a = A[0].copy()
    a[2, 3] = np.nan  # a slice holding NaN gives NaN, as in NumPy
    np.testing.assert_allclose(ng.median(ng.tensor(a), axis=1).numpy(), np.median(a, axis=1),
                               rtol=1e-12)  # (NaN where NumPy has NaN)


def test_order_statistics_differentiate():
    x = ng.tensor(A[:2, :3], requires_grad=True)
    for fn in (lambda t: ng.median(t, axis=1).sum(),
               lambda t: (ng.quantile(t, [0.2, 0.7], axis=0) ** 2).sum(),
               lambda t: ng.percentile(t, 40, axis=None, method="midpoint"),
               lambda t: ng.ptp(t, axis=-1).sum()):
        assert ng.gradcheck(fn, (x,))
    # median's gradient is HIPS autograd's of the middle of 3: sum - max - min
    (g,) = ng.grad(ng.median(x, axis=1).sum(), x)
    want = autograd.grad(lambda a: anp.sum(anp.sum(a, 1) - anp.max(a, 1) - anp.min(a, 1)))(
        A[:2, :3])
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)


def test_quantile_errors_name_what_was_wrong():
    x = ng.tensor(A)
    with pytest.raises(ValueError, match=r"q must lie in \[0, 1\]"):
        ng.quantile(x, 1.5)
    with pytest.raises(ValueError, match=r"q must lie in \[0, 100\]"):
        ng.percentile(x, -1)
    with pytest.raises(ValueError, match="method must be one of"):
        ng.quantile(x, 0.5, method="cubic")
    with pytest.raises(ValueError, match="empty slice"):
        ng.median(ng.zeros((3, 0)), axis=1)


def test_average_weights_returned_and_errors():
    w = rng.uniform(0.1, 1.0, 5)
    got, total = ng.average(ng.tensor(A), axis=1, weights=w, returned=True)
    want, want_total = np.average(A, axis=1, weights=w, returned=True)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(total.numpy(), want_total, rtol=1e-12)
    full = rng.uniform(0.1, 1.0, A.shape)
    np.testing.assert_allclose(ng.average(ng.tensor(A), axis=(0, 2), weights=full).numpy(),
                               np.average(A, axis=(0, 2), weights=full), rtol=1e-12)
    got, total = ng.average(ng.tensor([1, 2, 4]), returned=True)  # integers: float64
    assert (got.item(), total.item()) == np.average([1, 2, 4], returned=True)
    x = ng.tensor(A[0], requires_grad=True)
    assert ng.gradcheck(lambda t: ng.average(t, axis=0, weights=w[:5]).sum(), (x,))
    with pytest.raises(ZeroDivisionError, match="weights sum to zero"):
        ng.average(ng.tensor([1.0, 2.0]), weights=[1.0, -1.0])
    with pytest.raises(ValueError, match="weights of length 3"):
        ng.average(ng.tensor(A), axis=1, weights=[1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="give an axis"):
        ng.average(ng.tensor(A), weights=w)


def test_ptp_and_count_nonzero():
    np.testing.assert_array_equal(ng.ptp(ng.tensor(A), axis=1, keepdims=True).numpy(),
                                  np.ptp(A, axis=1, keepdims=True))
    i = rng.integers(-3, 3, (4, 6))
    assert ng.ptp(ng.tensor(i)).dtype == np.ptp(i).dtype
    got = ng.count_nonzero(ng.tensor(i), axis=0)
    np.testing.assert_array_equal(got.numpy(), np.count_nonzero(i, axis=0))
    assert got.dtype == np.int64 and ng.count_nonzero(ng.tensor(i)).item() == np.count_nonzero(i)


@pytest.mark.parametrize("kwargs", [{}, {"bias": True}, {"ddof": 2}, {"rowvar": False},
                                    {"fweights": [1, 2, 1, 3, 1, 1, 2]},
                                    {"aweights": [0.5, 1.0, 0.25, 2.0, 1.0, 0.75, 1.5]},
                                    {"fweights": [2, 1, 1, 1, 3, 1, 1],
                                     "aweights": [0.5, 1.0, 0.25, 2.0, 1.0, 0.75, 1.5],
                                     "ddof": 0}], ids=str)
def test_cov_matches_numpy(kwargs):
    m = rng.standard_normal((3, 7))
    m = m.T if kwargs.get("rowvar", True) is False else m
    np.testing.assert_allclose(ng.cov(ng.tensor(m), **kwargs).numpy(), np.cov(m, **kwargs),
                               rtol=1e-12)


def test_cov_corrcoef_shapes_gradients_and_errors():
    m, y = rng.standard_normal((3, 7)), rng.standard_normal(7)
    for got, want in [(ng.cov(ng.tensor(m), ng.tensor(y)), np.cov(m, y)),
                      (ng.cov(ng.tensor(y)), np.cov(y)),  # one variable: 0-d
                      (ng.corrcoef(ng.tensor(m)), np.corrcoef(m)),
                      (ng.corrcoef(ng.tensor(m), y), np.corrcoef(m, y)),
                      (ng.corrcoef(ng.tensor(m.T), rowvar=False), np.corrcoef(m.T, rowvar=False))]:
        assert got.shape == want.shape
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    x = ng.tensor(m, requires_grad=True)
    assert ng.gradcheck(lambda t: (ng.cov(t) ** 2).sum(), (x,))
    assert ng.gradcheck(lambda t: ng.corrcoef(t)[0, 1] + ng.corrcoef(t)[1, 2], (x,))
    (g,) = ng.grad((ng.cov(x) ** 2).sum(), x)
    def cov(a):  # NumPy's cov written out (HIPS autograd has no gradient of np.cov)
        centred = a - anp.mean(a, axis=1, keepdims=True)
        return anp.dot(centred, centred.T) / (a.shape[1] - 1)

    want = autograd.grad(lambda a: anp.sum(cov(a) ** 2))(m)
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    with pytest.raises(ValueError, match="degrees of freedom"):
        ng.cov(ng.tensor(m), ddof=7)
    with pytest.raises(ValueError, match="3 dimensions"):
        ng.cov(ng.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="fweights must be 1-D"):
        ng.cov(ng.tensor(m), fweights=[1, 2])


def test_take_along_axis_picks_what_argsort_and_argmax_give():
    idx = np.argsort(A, axis=1)
    for index, axis in [(idx, 1), (idx[:, :2], 1), (np.argmax(A, axis=2)[..., None], 2),
                        (np.array([[[-1]]]), 0), (np.array([3, 0, -2]), None)]:
        got = ng.take_along_axis(ng.tensor(A), index, axis)
        np.testing.assert_array_equal(got.numpy(), np.take_along_axis(A, index, axis))
    x = ng.tensor(A[0], requires_grad=True)
    picks = ng.tensor(np.argsort(A[0], axis=0)[:2])  # indices as a tensor
    assert ng.gradcheck(lambda t: (ng.take_along_axis(t, picks, 0) ** 2).sum(), (x,))
    with pytest.raises(IndexError):
        ng.take_along_axis(ng.tensor(A), np.full((1, 1, 1), 9), 0)
    with pytest.raises(IndexError, match="must be integers"):
        ng.take_along_axis(ng.tensor(A), np.zeros((1, 1, 1)), 0)
    with pytest.raises(ValueError, match="same number"):
        ng.take_along_axis(ng.tensor(A), np.zeros(3, int), 0)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_matches_numpy(indexing, sparse):
    vectors = [[1.0, 2.0, 3.0], [4.0, 5.0], [7.0, 8.0, 9.0, 10.0]]
    for n in (1, 2, 3):
        got = ng.meshgrid(*map(ng.tensor, vectors[:n]), indexing=indexing, sparse=sparse)
        want = np.meshgrid(*vectors[:n], indexing=indexing, sparse=sparse)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w)
    with pytest.raises(ValueError, match="indexing must be"):
        ng.meshgrid(ng.tensor([1.0]), indexing="yx")


# (Numba's CUDA simulator runs kernels through Python's math, which raises on NaN and inf
# where a GPU and NumPy give them: special values are checked on the CPU targets.)
@pytest.mark.skipif(os.environ.get("NUMGRAD_TEST_DEVICE") == "cuda" and
                    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
                    reason="the CUDA simulator's math raises on NaN and inf")
def test_trunc_signbit_copysign_on_special_values():
    x = np.array([-1.5, -0.0, 0.0, 2.7, np.nan, -np.nan, np.inf, -np.inf, 1e308, -5e-324])
    for name in ("trunc", "fix", "signbit"):
        got, want = getattr(ng, name)(ng.tensor(x)), getattr(np, name)(x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)
        assert np.array_equal(np.signbit(got.numpy()), np.signbit(want)) or name == "signbit"
    for y in (-1.0, 0.0, -0.0, np.array([2.0] * 5 + [-3.0] * 5)):
        got, want = ng.copysign(ng.tensor(x), y).numpy(), np.copysign(x, y)
        np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]),
                                      np.signbit(want[~np.isnan(want)]))
        np.testing.assert_array_equal(got, want)
    i = np.array([-3, 0, 4])
    assert ng.trunc(ng.tensor(i)).dtype == np.trunc(i).dtype
    np.testing.assert_array_equal(ng.signbit(ng.tensor(i)).numpy(), np.signbit(i))


def _cube_root(x: np.ndarray) -> np.ndarray:
    """The cube root of each float64 in `x`, correctly rounded (in decimal, 60 digits)."""
    with decimal.localcontext() as context:
        context.prec = 60
        third = decimal.Decimal(1) / 3
        return np.array([math.copysign(float(abs(decimal.Decimal(v)) ** third), v)
                         if v else v for v in x.tolist()])


@pytest.mark.skipif(os.environ.get("NUMGRAD_TEST_DEVICE") == "cuda" and
                    os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
                    reason="the CUDA simulator's math raises on NaN and inf")
def test_cbrt_is_within_an_ulp_of_the_cube_root_and_exact_on_cubes():
    # Numba has no cube root of NumPy's accuracy: an estimate and a Newton step (ops.py
    # `cbrt_from`). Within one ulp of the cube root from subnormals to the largest float
    # (NumPy's np.cbrt is not: its own loop on an AVX2 host missed it by up to 3 ulp,
    # and perfect cubes; the interpreter target refines it by the same step; float32:
    # within two ulps of np.cbrt), exactly the root of a perfect cube, and +-0, +-inf
    # and nan as they are.
    x = np.concatenate([rng.standard_normal(4000) * 10.0 ** rng.integers(-300, 300, 4000),
                        [5e-324, -1e-310, 2.2250738585072014e-308, 1.7976931348623157e308]])
    got, want = ng.cbrt(ng.tensor(x)).numpy(), _cube_root(x)
    assert (np.abs(got - want) <= np.spacing(np.abs(want))).all()
    cubes = np.arange(-1000, 1001, dtype=np.float64) ** 3
    np.testing.assert_array_equal(ng.cbrt(ng.tensor(cubes)).numpy(), np.arange(-1000, 1001))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])
    got = ng.cbrt(ng.tensor(special)).numpy()
    np.testing.assert_array_equal(got, special)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(special))
    x32 = (rng.standard_normal(1000) * 100).astype(np.float32)
    got32, want32 = ng.cbrt(ng.tensor(x32)).numpy(), np.cbrt(x32)
    assert got32.dtype == np.float32
    assert (np.abs(got32 - want32) <= 2 * np.spacing(np.abs(want32))).all()
    assert ng.cbrt(ng.tensor(np.array([8, -27]))).dtype == np.cbrt(np.array([8, -27])).dtype


def test_cbrt_gradient_against_autograd_and_differences():
    # (HIPS autograd's cbrt has no VJP: its oracle is sign(a) * |a| ** (1/3))
    x = rng.uniform(0.3, 2.0, 6) * rng.choice([-1.0, 1.0], 6)
    t = ng.tensor(x, requires_grad=True)
    (ng.cbrt(t) * ng.tensor(np.arange(6.0))).sum().backward()
    want = autograd.grad(
        lambda a: (anp.sign(a) * anp.abs(a) ** (1 / 3) * np.arange(6.0)).sum())(x)
    np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-12)
    assert ng.gradcheck(lambda a: ng.cbrt(a).sin(), (ng.tensor(x, requires_grad=True),))
