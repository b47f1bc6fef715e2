"""Linear algebra: matmul (NumPy's rules), dot, outer and einsum."""

from __future__ import annotations

import numpy as np

from numgrad.primitives import _dot, _matmul
from numgrad.tensor import Tensor


def matmul(a, b) -> Tensor:
    """Matrix product with NumPy's rules: 1-D operands and broadcast batch dimensions.

    Examples
    --------
    >>> import numgrad as ng
    >>> (ng.ones((2, 3)) @ ng.ones(3)).tolist()
    [3.0, 3.0]
    """
    return _matmul(a, b)


def dot(a, b) -> Tensor:
    """NumPy's dot: a product for scalars, matmul up to 2-D, a tensor contraction above."""
    return _dot(a, b)


def outer(a: Tensor, b: Tensor) -> Tensor:
    return a.ravel().reshape(-1, 1) * b.ravel().reshape(1, -1)


def einsum(subscripts: str, *operands: Tensor) -> Tensor:
    """Einstein summation with NumPy's notation (no ``...``), as a broadcast product and sum.

    Each operand is aligned to one shared index order, repeated indices take the
    diagonal, and the product is summed over the indices not in the output. With
    fusion the product never materialises: it is computed inside the sum's loop.
    """
    spec = subscripts.replace(" ", "")
    if "..." in spec:
        raise ValueError("einsum: '...' (ellipsis) is not supported; name every index")
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(operands)} operands")
    if "->" not in spec:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    order = list(dict.fromkeys(output + "".join(terms)))
    sizes: dict[str, int] = {}
    aligned = []
    for term, x in zip(terms, operands):
        if len(term) != x.ndim:
            raise ValueError(f"einsum: subscripts '{term}' for an operand of shape {x.shape}")
        for c, d in zip(term, x.shape):
            if sizes.setdefault(c, d) != d:
                raise ValueError(f"einsum: index '{c}' has sizes {sizes[c]} and {d}")
        x, term = _einsum_diagonals(x, term)
        present = sorted(term, key=order.index)
        x = x.transpose(tuple(term.index(c) for c in present))
        aligned.append(x.reshape(tuple(sizes[c] if c in term else 1 for c in order)))
    product = aligned[0]
    for x in aligned[1:]:
        product = product * x
    summed = tuple(range(len(output), len(order)))
    full_shape = tuple(sizes[c] for c in order)
    product = product if product.shape == full_shape else product.broadcast_to(full_shape)
    return product.sum(summed) if summed else product


def _einsum_diagonals(x: Tensor, term: str) -> tuple[Tensor, str]:
    """Take the diagonal over every index repeated within one operand's subscripts."""
    while len(set(term)) < len(term):
        c = next(c for c in term if term.count(c) > 1)
        first, second = term.index(c), term.index(c, term.index(c) + 1)
        rest = [i for i in range(len(term)) if i not in (first, second)]
        x = x.transpose((first, second, *rest))
        diag = np.arange(x.shape[0])
        x = x[diag, diag]
        term = c + "".join(term[i] for i in rest)
    return x, term
