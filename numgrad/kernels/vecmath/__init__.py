"""Vectorizable math for the generated CPU kernels: exp, expm1, log, log1p, sin, cos, tan,
tanh, sigmoid and power as branch-free straight-line code, in float64 and in float32.

Numba calls libm for ``math.exp`` and friends, one element at a time, so LLVM cannot
vectorize a loop that uses them. These functions are range reductions, polynomials and
selects (no branch, no call; `numba.njit(forceinline=True)` inlines them), so a loop
``for i in range(n): out[i] = vm.exp(a[i])`` compiles to AVX-512 or AVX2 code. Each is at
most 3 ulp from the correctly rounded result (``python tools/ulp_table.py``), and gives
NumPy's values at +-0, +-inf, nan, subnormals and the overflow and underflow boundaries.

Each name is a Python function (for scalars) that Numba code can call: arguments that are
all float32 run the float32 code (float32 arithmetic throughout, float32 polynomials);
otherwise the float64 code. `power` of two integers is ``x ** y``.

A generated kernel module starts with `HEADER` and spells primitive ``name`` as
``EXPRS[name]`` (over ``x`` and ``y``)::

    from numgrad.kernels import vecmath as vm

    @numba.njit(cache=True, error_model="numpy")
    def kernel(out, in0):
        for i0 in range(in0.shape[0]):
            out[i0] = vm.tanh(in0[i0])  # EXPRS["tanh"] with x = in0[i0]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba.core import types
from numba.core.extending import overload

from numgrad.kernels.vecmath import exp as _exp
from numgrad.kernels.vecmath import log as _log
from numgrad.kernels.vecmath import trig as _trig
from numgrad.ops import cbrt_from

__all__ = ["exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "power",
           "IMPLEMENTATIONS", "EXPRS", "HEADER"]


def _implementations(F: type) -> dict[str, Callable]:
    family = _exp.make(F)
    exp_dd = family.pop("exp_dd")
    return {**family, **_log.make(F, exp_dd), **_trig.make(F)}


#: the compiled functions per dtype name: ``IMPLEMENTATIONS["float32"]["tanh"]``
IMPLEMENTATIONS = {np.dtype(F).name: _implementations(F) for F in (np.float64, np.float32)}

#: the import line of a kernel module that uses `EXPRS`
HEADER = "from numgrad.kernels import vecmath as vm"


def _float_type(*operands) -> str:
    """The dtype name of the code for these Numba types: float32 only if all are float32."""
    return "float32" if all(t == types.float32 for t in operands) else "float64"


def _scalar(name: str, args: tuple):
    """`name` of Python or NumPy scalars `args`, by the same rule as in Numba code."""
    dtype = "float32" if all(isinstance(a, np.float32) for a in args) else "float64"
    return IMPLEMENTATIONS[dtype][name](*(np.dtype(dtype).type(a) for a in args))


def _typed(name: str, operands: tuple):
    """The implementation of `name` for these Numba types (None: not numbers)."""
    if not all(isinstance(t, (types.Float, types.Integer, types.Boolean)) for t in operands):
        return None
    if name == "power" and not any(isinstance(t, types.Float) for t in operands):
        return lambda x, y: x ** y
    dtype = _float_type(*operands)
    impl, cast = IMPLEMENTATIONS[dtype][name], getattr(np, dtype)
    if len(operands) == 1:
        return lambda x: impl(cast(x))
    return lambda x, y: impl(cast(x), cast(y))


def _public(name: str, doc: str, function: Callable, typer: Callable) -> Callable:
    """`function` (of scalars, in Python) named `name`, with `typer` as its Numba overload."""
    overload(function, jit_options={"forceinline": True, "error_model": "numpy"})(typer)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


def _unary(name: str, doc: str) -> Callable:
    return _public(name, doc, lambda x: _scalar(name, (x,)), lambda x: _typed(name, (x,)))


def _binary(name: str, doc: str) -> Callable:
    return _public(name, doc, lambda x, y: _scalar(name, (x, y)),
                   lambda x, y: _typed(name, (x, y)))


exp = _unary("exp", "e**x.")
expm1 = _unary("expm1", "e**x - 1, accurate near 0.")
log = _unary("log", "The natural logarithm; nan below 0, -inf at 0.")
log1p = _unary("log1p", "log(1 + x), accurate near 0.")
sin = _unary("sin", "The sine, of any finite argument (Payne-Hanek reduction).")
cos = _unary("cos", "The cosine, of any finite argument (Payne-Hanek reduction).")
tan = _unary("tan", "The tangent, of any finite argument (Payne-Hanek reduction).")
tanh = _unary("tanh", "The hyperbolic tangent.")
sigmoid = _unary("sigmoid", "1 / (1 + e**-x), without overflow for either sign.")
power = _binary("power", "x**y with C99's (and NumPy's) special cases.")

#: each primitive's scalar expression in a kernel module that starts with `HEADER`
EXPRS = {name: f"vm.{name}(x, y)" if name == "power" else f"vm.{name}(x)"
         for name in ("exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid",
                      "power")}
#: (the cube root's estimate by these: libm's pow made it ten times NumPy's cbrt)
EXPRS["cbrt"] = cbrt_from("math.copysign(vm.exp(vm.log(abs(x)) * (1.0 / 3.0)), x)")
