"""The CPU target: NumPy arrays as buffers, Numba-compiled loops, NumPy's BLAS for matmul.

Every function here takes and returns arrays of this target; the engine finds them
by the primitive's name (``reshape``, ``matmul``, ...), so a target is one module.
"""

from __future__ import annotations

import os

# Numba's OpenMP threads otherwise spin after each parallel kernel, starving the
# BLAS threads of the next matmul (and everything else on a 2-core machine).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numba  # noqa: E402 - after the OpenMP setting
import numpy as np

name = "cpu"

#: Launches over at least this many elements use a parallel kernel. Below it the
#: thread start-up costs more than it saves on 2 cores (see docs/design.md), and
#: parallel kernels compile several times slower.
PARALLEL_THRESHOLD = 1 << 20


def empty(shape, dtype) -> np.ndarray:
    return np.empty(shape, dtype)


def full(shape, value, dtype) -> np.ndarray:
    """A read-only array of `shape` holding `value`: one element, broadcast."""
    return np.broadcast_to(np.array(value, dtype), shape)


def from_numpy(array: np.ndarray) -> np.ndarray:
    """A private copy of `array`; the caller may mutate theirs afterwards."""
    return np.array(array, copy=True, order="C")


def to_numpy(array: np.ndarray) -> np.ndarray:
    return np.array(array, copy=True)


def strides(array: np.ndarray) -> tuple[int, ...]:
    return array.strides


def as_strided(array: np.ndarray, shape, strides, writeable: bool = False) -> np.ndarray:
    return np.lib.stride_tricks.as_strided(array, shape, strides, writeable=writeable)


def launch(kernel, outs, shape, inputs, args) -> None:
    kernel(*outs, shape, numba.get_num_threads(), *inputs, *args)


# ---- movement and hand-written kernels, by primitive name ------------------------

def reshape(array, shape):
    return array.reshape(shape)


def permute(array, axes):
    return array.transpose(axes)


def expand(array, shape):
    return np.broadcast_to(array, shape)


def index(array, key):
    return array[key]


def index_add(array, arg):
    """Zeros of ``arg[1]``'s shape with `array` added at ``arg[0]`` (repeats add up)."""
    key, shape = arg
    out = np.zeros(shape, array.dtype)
    np.add.at(out, key, array)
    return out


def index_put(array, values, key):
    out = array.copy()
    out[key] = values
    return out


def concatenate(*arrays_and_axis):
    *arrays, axis = arrays_and_axis
    return np.concatenate(arrays, axis=axis)


def matmul(a, b, arg=None):
    return np.matmul(a, b)
