"""``ng.linalg``: products and, as NumPy's ``np.linalg``, decompositions and solvers."""

from numgrad.linalg import products
from numgrad.linalg.products import *  # noqa: F403

__all__ = [*products.__all__]
