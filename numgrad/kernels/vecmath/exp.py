"""exp, expm1, tanh and sigmoid: ``x = k ln2 + r`` with |r| <= ln2/2 (Cody-Waite with a fused
multiply-add), a Taylor polynomial in r, and the scaling by 2**k as two normal factors, so
that results near the overflow and in the subnormal range are rounded once."""

from __future__ import annotations

import numpy as np

from numgrad.kernels.vecmath._core import (
    FORMATS,
    LN2,
    as_int,
    copysign,
    fma,
    horner,
    jit,
    pow2i,
    scale,
    scale_sum,
    split,
    taylor,
    two_sum,
)

#: per dtype: arguments of exp are clamped to [LOW, HIGH] (beyond, the result is 0 or inf
#: already), of expm1 to [EM1_LOW, HIGH] (below, it is -1), of tanh to [-TANH_HIGH, TANH_HIGH]
#: (beyond, it is +-1); polynomial degrees leave the truncation far below an ulp for
#: |r| <= ln2/2.
_LIMITS = {np.float64: dict(low=-746.0, high=710.0, em1_low=-40.0, tanh_high=22.0, degree=13),
           np.float32: dict(low=-104.0, high=89.0, em1_low=-20.0, tanh_high=9.5, degree=7)}


def make(F: type) -> dict:
    """The exp-family functions for float type `F`."""
    fmt, lim = FORMATS[F], _LIMITS[F]
    low, high, em1_low = F(lim["low"]), F(lim["high"]), F(lim["em1_low"])
    tanh_high, one, two, zero, half = F(lim["tanh_high"]), F(1), F(2), F(0), F(0.5)
    inv_ln2 = F(1 / np.log(2))
    ln2_hi, ln2_lo = split(LN2, F, 2)
    shift, shift_bits = fmt.shift, fmt.shift_bits
    exp_poly = taylor(F, 1, lim["degree"])  # (e**r - 1) / r
    em1_poly = taylor(F, 2, lim["degree"])  # (e**r - 1 - r) / r**2
    mant = fmt.mant
    cap = mant + 7  # 2**-k is below half an ulp of 1 from k = mant + 2 on
    tiny = F(2.0 ** -(mant // 2 + 1))  # tanh x rounds to x below
    near_one = F(0.625)  # tanh > 0.55 from here: 1 - q loses no bits

    @jit
    def reduce(x):
        """``(k, r)`` with x = k ln2 + r, |r| <= ln2/2 (x already clamped)."""
        kd = fma(x, inv_ln2, shift)
        k = as_int(kd) - shift_bits
        kd -= shift
        return k, fma(-kd, ln2_lo, fma(-kd, ln2_hi, x))

    @jit
    def exp_dd(x, x_lo):
        """e**(x + x_lo) for a small correction `x_lo` (power's double-length argument)."""
        c = high if x > high else x
        c = low if c < low else c
        k, r = reduce(c)
        r += x_lo
        q = r * horner(r, exp_poly)  # e**r - 1
        p = one + q
        return scale_sum(p, q - (p - one), k)

    @jit
    def exp(x):
        return exp_dd(x, zero)

    @jit
    def expm1_nonzero(x):
        c = high if x > high else x
        c = em1_low if c < em1_low else c
        k, r = reduce(c)
        # e**x - 1 = (e**r - 1 + 1 - 2**-k) * 2**k, where 1 - 2**-k is exact, except for
        # k < -mant - 1, where it is (e**r - 1 + 1) * 2**k - 1; e**r - 1 = r + tail
        deep = k < -mant - 1
        offset = one if deep else one - pow2i(-min(k, cap), x)
        head, error = two_sum(offset, r)  # the sum may cancel: keep it exact
        tail = r * r * horner(r, em1_poly)
        return scale(head + (error + tail), k) - (one if deep else zero)

    @jit
    def expm1(x):
        return x if x == zero else expm1_nonzero(x)

    @jit
    def tanh(x):
        a = abs(x)
        a = tanh_high if a > tanh_high else a
        em = expm1_nonzero(two * a)
        d, d_lo = two_sum(em, two)
        q = two / d
        inverse = half * q  # 1 / d
        # tanh |x| = em / (em + 2) = 1 - 2 / (em + 2): the first near 0 (with a Newton
        # step for the rounding of the quotient), the second where it nears 1
        t = em * inverse
        t += (fma(-t, d, em) - t * d_lo) * inverse
        t = (one - q) + q * inverse * d_lo if a > near_one else t
        return x if a < tiny else copysign(t, x)

    @jit
    def sigmoid(x):
        # 1 / (1 + e**-x) for x >= 0 and e**x / (1 + e**x) below: e never overflows
        e = exp(-abs(x))
        numerator = one if x >= zero else e
        d, d_lo = two_sum(one, e)
        inverse = one / d
        t = numerator * inverse
        return t + (fma(-t, d, numerator) - t * d_lo) * inverse  # a Newton step

    return dict(exp=exp, expm1=expm1, tanh=tanh, sigmoid=sigmoid, exp_dd=exp_dd)
