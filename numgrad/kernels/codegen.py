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

from numgrad.ops import BOOL, TABLE

#: SSA instruction: ("in", i) | ("arg", i) | (primitive name, *operand positions);
#: the dtype of each instruction's value is in `Program.dtypes`.
Instruction = tuple


@dataclass(frozen=True, slots=True)
class Program:
    """The structure of one kernel; hashable, so it is (most of) the cache key.

    `code` runs at every point of the loop nest and writes the values at positions
    `stores` to outputs ``out0, out1, ...`` of the loop's shape. With a `reduce`,
    the value at `folded` is folded into an accumulator over the reduced
    (innermost) dimensions, and `epilogue` then computes output ``red`` from
    ``("acc",)``; inputs flagged in `in_epilogue` are read there, at its index.
    Tables are arrays read whole, at computed indices (``("gather", table, *index
    values)``).
    """

    code: tuple[Instruction, ...]
    dtypes: tuple[str, ...]
    stores: tuple[int, ...]
    in_dtypes: tuple[str, ...]
    arg_dtypes: tuple[str, ...]
    reduce: str | None = None  # name of a reduce primitive, or None
    folded: int = -1  # the position of the value the reduction folds
    epilogue: tuple[Instruction, ...] = ()
    epilogue_dtypes: tuple[str, ...] = ()
    in_epilogue: tuple[bool, ...] = ()
    table_dtypes: tuple[str, ...] = ()
    kept_rank: int = 1  # loop dimensions that index `out`
    reduced_rank: int = 0  # inner loop dimensions folded into the accumulator
    #: run the reduced loops outside the kept ones (the data is contiguous along a
    #: kept dimension, as in a column sum), accumulating into an array
    reduce_outer: bool = False

    @property
    def acc_dtype(self) -> str:
        # float32 sums and products accumulate in float64, for accuracy.
        reduced = self.dtypes[self.folded]
        if self.reduce in ("sum", "prod") and reduced == "float32":
            return "float64"
        return reduced


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
    if name != "cast" and (dtype == "float64" or dtype == "bool" and TABLE[name].result == BOOL):
        # Already of that type in Numba: no conversion to type (it doubles compile time).
        return body
    return f"{_scalar_type(dtype)}({body})"


def render(program: Program, parallel: bool = False, name: str = "kernel") -> str:
    """The source of a module defining `name`, the compiled kernel of `program`.

    The kernel's signature is ``name([red,] out0, ..., shape, threads, in0, ...,
    tab0, ..., arg0, ...)``: `shape` is the loop nest (kept dimensions, then reduced
    ones) and
    every input is a view spanning it (stride 0 where it does not vary). A
    `parallel` kernel spreads its outer loop over `threads` (an argument, because a
    kernel that asks Numba for it cannot be cached); a reduction with few outputs
    is cut into chunks reduced in parallel.
    """
    ins = [f"in{i}" for i in range(len(program.in_dtypes))]
    ins += [f"tab{i}" for i in range(len(program.table_dtypes))]
    args = [f"arg{i}" for i in range(len(program.arg_dtypes))]
    lines = [
        "import math",
        "import numba",
        "import numpy as np",
        "",
        "",
        f"@numba.njit(cache=True, error_model='numpy', parallel={parallel})",
        f"def {name}({', '.join([*_outputs(program), 'shape', 'threads', *ins, *args])}):",
    ]
    emit = _Emitter(program, lines)
    if not program.reduce:
        emit.elementwise(parallel)
    elif program.reduce_outer:
        emit.outer_reduction(parallel)
    elif parallel:
        emit.parallel_reduction()
    else:
        emit.serial_reduction()
    return "\n".join(lines) + "\n"


def _outputs(program: Program) -> list[str]:
    return (["red"] if program.reduce else []) + [f"out{n}" for n in range(len(program.stores))]


class _Emitter:
    """Writes the loop nests of one kernel into `lines`."""

    def __init__(self, program: Program, lines: list[str]):
        self.p, self.lines = program, lines
        k, r = program.kept_rank, program.reduced_rank
        self.k, self.r = k, r
        self.full_index = ", ".join(f"i{d}" for d in range(k + r))
        self.kept_index = ", ".join(f"i{d}" for d in range(k))
        if program.reduce:
            self.acc = _scalar_type(program.acc_dtype)
            self.identity = f"{self.acc}({_identity(program.reduce, program.acc_dtype)})"
            self.combine = TABLE[program.reduce].combine

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * (depth + 1) + text)

    def code(self, depth: int, code, dtypes, index: str, prefix: str) -> str:
        for pos, (ins, dtype) in enumerate(zip(code, dtypes)):
            self.line(depth, f"{prefix}{pos} = {_expression(ins, dtype, index, prefix)}")
        return f"{prefix}{len(code) - 1}"

    def body(self, depth: int) -> None:
        """The code at one point of the loop nest, storing its full-shape outputs."""
        self.code(depth, self.p.code, self.p.dtypes, self.full_index, "v")
        for n, pos in enumerate(self.p.stores):
            self.line(depth, f"out{n}[{self.full_index}] = v{pos}")

    def elementwise(self, parallel: bool) -> None:
        for d in range(self.k):
            loop = "numba.prange" if parallel and d == 0 else "range"
            self.line(d, f"for i{d} in {loop}(shape[{d}]):")
        self.body(self.k)

    def fold(self, depth: int, first: str) -> None:
        """Reduced loops (the first over `first`) folding the code into ``acc``."""
        self.line(depth, f"acc = {self.identity}")
        for d in range(self.k, self.k + self.r):
            loop = first if d == self.k else f"range(shape[{d}])"
            self.line(depth + d - self.k, f"for i{d} in {loop}:")
        self.body(depth + self.r)
        self.fold_in(depth + self.r, f"v{self.p.folded}")

    def fold_in(self, depth: int, value: str) -> None:
        self.line(depth, f"acc = {self.acc}({_substitute(self.combine, {'v': value})})")

    def finish(self, depth: int) -> None:
        # The epilogue reads its inputs at the output's index: they do not vary
        # along the reduced dimensions, where their stride is 0.
        index = ", ".join([f"i{d}" for d in range(self.k)] + ["0"] * self.r)
        value = self.code(depth, self.p.epilogue, self.p.epilogue_dtypes, index, "e")
        self.line(depth, f"red[{self.kept_index}] = {value}")

    def serial_reduction(self) -> None:
        for d in range(self.k):
            self.line(d, f"for i{d} in range(shape[{d}]):")
        self.fold(self.k, f"range(shape[{self.k}])")
        self.finish(self.k)

    def outer_reduction(self, parallel: bool) -> None:
        # Accumulators for a block of outputs live in an array; the reduced loops
        # run outside, so the innermost loop walks the data contiguously. In
        # parallel, threads take chunks of the first kept dimension.
        k, kept_shape = self.k, ", ".join(f"shape[{d}]" for d in range(self.k))
        self.line(0, f"accs = np.full(({kept_shape},), {self.identity}, {self.acc})")
        self.line(0, f"chunks = max(1, min(shape[0], {'threads' if parallel else '1'}))")
        self.line(0, f"for c in {'numba.prange' if parallel else 'range'}(chunks):")
        for d in range(k, k + self.r):
            self.line(1 + d - k, f"for i{d} in range(shape[{d}]):")
        depth = 1 + self.r
        self.line(depth, "for i0 in range(c * shape[0] // chunks, (c + 1) * shape[0] // chunks):")
        for d in range(1, k):
            self.line(depth + d, f"for i{d} in range(shape[{d}]):")
        self.line(depth + k, f"acc = accs[{self.kept_index}]")
        self.body(depth + k)
        self.fold_in(depth + k, f"v{self.p.folded}")
        self.line(depth + k, f"accs[{self.kept_index}] = acc")
        for d in range(k):
            loop = "numba.prange" if parallel and d == 0 else "range"
            self.line(d, f"for i{d} in {loop}(shape[{d}]):")
        self.line(k, f"acc = accs[{self.kept_index}]")
        self.finish(k)

    def parallel_reduction(self) -> None:
        # Tasks are (first kept index, chunk of the first reduced loop): many rows
        # give one chunk per row, one row (a full reduction) gives many chunks.
        # Partial results are combined in order, then the epilogue runs.
        k = self.k
        rest = "".join(f", shape[{d}]" for d in range(1, k))
        inner = "".join(f", i{d}" for d in range(1, k))
        self.line(0, f"chunks = max(1, min(shape[{k}], 8 * threads // shape[0]))")
        self.line(0, f"partial = np.empty((shape[0] * chunks{rest}), {self.acc})")
        self.line(0, "for task in numba.prange(shape[0] * chunks):")
        self.line(1, "i0, c = task // chunks, task % chunks")
        for d in range(1, k):
            self.line(d, f"for i{d} in range(shape[{d}]):")
        self.fold(k, f"range(c * shape[{k}] // chunks, (c + 1) * shape[{k}] // chunks)")
        self.line(k, f"partial[task{inner}] = acc")
        self.line(0, "for i0 in numba.prange(shape[0]):")
        for d in range(1, k):
            self.line(d, f"for i{d} in range(shape[{d}]):")
        self.line(k, f"acc = {self.identity}")
        self.line(k, "for c in range(chunks):")
        self.fold_in(k + 1, f"partial[i0 * chunks + c{inner}]")
        self.finish(k)
