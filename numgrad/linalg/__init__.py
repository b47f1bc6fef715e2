"""``ng.linalg``: products and, as NumPy's ``np.linalg``, decompositions, solvers and
norms, with the Array API standard's ``linalg`` extension."""

from numgrad.linalg import decompositions, matrices, norms, products, solvers
from numgrad.linalg.decompositions import *  # noqa: F403
from numgrad.linalg.matrices import *  # noqa: F403
from numgrad.linalg.norms import *  # noqa: F403
from numgrad.linalg.products import *  # noqa: F403
from numgrad.linalg.solvers import *  # noqa: F403
from numgrad.linalg.stacks import LinAlgError

__all__ = [*products.__all__, *solvers.__all__, *decompositions.__all__, *norms.__all__,
           *matrices.__all__, "LinAlgError"]
