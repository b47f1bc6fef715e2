"""Backward passes over single numbers, made again as one Python function.

A backward recipe (`numgrad.plan.recipes`) whose every buffer was one float64 or
bool value computed when made (`numgrad.lazy.AT_ONCE`: a scalar loop's pass) is made
again by calling `lazy.make` per row, which computes each row's expression on Python
scalars: a few microseconds a row, almost all of it bookkeeping. `ScalarPass` writes
those expressions (`Primitive.expr`, the code kernels inline) into one straight-line
function instead, compiled at the pass's first reuse, and makes buffers only for the
gradients delivered.

The values are the same bits: each row's expression runs on the same Python floats,
rounded to float64 (or made bool) as `lazy.make` stores them. Where a row raises (a
division by zero, a math domain error) or an operand is no longer what it was when
recorded (a constant now computed, or pending), `run` gives None and the recipe is
made row by row, which handles those cases as `lazy.make` does.
"""

from __future__ import annotations

import ast
import functools
import math

import numpy as np

from numgrad import lazy
from numgrad.dtypes import python_scalar
from numgrad.lazy import LazyBuffer
from numgrad.ops import CONST, TABLE, Primitive
from numgrad.plan import recorder

_KINDS = {np.dtype(np.float64): "float", np.dtype(np.bool_): "bool"}
_CONST, _LOAD = TABLE["const"], TABLE["load"]


class ScalarPass:
    """A recipe's ``made`` `rows` as Python code, giving the values of the gradients it
    delivers (refs `delivered`); `starts` are the buffers the pass was recorded from.
    Build with `of`, which says whether the recipe qualifies."""

    __slots__ = ("rows", "n_starts", "delivered", "folded", "reads", "dtypes", "code")

    def __init__(self, rows, starts: list[LazyBuffer], delivered: set[int], folded: set[int]):
        self.rows, self.n_starts, self.folded = rows, len(starts), folded
        self.delivered = sorted(r for r in delivered if r >= len(starts))
        read = {r for row in rows for r in row[5] if r < len(starts)}
        #: (start ref, whether it was a constant) per start the code reads
        self.reads = tuple((r, starts[r].realized is None) for r in sorted(read))
        self.dtypes = {r: starts[r].dtype for r in read}
        self.code = None

    @classmethod
    def of(cls, rows, starts, delivered: set[int], made_as: dict) -> ScalarPass | None:
        """The pass for a recipe whose ``made`` `rows` (each made as the operation
        `made_as` gives) are constants, were computed at once, or were folded from
        constants, in float64 or bool; None for any other recipe."""
        for i, (op, arg, _, dtype, *_) in enumerate(rows):
            if op is None:
                if type(arg) is LazyBuffer:  # a fixed buffer: an array, no number
                    return None
                continue
            if dtype not in _KINDS or not (made_as[i] is _LOAD and op.expr or made_as[i]
                                           is _CONST and lazy.foldable(op)):
                return None
        return cls(rows, starts, delivered, {i for i in made_as if made_as[i] is _CONST})

    def run(self, starts: list[LazyBuffer], refs: list[int]) -> list[LazyBuffer] | None:
        """The buffers of `refs` (starting or delivered ones) made from `starts`; None
        where the pass must be made row by row (see the module's docstring), or where
        its folds are noted for a step plan (`numgrad.plan.recorder.Recorder.folds`: its constants
        are then folded again from the tape's)."""
        thread = recorder.current()
        if not lazy.AT_ONCE or thread.tracer is not None or thread.folds is not None:
            return None
        values = []
        for ref, was_const in self.reads:
            buf = starts[ref]
            if buf.realized is not None and not was_const:
                values.append(buf.realized.item())
            elif buf.realized is None and was_const and buf.op.kind == CONST:
                values.append(python_scalar(buf.arg))
            else:
                return None
        if self.code is None:
            self.code = self._compile()
        try:
            made = self.code(values)
        except (ArithmeticError, ValueError, TypeError):
            return None
        n, rows = self.n_starts, self.rows
        return [starts[r] if r < n else _buffer(made[r], rows[r - n], r - n in self.folded)
                for r in refs]

    def _dtype(self, ref: int) -> np.dtype:
        return self.dtypes[ref] if ref < self.n_starts else self.rows[ref - self.n_starts][3]

    def _compile(self):
        """The function of the read values giving the delivered ones, by ref."""
        names = {ref: f"v{ref}" for ref, _ in self.reads}
        scope = {"math": math, "np": np}
        lines = [f"    {', '.join(names.values())}, = values"] if names else []
        for i, (op, arg, _, dtype, _, srcs, _) in enumerate(self.rows):
            ref = self.n_starts + i
            names[ref] = name = f"v{ref}"
            if op is None:  # a constant the rules wrote
                scope[name] = python_scalar(arg)
                continue
            if i in self.folded:  # as lazy.make folds it, from the operands' dtypes
                scope[f"f{ref}"] = functools.partial(
                    _fold, op, dtype, [self._dtype(s) for s in srcs])
                lines.append(f"    {name} = f{ref}({', '.join(names[s] for s in srcs)})")
            else:
                expr = _substitute(op.expr, [names[s] for s in srcs])
                lines.append(f"    {name} = {_KINDS[dtype]}({expr})")
        lines.append(f"    return {{{', '.join(f'{r}: {names[r]}' for r in self.delivered)}}}")
        exec("def scalar_pass(values):\n" + "\n".join(lines), scope)
        return scope["scalar_pass"]


def _buffer(value, row, folded: bool) -> LazyBuffer:
    """The buffer of `row` holding `value`: a constant (of any shape) where the row is
    one or was folded, else a computed one-element buffer."""
    op, _, shape, dtype, device, *_ = row
    if op is None or folded:
        return LazyBuffer.const(value, shape, dtype, device)
    return lazy.computed(value, shape, dtype, device)


def _fold(op: Primitive, dtype: np.dtype, dtypes: list[np.dtype], *values):
    """`op` on constants `values` (of `dtypes`), folded as `lazy.make` folds it."""
    return python_scalar(lazy.fold(op, [t.type(v) for t, v in zip(dtypes, values)], dtype))


class _Rename(ast.NodeTransformer):
    """Renames the names of `mapping` (an expression's operands)."""

    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.Name(self.mapping.get(node.id, node.id), node.ctx)


def _substitute(expr: str, names: list[str]) -> str:
    """`expr` (over ``x``, ``y``, ``z``) with its operands named `names`."""
    tree = _Rename(dict(zip("xyz", names))).visit(ast.parse(expr, mode="eval"))
    return ast.unparse(tree)
