"""``ng.linalg``: products and, as NumPy's ``np.linalg``, decompositions and solvers."""

from numgrad.linalg import decompositions, norms, products, solvers
from numgrad.linalg.decompositions import *  # noqa: F403
from numgrad.linalg.norms import *  # noqa: F403
from numgrad.linalg.products import *  # noqa: F403
from numgrad.linalg.solvers import *  # noqa: F403
from numgrad.linalg.stacks import LinAlgError

__all__ = [*products.__all__, *solvers.__all__, *decompositions.__all__, *norms.__all__,
           "LinAlgError"]
