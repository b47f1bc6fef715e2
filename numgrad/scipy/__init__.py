"""SciPy's functions that numeric code reaches for, differentiable, under SciPy's names
(as ``autograd.scipy`` and ``jax.scipy``): `special`, `stats`, `linalg` and `signal`.

Composites of numgrad's operations and of its special-function primitives (``erf``,
``lgamma``, ``digamma``, ``polygamma``, the modified Bessel functions ``i0``, ``i1``,
``i0e``, ``i1e``, the regularized incomplete gamma functions ``gammainc`` and
``gammaincc`` and beta function ``betainc``), so they fuse and differentiate like any
other. SciPy's own function of one numgrad lacks, on a tensor that requires grad, warns
that its result has no gradient (`numgrad.GradientDroppedWarning`); SciPy's
special-function ufuncs numgrad lacks are refused by name.
"""

from numgrad.scipy import linalg, signal, special, stats

__all__ = ["linalg", "signal", "special", "stats"]
