"""The modified Bessel functions (i0, i1, i0e, i1e): values against SciPy in float64 and
float32, their special values, gradients against finite differences (``ng.gradcheck``)
and HIPS autograd's ``autograd.scipy.special`` to second order; the NumPy interpreter and
the CUDA simulator give the same values.

Tolerances, float64: 5e-15 relative against SciPy (ours are within 2.2e-15 of mpmath at 40
digits, SciPy's within 1.2e-15: docs/decisions.md); float32 2e-7 relative to SciPy's
float64 value (one rounding of ours, computed in float64). Gradients 1e-10 relative against
autograd (other formulas: its i1' is ``(i0 + iv(2, x)) / 2``), 1e-5 against finite
differences.
"""

import textwrap

import autograd
import autograd.scipy.special as aspecial
import autograd.scipy.stats as astats
import numpy as np
import pytest
import scipy.special
import scipy.stats
from budget import quick
from test_scipy_special_functions import GRAD_RTOL, ON_SIMULATOR, _close, run_in_simulator

import numgrad as ng
from numgrad.device import as_device

special = ng.scipy.special
rng = np.random.default_rng(11)
BESSELS = ["i0", "i1", "i0e", "i1e"]
#: autograd's: i0e and i1e are its ``ive`` of orders 0 and 1
ORACLES = {"i0": aspecial.i0, "i1": aspecial.i1, "i0e": lambda x: aspecial.ive(0, x),
           "i1e": lambda x: aspecial.ive(1, x)}
#: both sides of the cut between the power series and the asymptotic expansion (20),
#: small, large and up to the overflow of i0 (SciPy's overflows at 709.78: below that)
WIDE = np.concatenate([np.geomspace(1e-8, 709.0, 40), rng.uniform(0.0, 40.0, 40),
                       20.0 + np.linspace(-1e-6, 1e-6, 5)])
WIDE = np.concatenate([WIDE, -WIDE[::3]])


@pytest.mark.parametrize("name", BESSELS)
def test_bessel_values_match_scipy_across_their_range(name):
    want = getattr(scipy.special, name)(WIDE)
    _close(getattr(special, name)(WIDE).numpy(), want, 5e-15)
    _close(getattr(ng, name)(WIDE).numpy(), want, 5e-15)  # (the primitive, as ng.i0)
    narrow = WIDE[np.abs(WIDE) < 80].astype(np.float32)
    got = getattr(ng, name)(narrow)
    assert got.dtype == np.float32
    _close(got.numpy(), getattr(scipy.special, name)(narrow.astype(np.float64)), 2e-7)


@pytest.mark.skipif(ON_SIMULATOR, reason="the CUDA simulator's math raises on inf")
def test_bessel_special_values():
    v = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 713.0, 714.0, -714.0])
    with np.errstate(over="ignore"):
        want = {name: getattr(scipy.special, name)(v) for name in BESSELS}
    # i0 and i1 overflow where the functions do (713.98), not where exp does (SciPy's),
    # and are +-inf at +-inf (SciPy's: NaN); i1 and i1e of -0.0 are -0.0 (odd functions,
    # as erfinv; SciPy's are +0.0)
    want["i0"][[2, 3, 7]] = np.inf, np.inf, 6.705128263671e+307
    want["i1"][[1, 2, 3, 7]] = -0.0, np.inf, -np.inf, 6.7004245591864e+307
    want["i1e"][1] = -0.0
    for name in BESSELS:
        got = getattr(ng, name)(v).numpy()
        np.testing.assert_allclose(got, want[name], rtol=1e-13, equal_nan=True, err_msg=name)
        zero = want[name] == 0
        np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[name][zero]))
    # i0 and i0e are even, i1 and i1e odd, exactly
    x = rng.uniform(0.0, 50.0, 20)
    for name, sign in [("i0", 1), ("i1", -1), ("i0e", 1), ("i1e", -1)]:
        fn = getattr(ng, name)
        np.testing.assert_array_equal(fn(-x).numpy(), sign * fn(x).numpy())


def test_numpys_i0_on_a_tensor_is_numgrads():
    t = ng.tensor([0.5, 3.0], requires_grad=True)
    out = np.i0(t)
    assert isinstance(out, ng.Tensor) and out.requires_grad
    np.testing.assert_allclose(out.numpy(), np.i0(t.numpy()), rtol=1e-15)
    for name in BESSELS:  # SciPy's ufuncs, dispatched to ng.scipy.special's
        out = getattr(scipy.special, name)(t)
        assert isinstance(out, ng.Tensor) and out.requires_grad, name


# ---- gradients -----------------------------------------------------------------------

POINTS = np.array([-25.0, -3.0, -0.7, 0.0, 0.4, 1.5, 19.0, 21.0])


@pytest.mark.parametrize("name", BESSELS)
def test_bessel_gradients_match_autograd_and_finite_differences(name):
    weights = np.linspace(0.5, 1.5, POINTS.size)
    ours, theirs = getattr(special, name), ORACLES[name]
    got = ng.grad(lambda t: (ours(t) * weights).sum())(POINTS)
    # (autograd's are NaN at 0, where i1' and i1e' are 1/2 and i0e' is 0)
    zero = POINTS == 0
    want = autograd.elementwise_grad(theirs)(np.where(zero, 1.0, POINTS)) * weights
    want[zero] = {"i0": 0.0, "i1": 0.5, "i0e": 0.0, "i1e": 0.5}[name] * weights[zero]
    np.testing.assert_allclose(got, want, rtol=GRAD_RTOL, atol=1e-13)
    away = POINTS[POINTS != 0]  # (i0e has a kink at 0)
    assert ng.gradcheck(ours, (ng.tensor(away, requires_grad=True),), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", quick(BESSELS, ["i0"]))
def test_bessel_second_derivatives_match_autograd(name):
    ours, theirs = getattr(special, name), ORACLES[name]
    x = POINTS[POINTS != 0]
    got = ng.elementwise_grad(ng.elementwise_grad(ours))(x)
    want = autograd.elementwise_grad(autograd.elementwise_grad(theirs))(x)
    np.testing.assert_allclose(got, want, rtol=GRAD_RTOL, atol=1e-13)
    assert ng.gradgradcheck(ours, (ng.tensor(x[1:-1], requires_grad=True),), atol=1e-5,
                            rtol=1e-4)
    # at 0: i0'' = 1/2, i1'' = 0 (i1' is even); i1e'' is 0 there, between its one-sided
    # limits -1 and 1 (i1e' has a kink at 0)
    at_zero = ng.elementwise_grad(ng.elementwise_grad(ours))(np.array([0.0]))[0]
    if name != "i0e":
        assert at_zero == pytest.approx({"i0": 0.5, "i1": 0.0, "i1e": 0.0}[name], abs=1e-15)


# ---- the other targets ---------------------------------------------------------------

def _bessel_rows(x):
    # (and the incomplete gamma functions: each of their methods at some point)
    a = np.array([[0.3], [2.5], [25.0], [40.0]])
    return [getattr(ng, name)(x) for name in BESSELS] + [
        ng.grad((ng.i1(x) + ng.i1e(x)).sum(), x)[0], ng.gammainc(a, x.abs().detach() + 0.5),
        ng.gammaincc(a, x.abs().detach() + 0.5)]


@pytest.mark.slow
def test_the_numpy_interpreter_computes_what_the_numba_kernels_compute(numba_cpu, monkeypatch):
    from numgrad.kernels import interpreter

    x = np.concatenate([POINTS, [700.0, -0.0]])
    compiled = [t.numpy() for t in _bessel_rows(ng.tensor(x, device="cpu", requires_grad=True))]
    monkeypatch.setattr(as_device("cpu"), "_backend", interpreter)
    with ng.engine.record() as record:
        interpreted = [t.numpy() for t in
                       _bessel_rows(ng.tensor(x, device="cpu", requires_grad=True))]
    assert record.kernels_compiled == 0
    # (NumPy's exp and log and Python's lgamma, where the kernels call libm's: a few ulps)
    for ours, theirs in zip(interpreted, compiled):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=0)


SIMULATED = textwrap.dedent("""
    import numpy as np, scipy.special as sp
    import numgrad as ng

    x = np.array([-25.0, -3.0, 0.4, 1.5, 19.0, 21.0])
    t = ng.tensor(x, device="cuda", requires_grad=True)
    cases = {name: (getattr(sp, name)(x), getattr(ng, name)(t))
             for name in ("i0", "i1", "i0e", "i1e")}
    cases["i0'"] = (sp.i1(x), ng.grad(ng.i0(t).sum(), t)[0])
    a, y = np.array([[0.3], [2.5], [25.0]]), np.abs(x) + 0.5
    cases["gammainc"] = (sp.gammainc(a, y), ng.gammainc(a, ng.tensor(y, device="cuda")))
    cases["gammaincc"] = (sp.gammaincc(a, y), ng.gammaincc(a, ng.tensor(y, device="cuda")))
    for name, (want, got) in cases.items():
        assert got.device == "cuda", name
        np.testing.assert_allclose(got.numpy(), want, rtol=2e-13, atol=0, err_msg=name)
    print("ok", len(cases))
""")


@pytest.mark.slow
@pytest.mark.skipif(ON_SIMULATOR, reason="(runs the simulator in a process of its own)")
def test_cuda_simulator_values(tmp_path):
    assert run_in_simulator(SIMULATED, tmp_path).split() == ["ok", "7"]


# ---- the regularized incomplete gamma functions ----------------------------------------
# Their relative error grows with the conditioning of the problem, ``|x - a|`` (each
# ulp of x moves ``log P`` by about ``|x - a|`` ulps), so values are compared with
# SciPy to ``2e-14 (1 + |x - a|)`` relative (ours are within 22 ulps of that of mpmath
# on a grid of a in 1e-3..1e3 and x in 0..1e3, SciPy's within 26: docs/decisions.md).

A = np.geomspace(1e-3, 1e3, 25)[:, None]
#: x across the grid, and around a: the series, Temme's expansion (a >= 20 and -0.6 <=
#: (x - a) / a <= 1), the continued fraction and the small-a series (a < 0.5, x < 1.5)
GAMMA_POINTS = [(A, np.concatenate([[0.0], np.geomspace(1e-4, 1e3, 25), [1.2, 1.49]])[None]),
                (A, A * (1 + np.array([-0.9, -0.61, -0.6, -0.3, -0.01, 0.0, 0.01, 0.3,
                                       1.0, 1.01, 3.0]))),
                (A, A + np.array([0.999, 1.0]))]


#: the points as one pair of flat arrays (one kernel to compile)
GAMMA_A, GAMMA_X = (np.concatenate(c) for c in zip(*[
    [v.ravel() for v in np.broadcast_arrays(a, x)] for a, x in GAMMA_POINTS]))


def _close_conditioned(got, want, a, x, rtol=2e-14):
    bound = rtol * (1 + np.abs(x - a)) * np.abs(want) + 1e-300
    bad = ~(np.abs(got - want) <= bound)
    assert not bad.any(), (a[bad][:5], x[bad][:5], got[bad][:5], want[bad][:5])


@pytest.mark.parametrize("name", quick(["gammainc", "gammaincc"], ["gammainc"]))
def test_incomplete_gamma_values_match_scipy(name):
    ours, theirs = getattr(special, name), getattr(scipy.special, name)
    _close_conditioned(ours(GAMMA_A, GAMMA_X).numpy(), theirs(GAMMA_A, GAMMA_X), GAMMA_A,
                       GAMMA_X)
    a, x = np.float32(2.5), rng.uniform(0.0, 8.0, 20).astype(np.float32)
    got = ours(a, x)  # (a Python or NumPy scalar beside a float32 tensor keeps float32)
    assert got.dtype == np.float32 and getattr(ng, name)(ng.tensor(x), 2.5).dtype == np.float32


@pytest.mark.slow  # (the float32 series compiles for seconds, `budget`)
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_in_float32_is_scipys_to_float32s_precision(name):
    a, x = np.float32(2.5), rng.uniform(0.0, 8.0, 20).astype(np.float32)
    _close(getattr(special, name)(a, x).numpy(),
           getattr(scipy.special, name)(np.float64(a), x.astype(np.float64)), 2e-7)


@pytest.mark.skipif(ON_SIMULATOR, reason="the CUDA simulator's math raises on inf")
def test_incomplete_gamma_special_values_are_scipys():
    v = np.array([0.0, 1e-300, 0.5, 1.0, 30.0, 1e6, np.inf, np.nan, -1.0])
    a, x = v[:, None], v[None, :]
    for name in ("gammainc", "gammaincc"):
        got, want = getattr(ng, name)(a, x).numpy(), getattr(scipy.special, name)(a, x)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, equal_nan=True,
                                   err_msg=name)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_gradient_is_for_x_and_matches_autograd(name):
    a, x = np.array([0.3, 1.0, 2.5, 25.0, 30.0]), np.array([1.2, 0.5, 4.0, 24.0, 70.0])

    def ours(t):
        return getattr(special, name)(a, t)

    def theirs(t):
        return getattr(aspecial, name)(a, t)

    got = ng.grad(lambda t: ours(t).sum())(x)
    np.testing.assert_allclose(got, autograd.elementwise_grad(theirs)(x), rtol=GRAD_RTOL)
    assert ng.gradcheck(ours, (ng.tensor(x, requires_grad=True),), atol=1e-6, rtol=1e-5)
    # at x = 0: the density x**(a - 1) exp(-x) / Gamma(a), inf, 1 or 0 as a < 1, = 1, > 1
    got = ng.grad(lambda t: getattr(special, name)(np.array([0.5, 1.0, 2.0]), t).sum())(
        np.zeros(3))
    np.testing.assert_array_equal(got, np.array([np.inf, 1.0, 0.0]) * (
        1 if name == "gammainc" else -1))


@pytest.mark.slow  # (kernels of the long expression and its gradient: 3 s each)
@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_second_derivatives_match_autograd(name):
    a, x = np.array([0.3, 2.5, 25.0, 30.0]), np.array([1.2, 4.0, 24.0, 70.0])

    def ours(t):
        return getattr(special, name)(a, t)

    def theirs(t):
        return getattr(aspecial, name)(a, t)

    second = ng.elementwise_grad(ng.elementwise_grad(ours))(x)
    want = autograd.elementwise_grad(autograd.elementwise_grad(theirs))(x)
    np.testing.assert_allclose(second, want, rtol=GRAD_RTOL, atol=1e-15)
    assert ng.gradgradcheck(ours, (ng.tensor(x, requires_grad=True),), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_no_gradient_for_a_raises_before_any_kernel_runs(name):
    a = ng.tensor([1.5, 2.5], requires_grad=True)
    x = ng.tensor([0.5, 3.0], requires_grad=True)
    out = getattr(special, name)(a * 2, x).sum()
    with ng.engine.record() as record, pytest.raises(
            RuntimeError, match=rf"{name}\(a, x\) has no gradient with respect to a"):
        out.backward()
    assert record.kernels_launched == 0 and a.grad is None and x.grad is None
    with pytest.raises(RuntimeError, match="with respect to a"):
        ng.grad(getattr(special, name)(a, x).sum(), x)  # (a requires grad: refused too)
    (g,) = ng.grad(getattr(special, name)(a.detach(), x).sum(), x)  # (detached: fine)
    assert np.isfinite(g.numpy()).all()


# ---- the distributions' CDFs built on them ---------------------------------------------

K = np.array([-1.0, 0.0, 1.0, 2.5, 4.0, 9.0, 30.0])
Z = np.array([-1.0, 0.0, 0.3, 1.0, 2.5, 6.0, 40.0])
CDFS = [
    ("gamma_cdf", lambda x: ng.scipy.stats.gamma.cdf(x, 2.5, 0.1, 1.5),
     lambda x: scipy.stats.gamma.cdf(x, 2.5, 0.1, 1.5), Z),
    ("gamma_sf", lambda x: ng.scipy.stats.gamma.sf(x, 0.7), lambda x: scipy.stats.gamma.sf(x, 0.7),
     Z),
    pytest.param("gamma_logcdf", lambda x: ng.scipy.stats.gamma.logcdf(x, 3.0),
                 lambda x: scipy.stats.gamma.logcdf(x, 3.0), Z, marks=pytest.mark.slow),
    pytest.param("gamma_logsf", lambda x: ng.scipy.stats.gamma.logsf(x, 3.0),
                 lambda x: scipy.stats.gamma.logsf(x, 3.0), Z, marks=pytest.mark.slow),
    ("chi2_cdf", lambda x: ng.scipy.stats.chi2.cdf(x, 3.0), lambda x: scipy.stats.chi2.cdf(x, 3.0),
     Z),
    ("chi2_sf", lambda x: ng.scipy.stats.chi2.sf(x, 5.0, 0.5, 2.0),
     lambda x: scipy.stats.chi2.sf(x, 5.0, 0.5, 2.0), Z),
    ("chi2_logpdf", lambda x: ng.scipy.stats.chi2.logpdf(x, 3.0),
     lambda x: scipy.stats.chi2.logpdf(x, 3.0), Z),
    ("chi2_pdf", lambda df: ng.scipy.stats.chi2.pdf(2.0, df),
     lambda df: scipy.stats.chi2.pdf(2.0, df), np.array([0.5, 1.0, 3.0, 7.5])),
    ("poisson_cdf", lambda k: ng.scipy.stats.poisson.cdf(k, 3.5),
     lambda k: scipy.stats.poisson.cdf(k, 3.5), K),
    ("poisson_sf", lambda mu: ng.scipy.stats.poisson.sf(K, mu[:, None], loc=1),
     lambda mu: scipy.stats.poisson.sf(K, mu[:, None], loc=1), np.array([0.5, 3.0, 25.0])),
]


@pytest.mark.parametrize("name, ours, theirs, x", CDFS,
                         ids=[c.values[0] if hasattr(c, "values") else c[0] for c in CDFS])
def test_cdfs_match_scipy(name, ours, theirs, x):
    _close(ours(x).numpy(), theirs(x), 1e-13)


# (id, ours, autograd's, x): the gradients autograd has (for x, or poisson's mu)
CDF_GRADIENTS = [
    ("gamma_cdf", lambda x: ng.scipy.stats.gamma.cdf(x, 2.5), lambda x: astats.gamma.cdf(x, 2.5),
     Z[2:]),
    pytest.param("chi2_cdf", lambda x: ng.scipy.stats.chi2.cdf(x, 3.0),
                 lambda x: astats.chi2.cdf(x, 3.0), Z[2:], marks=pytest.mark.slow),
    ("poisson_cdf_mu", lambda mu: ng.scipy.stats.poisson.cdf(K[1:], mu),
     lambda mu: astats.poisson.cdf(K[1:], mu), np.array([0.5, 1.0, 3.5, 4.0, 10.0, 28.0])),
]


@pytest.mark.parametrize("name, ours, theirs, x", CDF_GRADIENTS,
                         ids=[c.values[0] if hasattr(c, "values") else c[0]
                              for c in CDF_GRADIENTS])
def test_cdf_gradients_match_autograd(name, ours, theirs, x):
    got = ng.elementwise_grad(ours)(x)
    want = autograd.elementwise_grad(theirs)(x)
    np.testing.assert_allclose(got, want, rtol=GRAD_RTOL, atol=1e-15)
    assert ng.gradcheck(ours, (ng.tensor(x, requires_grad=True),), atol=1e-6, rtol=1e-5)


def test_gamma_cdf_gradient_for_loc_and_scale_and_none_for_k():
    loc, scale = ng.tensor(0.2, requires_grad=True), ng.tensor(1.5, requires_grad=True)
    assert ng.gradcheck(lambda at, by: ng.scipy.stats.gamma.cdf(Z[2:], 2.5, at, by),
                        (loc, scale))
    k = ng.tensor(K, requires_grad=True)  # (piecewise constant in k: no gradient, no error)
    out = ng.scipy.stats.poisson.cdf(k, 3.5)
    assert not out.requires_grad
