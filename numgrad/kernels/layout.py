"""Loop order: a kernel's loop nest arranged and collapsed for its operands' layouts."""

from __future__ import annotations

import functools
from dataclasses import replace

from numgrad.kernels.codegen import Program


def collapse(shape: tuple[int, ...], strides: list[tuple[int, ...]], kept: int):
    """Merge loop dimensions that every operand walks as one.

    `shape` is the loop nest (the first `kept` dimensions index the output, the
    rest are reduced); `strides` gives each operand's strides over it (an operand
    that does not span a dimension has stride 0 there). Dimensions of size 1 are
    dropped, and dimension ``d`` merges into ``d + 1`` (within the kept or the
    reduced part) when, for every operand, ``stride[d] == stride[d+1] * shape[d+1]``.
    Each part keeps at least one dimension, so the result has ``kept >= 1``.

    Returns ``(shape, strides, kept)`` of the collapsed nest.
    """
    parts = []
    for lo, hi in ((0, kept), (kept, len(shape))):
        dims = [d for d in range(lo, hi) if shape[d] != 1]
        out_shape: list[int] = []
        out_strides: list[list[int]] = [[] for _ in strides]
        for d in dims:
            if out_shape and all(
                st[-1] == s[d] * shape[d] for st, s in zip(out_strides, strides)
            ):
                out_shape[-1] *= shape[d]
                for st, s in zip(out_strides, strides):
                    st[-1] = s[d]
            else:
                out_shape.append(shape[d])
                for st, s in zip(out_strides, strides):
                    st.append(s[d])
        parts.append((out_shape, out_strides))
    (k_shape, k_strides), (r_shape, r_strides) = parts
    if not k_shape:
        k_shape, k_strides = [1], [[0] for _ in strides]
    if len(shape) > kept and not r_shape:
        r_shape, r_strides = [1], [[0] for _ in strides]
    new_strides = [tuple(a + b) for a, b in zip(k_strides, r_strides)]
    return tuple(k_shape + r_shape), new_strides, len(k_shape)


def contiguous_strides(shape, itemsize: int) -> tuple[int, ...]:
    """The strides, in bytes, of a C-contiguous array of `shape`."""
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def arrange(program: Program, loop: tuple[int, ...], reduced: tuple[int, ...],
            out_itemsizes: list[int], in_strides: list[tuple[int, ...]]):
    """The loop nest of one launch: `program` collapsed for its operands' layouts.

    `program` is written for the nest `loop` with the `reduced` axes moved last (see
    `numgrad.engine.steps.Launch`). Outputs are new C-contiguous arrays (the
    reduction's result over the kept dimensions first, if any, then the stores over
    the loop); `in_strides` are the inputs' byte strides over the shape each is read at
    (the kept dimensions for an epilogue input). Operands that do not vary along a
    loop dimension have stride 0 there.

    Returns ``(program, shape, strides)``: the program with its loop ranks (and
    `reduce_outer`, and `in_fixed`: the dimensions an input does not vary along) for
    the collapsed nest `shape`, and each operand's strides over it, outputs first.
    An input is passed with length 1 along its fixed dimensions (`read_shape`).
    """
    return _arrange(program, tuple(loop), tuple(reduced), tuple(out_itemsizes),
                    tuple(map(tuple, in_strides)))


@functools.lru_cache(maxsize=4096)
def _arrange(program: Program, loop, reduced, out_itemsizes, in_strides):
    """`arrange`, remembered: a loop launches the same steps over the same layouts."""
    kept = [d for d in range(len(loop)) if d not in reduced]
    order = kept + list(reduced)
    padding = (0,) * len(reduced)
    kept_shape = tuple(loop[d] for d in kept)
    operand_strides = []
    sizes = iter(out_itemsizes)
    if program.reduce:
        operand_strides.append(contiguous_strides(kept_shape, next(sizes)) + padding)
    for itemsize in sizes:
        full = contiguous_strides(loop, itemsize)
        operand_strides.append(tuple(full[d] for d in order))
    for s, late in zip(in_strides, program.in_epilogue):
        operand_strides.append(tuple(s) + padding if late else tuple(s[d] for d in order))
    # Dimensions an input is read rolled along (`Program.in_rolled`) merge with none:
    # a marker operand, ``d + 1`` there and 0 elsewhere, keeps them apart (no merge
    # condition holds next to them) and says where each went.
    rolled = {d for dims in program.in_rolled for d, _ in dims}
    marker = [tuple(d + 1 if d in rolled else 0 for d in range(len(loop)))] if rolled else []
    shape, operand_strides, kept_rank = collapse(
        tuple(loop[d] for d in order), operand_strides + marker, len(kept))
    if rolled:
        where = {x - 1: d for d, x in enumerate(operand_strides.pop()) if x}
        program = replace(program, in_rolled=tuple(
            tuple((where[d], shift) for d, shift in dims) for dims in program.in_rolled))
    # A reduction whose data is contiguous along a kept dimension (a column sum)
    # runs its reduced loops outermost.
    n_out = len(out_itemsizes)
    body = [s for s, late in zip(operand_strides[n_out:], program.in_epilogue) if not late]
    walk = [min((abs(x), d) for d, x in enumerate(s) if x) for s in body if any(s)]
    outer = bool(program.reduce) and bool(walk) and min(walk)[1] < kept_rank
    fixed = tuple(tuple(d for d, (n, x) in enumerate(zip(shape, s)) if n > 1 and not x)
                  for s in operand_strides[n_out:])
    return (_ranked(program, kept_rank, len(shape) - kept_rank, outer,
                    fixed if any(fixed) else ()), shape, tuple(operand_strides))


def read_shape(program: Program, i: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape input `i` of arranged `program` is passed at, for a loop `shape`
    (its epilogue's, for an epilogue input): 1 along its fixed dimensions."""
    fixed = program.fixed_dims(i)
    return tuple(1 if d in fixed else n for d, n in enumerate(shape)) if fixed else shape


@functools.lru_cache(maxsize=4096)
def _ranked(program: Program, kept_rank: int, reduced_rank: int, outer: bool,
            fixed: tuple) -> Program:
    """`program` for a collapsed loop nest: one object per variant, so the kernel
    caches that it keys find it by identity."""
    return replace(program, kept_rank=kept_rank, reduced_rank=reduced_rank,
                   reduce_outer=outer, in_fixed=fixed)
