"""NumPy-named module functions (``ng.exp``, ``ng.add``, ``ng.sum``, ...).

Each forwards to the Tensor method or elementwise primitive of the same name, so
a new primitive or method needs no second definition here.
"""

from __future__ import annotations

from numgrad.creation import tensor
from numgrad.ops import BINARY, TABLE, UNARY
from numgrad.ordering import OrderMethods
from numgrad.primitives import _elementwise
from numgrad.shaping import ShapingMethods
from numgrad.tensor import Tensor

#: Tensor methods that are also module functions, beyond the unary primitives and the
#: methods of the shaping and ordering mixins (all of which are).
METHODS = (
    "abs", "square", "relu", "round", "clip", "sum", "prod", "max", "min", "mean", "var",
    "std", "logsumexp", "argmax", "argmin", "all", "any", "reshape", "transpose", "permute",
    "swapaxes", "broadcast_to", "expand_dims", "squeeze", "ravel", "flatten", "negative",
)


def _method_function(name: str):
    method = getattr(Tensor, name)

    def function(x, *args, **kwargs):
        return method(x if isinstance(x, Tensor) else tensor(x), *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = method.__doc__ or f"``x.{name}(...)`` as a function."
    return function


def _binary_function(name: str):
    def function(x, y):
        return _elementwise(name, x, y)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise ``{name}`` with NumPy's promotion and broadcasting."
    return function


_unary = [p.name for p in TABLE.values() if p.kind == UNARY and hasattr(Tensor, p.name)]
_mixins = [n for m in (ShapingMethods, OrderMethods) for n in vars(m) if not n.startswith("_")]
_functions = {name: _method_function(name) for name in (*_unary, *METHODS, *_mixins)}
_functions.update(
    {p.name: _binary_function(p.name) for p in TABLE.values()
     if p.kind == BINARY and p.name != "power"})
globals().update(_functions)
__all__ = sorted(_functions)
