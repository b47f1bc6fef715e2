"""Collapse a kernel's loop nest to the fewest dimensions its operands allow."""

from __future__ import annotations


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
