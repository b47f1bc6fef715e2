"""Function transforms for HIPS autograd and JAX habits (SPEC §3): ``ng.grad(f)``,
``ng.value_and_grad(f)`` and ``ng.elementwise_grad(f)``, and ``ng.jacobian(f)`` and
``ng.hessian(f)`` (`numgrad.functional`'s, PyTorch's form, at one argument).

Each returns a function that calls `f` with the arguments numbered `argnum` (an int or a
tuple of ints) as leaves that require grad, and differentiates its result with
``ng.grad``. Arguments may be NumPy arrays, Python numbers, lists or tensors; results
come back as they were given: NumPy arrays (and Python floats for numbers) when no
differentiated argument is a tensor, tensors otherwise. A tensor argument that requires
grad already (the transform is nested in another, or in a graph being recorded) keeps
its history, and the gradient is recorded too (``create_graph``), so ``grad(grad(f))``
is the second derivative.

``ng.grad(outputs, inputs, ...)``, PyTorch's form, is unchanged: `numgrad.autograd.grad`
tells the two apart by its first argument being callable.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from numgrad import functional
from numgrad.autograd import collector
from numgrad.autograd import grad as grad_of_tensors
from numgrad.autograd.grad_mode import enable_grad
from numgrad.tensor import Tensor

Argnum = int | Sequence[int]

__all__ = ["elementwise_grad", "gradient_function", "hessian", "jacobian", "value_and_grad"]


def gradient_function(f: Callable, argnum: Argnum = 0) -> Callable:
    """The gradient of `f`'s scalar result with respect to argument `argnum` (``ng.grad(f)``).

    Examples
    --------
    >>> import numpy as np, numgrad as ng
    >>> ng.grad(lambda x: (x ** 3).sum())(np.array([1.0, 2.0]))
    array([ 3., 12.])
    >>> ng.grad(ng.grad(lambda x: x ** 3))(2.0)
    12.0
    """
    return _transform(f, argnum, "grad", value=False, summed=False)


def value_and_grad(f: Callable, argnum: Argnum = 0) -> Callable:
    """``(f(...), its gradient)``, from one evaluation of `f`: what
    ``scipy.optimize.minimize(..., jac=True)`` asks of its function.

    Examples
    --------
    >>> import numpy as np, numgrad as ng
    >>> from scipy.optimize import minimize
    >>> f = lambda x: ((x - np.array([1.0, -2.0])) ** 2).sum()
    >>> minimize(ng.value_and_grad(f), np.zeros(2), jac=True).x.round(6).tolist()
    [1.0, -2.0]
    """
    return _transform(f, argnum, "value_and_grad", value=True, summed=False)


def elementwise_grad(f: Callable, argnum: Argnum = 0) -> Callable:
    """The gradient of ``f(...).sum()``: for an elementwise `f`, its derivative at each
    element.

    Examples
    --------
    >>> import numpy as np, numgrad as ng
    >>> ng.elementwise_grad(ng.tanh)(np.array([0.0, 1.0])).round(6).tolist()
    [1.0, 0.419974]
    """
    return _transform(f, argnum, "elementwise_grad", value=False, summed=True)


def jacobian(f: Callable, argnum: int = 0) -> Callable:
    """The Jacobian of `f` with respect to argument `argnum` (HIPS autograd's
    ``jacobian``): of shape ``f(...).shape + x.shape``.

    Examples
    --------
    >>> import numpy as np, numgrad as ng
    >>> ng.jacobian(lambda x: x ** 2)(np.array([1.0, 3.0])).tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """
    return _matrix_transform(f, argnum, "jacobian", functional.jacobian)


def hessian(f: Callable, argnum: int = 0) -> Callable:
    """The Hessian of `f`'s scalar result with respect to argument `argnum`: of shape
    ``x.shape + x.shape``.

    Examples
    --------
    >>> import numpy as np, numgrad as ng
    >>> ng.hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return _matrix_transform(f, argnum, "hessian", functional.hessian)


def _matrix_transform(f: Callable, argnum: int, name: str, compute: Callable) -> Callable:
    """`f` transformed by `compute` (`numgrad.functional`'s jacobian or hessian) at its
    argument `argnum`, the other arguments held."""
    if not callable(f):
        raise TypeError(f"{name} expects a function, got {type(f).__name__}")

    @functools.wraps(f)
    def transformed(*given, **kwargs):
        _check_argnums((argnum,), given, name)
        original = given[argnum]
        args = list(given)

        def at(x):
            args[argnum] = x
            return f(*args, **kwargs)

        nested = isinstance(original, Tensor) and original.requires_grad
        with enable_grad():
            result = compute(at, _leaf(original, argnum, name), create_graph=nested)
        return result if isinstance(original, Tensor) else _as_given(result, original)

    return transformed


def _transform(f: Callable, argnum: Argnum, name: str, value: bool, summed: bool) -> Callable:
    """`f` transformed: its gradient (with its value, if `value`) with respect to the
    arguments `argnum`, of its result (summed first, if `summed`)."""
    if not callable(f):
        raise TypeError(f"{name} expects a function, got {type(f).__name__}")
    several = not isinstance(argnum, numbers.Integral)
    argnums = tuple(int(a) for a in argnum) if several else (int(argnum),)

    @functools.wraps(f)
    @collector.paused()  # (`f` too: its graph is most of the collector's work)
    def transformed(*given, **kwargs):
        _check_argnums(argnums, given, name)
        originals = [given[a] for a in argnums]
        wrt = [_leaf(x, a, name) for x, a in zip(originals, argnums)]
        args = list(given)
        for a, t in zip(argnums, wrt):
            args[a] = t
        tensors = any(isinstance(x, Tensor) for x in originals)
        nested = any(isinstance(x, Tensor) and x.requires_grad for x in originals)
        with enable_grad():
            out = f(*args, **kwargs)
            result = _scalar(out, name, summed)
            if isinstance(result, Tensor) and result.requires_grad:
                grads = grad_of_tensors(result, wrt, create_graph=nested,
                                        materialize_grads=True)
            else:  # (the result does not depend on the arguments: zero gradients)
                grads = tuple(t.zeros_like() for t in wrt)
        if not tensors:
            grads = tuple(_as_given(g, x) for g, x in zip(grads, originals))
        gradient = grads if several else grads[0]
        if not value:
            return gradient
        if isinstance(out, Tensor) and not tensors:
            out = out.item() if out.size == 1 else out.numpy()
        elif isinstance(out, Tensor) and not nested:  # (its history: to leaves of ours)
            out = out.detach()
        return out, gradient

    return transformed


def _check_argnums(argnums: tuple[int, ...], given: tuple, name: str) -> None:
    """ValueError naming an argnum that the call's positional arguments `given` lack."""
    for a in argnums:
        if not -len(given) <= a < len(given):
            raise ValueError(f"{name}: argnum {a} is out of range for a call with "
                             f"{len(given)} positional argument(s)")


def _leaf(x, position: int, name: str) -> Tensor:
    """Argument `x` (at `position`) as the tensor to differentiate with respect to: a
    tensor that requires grad itself (its history is kept), else a new leaf of its
    value (float64 for integers and booleans)."""
    if isinstance(x, Tensor):
        if x.requires_grad:
            return x
        x = x.detach() if x.dtype.kind == "f" else x.astype(np.float64)
        return x.requires_grad_()
    try:
        array = np.asarray(x)
    except Exception as e:  # (NumPy's own message, with the argument's place)
        raise TypeError(f"{name}: argument {position} is not an array: {e}") from e
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name}: argument {position} has dtype {array.dtype}; expected "
                        f"numbers")
    return Tensor(array if array.dtype.kind == "f" else array.astype(np.float64),
                  requires_grad=True)


def _scalar(out, name: str, summed: bool):
    """`out` as the one-element result to differentiate (summed for elementwise_grad)."""
    if summed:
        return out.sum() if isinstance(out, Tensor) else out
    if np.size(out) != 1:  # (np.size reads a tensor's size: it dispatches)
        raise TypeError(f"{name} applies to functions with a scalar result; this one "
                        f"returned shape {np.shape(out)}: use ng.elementwise_grad or "
                        f"ng.jacobian")
    if not isinstance(out, Tensor):
        return out
    if out.dtype.kind != "f":
        raise TypeError(f"{name}: the result has dtype {out.dtype}; expected a floating "
                        f"dtype")
    return out.reshape(())


def _as_given(t: Tensor, original):
    """`t`'s value as the kind of value `original` was: a Python float for a number (a
    0-d value), a NumPy array otherwise."""
    value = t.numpy()
    if isinstance(original, (numbers.Number, np.generic)) and value.ndim == 0:
        return float(value) if value.dtype.kind == "f" else value.item()
    return value
