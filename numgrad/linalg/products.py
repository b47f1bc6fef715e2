"""Products: matmul (NumPy's rules), dot, outer, inner, tensordot, kron, cross and einsum."""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Sequence

import numpy as np

from numgrad.matmul_rules import _both_tensors, _dot, _matmul
from numgrad.numpy.creation import tensor
from numgrad.numpy.joining import stack
from numgrad.numpy.shaping import take
from numgrad.shapes import normalize_axis
from numgrad.tensor import Tensor

__all__ = ["cross", "dot", "einsum", "inner", "kron", "matmul", "outer", "tensordot"]


def matmul(a, b) -> Tensor:
    """Matrix product with NumPy's rules: 1-D operands and broadcast batch dimensions.

    Examples
    --------
    >>> import numgrad as ng
    >>> (ng.ones((2, 3)) @ ng.ones(3)).tolist()
    [3.0, 3.0]
    """
    return _matmul(*_operands(a, b))


def _operands(a, b) -> tuple[Tensor, Tensor]:
    """`a` and `b` as tensors: data (lists, ndarrays, scalars) goes to the other's device,
    or to the default device when neither is a tensor."""
    return _both_tensors(a if isinstance(a, Tensor) or isinstance(b, Tensor) else tensor(a), b)


def dot(a, b) -> Tensor:
    """NumPy's dot: a product for scalars, matmul up to 2-D, a tensor contraction above."""
    return _dot(*_operands(a, b))


def outer(a, b) -> Tensor:
    """Products of every element of `a` with every element of `b` (both flattened)."""
    a, b = _operands(a, b)
    return a.ravel().reshape(-1, 1) * b.ravel().reshape(1, -1)


def inner(a, b) -> Tensor:
    """Sum of products over the last axes: shape ``a.shape[:-1] + b.shape[:-1]``; a
    product when either is a scalar."""
    a, b = _operands(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"inner: shapes {a.shape} and {b.shape} not aligned: "
                         f"{a.shape[-1]} (last axis) != {b.shape[-1]} (last axis)")
    return tensordot(a, b, (-1, -1))


def tensordot(a, b, axes: int | Sequence = 2) -> Tensor:
    """Sum of products over `axes`: an int ``N`` (the last N axes of `a` with the first N
    of `b`) or a pair of axis sequences (or ints). The remaining axes of `a`, then of `b`,
    make the result. One matmul, after a transpose and reshape of each operand.

    Examples
    --------
    >>> import numgrad as ng
    >>> ng.tensordot(ng.ones((2, 3, 4)), ng.ones((4, 3, 5)), ([1, 2], [1, 0])).shape
    (2, 5)
    """
    a, b = _operands(a, b)
    if isinstance(axes, numbers.Integral):
        axes_a, axes_b = list(range(-int(axes), 0)), list(range(int(axes)))
    else:
        axes_a, axes_b = ([operator.index(i)] if isinstance(i, numbers.Integral) else
                          [operator.index(j) for j in i] for i in axes)
    if len(axes_a) != len(axes_b):
        raise ValueError(f"tensordot: shape-mismatch for sum: {len(axes_a)} axes of the "
                         f"first operand against {len(axes_b)} of the second")
    axes_a = [_contracted(i, a, "first") for i in axes_a]
    axes_b = [_contracted(i, b, "second") for i in axes_b]
    for i, j in zip(axes_a, axes_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError(
                f"tensordot: shape-mismatch for sum: axis {i} of shape {a.shape} has "
                f"length {a.shape[i]}, axis {j} of shape {b.shape} has {b.shape[j]}")
    keep_a = [d for d in range(a.ndim) if d not in axes_a]
    keep_b = [d for d in range(b.ndim) if d not in axes_b]
    size = math.prod(a.shape[d] for d in axes_a)
    left = a.transpose(keep_a + axes_a).reshape(math.prod(a.shape[d] for d in keep_a), size)
    right = b.transpose(axes_b + keep_b).reshape(size, math.prod(b.shape[d] for d in keep_b))
    return (left @ right).reshape(tuple(a.shape[d] for d in keep_a) +
                                  tuple(b.shape[d] for d in keep_b))


def _contracted(axis: int, x: Tensor, which: str) -> int:
    # NumPy raises IndexError here; AxisError is both that and the ValueError of SPEC §3.
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(
            f"tensordot: axis {axis} is out of bounds for the {which} operand, of shape "
            f"{x.shape}")
    return axis % x.ndim


def kron(a, b) -> Tensor:
    """Kronecker product: blocks of `b` scaled by each element of `a` (the operand with
    fewer axes gets leading ones). A broadcast product whose axes are merged."""
    a, b = _operands(a, b)
    ndim = max(a.ndim, b.ndim)
    sa = (1,) * (ndim - a.ndim) + a.shape
    sb = (1,) * (ndim - b.ndim) + b.shape
    product = (a.reshape(tuple(d for n in sa for d in (n, 1))) *
               b.reshape(tuple(d for n in sb for d in (1, n))))
    return product.reshape(tuple(m * n for m, n in zip(sa, sb)))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Tensor:
    """Cross product of 3-vectors along `axisa` of `a` and `axisb` of `b` (the other axes
    broadcast), put along `axisc` of the result; `axis` sets all three. A 2-vector is a
    3-vector with zero third component; two 2-vectors give the scalar third component
    (and `axisc` is unused), as in NumPy."""
    a, b = _operands(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("cross: at least one operand has zero dimensions")
    a = a.moveaxis(normalize_axis(axisa, a.ndim), -1)
    b = b.moveaxis(normalize_axis(axisb, b.ndim), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: incompatible dimensions for cross product: the vectors "
                         f"have {a.shape[-1]} and {b.shape[-1]} components (must be 2 or 3)")
    if a.shape[-1] == b.shape[-1] == 3:
        # One kernel: each operand read in two rotated orders by gathers.
        def turn(x: Tensor, by: int) -> Tensor:
            return take(x, {x.ndim - 1: np.roll(np.arange(3), -by)})

        c = turn(a, 1) * turn(b, 2) - turn(a, 2) * turn(b, 1)
    else:
        a0, a1, a2 = (a[..., i] if i < a.shape[-1] else None for i in range(3))
        b0, b1, b2 = (b[..., i] if i < b.shape[-1] else None for i in range(3))
        if a2 is None and b2 is None:
            return a0 * b1 - a1 * b0
        c = stack([_minus(a1, b2, a2, b1), _minus(a2, b0, a0, b2), _minus(a0, b1, a1, b0)],
                  -1)
    return c.moveaxis(-1, normalize_axis(axisc, c.ndim))


def _minus(x1, y1, x2, y2) -> Tensor:
    """``x1 * y1 - x2 * y2`` where a missing (None: zero) component of a 2-vector drops
    its term, so an infinite partner gives no NaN (NumPy computes these terms so too)."""
    if x1 is None or y1 is None:
        return -(x2 * y2)
    if x2 is None or y2 is None:
        return x1 * y1
    return x1 * y1 - x2 * y2


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
        x = x.diagonal(0, first, second)  # the other axes in order, then the diagonal
        term = "".join(t for i, t in enumerate(term) if i not in (first, second)) + c
    return x, term
