"""``ng.scipy``: values against SciPy's own functions (float64, rtol 1e-12: the same
formulas, summed in another order), gradients against HIPS autograd's ``autograd.scipy``
(rtol 1e-10) where it has the function, and against finite differences
(``ng.gradcheck``) everywhere."""

import os

import autograd
import autograd.numpy as anp
import autograd.scipy.linalg as alinalg
import autograd.scipy.special as aspecial
import autograd.scipy.stats as astats
import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats
from budget import sampled

import numgrad as ng

RTOL = 1e-12
GRAD_RTOL = 1e-10
rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4))
P = rng.uniform(0.05, 0.95, (3, 4))
A = rng.standard_normal((4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = rng.standard_normal((4, 2))
POINTS = rng.standard_normal((5, 4))
MEAN = rng.standard_normal(4)

# (id, ours(x), SciPy's(x), autograd's(x) or None, x)
CASES = [
    ("expit", ng.scipy.special.expit, scipy.special.expit, aspecial.expit, X),
    ("logit", ng.scipy.special.logit, scipy.special.logit, aspecial.logit, P),
    ("logsumexp", lambda x: ng.scipy.special.logsumexp(x, axis=1),
     lambda x: scipy.special.logsumexp(x, axis=1),
     lambda x: aspecial.logsumexp(x, axis=1), X),
    ("logsumexp_all_keepdims", lambda x: ng.scipy.special.logsumexp(x, keepdims=True),
     lambda x: scipy.special.logsumexp(x, keepdims=True),
     lambda x: aspecial.logsumexp(x, keepdims=True), X),
    ("logsumexp_weights", lambda x: ng.scipy.special.logsumexp(x, axis=0, b=P),
     lambda x: scipy.special.logsumexp(x, axis=0, b=P),
     lambda x: aspecial.logsumexp(x, axis=0, b=P), X),
    ("softmax", lambda x: ng.scipy.special.softmax(x, axis=1),
     lambda x: scipy.special.softmax(x, axis=1), None, X),
    ("softmax_all", ng.scipy.special.softmax, scipy.special.softmax, None, X),
    ("log_softmax_all", ng.scipy.special.log_softmax, scipy.special.log_softmax, None, X),
    ("xlogy", lambda p: ng.scipy.special.xlogy(p, p + 1), lambda p: scipy.special.xlogy(p, p + 1),
     None, P),
    ("xlog1py", lambda p: ng.scipy.special.xlog1py(X, p), lambda p: scipy.special.xlog1py(X, p),
     None, P),
    ("norm_logpdf", lambda x: ng.scipy.stats.norm.logpdf(x, 0.3, 1.7),
     lambda x: scipy.stats.norm.logpdf(x, 0.3, 1.7),
     lambda x: astats.norm.logpdf(x, 0.3, 1.7), X),
    ("norm_pdf_scale", lambda p: ng.scipy.stats.norm.pdf(X, 0.1, p),
     lambda p: scipy.stats.norm.pdf(X, 0.1, p), lambda p: astats.norm.pdf(X, 0.1, p), P),
    ("mvn_logpdf", lambda c: ng.scipy.stats.multivariate_normal.logpdf(POINTS, MEAN, c),
     lambda c: scipy.stats.multivariate_normal.logpdf(POINTS, MEAN, c),
     lambda c: astats.multivariate_normal.logpdf(POINTS, MEAN, c), SPD),
    ("mvn_logpdf_points", lambda x: ng.scipy.stats.multivariate_normal.logpdf(x, MEAN, SPD),
     lambda x: scipy.stats.multivariate_normal.logpdf(x, MEAN, SPD),
     lambda x: astats.multivariate_normal.logpdf(x, MEAN, SPD), POINTS),
    ("mvn_logpdf_diagonal",
     lambda v: ng.scipy.stats.multivariate_normal.logpdf(POINTS, MEAN, v[0] * v[0] + 1),
     lambda v: scipy.stats.multivariate_normal.logpdf(POINTS, MEAN, v[0] * v[0] + 1), None, X),
    ("solve_triangular_lower", lambda a: ng.scipy.linalg.solve_triangular(a, B, lower=True),
     lambda a: scipy.linalg.solve_triangular(a, B, lower=True),
     lambda a: alinalg.solve_triangular(a, B, lower=True), SPD),
    ("solve_triangular_upper_trans",
     lambda a: ng.scipy.linalg.solve_triangular(a, B, trans="T"),
     lambda a: scipy.linalg.solve_triangular(a, B, trans="T"),
     lambda a: alinalg.solve_triangular(a, B, trans="T"), SPD),
    ("solve_triangular_unit",
     lambda a: ng.scipy.linalg.solve_triangular(a, B, lower=True, unit_diagonal=True),
     lambda a: scipy.linalg.solve_triangular(a, B, lower=True, unit_diagonal=True), None, A),
    ("solve_triangular_rhs", lambda b: ng.scipy.linalg.solve_triangular(SPD, b),
     lambda b: scipy.linalg.solve_triangular(SPD, b),
     lambda b: alinalg.solve_triangular(SPD, b), B),
    ("cholesky_upper", ng.scipy.linalg.cholesky, scipy.linalg.cholesky,
     lambda a: anp.linalg.cholesky(a).T, SPD),  # (autograd.scipy's has no VJP)
    ("cho_solve", lambda a: ng.scipy.linalg.cho_solve(ng.scipy.linalg.cho_factor(a), B),
     lambda a: scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), B), None, SPD),
    ("cho_solve_lower",
     lambda b: ng.scipy.linalg.cho_solve(ng.scipy.linalg.cho_factor(SPD, lower=True), b),
     lambda b: scipy.linalg.cho_solve(scipy.linalg.cho_factor(SPD, lower=True), b), None, B),
]
IDS = [case[0] for case in CASES]
# Symmetric inputs: the gradient by a covariance or an SPD matrix is taken along
# symmetric directions (a Cholesky factor reads one triangle).
SYMMETRIC = {"mvn_logpdf", "cholesky_upper", "cho_solve"}


@pytest.mark.parametrize("name, ours, theirs, _, x", sampled(CASES, 2, start=1), ids=IDS)
def test_values_match_scipy(name, ours, theirs, _, x):
    np.testing.assert_allclose(ours(ng.tensor(x)).numpy(), theirs(x), rtol=RTOL, atol=1e-14)


def _loss(fn, weights):
    return lambda x: (fn(x) * weights).sum()


@pytest.mark.parametrize("name, ours, _, autograds, x", sampled(CASES, 2), ids=IDS)
def test_gradients_match_autograd_and_finite_differences(name, ours, _, autograds, x):
    shape = np.shape(ours(ng.tensor(x)).numpy())
    weights = np.random.default_rng(1).standard_normal(shape)
    if name in SYMMETRIC:
        def symmetric(fn):
            return lambda x: fn((x + x.T) / 2)
        ours, autograds = symmetric(ours), autograds and symmetric(autograds)
    got = ng.grad(_loss(ours, ng.tensor(weights)))(ng.tensor(x))
    if autograds is not None:
        want = autograd.grad(_loss(autograds, weights))(x)
        np.testing.assert_allclose(got.numpy(), want, rtol=GRAD_RTOL, atol=1e-12)
    t = ng.tensor(x, requires_grad=True)
    assert ng.gradcheck(_loss(ours, ng.tensor(weights)), (t,), atol=1e-6, rtol=1e-5)


def test_logsumexp_returns_the_sign_of_a_weighted_sum():
    b = np.array([[1.0], [-2.0], [0.5]])
    value, sign = ng.scipy.special.logsumexp(X, axis=0, b=b, return_sign=True)
    want_value, want_sign = scipy.special.logsumexp(X, axis=0, b=b, return_sign=True)
    np.testing.assert_allclose(value.numpy(), want_value, rtol=RTOL)
    np.testing.assert_array_equal(sign.numpy(), want_sign)
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":  # (the simulator's log raises there)
        assert np.isnan(ng.scipy.special.logsumexp(X, axis=0, b=b).numpy()).any()  # as SciPy's


def test_xlogy_is_zero_where_x_is_zero_and_its_gradient_never_nan():
    x, y = np.array([0.0, 0.0, 0.0, 2.0, 0.0]), np.array([0.0, -1.0, 3.0, 3.0, np.nan])
    np.testing.assert_allclose(ng.scipy.special.xlogy(x, y).numpy(), scipy.special.xlogy(x, y),
                               rtol=RTOL)  # (NaN where SciPy's is)
    tx, ty = ng.tensor(x, requires_grad=True), ng.tensor(y[:4], requires_grad=True)
    gx, gy = ng.grad(ng.scipy.special.xlogy(tx[:4], ty).sum(), [tx, ty])
    # d/dx = log(y) where it is finite (0 where both are 0); d/dy = x / y (0 where x is 0)
    np.testing.assert_allclose(gx.numpy(), [0.0, 0.0, np.log(3.0), np.log(3.0), 0.0], rtol=RTOL)
    np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0, 0.0, 2.0 / 3.0])
    assert ng.scipy.special.xlog1py(0.0, -1.0).item() == scipy.special.xlog1py(0.0, -1.0) == 0


def test_solve_triangular_reads_one_triangle_and_its_gradient_stays_there():
    a = ng.tensor(A, requires_grad=True)
    (g,) = ng.grad(ng.scipy.linalg.solve_triangular(a, B, lower=True).sum(), a)
    assert not np.triu(g.numpy(), 1).any() and g.numpy()[np.tril_indices(4)].all()
    with pytest.raises(ValueError, match="trans must be"):
        ng.scipy.linalg.solve_triangular(A, B, trans="X")
    with pytest.raises(ValueError, match="square matrix"):
        ng.scipy.linalg.solve_triangular(A[:3], B)


def test_ported_autograd_code_runs_on_numgrad_scipy():
    # a HIPS autograd program's imports, renamed: a GP's log marginal likelihood
    def log_likelihood(xp, special, stats, params, y):
        cov = xp.exp(params[0]) * np.exp(-0.5 * (POINTS[:, :1] - POINTS[:, :1].T) ** 2) \
            + 0.1 * np.eye(5)
        return stats.multivariate_normal.logpdf(y, np.zeros(5), cov) \
            + special.logsumexp(params)

    params, y = np.array([0.2, -0.1]), POINTS[:, 1]
    want = autograd.value_and_grad(
        lambda p: log_likelihood(anp, aspecial, astats, p, y))(params)
    got = ng.value_and_grad(
        lambda p: log_likelihood(ng, ng.scipy.special, ng.scipy.stats, p, y))(ng.tensor(params))
    np.testing.assert_allclose(got[0].item(), want[0], rtol=RTOL)
    np.testing.assert_allclose(got[1].numpy(), want[1], rtol=GRAD_RTOL)
