"""Products: matmul (NumPy's rules), dot, outer and einsum."""

from __future__ import annotations

import numpy as np

from numgrad.primitives import _dot, _matmul
from numgrad.tensor import Tensor

__all__ = ["dot", "einsum", "matmul", "outer"]


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
    """Einstein summation with NumPy's notation and rules, as a broadcast product and sum.

    ``...`` stands for the dimensions an operand has beyond its named ones; those of all
    operands broadcast together (aligned from the right), as do named dimensions of
    length 1. Each operand is aligned to one shared index order, repeated indices take
    the diagonal, and the product is summed over the indices not in the output. With
    fusion the product never materialises: it is computed inside the sum's loop.

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.einsum('...ij,...jk->...ik', ng.ones((2, 1, 2, 3)), ng.ones((3, 3, 4))).shape
    (2, 3, 2, 4)
    """
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(operands)} operands")
    terms, dots = _expand_ellipses(terms, operands)
    if not arrow:
        named = [c for c in "".join(terms) if c not in dots]
        output = dots + "".join(sorted(c for c in set(named) if named.count(c) == 1))
    elif "..." in _one_ellipsis(output, "the output"):
        output = output.replace("...", dots)
    elif dots:
        raise ValueError(
            f"einsum: the output has no '...' for the {len(dots)} dimensions the inputs' "
            f"'...' stands for")
    for c in output:
        if output.count(c) > 1 or c not in "".join(terms):
            raise ValueError(f"einsum: output subscript '{c}' is repeated or not in an input")
    order = list(dict.fromkeys(output + "".join(terms)))
    sizes: dict[str, int] = {}
    aligned = []
    for term, x in zip(terms, operands):
        x, term = _einsum_diagonals(x, term)
        for c, d in zip(term, x.shape):
            if d != 1 and sizes.setdefault(c, d) != d:
                name = "'...'" if c in dots else f"index '{c}'"
                raise ValueError(f"einsum: {name} has sizes {sizes[c]} and {d}")
        present = sorted(term, key=order.index)
        x = x.transpose(tuple(term.index(c) for c in present))
        aligned.append(x.reshape(tuple(x.shape[present.index(c)] if c in term else 1
                                       for c in order)))
    product = aligned[0]
    for x in aligned[1:]:
        product = product * x
    summed = tuple(range(len(output), len(order)))
    full_shape = tuple(sizes.get(c, 1) for c in order)
    product = product if product.shape == full_shape else product.broadcast_to(full_shape)
    return product.sum(summed) if summed else product


def _one_ellipsis(term: str, where: str) -> str:
    if "." in term.replace("...", "", 1):
        raise ValueError(f"einsum: a '.' that is not part of one ellipsis ('...') in {where}")
    return term


def _expand_ellipses(terms: list[str], operands) -> tuple[list[str], str]:
    """`terms` with each ``...`` spelled out in stand-in indices (one per dimension, aligned
    from the right so that they broadcast), and all the stand-ins in order."""
    counts = []
    for i, (term, x) in enumerate(zip(terms, operands)):
        named = len(_one_ellipsis(term, f"operand {i}").replace("...", ""))
        count = x.ndim - named if "..." in term else 0
        if count < 0 or ("..." not in term and named != x.ndim):
            raise ValueError(f"einsum: subscripts '{term}' for an operand of shape {x.shape}")
        counts.append(count)
    # Stand-ins are characters no subscript uses: NumPy's subscripts are letters.
    dots = "".join(chr(0x2460 + k) for k in range(max(counts, default=0)))
    return [t.replace("...", dots[len(dots) - n:]) for t, n in zip(terms, counts)], dots


def _einsum_diagonals(x: Tensor, term: str) -> tuple[Tensor, str]:
    """Take the diagonal over every index repeated within one operand's subscripts."""
    while len(set(term)) < len(term):
        c = next(c for c in term if term.count(c) > 1)
        first, second = term.index(c), term.index(c, term.index(c) + 1)
        if x.shape[first] != x.shape[second]:
            raise ValueError(
                f"einsum: index '{c}' has sizes {x.shape[first]} and {x.shape[second]}")
        rest = [i for i in range(len(term)) if i not in (first, second)]
        x = x.transpose((first, second, *rest))
        diag = np.arange(x.shape[0])
        x = x[diag, diag]
        term = c + "".join(term[i] for i in rest)
    return x, term
