"""Building blocks of the vector math: bit casts, fused multiply-add, polynomials, scaling
by powers of two, and the per-dtype constants they read.

Every function here is branch-free (selects only), so that LLVM vectorizes the loops
they are inlined into.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.core.extending import intrinsic

__all__ = ["FloatFormat", "FORMATS", "as_int", "as_float", "fma", "pow2i", "scale", "scale_sum",
           "copysign", "horner", "two_sum", "split", "taylor", "LN2", "jit"]

jit = numba.njit(error_model="numpy", forceinline=True)


class FloatFormat:
    """What the algorithms need to know about one float type (`np.float64`, `np.float32`)."""

    def __init__(self, dtype: type):
        info = np.finfo(dtype)
        self.mant = info.nmant  # explicit mantissa bits: 52, 23
        self.bias = info.maxexp - 1  # 1023, 127
        # x * INV + SHIFT rounds x * INV to an integer held in the low mantissa bits.
        self.shift = dtype(1.5 * 2.0 ** self.mant)
        self.shift_bits = int(np.array(self.shift).view(f"i{info.bits // 8}"))
        self.tiny = dtype(info.smallest_normal)


FORMATS = {np.float64: FloatFormat(np.float64), np.float32: FloatFormat(np.float32)}


def _int_type(float_type):
    return types.int64 if float_type.bitwidth == 64 else types.int32


@intrinsic
def as_int(typingctx, x):
    """The bits of float `x` as a signed integer of its width."""
    if not isinstance(x, types.Float):
        return None
    def codegen(context, builder, sig, args):  # noqa: E306
        return builder.bitcast(args[0], ir.IntType(x.bitwidth))
    return _int_type(x)(x), codegen


@intrinsic
def as_float(typingctx, bits, like):
    """The float of `like`'s type whose bits are the low bits of integer `bits`."""
    if not (isinstance(bits, types.Integer) and isinstance(like, types.Float)):
        return None
    def codegen(context, builder, sig, args):  # noqa: E306
        width = ir.IntType(like.bitwidth)
        value = args[0]
        if bits.bitwidth > like.bitwidth:
            value = builder.trunc(value, width)
        elif bits.bitwidth < like.bitwidth:
            value = builder.sext(value, width)
        return builder.bitcast(value, context.get_value_type(like))
    return like(bits, like), codegen


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (``llvm.fma``: one instruction where the CPU has FMA)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None
    def codegen(context, builder, sig, args):  # noqa: E306
        return builder.fma(*args)
    return a(a, a, a), codegen


@intrinsic
def pow2i(typingctx, k, like):
    """2.0**k in `like`'s type, for an integer `k` in the normal exponent range."""
    if not (isinstance(k, types.Integer) and isinstance(like, types.Float)):
        return None
    info = np.finfo(np.float64 if like.bitwidth == 64 else np.float32)
    def codegen(context, builder, sig, args):  # noqa: E306
        width = ir.IntType(like.bitwidth)
        value = args[0]
        if k.bitwidth != like.bitwidth:
            value = (builder.trunc if k.bitwidth > like.bitwidth else builder.sext)(value, width)
        value = builder.shl(builder.add(value, width(info.maxexp - 1)), width(info.nmant))
        return builder.bitcast(value, context.get_value_type(like))
    return like(k, like), codegen


@jit
def scale(p, k):
    """``p * 2.0**k`` for |k| up to twice the exponent range, rounded once (also to a
    subnormal result): the two factors are normal powers of two."""
    half = k >> 1
    return p * pow2i(half, p) * pow2i(k - half, p)


@jit
def scale_sum(hi, lo, k):
    """``(hi + lo) * 2.0**k`` for |lo| <= ulp(hi): one fused multiply-add rounds the exact
    ``hi * 2**k`` plus the tail, so even subnormal results are rounded once (nearly)."""
    half = k >> 1
    s1, s2 = pow2i(half, hi), pow2i(k - half, hi)
    return fma(hi * s1, s2, lo * s1 * s2)


@jit
def copysign(magnitude, sign):
    """`magnitude` with the sign bit of `sign` (both of one float type)."""
    top = as_int(magnitude) ^ as_int(sign)
    return -magnitude if top < 0 else magnitude


@intrinsic
def horner(typingctx, x, coefficients):
    """The polynomial with `coefficients` (a tuple, highest degree first) at `x`, as a chain
    of fused multiply-adds (written out: a loop would keep LLVM from vectorizing)."""
    if not (isinstance(x, types.Float) and isinstance(coefficients, types.UniTuple)
            and coefficients.dtype == x):
        return None
    def codegen(context, builder, sig, args):  # noqa: E306
        value, terms = args
        p = builder.extract_value(terms, 0)
        for j in range(1, coefficients.count):
            p = builder.fma(p, value, builder.extract_value(terms, j))
        return p
    return x(x, coefficients), codegen


@jit
def two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``s + e == a + b`` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def split(value: Decimal, dtype: type, parts: int) -> tuple:
    """`value` as a sum of `parts` floats of `dtype`, each the rounding of what is left."""
    out = []
    with localcontext() as context:
        context.prec = 80
        for _ in range(parts):
            out.append(dtype(float(value)))
            value -= Decimal(float(out[-1]))
    return tuple(out)


def taylor(dtype: type, first: int, last: int, step: int = 1, signs: tuple = (1,)) -> tuple:
    """Coefficients ``signs[j % len(signs)] / n!`` for n = first, first + step, ... last (the
    j-th), highest degree first, for `horner`."""
    terms = [dtype(signs[j % len(signs)] / math.factorial(n))
             for j, n in enumerate(range(first, last + 1, step))]
    return tuple(terms[::-1])


with localcontext() as _context:
    _context.prec = 60
    LN2 = Decimal(2).ln()
