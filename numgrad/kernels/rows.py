"""The op table's rows marked `called` (incomplete gamma and beta, polygamma, digamma,
nextafter) as functions that the CPU kernels call, compiled once and kept in the disk
cache, rather than inlined into every kernel that uses them.

Numba's compile time grows with a kernel's code: gammainc's scalar expression (14,000
characters) made every kernel that used it take 1-10 s to compile, the row's code typed,
lowered and optimized again each time. Called, it compiles once per signature (then loads
from the disk cache in any process), and a new kernel that calls it costs what any kernel
does (about 0.1 s). These rows branch and loop, so their code does not vectorize inlined
either: at 200,000 elements, called and inlined ran at the same speed (polygamma 20 %
slower); the Bessel rows, which do vectorize (40 % slower called), and erfinv (10 %)
stay inlined (docs/decisions.md).

A kernel module that calls one starts with `HEADER` and spells row ``name`` as
``rows.name(x, y)``: ``rows.name`` is the row's Numba dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable

from numgrad.kernels import jit
from numgrad.ops import BINARY, TABLE, TERNARY, UNARY

#: the import line of a kernel module that calls a row
HEADER = "from numgrad.kernels import rows"

_OPERANDS = {UNARY: "x", BINARY: "x, y", TERNARY: "x, y, z"}


def call(name: str) -> str | None:
    """Row `name`'s call in a kernel (over ``x``, ``y``, ``z``), or None where it is
    inlined."""
    row = TABLE[name]
    return f"rows.{name}({_OPERANDS[row.kind]})" if row.called else None


def source(name: str) -> str:
    """The module whose ``row`` is row `name`'s scalar expression as a function."""
    row = TABLE[name]
    return "\n".join([
        "import math",
        "import numba",
        "import numpy as np",
        "",
        "",
        "@numba.njit(cache=True, error_model='numpy', no_cfunc_wrapper=True)",
        f"def row({_OPERANDS[row.kind]}):",
        f"    return {row.expr}",
        "",
    ])


def __getattr__(name: str) -> Callable:
    """Row `name`'s function (Numba compiles it for a signature at a kernel's first
    compile that calls it)."""
    if name not in TABLE or call(name) is None:
        raise AttributeError(f"{__name__} has no row {name!r} to call")
    return jit.kernel(("row", name, TABLE[name].expr), lambda: source(name), "row")
