"""ng.scipy's special functions (erf, erfc, erfinv, gammaln, gamma, digamma, polygamma, beta,
betaln, multigammaln) and the distributions built on them (norm's CDF, t, gamma, beta,
dirichlet, poisson): values against SciPy, gradients against finite differences
(``ng.gradcheck``) and HIPS autograd's ``autograd.scipy``, to second order; the NumPy
interpreter and the CUDA simulator give the same values.

Tolerances, float64: values 1e-12 relative against SciPy, 1e-14 for digamma, polygamma
and erfinv for x > 0 (their own accuracy against mpmath is 4e-15, 1e-15 and 2e-15:
docs/decisions.md); for x < 0, where digamma and polygamma cross 0, an absolute 1e-13
times ``max(1, |value|)`` (SciPy's own relative error is 3e-12 there). Gradients 1e-10
relative against autograd (other formulas and orders of summation), 1e-5 against finite
differences. The arrays are few and small: each new kernel compiles (polygamma's in 0.7 s).
"""

import os
import subprocess
import sys
import textwrap

import autograd
import autograd.numpy as anp
import autograd.scipy.special as aspecial
import autograd.scipy.stats as astats
import numpy as np
import pytest
import scipy.special
import scipy.stats
from budget import sampled

import numgrad as ng
from numgrad.device import as_device

special, stats = ng.scipy.special, ng.scipy.stats
RTOL, GRAD_RTOL = 1e-12, 1e-10
ON_SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
rng = np.random.default_rng(7)
X = rng.uniform(0.2, 4.0, 6)  # positive points
U = rng.uniform(-0.9, 0.9, 6)  # erfinv's
Z = rng.normal(0.0, 2.0, 6)  # anywhere
K = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 8.0])  # counts
SIMPLEX = np.array([0.2, 0.3, 0.5])
ALPHA = np.array([1.5, 2.0, 3.0])
POINTS_ON_SIMPLEX = np.stack([SIMPLEX, SIMPLEX[::-1]], 1)

# (id, ours(x), SciPy's(x), x)
VALUES = [
    ("erf", special.erf, scipy.special.erf, Z),
    ("erfc", special.erfc, scipy.special.erfc, Z),
    ("erfinv", special.erfinv, scipy.special.erfinv, U),
    ("gammaln", special.gammaln, scipy.special.gammaln, Z),
    ("gamma", special.gamma, scipy.special.gamma, Z),
    ("digamma", special.digamma, scipy.special.digamma, Z),
    ("psi", special.psi, scipy.special.psi, X),
    ("polygamma_orders", lambda x: special.polygamma(np.arange(5.0)[:, None], x),
     lambda x: scipy.special.polygamma(np.arange(5)[:, None], x), X),
    ("polygamma_1", lambda x: special.polygamma(1, x), lambda x: scipy.special.polygamma(1, x), Z),
    ("beta", lambda x: special.beta(x, X[::-1]), lambda x: scipy.special.beta(x, X[::-1]), X),
    ("betaln", lambda x: special.betaln(x, 2.5), lambda x: scipy.special.betaln(x, 2.5), X),
    ("multigammaln", lambda x: special.multigammaln(x + 1, 3),
     lambda x: scipy.special.multigammaln(x + 1, 3), X),
    ("norm_cdf", lambda x: stats.norm.cdf(x, 0.3, 1.7), lambda x: scipy.stats.norm.cdf(x, 0.3, 1.7),
     Z),
    ("norm_logcdf", stats.norm.logcdf, scipy.stats.norm.logcdf, Z * 20),
    ("norm_logsf", stats.norm.logsf, scipy.stats.norm.logsf, Z * 20),
    ("norm_sf", stats.norm.sf, scipy.stats.norm.sf, Z),
    ("t_logpdf", lambda x: stats.t.logpdf(x, 3.5, 0.2, 1.5),
     lambda x: scipy.stats.t.logpdf(x, 3.5, 0.2, 1.5), Z),
    ("t_pdf", lambda x: stats.t.pdf(x, X), lambda x: scipy.stats.t.pdf(x, X), Z),
    ("gamma_logpdf", lambda x: stats.gamma.logpdf(x, 2.5, 0.1, 2.0),
     lambda x: scipy.stats.gamma.logpdf(x, 2.5, 0.1, 2.0), Z),
    ("gamma_pdf", lambda a: stats.gamma.pdf(X, a), lambda a: scipy.stats.gamma.pdf(X, a), X),
    ("beta_logpdf", lambda x: stats.beta.logpdf(x, 2.0, 3.0), lambda x: scipy.stats.beta.logpdf(
        x, 2.0, 3.0), (U + 1) / 2),
    ("beta_pdf", lambda b: stats.beta.pdf(0.3, 2.0, b), lambda b: scipy.stats.beta.pdf(0.3, 2.0, b),
     X),
    ("dirichlet_logpdf", lambda a: stats.dirichlet.logpdf(SIMPLEX, a),
     lambda a: scipy.stats.dirichlet.logpdf(SIMPLEX, a), ALPHA),
    ("dirichlet_pdf_points", lambda a: stats.dirichlet.pdf(POINTS_ON_SIMPLEX, a),
     lambda a: scipy.stats.dirichlet.pdf(POINTS_ON_SIMPLEX, a), ALPHA),
    ("poisson_logpmf", lambda mu: stats.poisson.logpmf(K, mu),
     lambda mu: scipy.stats.poisson.logpmf(K, mu), X),
    ("poisson_pmf", lambda mu: stats.poisson.pmf(K, mu, loc=-1),
     lambda mu: scipy.stats.poisson.pmf(K, mu, loc=-1), X),
]


@pytest.mark.parametrize("name, ours, theirs, x", sampled(VALUES, 2), ids=[c[0] for c in VALUES])
def test_values_match_scipy(name, ours, theirs, x):
    np.testing.assert_allclose(ours(x).numpy(), theirs(x), rtol=RTOL, atol=0)


# ---- accuracy over the whole range ---------------------------------------------------

def _close(got, want, rtol, atol=0.0):
    """|got - want| <= rtol |want| + atol max(1, |want|), NaN and infinities in place."""
    got, want = np.asarray(got), np.asarray(want)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
    finite = np.isfinite(want)
    error = np.abs(got[finite] - want[finite])
    bound = rtol * np.abs(want[finite]) + atol * np.maximum(1.0, np.abs(want[finite]))
    assert (error <= bound).all(), (got[finite][error > bound], want[finite][error > bound])


def run_in_simulator(program: str, tmp_path) -> str:
    """The standard output of `program`, run in Numba's CUDA simulator in a process of its
    own (the simulator is chosen when Numba is imported), after every kernel it ran has
    compiled to PTX (`python -m numgrad.kernels.cuda LOG`, as .ci/run does)."""
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
           "NUMGRAD_CUDA_KERNEL_LOG": str(tmp_path / "kernels.log")}
    run = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    ptx = subprocess.run([sys.executable, "-m", "numgrad.kernels.cuda",
                          env["NUMGRAD_CUDA_KERNEL_LOG"]], capture_output=True, text=True,
                         timeout=300)
    assert ptx.returncode == 0 and ptx.stdout.startswith("compiled "), ptx.stderr[-3000:]
    return run.stdout


def test_digamma_polygamma_and_erfinv_across_their_ranges():
    wide = np.concatenate([np.geomspace(1e-8, 1e8, 40), rng.uniform(0.5, 3.0, 40),
                           1.4616321449683622 + np.linspace(-0.3, 0.3, 41)])
    _close(ng.digamma(wide).numpy(), scipy.special.digamma(wide), 1e-14)
    negative = -rng.uniform(0.01, 9.9, 80)
    _close(ng.digamma(negative).numpy(), scipy.special.digamma(negative), 0, 1e-13)
    orders = np.arange(1.0, 7.0)[:, None]
    _close(ng.polygamma(orders, wide).numpy(), scipy.special.polygamma(orders, wide), 1e-14)
    _close(ng.polygamma(orders, negative).numpy(), scipy.special.polygamma(orders, negative),
           0, 1e-13)
    near_one = np.concatenate([rng.uniform(-1, 1, 80), 1 - np.geomspace(1e-15, 1e-2, 20)])
    _close(ng.erfinv(near_one).numpy(), scipy.special.erfinv(near_one), 1e-14)
    # (Python's math.lgamma, which the NumPy interpreter runs, is 1e-12 relative near its
    # roots at 1 and 2; libm's, which the compiled kernels call, 1e-16)
    interpreted = os.environ.get("NUMGRAD_CPU_KERNELS") == "numpy"
    _close(ng.lgamma(wide).numpy(), scipy.special.gammaln(wide), 2e-12 if interpreted else 1e-13)


@pytest.mark.skipif(ON_SIMULATOR, reason="the CUDA simulator's math raises on poles and inf")
def test_poles_infinities_and_nan_are_scipys():
    v = np.array([0.0, -0.0, -1.0, -2.0, -np.inf, np.inf, np.nan, 1e-300, -20.5])
    for ours, theirs in [(special.digamma, scipy.special.digamma),
                         (special.gammaln, scipy.special.gammaln),
                         (special.gamma, scipy.special.gamma),
                         # (below -10 the sum does not reach its tail: NaN, where SciPy
                         # reflects; docs/decisions.md)
                         (lambda x: special.polygamma(np.array([[1], [2]]), x),
                          lambda x: np.where((x < -10) & (x > -np.inf), np.nan,
                                             scipy.special.polygamma(np.array([[1], [2]]), x))),
                         (special.erf, scipy.special.erf), (special.erfc, scipy.special.erfc)]:
        got, want = ours(v).numpy(), theirs(v)
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
        np.testing.assert_array_equal(np.signbit(got[want == 0]), np.signbit(want[want == 0]))
    # the smallest subnormal: log(gamma(x)) = -log(x) (SciPy's gammaln gives inf there)
    assert special.gammaln(5e-324).item() == pytest.approx(744.4400719213812, rel=1e-15)
    # erfinv: -inf, inf, NaN beyond [-1, 1], NaN, and -0.0 at -0.0 (an odd function, as
    # PyTorch's; SciPy's gives +0.0)
    u = np.array([-1.0, 1.0, 1.5, np.nan, 1e-300, -0.0])
    got = ng.erfinv(u).numpy()
    np.testing.assert_array_equal(got, [-np.inf, np.inf, np.nan, np.nan, 8.862269254527580e-301,
                                        -0.0])
    assert np.signbit(got[-1])
    # the primitives: PyTorch's lgamma(-inf) is inf (SciPy's gammaln: -inf); a negative
    # order is NaN; SciPy's polygamma of a fractional order is NaN (the primitive floors it)
    assert ng.lgamma(-np.inf).item() == np.inf
    assert np.isnan(ng.polygamma(-1, 2.0).item()) and np.isnan(special.polygamma(1.5, 2.0).item())
    assert ng.polygamma(1.5, 2.0).item() == ng.polygamma(1, 2.0).item()


# ---- gradients: autograd, finite differences, second order ---------------------------

# (id, ours(x), autograd's(x), x)
GRADIENTS = [
    ("erf", special.erf, aspecial.erf, Z),
    ("erfc", special.erfc, aspecial.erfc, Z),
    ("erfinv", special.erfinv, aspecial.erfinv, U),
    ("gammaln", special.gammaln, aspecial.gammaln, X),
    ("gamma", special.gamma, aspecial.gamma, X),
    ("digamma", special.digamma, aspecial.digamma, X),
    ("polygamma_2", lambda x: special.polygamma(2, x), lambda x: aspecial.polygamma(2, x), X),
    ("beta", lambda x: special.beta(x, 1.5), lambda x: aspecial.beta(x, 1.5), X),
    ("betaln", lambda x: special.betaln(2.0, x), lambda x: aspecial.betaln(2.0, x), X),
    ("norm_cdf", lambda x: stats.norm.cdf(x, 0.3, 1.7), lambda x: astats.norm.cdf(x, 0.3, 1.7), Z),
    ("norm_logcdf_scale", lambda s: stats.norm.logcdf(Z * 5, 0.5, s),
     lambda s: astats.norm.logcdf(Z * 5, 0.5, s), X),
    ("t_logpdf_df", lambda df: stats.t.logpdf(Z, df, 0.2, 1.5),
     lambda df: astats.t.logpdf(Z, df, 0.2, 1.5), X),
    ("t_pdf_x", lambda x: stats.t.pdf(x, 3.0), lambda x: astats.t.pdf(x, 3.0), Z),
    ("gamma_logpdf_a", lambda a: stats.gamma.logpdf(X[::-1], a),
     lambda a: astats.gamma.logpdf(X[::-1], a), X),
    ("gamma_pdf_x", lambda x: stats.gamma.pdf(x, 2.5), lambda x: astats.gamma.pdf(x, 2.5), X),
    ("beta_logpdf_b", lambda b: stats.beta.logpdf((U + 1) / 2, 2.0, b),
     lambda b: astats.beta.logpdf((U + 1) / 2, 2.0, b), X),
    ("dirichlet_logpdf_alpha", lambda a: stats.dirichlet.logpdf(SIMPLEX, a),
     lambda a: astats.dirichlet.logpdf(SIMPLEX, a), ALPHA),
    ("dirichlet_logpdf_x", lambda x: stats.dirichlet.logpdf(x, ALPHA),
     lambda x: astats.dirichlet.logpdf(x, ALPHA), SIMPLEX),
    ("poisson_logpmf_mu", lambda mu: stats.poisson.logpmf(K, mu),
     lambda mu: astats.poisson.logpmf(K, mu), X),
]


@pytest.mark.parametrize("name, ours, theirs, x", sampled(GRADIENTS, 2),
                         ids=[c[0] for c in GRADIENTS])
def test_gradients_match_autograd_and_finite_differences(name, ours, theirs, x):
    weights = np.linspace(0.5, 1.5, np.size(theirs(x)))
    got = ng.grad(lambda t: (ours(t) * weights).sum())(x)
    want = autograd.grad(lambda t: anp.sum(theirs(t) * weights))(x)
    np.testing.assert_allclose(got, want, rtol=GRAD_RTOL, atol=1e-13)
    assert ng.gradcheck(lambda t: (ours(t) * weights).sum(), (ng.tensor(x, requires_grad=True),),
                        atol=1e-6, rtol=1e-5)


# (id, ours, autograd's, x): elementwise second derivatives (gammaln'' = trigamma, ...)
SECOND = [
    ("gammaln", special.gammaln, aspecial.gammaln, X),
    ("digamma", special.digamma, aspecial.digamma, X),
    ("polygamma_1", lambda x: special.polygamma(1, x), lambda x: aspecial.polygamma(1, x), X),
    ("erf", special.erf, aspecial.erf, Z),
    ("erfinv", special.erfinv, aspecial.erfinv, U),
    ("gamma_logpdf_a", lambda a: stats.gamma.logpdf(2.0, a), lambda a: astats.gamma.logpdf(2.0, a),
     X),
]


@pytest.mark.slow  # (each compiles a few kernels of the longer expressions: 3-6 s)
@pytest.mark.parametrize("name, ours, theirs, x", SECOND, ids=[c[0] for c in SECOND])
def test_second_derivatives_match_autograd(name, ours, theirs, x):
    got = ng.elementwise_grad(ng.elementwise_grad(ours))(x)
    want = autograd.elementwise_grad(autograd.elementwise_grad(theirs))(x)
    np.testing.assert_allclose(got, want, rtol=GRAD_RTOL, atol=1e-13)
    assert ng.gradgradcheck(ours, (ng.tensor(x, requires_grad=True),), atol=1e-5, rtol=1e-4)


@pytest.mark.slow
def test_polygamma_differentiates_to_any_order():
    # d^k/dx^k digamma = polygamma(k): four nested transforms of digamma give polygamma(4)
    f = ng.digamma
    for _ in range(4):
        f = ng.elementwise_grad(f)
    np.testing.assert_allclose(f(X[:3]), scipy.special.polygamma(4, X[:3]), rtol=1e-12)
    n = ng.tensor(2.0, requires_grad=True)  # the order: piecewise constant, gradient 0
    (g,) = ng.grad(ng.polygamma(n, X).sum(), n)
    assert g.item() == 0.0


# ---- a ported autograd program -------------------------------------------------------

def test_ported_autograd_model_runs_on_numgrad_scipy():
    # A hierarchical model's log joint written against autograd's modules, then numgrad's.
    counts, draws, unit = K, (U + 1) / 2, np.array([0.2, 0.5, 0.3])

    def log_joint(xp, sp, st, params):
        rate, a, b, nu = xp.exp(params[0]), xp.exp(params[1]), xp.exp(params[2]), \
            xp.exp(params[3])
        return (xp.sum(st.poisson.logpmf(counts, rate)) + st.gamma.logpdf(rate, 2.0)
                + xp.sum(st.beta.logpdf(draws, a, b)) + xp.sum(st.t.logpdf(Z, nu))
                + st.dirichlet.logpdf(unit, xp.exp(params[:3])) + sp.gammaln(nu)
                + xp.sum(st.norm.logcdf(Z, 0.0, nu)))

    params = np.array([0.7, 0.3, 0.9, 1.2])
    want = autograd.value_and_grad(lambda p: log_joint(anp, aspecial, astats, p))(params)
    got = ng.value_and_grad(lambda p: log_joint(ng, special, stats, p))(ng.tensor(params))
    np.testing.assert_allclose(got[0].item(), want[0], rtol=RTOL)
    np.testing.assert_allclose(got[1].numpy(), want[1], rtol=GRAD_RTOL)


def test_scipys_own_special_functions_on_a_tensor_run_as_numgrads():
    t = ng.tensor(X, requires_grad=True)
    for name in ("gammaln", "digamma", "psi", "erf", "erfc"):
        out = getattr(scipy.special, name)(t)  # SciPy's ufunc, dispatched: differentiable
        assert isinstance(out, ng.Tensor) and out.requires_grad, name
        np.testing.assert_allclose(out.numpy(), getattr(scipy.special, name)(X), rtol=RTOL)


# ---- the other targets ---------------------------------------------------------------

POINTS = np.array([-2.5, -0.5, 0.3, 1.0, 1.5, 4.0, 30.0])


def _rows(x):
    return [ng.erf(x), ng.erfc(x), ng.erfinv(x / 40), ng.lgamma(x), ng.digamma(x),
            ng.polygamma(np.array([[1.0], [3.0]]), x)]


def test_the_numpy_interpreter_computes_what_the_numba_kernels_compute(numba_cpu, monkeypatch):
    from numgrad.kernels import interpreter

    compiled = [t.numpy() for t in _rows(ng.tensor(POINTS, device="cpu"))]
    monkeypatch.setattr(as_device("cpu"), "_backend", interpreter)
    with ng.engine.record() as record:
        interpreted = [t.numpy() for t in _rows(ng.tensor(POINTS, device="cpu"))]
    assert record.kernels_compiled == 0
    for ours, theirs in zip(interpreted, compiled):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=0)


SIMULATED = textwrap.dedent("""
    import numpy as np, scipy.special as sp
    import numgrad as ng

    x = np.array([0.3, 1.0, 1.5, 4.0, 30.0])
    t = ng.tensor(x, device="cuda", requires_grad=True)
    cases = {
        "erf": (sp.erf(x), ng.erf(t)), "erfc": (sp.erfc(x), ng.erfc(t)),
        "erfinv": (sp.erfinv(x / 40), ng.erfinv(t / 40)), "lgamma": (sp.gammaln(x), t.lgamma()),
        "digamma": (sp.digamma(x), ng.digamma(t)),
        "polygamma": (sp.polygamma([[1], [3]], x), ng.polygamma(np.array([[1.0], [3.0]]), t)),
        "digamma'": (sp.polygamma(1, x), ng.grad(ng.digamma(t).sum(), t)[0]),
    }
    for name, (want, got) in cases.items():
        assert got.device == "cuda", name
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=0, err_msg=name)
    print("ok", len(cases))
""")


@pytest.mark.skipif(ON_SIMULATOR, reason="(runs the simulator in a process of its own)")
def test_cuda_simulator_values():
    # A process of its own: the simulator is chosen when Numba is imported.
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    run = subprocess.run([sys.executable, "-c", SIMULATED], env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.split() == ["ok", "7"]
