"""Render a fused kernel to Python source: one scalar body, a loop skeleton per target.

A kernel is a `Program`: straight-line SSA over scalars that reads array inputs
(``in0``, ``in1``, ...) and scalar arguments (``arg0``, ...) at one index, and
either stores the last value (elementwise) or folds it into an accumulator
(reduction). Its loops run over ``shape``, a runtime tuple: the kept dimensions
first, then the reduced ones. Sizes and constant values are never in the source,
so programs that differ only in them share one compiled kernel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from numgrad.ops import TABLE

#: SSA instruction: ("in", i) | ("arg", i) | (primitive name, *operand positions);
#: the dtype of each instruction's value is in `Program.dtypes`.
Instruction = tuple


@dataclass(frozen=True, slots=True)
class Program:
    """The structure of one kernel; hashable, so it is (most of) the cache key."""

    code: tuple[Instruction, ...]
    dtypes: tuple[str, ...]
    in_dtypes: tuple[str, ...]
    arg_dtypes: tuple[str, ...]
    reduce: str | None = None  # name of a reduce primitive, or None
    kept_rank: int = 1  # loop dimensions that index `out`
    reduced_rank: int = 0  # inner loop dimensions folded into the accumulator

    @property
    def out_dtype(self) -> str:
        return self.dtypes[-1]

    @property
    def acc_dtype(self) -> str:
        # float32 sums and products accumulate in float64, for accuracy.
        if self.reduce in ("sum", "prod") and self.out_dtype == "float32":
            return "float64"
        return self.out_dtype


def _scalar_type(dtype: str) -> str:
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"


def _identity(name: str, dtype: str) -> str:
    token = TABLE[name].identity
    if token not in ("LOWEST", "HIGHEST"):
        return token
    if dtype == "bool":
        return "False" if token == "LOWEST" else "True"
    if dtype.startswith("float"):
        return "-math.inf" if token == "LOWEST" else "math.inf"
    info = np.iinfo(dtype)
    return str(info.min if token == "LOWEST" else info.max)


def _substitute(expr: str, names: dict[str, str]) -> str:
    """Replace whole-word variables in `expr` (``x`` but not the x of ``exp``)."""
    return re.sub(r"\b[a-z]\b", lambda m: names.get(m.group(0), m.group(0)), expr)


def _expression(ins: Instruction, dtype: str, index: str) -> str:
    name, *operands = ins
    if name == "in":
        return f"in{operands[0]}[{index}]"
    if name == "arg":
        return f"arg{operands[0]}"
    body = "x" if name == "cast" else TABLE[name].expr
    body = _substitute(body, {var: f"v{pos}" for var, pos in zip("xyz", operands)})
    return f"{_scalar_type(dtype)}({body})"


def render(program: Program, parallel: bool = False, name: str = "kernel") -> str:
    """The source of a module defining `name`, the compiled kernel of `program`.

    The kernel's signature is ``name(out, shape, in0, ..., arg0, ...)``.
    """
    k, r = program.kept_rank, program.reduced_rank
    ins = [f"in{i}" for i in range(len(program.in_dtypes))]
    args = [f"arg{i}" for i in range(len(program.arg_dtypes))]
    lines = [
        "import math",
        "import numba",
        "import numpy as np",
        "",
        "",
        f"@numba.njit(cache=True, error_model='numpy', parallel={parallel})",
        f"def {name}({', '.join(['out', 'shape', *ins, *args])}):",
    ]

    def emit(depth: int, line: str) -> None:
        lines.append("    " * (depth + 1) + line)

    for d in range(k):
        emit(d, f"for i{d} in {'numba.prange' if parallel and d == 0 else 'range'}(shape[{d}]):")
    acc = _scalar_type(program.acc_dtype)
    if program.reduce:
        emit(k, f"acc = {acc}({_identity(program.reduce, program.acc_dtype)})")
        for d in range(k, k + r):
            emit(d, f"for i{d} in range(shape[{d}]):")
    index = ", ".join(f"i{d}" for d in range(k + r))
    for pos, (ins_, dtype) in enumerate(zip(program.code, program.dtypes)):
        emit(k + r, f"v{pos} = {_expression(ins_, dtype, index)}")
    last = f"v{len(program.code) - 1}"
    out_index = ", ".join(f"i{d}" for d in range(k))
    if program.reduce:
        emit(k + r, f"acc = {acc}({_substitute(TABLE[program.reduce].combine, {'v': last})})")
        emit(k, f"out[{out_index}] = acc")
    else:
        emit(k, f"out[{out_index}] = {last}")
    return "\n".join(lines) + "\n"
