"""The regularized incomplete beta function ``betainc(a, b, x)`` and the CDFs built on it
(``beta``, ``t``): values against SciPy, SciPy's special values, the gradient for x
against HIPS autograd's ``autograd.scipy.special.betainc`` and finite differences to
second order, none for a and b; the NumPy interpreter and the CUDA simulator give the
same values.

Tolerances (float64, relative to SciPy's, where SciPy's value is above 1e-250: below,
SciPy's own loses digits): 3e-12 where a and b are at most 10, 5e-11 up to 100, 5e-10 up
to 1000 (`numgrad.betainc_math`: the continued fraction's ``1 - I`` above its switch
point, and the prefactor's logarithms, lose that much; SciPy's own error is about
1e-14). Gradients 1e-10 relative against autograd, 1e-5 against finite differences.
"""

import textwrap

import autograd
import autograd.scipy.special as aspecial
import autograd.scipy.stats as astats
import numpy as np
import pytest
import scipy.special
import scipy.stats
from test_scipy_special_functions import ON_SIMULATOR, _close, run_in_simulator

import numgrad as ng
from numgrad.device import as_device

special, stats = ng.scipy.special, ng.scipy.stats
rng = np.random.default_rng(5)


def _grid(high: float, n: int = 600):
    """a and b log-uniform in [1e-2, high], x uniform in [0, 1], with the switch point
    ``x = (a + 1) / (a + b + 2)`` and both sides of it."""
    a, b = (np.exp(rng.uniform(np.log(1e-2), np.log(high), n)) for _ in range(2))
    x = rng.uniform(0.0, 1.0, n)
    x[:30] = np.clip((a[:30] + 1) / (a[:30] + b[:30] + 2) + rng.uniform(-1e-9, 1e-9, 30), 0, 1)
    return a, b, x


#: (a, b, x, tolerance) over three ranges of a and b, as one set of flat arrays (one
#: kernel to compile)
GRIDS = [(*_grid(high), np.full(600, rtol)) for high, rtol in
         [(10.0, 3e-12), (100.0, 5e-11), (1000.0, 5e-10)]]
A, B, X, RTOL = (np.concatenate(c) for c in zip(*GRIDS))


def test_values_match_scipy_across_three_ranges_of_a_and_b():
    want = scipy.special.betainc(A, B, X)
    got = special.betainc(A, B, ng.tensor(X)).numpy()
    kept = want > 1e-250
    error = np.abs(got[kept] - want[kept]) / want[kept]
    assert (error <= RTOL[kept]).all(), error.max()
    np.testing.assert_array_equal(got[~kept] < 1e-240, True)


@pytest.mark.skipif(ON_SIMULATOR, reason="the CUDA simulator's math raises on inf")
def test_special_values_are_scipys():
    inf, nan = np.inf, np.nan
    points = np.array([(0, 0, 0.5), (0, 1, 0.5), (0, 1, 0), (1, 0, 0.5), (1, 0, 1), (2, 3, 0),
                       (2, 3, 1), (-1, 2, 0.5), (2, -1, 0.5), (2, 3, -0.1), (2, 3, 1.1),
                       (inf, 2, 0.5), (2, inf, 0.5), (inf, inf, 0.5), (inf, 2, 1), (2, inf, 0),
                       (nan, 2, 0.5), (2, nan, 0.5), (2, 3, nan), (1, 1, 0.3), (0, 2, 1),
                       (1e-300, 1, 0.5), (0.5, 0.5, 0.5)])
    a, b, x = points.T
    got = special.betainc(a, b, ng.tensor(x)).numpy()
    # (exact but at (1/2, 1/2, 1/2), a regular point: 0.5 to a few ulps)
    np.testing.assert_allclose(got, scipy.special.betainc(a, b, x), rtol=5e-15,
                               equal_nan=True)


def test_float32_stays_float32():
    got = special.betainc(np.float32(2.0), np.float32(3.0),
                          ng.tensor(np.linspace(0.1, 0.9, 5, dtype=np.float32)))
    assert got.dtype == np.float32
    _close(got.numpy(), scipy.special.betainc(2.0, 3.0, np.linspace(0.1, 0.9, 5)), 2e-7)


GRAD_POINTS = [(np.array([0.5, 2.0, 7.5, 30.0]), np.array([3.0, 0.7, 2.0, 45.0]),
                np.array([0.2, 0.9, 0.55, 0.35]))]


@pytest.mark.parametrize("a, b, x", GRAD_POINTS)
def test_the_gradient_for_x_matches_autograd_to_second_order(a, b, x):
    def theirs(x):
        return aspecial.betainc(a, b, x).sum()

    t = ng.tensor(x, requires_grad=True)
    (first,) = ng.grad(special.betainc(a, b, t).sum(), t, create_graph=True)
    np.testing.assert_allclose(first.numpy(), autograd.grad(theirs)(x), rtol=1e-10)
    (second,) = ng.grad(first.sum(), t)
    want = autograd.elementwise_grad(autograd.grad(theirs))(x)
    np.testing.assert_allclose(second.numpy(), want, rtol=1e-10)
    assert ng.gradcheck(lambda x: special.betainc(a, b, x), (t,))
    assert ng.gradgradcheck(lambda x: special.betainc(a, b, x), (t,))


@pytest.mark.parametrize("which", ["a", "b"])
def test_no_gradient_for_a_or_b_raises_naming_it(which):
    a, b, x = (ng.tensor(v, requires_grad=True) for v in (2.0, 3.0, 0.4))
    operands = {"a": (a, b.detach(), x), "b": (a.detach(), b, x)}[which]
    with pytest.raises(RuntimeError, match=f"no gradient with respect to {which}"):
        special.betainc(*operands).backward()


def test_the_numpy_interpreter_computes_what_the_numba_kernels_compute(numba_cpu, monkeypatch):
    from numgrad.kernels import interpreter

    a, b, x = A[::10], B[::10], X[::10]
    compiled = special.betainc(a, b, ng.tensor(x)).numpy()
    monkeypatch.setattr(as_device("cpu"), "_backend", interpreter)
    with ng.engine.record() as record:
        interpreted = special.betainc(a, b, ng.tensor(x)).numpy()
    assert record.kernels_compiled == 0
    # (NumPy's log, exp and log1p, and Python's lgamma, where kernels call libm's: ulps,
    # which the swap's ``1 - I`` magnifies as it magnifies SciPy's)
    assert (np.abs(interpreted - compiled) <= RTOL[::10] * np.abs(compiled)).all()


SIMULATED = textwrap.dedent("""
    import numpy as np, scipy.special as sp, scipy.stats as st
    import numgrad as ng

    a, b = np.array([[0.3], [2.5], [40.0]]), np.array([0.7, 3.0, 55.0])
    x = np.array([0.05, 0.5, 0.93])
    got = ng.scipy.special.betainc(a, b, ng.tensor(x, device="cuda"))
    assert got.device == "cuda"
    np.testing.assert_allclose(got.numpy(), sp.betainc(a, b, x), rtol=1e-12)
    t = ng.tensor(np.array([-2.0, 0.0, 0.3, 4.0]), device="cuda", requires_grad=True)
    cdf = ng.scipy.stats.t.cdf(t, 3.0)
    cdf.sum().backward()
    np.testing.assert_allclose(cdf.numpy(), st.t.cdf(t.numpy(), 3.0), rtol=1e-12)
    np.testing.assert_allclose(t.grad.numpy(), st.t.pdf(t.numpy(), 3.0), rtol=1e-12)
    print("ok")
""")


@pytest.mark.slow  # (12 s)
@pytest.mark.skipif(ON_SIMULATOR, reason="(runs the simulator in a process of its own)")
def test_cuda_simulator_values(tmp_path):
    assert run_in_simulator(SIMULATED, tmp_path).split() == ["ok"]


# ---- the beta and t distributions' CDFs ----------------------------------------------

T = np.array([-40.0, -3.0, -0.5, -1e-9, -1e-160, 0.0, 1e-9, 0.25, 2.0, 7.0, 60.0])
Z = np.array([-0.5, 0.0, 1e-6, 0.1, 0.35, 0.5, 0.8, 0.999, 1.0, 1.7])
# (name, ours(x), SciPy's(x), x): with loc and scale
CDFS = [(f"t.{fn}", lambda x, fn=fn: getattr(stats.t, fn)(x, 3.5, 0.2, 1.5),
         lambda x, fn=fn: getattr(scipy.stats.t, fn)(x, 3.5, 0.2, 1.5), T)
        for fn in ("cdf", "sf", "logcdf", "logsf")] + \
       [(f"beta.{fn}", lambda x, fn=fn: getattr(stats.beta, fn)(x, 2.5, 0.6, -0.1, 1.2),
         lambda x, fn=fn: getattr(scipy.stats.beta, fn)(x, 2.5, 0.6, -0.1, 1.2), Z)
        for fn in ("cdf", "sf", "logcdf", "logsf")]


@pytest.mark.parametrize("name, ours, theirs, x", [
    pytest.param(*case, id=case[0], marks=[pytest.mark.slow] if ".log" in case[0] else [])
    for case in CDFS])  # (the logs: 4 s of compiling each, and the same two functions)
def test_cdfs_match_scipy(name, ours, theirs, x):
    _close(ours(ng.tensor(x)).numpy(), theirs(x), 5e-12, 1e-300)


@pytest.mark.parametrize("df", [1.0, 3.5, 30.0])
def test_t_cdf_gradient_is_the_density_at_the_centre_too(df):
    """At z = 0 the incomplete beta function's derivative is infinite times zero; the
    CDF's is the density there (and its second derivative the density's, 0), and near
    it (where ``df / (df + z**2)`` rounds to 1, and where ``z**2`` underflows)."""
    x = ng.tensor(T, requires_grad=True)
    (first,) = ng.grad(stats.t.cdf(x, df).sum(), x, create_graph=True)
    np.testing.assert_allclose(first.numpy(), scipy.stats.t.pdf(T, df), rtol=1e-11)
    (second,) = ng.grad(first.sum(), x)
    want = autograd.elementwise_grad(autograd.grad(lambda v: astats.t.cdf(v, df).sum()))(T)
    # (near the centre the second derivative is a difference of terms of order 1 / z,
    # whose roundings leave an absolute error of about 1e-16 / z)
    np.testing.assert_allclose(second.numpy(), want, rtol=1e-9, atol=1e-6)


def test_beta_cdf_gradient_matches_autograd():
    inside = Z[(Z > 0) & (Z < 1)]
    x = ng.tensor(inside, requires_grad=True)
    stats.beta.cdf(x, 2.5, 0.6).sum().backward()
    want = autograd.grad(lambda v: astats.beta.cdf(v, 2.5, 0.6).sum())(inside)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-10)
