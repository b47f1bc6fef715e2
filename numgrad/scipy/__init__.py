"""SciPy's functions that numeric code reaches for, differentiable, under SciPy's names
(as ``autograd.scipy`` and ``jax.scipy``): `special`, `stats` and `linalg`.

Composites of numgrad's operations, so they fuse and differentiate like any other.
What needs special functions numgrad has no kernel for yet (``erf``, ``gammaln``,
``digamma`` and what is built on them: the normal CDF, the t, gamma, beta, Dirichlet
and Poisson densities) is not here: SciPy's own function on a tensor that requires
grad warns that its result has no gradient (`numgrad.GradientDroppedWarning`).
"""

from numgrad.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
