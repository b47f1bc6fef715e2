"""log, log1p and power: ``x = 2**k z`` with z in [sqrt(1/2), sqrt(2)) read from the bits,
then ``log z = 2 atanh(s)``, ``s = (z - 1) / (z + 1)``, an odd polynomial in s.

power needs log|x| to about 64 bits (an error e in y log|x| is a relative error e in the
result, whose exponent reaches 745): it carries a head and a tail, and narrows the range of s
further by dividing z by the nearest of five constants c (exactly: ``s = (z - c) / (z + c)``)."""

from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np

from numgrad.kernels.vecmath._core import (
    FORMATS,
    LN2,
    as_float,
    as_int,
    fma,
    horner,
    jit,
    split,
    two_sum,
)

#: log's polynomial R(s**2) ~ (2 atanh(s) - 2s) / s**2 on |s| <= 0.1716: fdlibm's minimax
#: coefficients Lg7 ... Lg1 (e_log.c, e_logf.c), highest first
_LOG_POLY = {
    np.float64: (1.479819860511658591e-01, 1.531383769920937332e-01, 1.818357216161805012e-01,
                 2.222219843214978396e-01, 2.857142874366239149e-01, 3.999999999940941908e-01,
                 6.666666666666735130e-01),
    np.float32: (0.24279078841, 0.28498786688, 0.40000972152, 0.66666662693),
}
#: power's atanh series (Taylor: 2/3, 2/5, ...) on its narrower |s| <= 0.035
_POW_TERMS = {np.float64: 7, np.float32: 4}
#: power's centres c_j = 2**(j/5) (rounded), and the boundaries 2**((2j+1)/10) between them
_CENTRES = range(-2, 3)


def _odd_atanh(F: type, terms: int) -> tuple:
    return tuple(F(2 / (2 * n + 1)) for n in range(terms, 0, -1))


def make(F: type, exp_dd) -> dict:
    """The log-family functions for float type `F`; `exp_dd` is e**(hi + lo) of that type."""
    fmt = FORMATS[F]
    one, two, zero, half = F(1), F(2), F(0), F(0.5)
    inf, nan, big = F(np.inf), F(np.nan), F(1e4)
    tiny, mant = fmt.tiny, fmt.mant
    up = F(2.0 ** (mant + 2))  # brings subnormals to normal
    offset = int(np.array(F(np.sqrt(0.5))).view(f"i{np.dtype(F).itemsize}"))
    mask = -(1 << mant)
    ln2_hi, ln2_lo = split(LN2, F, 2)
    # k * ln2_hi must be exact for every exponent k: keep the top bits only
    kbits = (fmt.bias + mant + 2).bit_length()
    ln2_hi = F(np.ldexp(np.round(np.ldexp(float(ln2_hi), mant - kbits)), kbits - mant))
    with localcontext() as context:
        context.prec = 60
        ln2_lo = split(LN2 - Decimal(float(ln2_hi)), F, 1)[0]
    log_poly = tuple(F(c) for c in _LOG_POLY[F])
    pow_poly = _odd_atanh(F, _POW_TERMS[F])
    with localcontext() as context:
        context.prec = 60
        centres = [F(2.0 ** (j / 5)) for j in _CENTRES]
        logs = [split(Decimal(float(c)).ln(), F, 2) for c in centres]
    c0, c1, c2, c3, c4 = centres
    (h0, l0), (h1, l1), (h2, l2), (h3, l3), (h4, l4) = logs
    b0, b1, b2, b3 = (F(2.0 ** ((2 * j + 1) / 10)) for j in _CENTRES[:-1])

    @jit
    def reduce(x):
        """``(k, z)`` with x = 2**k z and z in [sqrt(1/2), sqrt(2)), for finite x > 0."""
        small = x < tiny
        bits = as_int(x * up if small else x)
        t = bits - offset
        k = (t >> mant) - (mant + 2 if small else 0)
        return F(k), as_float(bits - (t & mask), x)

    @jit
    def log_core(x, c):
        """log(x) + c for a small correction c."""
        k, z = reduce(x)
        f = z - one
        s = f / (two + f)
        s2 = s * s
        h = half * f * f
        r = s2 * horner(s2, log_poly)
        # log z = f - h + s (h + r) where h = f**2/2 (fdlibm's arrangement)
        return k * ln2_hi - ((h - (s * (h + r) + (k * ln2_lo + c))) - f)

    @jit
    def special(x, value, pole):
        """`value` where `x` (the argument of a log at `pole`) is regular, else the log's
        value at NumPy's special points."""
        value = x if (x != x or x == inf) else value
        value = nan if x < pole else value
        return -inf if x == pole else value

    @jit
    def log(x):
        return special(x, log_core(x, zero), zero)

    @jit
    def log1p(x):
        u = one + x
        # 1 + x = u (1 + c) with c = (x - (u - 1)) / u: what rounding u lost
        value = special(x, log_core(u, (x - (u - one)) / u), -one)
        return x if x == zero else value  # (special first: AVX2 loops vectorize then)

    @jit
    def log_dd(x):
        """``(hi, lo)``: log(x) to about twice the precision, for finite x > 0."""
        k, z = reduce(x)
        c, hc, lc = (c0, h0, l0) if z < b0 else (c1, h1, l1)
        c, hc, lc = (c2, h2, l2) if z >= b1 else (c, hc, lc)
        c, hc, lc = (c3, h3, l3) if z >= b2 else (c, hc, lc)
        c, hc, lc = (c4, h4, l4) if z >= b3 else (c, hc, lc)
        f = z - c  # exact: z / c is within [2**-0.1, 2**0.1]
        d, d_lo = two_sum(z, c)
        s = f / d
        s_lo = (fma(-s, d, f) - s * d_lo) / d  # f / (d + d_lo) - s
        s2 = s * s
        tail = s * s2 * horner(s2, pow_poly) + (two * s_lo + (k * ln2_lo + lc))
        hi, lo = two_sum(k * ln2_hi, hc)
        hi, lo2 = two_sum(hi, two * s)
        return two_sum(hi, (lo + lo2) + tail)

    @jit
    def power(x, y):
        a = abs(x)
        hi, lo = log_dd(a)
        hi = special(a, hi, zero)  # -inf at 0, inf at inf, nan at nan
        p = y * hi
        p_lo = fma(y, hi, -p) + y * lo
        m = exp_dd(p, p_lo if abs(p) < big else zero)  # no nan from an infinite p
        whole = np.floor(y) == y  # also +-inf
        odd = whole and np.floor(y * half) != y * half
        m = -m if (odd and as_int(x) < 0) else m  # the sign bit: -0.0 and -inf too
        m = nan if (x < zero and x > -inf and not whole) else m
        return one if (y == zero or x == one or (x == -one and abs(y) == inf)) else m

    return dict(log=log, log1p=log1p, power=power)
