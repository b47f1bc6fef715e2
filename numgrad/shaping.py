"""Rearranging one tensor: flips, rolls, repeats, padding, diagonals and triangles."""

from __future__ import annotations

from numgrad.tensor_base import TensorBase


class ShapingMethods(TensorBase):
    """Shaping methods of `numgrad.Tensor` that NumPy's ndarray has (``repeat``,
    ``diagonal``, ``trace``)."""

    __slots__ = ()
