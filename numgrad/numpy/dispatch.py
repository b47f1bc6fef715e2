"""NumPy's functions on tensors: ``__array_ufunc__`` (NEP 13) and ``__array_function__``
(NEP 18) send ``numpy.<name>(tensor, ...)`` to numgrad's function of the same name.

``numpy.<name>`` goes to ``numgrad.<name>`` and ``numpy.linalg.<name>`` to
``numgrad.linalg.<name>``, looked up by name in the public namespaces at call time: a
function added to numgrad is dispatched to with no table here to update. `ALIASES` holds
NumPy's other spellings of a numgrad function. A NumPy function numgrad has no equivalent
of raises `TypeError` naming it; nothing converts a tensor to an array silently. NumPy
arrays among the operands become tensors on the tensors' device (as in ``t + a``), so the
result is a tensor that stays lazy and differentiable.

The namespaces are read through the package (``numgrad.linalg``), never imported here:
`numgrad.tensor_base` imports this module while the package is still being built.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import sys
import types
import warnings

import numpy as np

import numgrad

#: NumPy's module of a function -> the numgrad namespace (an attribute path) holding its
#: equivalent.
NAMESPACES = {"numpy": (), "numpy.linalg": ("linalg",)}

#: NumPy names -> the name of the same function in numgrad.
ALIASES = {"concat": "concatenate", "permute_dims": "transpose", "row_stack": "vstack"}


#: NumPy's functions that read a tensor's attributes (they return ints and bools, not
#: tensors).
METADATA = {
    "numpy.shape": lambda a: a.shape,
    "numpy.ndim": lambda a: a.ndim,
    "numpy.size": lambda a, axis=None: a.size if axis is None else a.shape[axis],
    # (a tensor's buffer is never an array's: NumPy reads tensors through copies)
    "numpy.may_share_memory": lambda a, b, max_work=None: False,
    "numpy.shares_memory": lambda a, b, max_work=None: False,
}

#: ufunc methods with a numgrad equivalent: ``np.add.reduce`` is a sum over axis 0, ...
REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
          "logical_and": "all", "logical_or": "any"}
ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}

_OPAQUE = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


class GradientDroppedWarning(UserWarning):
    """A tensor that requires grad became a NumPy array in a function that did not
    dispatch to numgrad (``np.full(shape, t)``, SciPy's functions): what that function
    returns has no gradient."""


def warn_dropped() -> None:
    """Warn that a tensor that requires grad is being converted to an ndarray (its
    ``__array__`` is running) outside numgrad: name the function doing it (the first
    NumPy or SciPy function called from outside them, by its public path) and the
    fixes. The warning points at the first frame outside numgrad, NumPy and SciPy."""
    frame, level = sys._getframe(2), 3
    while frame is not None and _module(frame).startswith("numgrad"):
        frame, level = frame.f_back, level + 1
    if frame is None:
        return
    what, library = "np.asarray, np.array or a compiled function called here", None
    while frame is not None and _module(frame).split(".")[0] in ("numpy", "scipy"):
        library = frame  # (the outermost: the function the caller called)
        frame, level = frame.f_back, level + 1
    if library is not None:
        code, parts = library.f_code, _module(library).split(".")
        name = getattr(code, "co_qualname", code.co_name).split(".")[0]  # (a method: its class)
        public = ["numpy"] if parts[0] == "numpy" and hasattr(np, name) else \
            [part for part in parts if not part.startswith("_")]
        what = ".".join([*public, name])
    ours = _ours(what) if library is not None else None
    use = f"Use {ours}" if ours else "Use numgrad's function (ng.<name>)"
    warnings.warn(
        f"{what} converted a tensor that requires grad to a NumPy array: the result has "
        f"no gradient. {use} to stay differentiable, or pass t.detach() (or t.numpy()) "
        f"to use the value on purpose",
        GradientDroppedWarning, stacklevel=level)


def _ours(what: str) -> str | None:
    """numgrad's function of the same name as NumPy's or SciPy's `what` (a public
    path), as its users write it, where numgrad has one."""
    parts = what.split(".")
    namespace = ["scipy", *parts[1:-1]] if parts[0] == "scipy" else parts[1:-1]
    space = numgrad
    for part in [*namespace, parts[-1]]:
        space = getattr(space, part, None)
    return "ng." + ".".join([*namespace, parts[-1]]) if callable(space) else None


def _module(frame) -> str:
    return frame.f_globals.get("__name__", "")


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict):
    """``Tensor.__array_ufunc__``: apply numgrad's equivalent of `ufunc` (or of its method)."""
    label = _ufunc_label(ufunc) + ("" if method == "__call__" else f".{method}")
    if not all(_known_operand(x) for x in inputs):
        return NotImplemented  # another library's array: let it (or NumPy) answer
    _refuse_out(kwargs.pop("out", None), label)
    kwargs = {k: v for k, v in kwargs.items() if v is not None}  # None: the default
    like = next(x for x in inputs if isinstance(x, numgrad.Tensor))
    operands = [x if _is_scalar(x) else _as_tensor(x, like) for x in inputs]
    if method == "__call__":  # (SciPy's special functions: numgrad.scipy.special's)
        namespace = ("scipy", "special") if label.startswith("scipy.special.") else ()
        return _call(_function(ufunc.__name__, namespace, label), (), operands, kwargs, label)
    if method == "outer":  # f(a[..., None, ...], b): every operand broadcast against the next
        a, b = operands
        if isinstance(a, numgrad.Tensor):
            a = a.reshape(a.shape + (1,) * getattr(b, "ndim", 0))
        return _call(_function(ufunc.__name__, (), label), (), [a, b], kwargs, label)
    table = {"reduce": REDUCE, "accumulate": ACCUMULATE}.get(method, {})
    if ufunc.__name__ not in table:
        raise _no_equivalent(label)
    kwargs.setdefault("axis", 0)  # a ufunc method's default axis (numgrad's is None)
    return _call(_function(table[ufunc.__name__], (), label), (), operands, kwargs, label)


def array_function(func, types: tuple, args: tuple, kwargs: dict):
    """``Tensor.__array_function__``: call numgrad's equivalent of NumPy's `func`."""
    if not all(t is np.ndarray or issubclass(t, numgrad.Tensor) for t in types):
        return NotImplemented  # another library's array, or an ndarray subclass (np.ma)
    module = func.__module__
    label = f"{module}.{func.__name__}"
    if label in METADATA:
        return METADATA[label](*args, **kwargs)
    if module not in NAMESPACES:
        raise _no_equivalent(label)
    function = _function(func.__name__, NAMESPACES[module], label)
    like = _first_tensor((args, kwargs))
    args, kwargs = _convert((args, kwargs), like)
    return _call(function, func, args, kwargs, label)


def _ufunc_label(ufunc: np.ufunc) -> str:
    """`ufunc`'s public name: NumPy's, or SciPy's special function's (SciPy's ufuncs are
    NumPy ufuncs too)."""
    name = ufunc.__name__
    if getattr(np, name, None) is ufunc:
        return f"numpy.{name}"
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, name, None) is ufunc:
        return f"scipy.special.{name}"
    return f"the ufunc {name}"


def _no_equivalent(label: str) -> TypeError:
    """The refusal of `label`, a function numgrad has no equivalent of."""
    return TypeError(f"numgrad has no equivalent of {label}; convert with t.numpy() first")


def _function(name: str, namespace: tuple[str, ...], label: str):
    """numgrad's function `name` (or its alias) in `namespace`; TypeError naming `label`
    where there is none."""
    space = numgrad
    for part in namespace:
        space = getattr(space, part)
    function = getattr(space, ALIASES.get(name, name), None)
    if not inspect.isfunction(function) or not function.__module__.startswith("numgrad"):
        raise _no_equivalent(label)
    return function


def _call(function, numpy_function, args, kwargs: dict, label: str):
    """``function(...)`` with the arguments NumPy's function was called with, mapped by
    NumPy's signature where it has one (`numpy_function`, or ``()`` for a ufunc)."""
    args, kwargs = _map(numpy_function, function, list(args), dict(kwargs), label)
    return function(*args, **kwargs)


def _map(numpy_function, function, args: list, kwargs: dict, label: str):
    """NumPy's positional and keyword arguments as `function` takes them.

    An argument given by position stays positional while numgrad's parameter in that
    position has NumPy's name or another (``a_min`` for ``min``); it becomes a keyword
    where numgrad has NumPy's name elsewhere. ``out`` must be None. A keyword `function`
    does not take raises TypeError naming it.
    """
    params = _parameters(function)
    signature = _signature(numpy_function) if numpy_function else None
    if signature is not None:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:  # a call NumPy itself refuses
            bound = None
        if bound is not None:
            args, kwargs = _by_name(bound, params, len(args), label)
    for name in kwargs:
        if params is not None and name not in params:
            raise TypeError(f"numgrad.{function.__name__} takes no argument '{name}' "
                            f"(given to {label})")
    return args, kwargs


def _by_name(bound: inspect.BoundArguments, params: types.MappingProxyType | None,
             n_positional: int, label: str):
    names = list(bound.signature.parameters)
    args, kwargs, position = [], {}, 0
    for name, value in bound.arguments.items():
        kind = bound.signature.parameters[name].kind
        given_by_position = names.index(name) < n_positional or kind in _OPAQUE
        if name == "out":
            _refuse_out(value, label)
        elif kind == inspect.Parameter.VAR_POSITIONAL:
            args.extend(value)
            position += len(value)
        elif kind == inspect.Parameter.VAR_KEYWORD:
            kwargs.update(value)
        elif kind == inspect.Parameter.KEYWORD_ONLY:  # (NumPy's: never by position)
            kwargs[name] = value
        elif not kwargs and _positional(params, position, name, given_by_position):
            args.append(value)
            position += 1
        else:
            kwargs[name] = value
    return args, kwargs


def _positional(params: types.MappingProxyType | None, position: int, name: str,
                given_by_position: bool) -> bool:
    """Whether NumPy's argument `name` goes to numgrad's parameter in `position`."""
    if params is None:
        return given_by_position
    slots = [p for p in params.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    if position < len(slots) and slots[position].kind == slots[position].VAR_POSITIONAL:
        return True  # ``*axes``/``*shape``: ``axes=`` given to NumPy fills it
    if position >= len(slots):
        return False
    if slots[position].name == name:
        return True
    return given_by_position and (name not in params or params[name].kind in _OPAQUE)


@functools.cache
def _signature(numpy_function) -> inspect.Signature | None:
    """NumPy's function's signature, None where it has none (read once per function)."""
    try:
        return inspect.signature(numpy_function)
    except (TypeError, ValueError):
        return None


@functools.cache
def _parameters(function) -> types.MappingProxyType | None:
    """`function`'s parameters by name; None when it takes any keyword (read once per
    function: reading them took 40 % of an ``ndarray @ tensor``)."""
    params = dict(inspect.signature(function).parameters)
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return None
    return types.MappingProxyType(params)


def _refuse_out(out, label: str) -> None:
    if any(o is not None for o in (out if isinstance(out, tuple) else (out,))):
        raise TypeError(
            f"{label}: numgrad cannot write into out= (its buffers are immutable); use the "
            f"returned tensor")


def _known_operand(x) -> bool:
    return (isinstance(x, (numgrad.Tensor, list, tuple)) or type(x) is np.ndarray
            or _is_scalar(x))


def _is_scalar(x) -> bool:
    return isinstance(x, (numbers.Number, np.generic))


def _as_tensor(x, like):
    """`x` as a tensor on `like`'s device (a copy of an array, as ``like + x`` makes)."""
    if isinstance(x, numgrad.Tensor):
        return x
    if _first_tensor(x) is not None:  # its tensors' histories would be lost
        raise TypeError("a list holding tensors is not an operand numgrad takes; join them "
                        "with ng.stack first")
    return numgrad.tensor(x, device=like.device)


def _first_tensor(tree):
    if isinstance(tree, numgrad.Tensor):
        return tree
    items = tree.values() if isinstance(tree, dict) else tree
    if isinstance(tree, (list, tuple, dict)):
        return next((t for t in map(_first_tensor, items) if t is not None), None)
    return None


def _convert(tree, like):
    """`tree` (arguments, nested in lists, tuples and dicts) with its arrays as tensors."""
    if isinstance(tree, np.ndarray):
        return _as_tensor(tree, like)
    if isinstance(tree, dict):
        return {k: _convert(v, like) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_convert(v, like) for v in tree)
    return tree
