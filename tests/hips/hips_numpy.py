"""Plays ``autograd.numpy`` for HIPS autograd's vendored tests: numgrad's functions under
NumPy's names, NumPy for the rest (constants, dtypes, ``random``).

``np.<name>`` is ``numgrad.<name>`` where numgrad has it, called with NumPy arrays turned
into tensors (as ``autograd.numpy`` takes raw arrays); ``np.linalg.<name>`` likewise with
``numgrad.linalg``. A name numgrad lacks is NumPy's own attribute: a NumPy function called
on a tensor then dispatches through ``Tensor.__array_function__`` and, where numgrad has no
equivalent, raises TypeError naming it, so such a test fails saying what is missing.
"""

import functools
import inspect
import types

import numpy

import numgrad

random = numpy.random  # npr.randn, npr.seed: NumPy's random data, as autograd.numpy.random


def _tensors(tree):
    """`tree` (arguments, nested in lists and tuples) with its NumPy arrays as tensors."""
    if isinstance(tree, numpy.ndarray):
        return numgrad.tensor(tree)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_tensors(v) for v in tree)
    return tree


def _on_tensors(function):
    @functools.wraps(function)
    def call(*args, **kwargs):
        return function(*_tensors(args), **{k: _tensors(v) for k, v in kwargs.items()})

    return call


def _attribute(space, fallback, name: str):
    found = getattr(space, name, None)
    if inspect.isfunction(found):
        return _on_tensors(found)
    return getattr(fallback, name)


linalg = types.ModuleType("hips_numpy.linalg")
linalg.__getattr__ = functools.partial(_attribute, numgrad.linalg, numpy.linalg)


def __getattr__(name: str):
    return _attribute(numgrad, numpy, name)
