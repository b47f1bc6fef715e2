"""``scipy.stats``' densities, as ``autograd.scipy.stats`` and ``jax.scipy.stats`` have them:
the normal (``norm``, with its CDF), multivariate normal, Student t, gamma and chi-squared
(with their CDFs), beta, Dirichlet and Poisson (with its CDF) distributions, under SciPy's
names and arguments."""

from __future__ import annotations

import math

from numgrad import linalg as _linalg
from numgrad.numpy.elementwise import where
from numgrad.numpy.joining import _tensors, concatenate
from numgrad.scipy.linalg import solve_triangular
from numgrad.scipy.special import betainc, betaln, gammainc, gammaincc, xlog1py, xlogy
from numgrad.tensor import Tensor

__all__ = ["Normal", "MultivariateNormal", "StudentT", "Gamma", "ChiSquared", "Beta",
           "Dirichlet", "Poisson", "norm", "multivariate_normal", "t", "gamma", "chi2", "beta",
           "dirichlet", "poisson"]

_LOG_2PI = math.log(2 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
#: (2k - 1)!! (-1)**k for k = 0, 1, ...: log Phi(z) ~ -z**2/2 - log(-z sqrt(2 pi)) + log(sum
#: of these / z**2k), within 1e-17 for z <= _TAIL
_MILLS = (1.0, -1.0, 3.0, -15.0, 105.0, -945.0, 10395.0, -135135.0, 2027025.0)
_TAIL = -30.0


def _log_ndtr(z: Tensor) -> Tensor:
    """log Phi(z), the log of the standard normal CDF, accurate in both tails: ``log1p(-Q)``
    above 0, ``log(erfc(-z / sqrt 2) / 2)`` down to -30, the asymptotic series below. (Each
    branch reads its own region's values elsewhere, so that no gradient is NaN.)"""
    upper, lower = z > 0, z < _TAIL
    hi = where(upper, z, 1.0)
    mid = where(upper | lower, -1.0, z)
    lo = where(lower, z, 2 * _TAIL)
    w = 1 / (lo * lo)
    series = _MILLS[-1]
    for c in reversed(_MILLS[:-1]):
        series = c + w * series
    tail = -0.5 * (lo * lo) - (-lo).log() - 0.5 * _LOG_2PI + series.log()
    central = ((-mid * _SQRT_HALF).erfc() * 0.5).log()
    return where(upper, ((hi * _SQRT_HALF).erfc() * -0.5).log1p(), where(lower, tail, central))


def _standardized(name: str, x, loc, scale, *params) -> tuple[Tensor, ...]:
    """``(x - loc) / scale`` and `scale`, then `params`, as tensors."""
    x, loc, scale, *params = _tensors([x, loc, scale, *params], name)
    return ((x - loc) / scale, scale, *params)


class Normal:
    """The normal distribution (``norm``)."""

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0) -> Tensor:
        """The log-density of the normal distribution of mean `loc` and standard
        deviation `scale` at `x` (each broadcast against the others)."""
        z, scale = _standardized("norm.logpdf", x, loc, scale)
        return -0.5 * (z * z) - scale.log() - 0.5 * _LOG_2PI

    @staticmethod
    def pdf(x, loc=0.0, scale=1.0) -> Tensor:
        """The normal density at `x`."""
        return Normal.logpdf(x, loc, scale).exp()

    @staticmethod
    def cdf(x, loc=0.0, scale=1.0) -> Tensor:
        """The normal CDF at `x`, ``erfc(-z / sqrt(2)) / 2``."""
        z, _ = _standardized("norm.cdf", x, loc, scale)
        return (-z * _SQRT_HALF).erfc() * 0.5

    @staticmethod
    def logcdf(x, loc=0.0, scale=1.0) -> Tensor:
        """The log of the normal CDF at `x`, finite far into the lower tail (-800 at
        z = -40) and exact in the upper one (-7.6e-24 at z = 10), as SciPy's."""
        z, _ = _standardized("norm.logcdf", x, loc, scale)
        return _log_ndtr(z)

    @staticmethod
    def sf(x, loc=0.0, scale=1.0) -> Tensor:
        """The survival function ``1 - cdf`` at `x`."""
        z, _ = _standardized("norm.sf", x, loc, scale)
        return (z * _SQRT_HALF).erfc() * 0.5

    @staticmethod
    def logsf(x, loc=0.0, scale=1.0) -> Tensor:
        """The log of the survival function at `x`."""
        z, _ = _standardized("norm.logsf", x, loc, scale)
        return _log_ndtr(-z)


class MultivariateNormal:
    """The multivariate normal distribution (``multivariate_normal``)."""

    @staticmethod
    def logpdf(x, mean=None, cov=1.0) -> Tensor:
        """The log-density of the multivariate normal of `mean` and covariance `cov` at
        the points `x`, by `cov`'s Cholesky factor. As SciPy's: the dimension is
        `mean`'s length (else `cov`'s, else 1); a 1-D `x` is one point (or, in one
        dimension, one point per element); a scalar or 1-D `cov` is a multiple of the
        identity or a diagonal; the result is squeezed."""
        x, mean, cov = _tensors([x, 0.0 if mean is None else mean, cov],
                                "multivariate_normal.logpdf")
        d = mean.shape[-1] if mean.ndim else cov.shape[0] if cov.ndim else 1
        if x.ndim < 2:
            x = x.reshape((-1, 1) if d == 1 else (1, -1))
        diff = x - mean
        if cov.ndim < 2:  # a multiple of the identity, or a diagonal
            variances = cov.broadcast_to((d,))
            maha = (diff * diff / variances).sum(-1)
            log_det = variances.log().sum()
        else:
            factor = _linalg.cholesky(cov)
            z = solve_triangular(factor, diff.reshape((-1, d)).mT, lower=True)  # a column a point
            maha = (z * z).sum(0).reshape(diff.shape[:-1])
            log_det = 2 * factor.diagonal(0, -2, -1).log().sum()
        return (-0.5 * (d * _LOG_2PI + log_det + maha)).squeeze()


def _within(inside: Tensor, value, fill: Tensor | float = 1.0) -> Tensor:
    """`value` where `inside`, else `fill`: the values a density reads outside its support
    (so that neither its value nor its gradient there is NaN before it is masked)."""
    return where(inside, value, fill)


class StudentT:
    """Student's t distribution (``t``), of `df` degrees of freedom."""

    @staticmethod
    def logpdf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The log-density of the t distribution at `x`."""
        z, scale, df = _standardized("t.logpdf", x, loc, scale, df)
        half = (df + 1) * 0.5
        return (half.lgamma() - (df * 0.5).lgamma() - 0.5 * (df * math.pi).log() - scale.log()
                - half * (z * z / df).log1p())

    @staticmethod
    def pdf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The t density at `x`."""
        return StudentT.logpdf(x, df, loc, scale).exp()

    @staticmethod
    def cdf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The t CDF at `x`: ``I(df / (df + z**2); df / 2, 1 / 2) / 2`` below the centre
        (accurate in the lower tail), 1 minus that above. Differentiable in `x`, `loc` and
        `scale` (to second order), not in `df` (`numgrad.scipy.special.betainc`)."""
        z, _, df = _standardized("t.cdf", x, loc, scale, df)
        return _t_cdf_sf(z, df)[0]

    @staticmethod
    def sf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The survival function, the CDF at the mirror image: accurate in the upper tail."""
        z, _, df = _standardized("t.sf", x, loc, scale, df)
        return _t_cdf_sf(z, df)[1]

    @staticmethod
    def logcdf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The log of the CDF, ``log1p(-sf)`` where the CDF is near 1."""
        z, _, df = _standardized("t.logcdf", x, loc, scale, df)
        return _log_of(*_t_cdf_sf(z, df))

    @staticmethod
    def logsf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The log of the survival function, ``log1p(-cdf)`` where it is near 1."""
        z, _, df = _standardized("t.logsf", x, loc, scale, df)
        return _log_of(*reversed(_t_cdf_sf(z, df)))


def _t_cdf_sf(z: Tensor, df: Tensor) -> tuple[Tensor, Tensor]:
    """The standard t CDF and survival function, as SciPy's: ``1/2 +- I(z**2 / (df +
    z**2); 1/2, df / 2) / 2`` where ``z**2 < df``, and in the tails ``I(df / (df + z**2); df
    / 2, 1/2) / 2`` on the near side and 1 minus that on the far one (accurate there);
    each incomplete beta function reads a harmless 1/2 where the other serves, and both
    serve both functions (the survival function is the CDF at ``-z``). Within 1e-100 of
    the centre, where ``z**2`` underflows and the incomplete beta function's derivative
    is infinite times zero, the CDF is ``1/2 + z pdf(0)``, whose value and first two
    derivatives are the CDF's (the density is even)."""
    centre = z.abs() < 1e-100
    z_ = where(centre, 1.0, z)
    z2 = z_ * z_
    near = z2 < df
    inner = 0.5 * betainc(0.5, df * 0.5, where(near, z2 / (df + z2), 0.5))
    tail = 0.5 * betainc(df * 0.5, 0.5, where(near, 0.5, df / (df + z2)))
    below = where(near, 0.5 - inner, tail)  # (the CDF at -|z|)
    above = where(near, 0.5 + inner, 1.0 - tail)  # (at |z|)
    density = (((df + 1) * 0.5).lgamma() - (df * 0.5).lgamma() - 0.5 * (df * math.pi).log()).exp()
    negative = z_ < 0
    return (where(centre, 0.5 + z * density, where(negative, below, above)),
            where(centre, 0.5 - z * density, where(negative, above, below)))


class Gamma:
    """The gamma distribution (``gamma``), of shape `a`."""

    @staticmethod
    def logpdf(x, a, loc=0.0, scale=1.0) -> Tensor:
        """The log-density of the gamma distribution at `x`: -inf below `loc`; at `loc`,
        inf, 0 or -inf as `a` is below, at or above 1 (SciPy's)."""
        z, scale, a = _standardized("gamma.logpdf", x, loc, scale, a)
        inside = z >= 0
        z = _within(inside, z)
        density = xlogy(a - 1, z) - z - a.lgamma() - scale.log()
        return where(inside, density, -math.inf)

    @staticmethod
    def pdf(x, a, loc=0.0, scale=1.0) -> Tensor:
        """The gamma density at `x`."""
        return Gamma.logpdf(x, a, loc, scale).exp()

    @staticmethod
    def cdf(x, a, loc=0.0, scale=1.0) -> Tensor:
        """The gamma CDF at `x`, ``gammainc(a, z)``: 0 below `loc`. Differentiable in `x`,
        `loc` and `scale`, not in `a` (`numgrad.scipy.special.gammainc`), as autograd's."""
        z, _, a = _standardized("gamma.cdf", x, loc, scale, a)
        inside = z >= 0
        return where(inside, gammainc(a, _within(inside, z)), 0.0)

    @staticmethod
    def sf(x, a, loc=0.0, scale=1.0) -> Tensor:
        """The survival function ``gammaincc(a, z)``, accurate in the upper tail: 1 below
        `loc`."""
        z, _, a = _standardized("gamma.sf", x, loc, scale, a)
        inside = z >= 0
        return where(inside, gammaincc(a, _within(inside, z)), 1.0)

    @staticmethod
    def logcdf(x, a, loc=0.0, scale=1.0) -> Tensor:
        """The log of the CDF (-inf below `loc`), ``log1p(-sf)`` where the CDF is near 1."""
        return _log_of(Gamma.cdf(x, a, loc, scale), Gamma.sf(x, a, loc, scale))

    @staticmethod
    def logsf(x, a, loc=0.0, scale=1.0) -> Tensor:
        """The log of the survival function, ``log1p(-cdf)`` where it is near 1."""
        return _log_of(Gamma.sf(x, a, loc, scale), Gamma.cdf(x, a, loc, scale))


def _log_of(p: Tensor, q: Tensor) -> Tensor:
    """``log(p)`` for ``p = 1 - q``: ``log1p(-q)`` where p is above 1/2 (the digits of a
    small q survive there), each branch reading a harmless value elsewhere."""
    near_one = p > 0.5
    return where(near_one, (-where(near_one, q, 0.0)).log1p(), where(near_one, 1.0, p).log())


class ChiSquared:
    """The chi-squared distribution (``chi2``) of `df` degrees of freedom: the gamma
    distribution of shape ``df / 2`` and scale ``2 scale``."""

    @staticmethod
    def logpdf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The log-density of the chi-squared distribution at `x`."""
        x, df, loc, scale = _tensors([x, df, loc, scale], "chi2.logpdf")
        return Gamma.logpdf(x, df * 0.5, loc, scale * 2)

    @staticmethod
    def pdf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The chi-squared density at `x`."""
        return ChiSquared.logpdf(x, df, loc, scale).exp()

    @staticmethod
    def cdf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The chi-squared CDF at `x`, ``gammainc(df / 2, z / 2)`` (no gradient for `df`)."""
        x, df, loc, scale = _tensors([x, df, loc, scale], "chi2.cdf")
        return Gamma.cdf(x, df * 0.5, loc, scale * 2)

    @staticmethod
    def sf(x, df, loc=0.0, scale=1.0) -> Tensor:
        """The chi-squared survival function at `x`."""
        x, df, loc, scale = _tensors([x, df, loc, scale], "chi2.sf")
        return Gamma.sf(x, df * 0.5, loc, scale * 2)


class Beta:
    """The beta distribution (``beta``), of shapes `a` and `b`."""

    @staticmethod
    def logpdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
        """The log-density of the beta distribution at `x`: -inf outside [loc, loc +
        scale]."""
        z, scale, a, b = _standardized("beta.logpdf", x, loc, scale, a, b)
        inside = (z >= 0) & (z <= 1)
        z = _within(inside, z, 0.5)
        density = xlogy(a - 1, z) + xlog1py(b - 1, -z) - betaln(a, b) - scale.log()
        return where(inside, density, -math.inf)

    @staticmethod
    def pdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
        """The beta density at `x`."""
        return Beta.logpdf(x, a, b, loc, scale).exp()

    @staticmethod
    def cdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
        """The beta CDF at `x`, ``betainc(a, b, z)``: 0 below `loc`, 1 above ``loc +
        scale``. Differentiable in `x`, `loc` and `scale`, not in `a` and `b`."""
        z, _, a, b = _standardized("beta.cdf", x, loc, scale, a, b)
        return where(z <= 0, 0.0, where(z >= 1, 1.0, betainc(a, b, z.clip(0, 1))))

    @staticmethod
    def sf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
        """The survival function ``betainc(b, a, 1 - z)``, accurate in the upper tail."""
        z, _, a, b = _standardized("beta.sf", x, loc, scale, a, b)
        return where(z <= 0, 1.0, where(z >= 1, 0.0, betainc(b, a, (1 - z).clip(0, 1))))

    @staticmethod
    def logcdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
        """The log of the CDF (-inf below `loc`), ``log1p(-sf)`` where the CDF is near 1."""
        return _log_of(Beta.cdf(x, a, b, loc, scale), Beta.sf(x, a, b, loc, scale))

    @staticmethod
    def logsf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
        """The log of the survival function, ``log1p(-cdf)`` where it is near 1."""
        return _log_of(Beta.sf(x, a, b, loc, scale), Beta.cdf(x, a, b, loc, scale))


class Dirichlet:
    """The Dirichlet distribution (``dirichlet``) of concentrations `alpha`."""

    @staticmethod
    def logpdf(x, alpha) -> Tensor:
        """The log-density of the Dirichlet distribution at `x`, whose first axis holds
        the components (SciPy's layout: `x` of shape ``(K,)`` is one point, ``(K, N)`` N
        points); with K - 1 components the last is one minus their sum, as SciPy's.
        (SciPy also checks that the points lie on the simplex, which reads the values;
        this does not.)"""
        x, alpha = _tensors([x, alpha], "dirichlet.logpdf")
        if alpha.ndim != 1:
            raise ValueError(f"dirichlet.logpdf: alpha must be one-dimensional, got shape "
                             f"{alpha.shape}")
        k = alpha.shape[0]
        if x.ndim and x.shape[0] == k - 1:
            x = concatenate([x, 1 - x.sum(0, keepdims=True)])
        if not x.ndim or x.shape[0] != k:
            raise ValueError(f"dirichlet.logpdf: x must have {k} or {k - 1} components along "
                             f"its first axis, got shape {x.shape}")
        concentration = (alpha - 1).reshape((k,) + (1,) * (x.ndim - 1))
        log_norm = alpha.lgamma().sum() - alpha.sum().lgamma()
        return xlogy(concentration, x).sum(0) - log_norm

    @staticmethod
    def pdf(x, alpha) -> Tensor:
        """The Dirichlet density at `x`."""
        return Dirichlet.logpdf(x, alpha).exp()


class Poisson:
    """The Poisson distribution (``poisson``) of mean `mu`."""

    @staticmethod
    def logpmf(k, mu, loc=0.0) -> Tensor:
        """The log-probability of `k` events: -inf where ``k - loc`` is not a non-negative
        integer (SciPy's). (`k` gets the formula's gradient, ``log(mu) - digamma(k + 1)``,
        where autograd gives none.)"""
        k, mu, loc = _tensors([k, mu, loc], "poisson.logpmf")
        k = k - loc
        inside = (k >= 0) & (k == k.floor())
        k = _within(inside, k, 0.0)
        return where(inside, xlogy(k, mu) - mu - (k + 1).lgamma(), -math.inf)

    @staticmethod
    def pmf(k, mu, loc=0.0) -> Tensor:
        """The probability of `k` events."""
        return Poisson.logpmf(k, mu, loc).exp()

    @staticmethod
    def cdf(k, mu, loc=0.0) -> Tensor:
        """The probability of at most `k` events, ``gammaincc(floor(k - loc) + 1, mu)``: 0
        below `loc`. The gradient is for `mu` (``-pmf(floor(k - loc), mu)``) and `loc`'s
        and `k`'s none (the CDF is piecewise constant in them), as autograd's."""
        k, mu, loc = _tensors([k, mu, loc], "poisson.cdf")
        k = (k - loc).floor().detach()
        inside = k >= 0
        return where(inside, gammaincc(_within(inside, k + 1), mu), 0.0)

    @staticmethod
    def sf(k, mu, loc=0.0) -> Tensor:
        """The probability of more than `k` events, ``gammainc(floor(k - loc) + 1, mu)``,
        accurate in the upper tail: 1 below `loc`."""
        k, mu, loc = _tensors([k, mu, loc], "poisson.sf")
        k = (k - loc).floor().detach()
        inside = k >= 0
        return where(inside, gammainc(_within(inside, k + 1), mu), 1.0)


#: ``scipy.stats.norm``'s densities and CDF
norm = Normal()
#: ``scipy.stats.multivariate_normal``'s log-density
multivariate_normal = MultivariateNormal()
#: ``scipy.stats.t``'s densities
t = StudentT()
#: ``scipy.stats.gamma``'s densities and CDF
gamma = Gamma()
#: ``scipy.stats.chi2``'s densities and CDF
chi2 = ChiSquared()
#: ``scipy.stats.beta``'s densities
beta = Beta()
#: ``scipy.stats.dirichlet``'s densities
dirichlet = Dirichlet()
#: ``scipy.stats.poisson``'s probabilities and CDF
poisson = Poisson()
