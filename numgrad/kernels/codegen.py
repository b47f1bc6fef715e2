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
    """The structure of one kernel; hashable, so it is (most of) the cache key.

    `code` runs at every point of the loop nest. With a `reduce`, its last value is
    folded into an accumulator over the reduced (innermost) dimensions, and
    `epilogue` then computes the output from ``("acc",)``; inputs flagged in
    `in_epilogue` are read there, at the output's index. Tables are arrays read
    whole, at computed indices (``("gather", table, *index values)``).
    """

    code: tuple[Instruction, ...]
    dtypes: tuple[str, ...]
    in_dtypes: tuple[str, ...]
    arg_dtypes: tuple[str, ...]
    reduce: str | None = None  # name of a reduce primitive, or None
    epilogue: tuple[Instruction, ...] = ()
    epilogue_dtypes: tuple[str, ...] = ()
    in_epilogue: tuple[bool, ...] = ()
    table_dtypes: tuple[str, ...] = ()
    table_ranks: tuple[int, ...] = ()
    kept_rank: int = 1  # loop dimensions that index `out`
    reduced_rank: int = 0  # inner loop dimensions folded into the accumulator

    @property
    def acc_dtype(self) -> str:
        # float32 sums and products accumulate in float64, for accuracy.
        reduced = self.dtypes[-1]
        if self.reduce in ("sum", "prod") and reduced == "float32":
            return "float64"
        return reduced


#: How a kernel's loops run: one thread; the outer kept loop across threads; or
#: (a full reduction) the first reduced loop cut into chunks reduced in parallel.
SERIAL, PARALLEL, SPLIT = "serial", "parallel", "split"


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


def _expression(ins: Instruction, dtype: str, index: str, prefix: str) -> str:
    name, *operands = ins
    if name == "in":
        return f"in{operands[0]}[{index}]"
    if name == "arg":
        return f"arg{operands[0]}"
    if name == "acc":
        return f"{_scalar_type(dtype)}(acc)"
    if name == "gather":
        table, *indices = operands
        return f"tab{table}[{', '.join(f'{prefix}{i}' for i in indices)}]"
    body = "x" if name == "cast" else TABLE[name].expr
    body = _substitute(body, {var: f"{prefix}{pos}" for var, pos in zip("xyz", operands)})
    return f"{_scalar_type(dtype)}({body})"


def render(program: Program, mode: str = SERIAL, name: str = "kernel") -> str:
    """The source of a module defining `name`, the compiled kernel of `program`.

    The kernel's signature is ``name(out, shape, in0, ..., tab0, ..., arg0, ...)``, where
    `shape` is the loop nest (kept dimensions, then reduced ones) and every input
    is a view spanning it (stride 0 where it does not vary). `mode` is one of
    SERIAL, PARALLEL or SPLIT.
    """
    k, r = program.kept_rank, program.reduced_rank
    ins = [f"in{i}" for i in range(len(program.in_dtypes))]
    ins += [f"tab{i}" for i in range(len(program.table_dtypes))]
    args = [f"arg{i}" for i in range(len(program.arg_dtypes))]
    lines = [
        "import math",
        "import numba",
        "import numpy as np",
        "",
        "",
        f"@numba.njit(cache=True, error_model='numpy', parallel={mode != SERIAL})",
        f"def {name}({', '.join(['out', 'shape', *ins, *args])}):",
    ]

    def emit(depth: int, line: str) -> None:
        lines.append("    " * (depth + 1) + line)

    def emit_code(depth: int, code, dtypes, index: str, prefix: str) -> str:
        for pos, (ins_, dtype) in enumerate(zip(code, dtypes)):
            emit(depth, f"{prefix}{pos} = {_expression(ins_, dtype, index, prefix)}")
        return f"{prefix}{len(code) - 1}"

    full_index = ", ".join(f"i{d}" for d in range(k + r))
    out_index = ", ".join(f"i{d}" for d in range(k))
    if not program.reduce:
        for d in range(k):
            loop = "numba.prange" if mode == PARALLEL and d == 0 else "range"
            emit(d, f"for i{d} in {loop}(shape[{d}]):")
        emit(k, f"out[{out_index}] = {emit_code(k, program.code, program.dtypes, full_index, 'v')}")
        return "\n".join(lines) + "\n"

    acc = _scalar_type(program.acc_dtype)
    identity = f"{acc}({_identity(program.reduce, program.acc_dtype)})"
    combine = TABLE[program.reduce].combine

    def emit_reduction(depth: int, first: str) -> None:
        """The reduced loops (the first over `first`), folding the code into `acc`."""
        emit(depth, f"acc = {identity}")
        for d in range(k, k + r):
            emit(depth + d - k, f"for i{d} in {first if d == k else f'range(shape[{d}])'}:")
        value = emit_code(depth + r, program.code, program.dtypes, full_index, "v")
        emit(depth + r, f"acc = {acc}({_substitute(combine, {'v': value})})")

    if mode == SPLIT:
        # Kept dimensions are all of extent 1: reduce chunks of the first reduced
        # loop in parallel, then their partial results in order.
        for d in range(k):
            emit(0, f"i{d} = 0")
        emit(0, f"chunks = min(shape[{k}], 8 * numba.get_num_threads())")
        emit(0, f"partial = np.empty(chunks, {acc})")
        emit(0, "for c in numba.prange(chunks):")
        emit_reduction(1, f"range(c * shape[{k}] // chunks, (c + 1) * shape[{k}] // chunks)")
        emit(1, "partial[c] = acc")
        emit(0, f"acc = {identity}")
        emit(0, "for c in range(chunks):")
        emit(1, f"acc = {acc}({_substitute(combine, {'v': 'partial[c]'})})")
        depth = 0
    else:
        for d in range(k):
            loop = "numba.prange" if mode == PARALLEL and d == 0 else "range"
            emit(d, f"for i{d} in {loop}(shape[{d}]):")
        emit_reduction(k, f"range(shape[{k}])")
        depth = k
    # The epilogue reads its inputs at the output's index (they do not vary along
    # the reduced dimensions, where their stride is 0).
    epilogue_index = ", ".join([f"i{d}" for d in range(k)] + ["0"] * r)
    value = emit_code(depth, program.epilogue, program.epilogue_dtypes, epilogue_index, "e")
    emit(depth, f"out[{out_index}] = {value}")
    return "\n".join(lines) + "\n"
