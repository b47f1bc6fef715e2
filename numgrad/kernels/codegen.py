"""What every target renders the same way: the `Program` and its scalar code.

A kernel is a `Program`: straight-line SSA over scalars that reads array inputs
(``in0``, ``in1``, ...) and scalar arguments (``arg0``, ...) at one index, and
either stores the last value (elementwise) or folds it into an accumulator
(reduction). Its loops run over ``shape``, a runtime tuple: the kept dimensions
first, then the reduced ones. Sizes and constant values are never in the source,
so programs that differ only in them share one compiled kernel.

Each target (`numgrad.kernels.cpu`, `numgrad.kernels.cuda`) wraps this scalar
code in its own loop skeleton, a subclass of `Skeleton`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields

import numpy as np

from numgrad.ops import BOOL, TABLE

#: SSA instruction: ("in", i) | ("arg", i) | (primitive name, *operand positions);
#: the dtype of each instruction's value is in `Program.dtypes`.
Instruction = tuple


#: The deepest loop nest a kernel is compiled for: Python compiles at most 20 nested
#: blocks, and a skeleton adds up to three (lanes, chunks). A launch over more
#: dimensions than its layout could merge (NumPy allows 64) runs on the interpreter.
MAX_LOOPS = 16


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
    #: per input, the loop dimensions it does not vary along (a broadcast): it is
    #: passed with length 1 there and read at index 0, so that an input broadcast
    #: along rows (a bias) is still a C-contiguous array, whose loops LLVM vectorizes
    in_fixed: tuple[tuple[int, ...], ...] = ()
    #: per input, ((loop dimension, shift), ...): it is read rolled there, as NumPy's
    #: ``roll`` by `shift` would give it (the element at ``(i - shift) mod length``),
    #: a roll fused into its reader (``|shift|`` below the length)
    in_rolled: tuple[tuple[tuple[int, int], ...], ...] = ()
    #: the hash, computed once: programs key the kernel caches at every launch
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash(tuple(
            getattr(self, f.name) for f in fields(self) if f.compare)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self):
        # (pickled for the compile worker by its fields: the hash of its strings is
        # this process's own, found again where it is unpickled)
        return Program, tuple(getattr(self, f.name) for f in fields(self) if f.init)

    def fixed_dims(self, i: int) -> tuple[int, ...]:
        """The loop dimensions input `i` does not vary along (`in_fixed`)."""
        return self.in_fixed[i] if self.in_fixed else ()

    @property
    def acc_dtype(self) -> str:
        # float32 sums and products accumulate in float64, for accuracy.
        reduced = self.dtypes[self.folded]
        if self.reduce in ("sum", "prod") and reduced == "float32":
            return "float64"
        return reduced


def scalar_type(dtype: str) -> str:
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


def read_index(program: Program, i: int, index: list[str]) -> str:
    """The index at which input `i` is read, given the loop's (`index`, per dimension):
    0 along the dimensions it does not vary in (`Program.in_fixed`), shifted with
    wrap-around along those it is read rolled along (`Program.in_rolled`)."""
    fixed = program.fixed_dims(i)
    rolled = dict(program.in_rolled[i]) if program.in_rolled else {}
    return ", ".join("0" if d in fixed else _shifted_name(d, rolled[d]) if d in rolled
                     else name for d, name in enumerate(index))


def _shifted_name(d: int, shift: int) -> str:
    """The variable holding loop dimension `d`'s index less `shift`, wrapped
    (`_shifted_expr`)."""
    return f"r{d}_{'m' if shift < 0 else 'p'}{abs(shift)}"


def _shifted_expr(name: str, d: int, shift: int) -> str:
    """Loop index `name` of dimension `d` less `shift`, wrapped into ``[0, shape[d])``
    (``|shift|`` is below the length: one comparison, as arithmetic, not a branch)."""
    if shift > 0:
        return f"{name} - {shift} + shape[{d}] * ({name} < {shift})"
    return f"{name} + {-shift} - shape[{d}] * ({name} + {-shift} >= shape[{d}])"


#: Per integer type, the signed type a float converts to first, as NumPy's scalar casts
#: on x86 do (the compiler's code for C's cast): int32 for 8 and 16 bits, int64 for
#: uint32; then it wraps. A float below 2**(bits - 1) in magnitude converts to that type;
#: any other (inf, nan, out of range) to its minimum, as the x86 instruction gives: LLVM
#: leaves that conversion undefined, so a kernel could give any value. uint64 takes the
#: floats from 2**63 up to 2**64 as they are, and gives 0 above (`_to_uint64`).
_THROUGH = {"int8": "int32", "int16": "int32", "int32": "int32", "int64": "int64",
            "uint8": "int32", "uint16": "int32", "uint32": "int64", "uint64": "int64"}
_TRUE_DIVISION = re.compile(r"(?<!/)/(?!/)")


#: Rows that round a float to an integer: of an integer, the integer itself (CUDA's
#: ``round(x, 0)`` would go through float64, inexact above 2**53)
_ROUNDINGS = frozenset({"floor", "ceil", "rint", "trunc"})


def _integer_power(literal: Callable[[str], str]) -> str:
    """``x ** y`` of integers, wrapping as NumPy's: Numba computes an exponent over 2**16
    in float64 (its cutoff), so a larger one is taken in 16-bit digits,
    ``x**d0 * (x**2**16)**d1 * (x**2**32)**d2 * (x**2**48)**d3``, each power exact;
    `literal` writes the integer literals (uint64's for unsigned types: Numba computes
    uint64 with int64 in float64)."""
    digit, power = literal("65535"), literal("65536")
    raised = [f"x ** {power}"]
    for _ in range(2):
        raised.append(f"({raised[-1]}) ** {power}")
    digits = [f"((y >> {literal(str(16 * k))}) & {digit})" for k in (1, 2)]
    factors = [f"({p}) ** {d}" for p, d in zip(raised, digits + [f"(y >> {literal('48')})"])]
    return f"x ** y if y <= {power} else x ** (y & {digit}) * " + " * ".join(factors)


_INTEGER_POWER = {"i": _integer_power(str), "u": _integer_power(lambda n: f"np.uint64({n})")}


def _body(name: str, dtype: str, exprs: dict[str, str]) -> str:
    """The scalar expression of row `name` over ``x``, ``y``, ``z`` of `dtype` (its first
    operand's): the target's, the table's, or the row's on unsigned integers."""
    if dtype[0] in "iu" and name in _ROUNDINGS:
        return "x"
    if dtype[0] in "iu" and name == "power":
        return _INTEGER_POWER[dtype[0]]
    row = TABLE[name]
    if row.unsigned and dtype.startswith("uint"):
        return row.unsigned
    return exprs.get(name, row.expr)


def _expression(program: Program, ins: Instruction, dtypes: tuple[str, ...], pos: int,
                index: list[str], prefix: str, exprs: dict[str, str]) -> str:
    """The scalar code of instruction `ins`, the value at `pos` of the code whose
    values have `dtypes`."""
    name, *operands = ins
    dtype = dtypes[pos]
    if name == "in":
        return f"in{operands[0]}[{read_index(program, operands[0], index)}]"
    if name == "arg":
        return f"arg{operands[0]}"
    if name == "acc":
        return f"{scalar_type(dtype)}(acc)"
    if name == "gather":
        table, *indices = operands
        return f"tab{table}[{', '.join(f'{prefix}{i}' for i in indices)}]"
    body = "x" if name == "cast" else _body(name, dtypes[operands[0]], exprs)
    body = _substitute(body, {var: f"{prefix}{pos}" for var, pos in zip("xyz", operands)})
    if name != "cast" and (dtype == "float64" or dtype == "bool" and TABLE[name].result == BOOL):
        # Already of that type in Numba: no conversion to type (it doubles compile time).
        return body
    through = _THROUGH.get(dtype)
    if through and (_TRUE_DIVISION.search(body) or any(
            dtypes[p].startswith("float") for p in operands)):  # a float made an integer
        kind, info = scalar_type(through), np.iinfo(through)
        whole = f"{kind}({body}) if abs({body}) < {2.0 ** (info.bits - 1)!r} else " \
                f"{kind}({info.min})"
        if dtype == "uint64":
            return _to_uint64(body, whole)
        return whole if dtype == through else f"{scalar_type(dtype)}({whole})"
    return f"{scalar_type(dtype)}({body})"


def _to_uint64(body: str, signed: str) -> str:
    """Float `body` as uint64, as NumPy's casts give on x86 (the compiler's code for C's
    cast): below 2**63 it goes through int64 (`signed`, that conversion) and wraps, so
    that nan, -inf and -2**63 or less give 2**63; from 2**63 up it converts as it is
    below 2**64, else to 0."""
    return (f"np.uint64({signed}) if not {body} >= {2.0 ** 63!r} else "
            f"(np.uint64({body}) if {body} < {2.0 ** 64!r} else np.uint64(0))")


class Skeleton:
    """Writes one kernel's source into `lines`: the program's scalar code inside the
    loops a target's subclass writes.

    `exprs` overrides the table's scalar expression of some primitives on a target
    whose compiler lacks a function (CUDA has no ``np.floor``). Loop indices are
    ``i0, i1, ...`` (kept dimensions, then reduced ones); values are ``v0, v1, ...``
    in the body and ``e0, ...`` in the epilogue.
    """

    exprs: dict[str, str] = {}

    def __init__(self, program: Program, lines: list[str]):
        self.p, self.lines = program, lines
        k, r = program.kept_rank, program.reduced_rank
        self.k, self.r = k, r
        self.loop_index = [f"i{d}" for d in range(k + r)]
        self.full_index = ", ".join(self.loop_index)
        self.kept_index = ", ".join(f"i{d}" for d in range(k))
        if program.reduce:
            self.acc = scalar_type(program.acc_dtype)
            self.identity = f"{self.acc}({_identity(program.reduce, program.acc_dtype)})"
            self.combine = TABLE[program.reduce].combine
        #: the positions of the code written before the loops (`hoist`)
        self.hoisted: frozenset[int] = frozenset()

    @staticmethod
    def parameters(program: Program) -> tuple[list[str], list[str], list[str]]:
        """The kernel's outputs, its array inputs (and tables) and its scalar arguments."""
        outs = (["red"] if program.reduce else []) + [f"out{n}" for n in range(len(program.stores))]
        ins = [f"in{i}" for i in range(len(program.in_dtypes))]
        ins += [f"tab{i}" for i in range(len(program.table_dtypes))]
        return outs, ins, [f"arg{i}" for i in range(len(program.arg_dtypes))]

    def line(self, depth: int, text: str) -> None:
        self.lines.append("    " * (depth + 1) + text)

    def code(self, depth: int, code, dtypes, index: list[str], prefix: str) -> str:
        """Write `code` (whose inputs are read at the loop index `index`, per
        dimension; the program's, but what `hoist` wrote); returns the name of its last
        value."""
        written = self.hoisted if code is self.p.code else ()
        for pos, ins in enumerate(code):
            if pos not in written:
                value = _expression(self.p, ins, dtypes, pos, index, prefix, self.exprs)
                self.line(depth, f"{prefix}{pos} = {value}")
        return f"{prefix}{len(code) - 1}"

    def hoist(self) -> None:
        """Write the code that does not vary along the loops (arguments, inputs read
        at one element, and what is computed from them alone) once, before them.

        A compiler hoists it too, then copies the loop for each branch it holds
        (LLVM's loop unswitching): a chain of such branchy math (``tanh(w * tanh(w *
        c))``, a recurrence from a constant state) made 2 ** branches loops and
        compiled for minutes."""
        dims = set(range(self.k + self.r))
        hoisted: set[int] = set()
        for pos, (name, *operands) in enumerate(self.p.code):
            if name == "arg" or name == "in" and dims <= set(self.p.fixed_dims(operands[0])) \
                    or name in TABLE and operands and hoisted.issuperset(operands):
                hoisted.add(pos)
                value = _expression(self.p, self.p.code[pos], self.p.dtypes, pos,
                                    ["0"] * len(dims), "v", self.exprs)
                self.line(0, f"v{pos} = {value}")
        self.hoisted = frozenset(hoisted)

    def shifted(self, depth: int, dims) -> None:
        """The shifted indices of loop dimensions `dims` that rolled inputs read at
        (`read_index`), each computed once."""
        for d, shift in sorted({r for rolled in self.p.in_rolled for r in rolled}):
            if d in dims:
                index = _shifted_expr(self.loop_index[d], d, shift)
                self.line(depth, f"{_shifted_name(d, shift)} = {index}")

    def body(self, depth: int, shifted: bool = False) -> None:
        """The code at one point of the loop nest, storing its full-shape outputs (and
        computing the shifted indices first, unless the loops did: `shifted`)."""
        if not shifted:
            self.shifted(depth, range(len(self.loop_index)))
        self.code(depth, self.p.code, self.p.dtypes, self.loop_index, "v")
        for n, pos in enumerate(self.p.stores):
            self.line(depth, f"out{n}[{self.full_index}] = v{pos}")

    def fold_in(self, depth: int, value: str) -> None:
        """``acc = combine(acc, value)``, in the accumulator's type."""
        self.line(depth, f"acc = {self.acc}({_substitute(self.combine, {'v': value})})")

    def finish(self, depth: int) -> None:
        """The epilogue, from ``acc``, storing ``red`` at the kept index."""
        # The epilogue reads its inputs at the output's index: they do not vary
        # along the reduced dimensions, where their stride is 0.
        index = [f"i{d}" for d in range(self.k)] + ["0"] * self.r
        value = self.code(depth, self.p.epilogue, self.p.epilogue_dtypes, index, "e")
        self.line(depth, f"red[{self.kept_index}] = {value}")
