"""``scipy.stats``' normal and multivariate normal log-densities, as ``autograd.scipy.
stats`` has them: ``norm.logpdf(x, loc, scale)``, ``multivariate_normal.logpdf(x,
mean, cov)``."""

from __future__ import annotations

import math

from numgrad import linalg as _linalg
from numgrad.joining import _tensors
from numgrad.scipy.linalg import solve_triangular
from numgrad.tensor import Tensor

__all__ = ["Normal", "MultivariateNormal", "norm", "multivariate_normal"]

_LOG_2PI = math.log(2 * math.pi)


class Normal:
    """The normal distribution (``norm``)."""

    @staticmethod
    def logpdf(x, loc=0.0, scale=1.0) -> Tensor:
        """The log-density of the normal distribution of mean `loc` and standard
        deviation `scale` at `x` (each broadcast against the others)."""
        x, loc, scale = _tensors([x, loc, scale], "norm.logpdf")
        z = (x - loc) / scale
        return -0.5 * (z * z) - scale.log() - 0.5 * _LOG_2PI

    @staticmethod
    def pdf(x, loc=0.0, scale=1.0) -> Tensor:
        """The normal density at `x`."""
        return Normal.logpdf(x, loc, scale).exp()


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


#: ``scipy.stats.norm``'s densities
norm = Normal()
#: ``scipy.stats.multivariate_normal``'s log-density
multivariate_normal = MultivariateNormal()
