"""``scipy.signal``'s convolutions and correlations, in any number of dimensions.

Each output element is a sum over the kernel's elements, computed directly
(`numgrad.numpy.sampled.convolution`): the work is the output's size times the kernel's, as
SciPy's ``method='direct'``, and the values are SciPy's to rounding whatever `method`
asks for (numgrad has no FFT). Differentiable in both inputs, to any order.

>>> import numgrad as ng
>>> ng.scipy.signal.convolve2d(ng.ones((3, 3)), ng.ones((2, 2)), mode="valid").tolist()
[[4.0, 4.0], [4.0, 4.0]]
"""

from __future__ import annotations

import numpy as np

from numgrad.numpy.creation import as_tensor
from numgrad.numpy.sampled import convolution
from numgrad.tensor import Tensor

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]

_MODES = ("full", "same", "valid")
_METHODS = ("auto", "direct", "fft")
#: ``convolve2d``'s boundaries: the value of `in1` read outside it
_BOUNDARIES = ("fill", "wrap", "symm")


def convolve(in1, in2, mode: str = "full", method: str = "auto") -> Tensor:
    """The convolution of the N-dimensional `in1` and `in2`, as SciPy's: ``'full'``
    (every overlap), ``'same'`` (`in1`'s shape, centred on ``'full'``) or ``'valid'``
    (full overlaps only: one input must be at least as large as the other along every
    axis)."""
    return _convolution("convolve", in1, in2, mode, method, flip=False)


def correlate(in1, in2, mode: str = "full", method: str = "auto") -> Tensor:
    """The cross-correlation of the N-dimensional `in1` and `in2`, as SciPy's:
    `convolve` with `in2` reversed along every axis, in the same modes."""
    return _convolution("correlate", in1, in2, mode, method, flip=True)


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill",
               fillvalue: float = 0) -> Tensor:
    """The convolution of the 2-D `in1` and `in2`, as SciPy's: `in1` read as
    `fillvalue` outside it (``boundary='fill'``), periodically (``'wrap'``) or
    mirrored at its edges (``'symm'``)."""
    return _planar("convolve2d", in1, in2, mode, boundary, fillvalue, flip=False)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill",
                fillvalue: float = 0) -> Tensor:
    """The cross-correlation of the 2-D `in1` and `in2`, as SciPy's `convolve2d` with
    `in2` reversed along both axes."""
    return _planar("correlate2d", in1, in2, mode, boundary, fillvalue, flip=True)


def _planar(name, in1, in2, mode, boundary, fillvalue, flip) -> Tensor:
    in1, in2 = as_tensor(in1), as_tensor(in2)
    if in1.ndim != 2 or in2.ndim != 2:
        raise ValueError(f"{name}: in1 and in2 must be 2-D, got shapes {in1.shape} and "
                         f"{in2.shape}")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"{name}: boundary must be one of {_BOUNDARIES}, got {boundary!r}")
    if np.ndim(fillvalue) != 0:
        raise ValueError(f"{name}: fillvalue must be a single number")
    # (For a kernel of even length, 'same' has two middles: SciPy's correlate2d takes
    # the later, its other functions the earlier.)
    return _checked(name, in1, in2, mode, flip, boundary, fillvalue, late_middle=flip)


def _convolution(name, in1, in2, mode, method, flip) -> Tensor:
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    in1, in2 = as_tensor(in1), as_tensor(in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"{name}: in1 and in2 must have the same number of dimensions, "
                         f"got shapes {in1.shape} and {in2.shape}")
    return _checked(name, in1, in2, mode, flip, "fill", 0, late_middle=False)


def _checked(name, in1, in2, mode, flip, boundary, fillvalue, late_middle) -> Tensor:
    """The convolution (correlation if `flip`) after SciPy's checks of the inputs."""
    if mode not in _MODES:
        raise ValueError(f"{name}: mode must be one of {_MODES}, got {mode!r}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{name}: neither input can be empty, got shapes {in1.shape} and "
                         f"{in2.shape}")
    if flip:
        in2 = in2[(slice(None, None, -1),) * in2.ndim]
    if mode == "valid" and not all(a >= b for a, b in zip(in1.shape, in2.shape)):
        if not all(a <= b for a, b in zip(in1.shape, in2.shape)):
            raise ValueError(f"{name}: in 'valid' mode one input must be at least as large "
                             f"as the other along every axis, got shapes {in1.shape} and "
                             f"{in2.shape}")
        in1, in2 = in2, in1  # (as SciPy: after the flip)
    return convolution(in1, in2, mode, boundary, fillvalue, late_middle)
