"""Scans and order: cumulative sums and products, differences, sorting."""

from __future__ import annotations

from numgrad.tensor_base import TensorBase


class OrderMethods(TensorBase):
    """Scan and sort methods of `numgrad.Tensor` that NumPy's ndarray has (``cumsum``,
    ``cumprod``, ``sort``, ``argsort``, ``partition``)."""

    __slots__ = ()
