"""The NumPy interpreter target: CPU buffers, and every `Program` run as NumPy array code."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable

import numpy as np

from numgrad.kernels import INTERPRETED, host
from numgrad.kernels.codegen import Program, Skeleton, _substitute, scalar_type
from numgrad.kernels.host import *  # noqa: F403 - buffers and movements
from numgrad.ops import TABLE

#: this target in kernel cache keys
key = "numpy"

#: The one loop skeleton: whole arrays, whatever the launch's shape.
ARRAYS = "numpy"

#: NumPy forms (over operands ``x``, ``y``, ``z``) of the primitives whose NumPy
#: reference (`Primitive.ref`) differs from their scalar expression in the Numba code.
OVERRIDES = {
    # np.sign has no loop for bools.
    "sign": "np.where(x > 0, 1, np.where(x < 0, -1, x * 0 + 0))",
    # Two branches, so that neither exp overflows (the table's lambda has one).
    "sigmoid": "np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))",
    # On bools 1 / False is inf, cast to True (np.reciprocal gives False).
    "reciprocal": "np.divide(1, x)",
    # Ties keep x, so maximum(-0.0, 0.0) is -0.0 (np.maximum gives 0.0); NaN propagates.
    "maximum": "np.where((x >= y) | (x != x), x, y)",
    "minimum": "np.where((x <= y) | (x != x), x, y)",
    # The same tie rule; a NaN operand is ignored (np.fmax's ties of -0.0 and 0.0 give
    # either, by array length).
    "fmax": "np.where((x >= y) | (y != y), x, y)",
    "fmin": "np.where((x <= y) | (y != y), x, y)",
    # NumPy's cbrt refined by the compiled row's Newton step (`ops.cbrt_from`): np.cbrt
    # alone misses the root by up to 3 ulp on some hosts (AVX2), and perfect cubes.
    "cbrt": "np.where((x - x == 0) & (x != 0), np.cbrt(x) - (np.cbrt(x) - x / "
            "(np.cbrt(x) * np.cbrt(x))) / 3, np.cbrt(x))",
}

_kernels: dict[tuple[Program, str], Callable] = {}
_kernels_lock = threading.Lock()


def variant(program: Program, shape: tuple[int, ...]) -> str:
    """`ARRAYS`: NumPy runs every launch the same way."""
    return ARRAYS


def kernel(program: Program, variant: str) -> Callable:
    """The function `render` defines, executed into a fresh namespace; kept in memory."""
    kernel = _kernels.get((program, variant))
    if kernel is None:
        with _kernels_lock:
            kernel = _kernels.get((program, variant))
            if kernel is None:
                # (rows whose reference is no NumPy's; `_whole`)
                namespace: dict = {"TABLE": TABLE, "_whole": _whole, "_rolled": _rolled}
                exec(compile(render(program, variant), "<numgrad interpreted kernel>",
                             "exec"), namespace)
                kernel = _kernels[program, variant] = namespace["kernel"]
    return kernel


#: The reductions' NumPy functions called as ufunc methods: what `np.sum` and the others
#: call, without their Python wrapper (a few microseconds of a small launch's time).
_REDUCE = {"sum": "np.add.reduce", "prod": "np.multiply.reduce",
           "max": "np.maximum.reduce", "min": "np.minimum.reduce"}


def _whole(value, shape: tuple[int, ...]):
    """`value` broadcast to `shape`, where it is not that shape already."""
    return value if getattr(value, "shape", None) == shape else np.broadcast_to(value, shape)


def _rolled(array, rolled: tuple[tuple[int, int], ...]):
    """`array` as NumPy's ``roll`` by signed shifts ((dimension, shift), ...) gives it
    (`host.roll`'s block copies: half the time of ``np.roll``)."""
    return host.roll(array, tuple((d, s % array.shape[d]) for d, s in rolled
                                  if s % array.shape[d]))


def launch(kernel: Callable, variant: str, outs, shape, inputs, args) -> str:
    """Run `kernel`; like the Numba kernels, float errors and integer division by zero
    neither warn nor raise. Returns `INTERPRETED`."""
    with np.errstate(all="ignore"):
        kernel(*outs, shape, 1, *inputs, *args)
    return INTERPRETED


def render(program: Program, variant: str = ARRAYS, name: str = "kernel") -> str:
    """The source of a module defining `name`, which computes `program` with NumPy.

    It computes what the Numba kernel computes (the same dtypes, NaN and infinity
    handling, integer wrap-around), compiling nothing and writing no file. Its signature
    is the Numba kernel's, ``name([red,] out0, ..., shape, threads, in0, ..., tab0, ...,
    arg0, ...)``, each input a view spanning the loop nest `shape` (kept dimensions,
    then reduced ones; an epilogue input has length 1 on the reduced ones). Each
    instruction is one NumPy expression over the whole nest, cast to its dtype where
    NumPy's result has another. A reduction folds the reduced (last) axes in the
    accumulator's dtype; the epilogue then runs on the kept shape.
    """
    outs, ins, args = Skeleton.parameters(program)
    lines = ["import math", "import numpy as np", "", "",
             f"def {name}({', '.join([*outs, 'shape', 'threads', *ins, *args])}):"]
    _Arrays(program, lines).write()
    return "\n".join(lines) + "\n"


@functools.cache
def _numpy_form(name: str, operand_dtypes: tuple[str, ...]) -> tuple[str, np.dtype]:
    """Primitive `name` as a NumPy expression over ``x``, ``y``, ``z`` of `operand_dtypes`,
    and the dtype of its result in NumPy."""
    variables = "xyz"[:len(operand_dtypes)]
    ref = TABLE[name].ref
    # (a row's reference that is not NumPy's function of its name, such as a lambda of
    # a row added at run time, is called from the table)
    call = f"np.{ref.__name__}" if getattr(np, ref.__name__, None) is ref else \
        f"TABLE[{name!r}].ref"
    expr = OVERRIDES.get(name) or f"{call}({', '.join(variables)})"
    try:
        return expr, _probe(expr, variables, operand_dtypes)
    except TypeError:
        # NumPy refuses some arithmetic on bools (subtract); the Numba code computes
        # on them as on integers.
        expr = _substitute(expr, {v: f"{v}.astype(np.int64)" for v in variables})
        return expr, _probe(expr, variables, operand_dtypes)


def _probe(expr: str, variables: str, dtypes: tuple[str, ...]) -> np.dtype:
    """The dtype of `expr` evaluated on empty arrays of `dtypes`."""
    return eval(expr, {"np": np, "TABLE": TABLE},
                {v: np.empty(0, d) for v, d in zip(variables, dtypes)}).dtype


class _Arrays(Skeleton):
    """Whole-array statements: ``v3 = np.exp(v2)`` over the loop nest, no loops.

    Body inputs are read whole (``in0[...]``); epilogue inputs at index 0 of the
    reduced dimensions (``in1[..., 0]``), as in the Numba loops. Inputs of length 1
    along dimensions they do not vary in (`Program.in_fixed`) are broadcast.
    """

    def __init__(self, program: Program, lines: list[str]):
        super().__init__(program, lines)
        self.loop_index, self.full_index = ["..."], "..."
        self.dtype: dict[str, str] = {}  # each value's dtype, by name

    def write(self) -> None:
        """The body, storing its outputs; then the reduction and its epilogue."""
        self.body(0, shifted=True)  # (no shifted indices: a rolled input is rolled whole)
        if self.p.reduce:
            # (The folded value may be a scalar, or broadcast along some dimensions.)
            folded = f"_whole(v{self.p.folded}, shape)"
            axes = tuple(range(self.k, self.k + self.r))
            how = f"dtype={self.acc}" if self.p.reduce in ("sum", "prod") \
                else f"initial={self.identity}"  # max and min: the identity of empty axes
            reduce = _REDUCE.get(self.p.reduce) or f"np.{TABLE[self.p.reduce].ref.__name__}"
            self.line(0, f"acc = {reduce}({folded}, axis={axes}, {how})")
            index = ["...", *["0"] * self.r]
            value = self.code(0, self.p.epilogue, self.p.epilogue_dtypes, index, "e")
            self.line(0, f"red[...] = {value}")

    def code(self, depth: int, code, dtypes, index: list[str], prefix: str) -> str:
        for pos, (ins, dtype) in enumerate(zip(code, dtypes)):
            value, given = self.expression(ins, index, prefix)
            if given != dtype:
                value = f"{value}.astype({scalar_type(dtype)})"
            self.line(depth, f"{prefix}{pos} = {value}")
            self.dtype[f"{prefix}{pos}"] = dtype
        return f"{prefix}{len(code) - 1}"

    def expression(self, ins, index: list[str], prefix: str) -> tuple[str, str]:
        """The NumPy expression of `ins` and its dtype."""
        name, *operands = ins
        if name == "arg":
            return f"arg{operands[0]}", self.p.arg_dtypes[operands[0]]
        if name == "in":
            read = f"in{operands[0]}[{', '.join(index)}]"
            rolled = self.p.in_rolled[operands[0]] if self.p.in_rolled else ()
            if rolled:  # (body inputs only: read whole)
                read = f"_rolled({read}, {tuple(rolled)})"
            return read, self.p.in_dtypes[operands[0]]
        if name == "acc":
            return "acc", self.p.acc_dtype
        if name == "gather":
            table, *indices = operands
            indices = ", ".join(f"{prefix}{i}" for i in indices)
            return f"tab{table}[{indices}]", self.p.table_dtypes[table]
        names = [f"{prefix}{i}" for i in operands]
        if name == "cast":
            return names[0], self.dtype[names[0]]
        expr, given = _numpy_form(name, tuple(self.dtype[n] for n in names))
        return _substitute(expr, dict(zip("xyz", names))), given.name
