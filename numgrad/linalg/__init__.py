"""``ng.linalg``: products and, as NumPy's ``np.linalg``, decompositions and solvers."""

from numgrad.linalg.products import dot, einsum, matmul, outer

__all__ = ["dot", "einsum", "matmul", "outer"]
