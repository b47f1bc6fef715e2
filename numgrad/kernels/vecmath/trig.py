"""sin, cos and tan: one branch-free reduction for every argument, ``x (2/pi) = n + f`` with
|f| <= 1/2, then ``r = f pi/2`` (as a head and a tail) and polynomials for sin r and cos r
chosen and signed by n mod 4.

The reduction is Payne-Hanek's, in floating point: x is a multiple of its ulp, so in
x * (2/pi) the bits of 2/pi worth a multiple of 4 times that ulp do not matter mod 4. A
table row per exponent holds the rest of 2/pi as three floats (scaled so that they stay
normal); x times them is summed exactly (fused multiply-adds) with the multiples of 4 dropped.
It costs three table loads (gathers) per element; arguments of every size take it.
"""

from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np

from numgrad.kernels.vecmath._core import (
    FORMATS,
    as_int,
    fma,
    horner,
    jit,
    pow2i,
    split,
    taylor,
    two_sum,
)

_BITS = 1400  # of 2/pi: beyond the largest exponent (1023) plus three doubles
_DEGREES = {np.float64: 19, np.float32: 11}  # sin r to r**19 (cos r to r**20) on |r| <= pi/4
#: below these |x|, sin x and tan x round to x (and cos x to 1)
_TINY = {np.float64: 2.0 ** -27, np.float32: 2.0 ** -12}


def _pi_fixed(bits: int) -> int:
    """pi * 2**bits, within a few units: Machin's formula in integers (in Decimal it
    took over a second, at every import)."""
    def arctan_inverse(n: int) -> int:
        x = total = (1 << bits) // n
        k = 1
        while x:
            x //= n * n
            total += (-1) ** k * (x // (2 * k + 1))
            k += 1
        return total
    return 16 * arctan_inverse(5) - 4 * arctan_inverse(239)


_GUARD = 128  # bits beyond those used, for the truncations in `_pi_fixed`
_PI_FIXED = _pi_fixed(_BITS + _GUARD)
_TWO_OVER_PI = (1 << (2 * _BITS + _GUARD + 1)) // _PI_FIXED  # 2/pi to _BITS bits
with localcontext() as _context:
    _context.prec = _BITS * 31 // 100 + 20
    _PI_2 = Decimal(_PI_FIXED) / Decimal(2) ** (_BITS + _GUARD + 1)


def _table(F: type) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row i (exponent e = i + mant of x, or below for row 0): ``(2/pi mod 2**(mant + 2 -
    e)) * 2**i`` as three floats; x * 2**-i times it is x * 2/pi mod 4."""
    fmt = FORMATS[F]
    rows = fmt.bias + 2 - fmt.mant
    out = np.empty((3, rows), F)
    for i in range(rows):
        kept = _BITS + 2 - i if i else _BITS + 2  # row 0: all of 2/pi
        rest = Fraction(_TWO_OVER_PI & ((1 << kept) - 1), 1 << (_BITS - i))
        for j in range(3):
            out[j, i] = F(float(rest))
            rest -= Fraction(float(out[j, i]))
    return out[0], out[1], out[2]


def make(F: type) -> dict:
    """sin, cos and tan for float type `F`."""
    fmt = FORMATS[F]
    mant, bias, shift = fmt.mant, fmt.bias, fmt.shift
    t0, t1, t2 = _table(F)
    last, exp_mask = len(t0) - 1, 2 * bias + 1
    pio2_hi, pio2_lo = split(_PI_2, F, 2)
    one, half, quarter, four, tiny = F(1), F(0.5), F(0.25), F(4), F(_TINY[F])
    sin_poly = taylor(F, 3, _DEGREES[F], 2, (-1, 1))  # (sin r - r) / r**3 in z = r**2
    cos_poly = taylor(F, 4, _DEGREES[F] + 1, 2, (1, -1))  # (cos r - 1 + z/2) / z**2

    @jit
    def reduce(x):
        """``(n mod 4, r, r_lo)`` with x = n pi/2 + r + r_lo and |r| <= pi/4."""
        i = ((as_int(x) >> mant) & exp_mask) - bias - mant
        i = min(max(i, 0), last)  # (integer selects written as ternaries stop LLVM)
        xs = x * pow2i(-i, x)  # exact
        p0 = xs * t0[i]
        e0 = fma(xs, t0[i], -p0)
        p0 -= four * np.rint(p0 * quarter)  # exact: drop multiples of 4
        p1 = xs * t1[i]
        e1 = fma(xs, t1[i], -p1)
        h, lo = two_sum(p0, p1)
        h, lo2 = two_sum(h, e0)
        lo += lo2 + e1 + xs * t2[i]
        n = np.rint(h)
        f, f_lo = two_sum(h - n, lo)  # h - n is exact
        r = f * pio2_hi
        r_lo = fma(f, pio2_hi, -r) + (f * pio2_lo + f_lo * pio2_hi)
        return as_int(n + shift) & 3, r, r_lo

    @jit
    def sin_cos(x):
        """``(n mod 4, sin r, cos r)``."""
        n, r, r_lo = reduce(x)
        z = r * r
        s = r + (r * z * horner(z, sin_poly) + r_lo * (one - half * z))
        hz = half * z
        w = one - hz
        c = w + (((one - w) - hz) + (z * z * horner(z, cos_poly) - r * r_lo))
        return n, s, c

    @jit
    def sin(x):
        n, s, c = sin_cos(x)
        v = c if n & 1 else s
        v = -v if n & 2 else v
        return x if abs(x) < tiny else v

    @jit
    def cos(x):
        n, s, c = sin_cos(x)
        v = s if n & 1 else c
        return -v if (n + 1) & 2 else v

    @jit
    def tan(x):
        n, s, c = sin_cos(x)
        v = -c / s if n & 1 else s / c
        return x if abs(x) < tiny else v

    return dict(sin=sin, cos=cos, tan=tan)
