"""Compute the coefficient tables of `numgrad/gammainc_math.py` with mpmath (numgrad does not
depend on it) and print them as Python literals:

- ``TEMME``: the rows ``d[k][n]`` of Temme's uniform expansion of the incomplete gamma
  functions, ``c_k(eta) = sum_n d[k][n] eta**n`` (DLMF 8.12.3-8.12.8): ``c_0 = 1 / mu - 1 /
  eta``, ``c_k = c'_{k-1} / eta + (-1)**k g_k / mu``, where ``mu = lambda - 1`` as a series
  in eta (``eta**2 / 2 = mu - log(1 + mu)``, reverted by Lagrange's formula) and ``g_k`` are
  the coefficients of Stirling's series ``Gamma*(a) ~ sum_k g_k / a**k``. Row k keeps the
  terms that matter for a >= A and |eta| <= ETA (a row's tail below 3e-18 of the sum).
- ``LGAMMA2``: ``log Gamma(2 + a) = sum_k LGAMMA2[k] a**(k+1)``, ``(1 - euler_gamma) a +
  sum_{k>=2} (-1)**k (zeta(k) - 1) / k a**k`` (DLMF 5.7.3 shifted by one), for the small-a
  series of the upper function.

    python tools/gamma_coefficients.py
"""

from __future__ import annotations

import mpmath
from mpmath import mpf

#: the expansion serves a >= A and |eta| <= ETA (docs/decisions.md)
A, ETA = 20.0, 0.82
ROWS, MOST = 14, 60
LGAMMA_TERMS = 28


def _mul(a, b, n):
    out = [mpf(0)] * n
    for i, x in enumerate(a[:n]):
        for j, y in enumerate(b[:n - i]):
            out[i + j] += x * y
    return out


def _inverse(a, n):
    out = [1 / a[0]] + [mpf(0)] * (n - 1)
    for m in range(1, n):
        out[m] = -sum(a[j] * out[m - j] for j in range(1, min(m, len(a) - 1) + 1)) / a[0]
    return out


def _sqrt(a, n):
    out = [mpmath.sqrt(a[0])] + [mpf(0)] * (n - 1)
    for m in range(1, n):
        out[m] = (a[m] - sum(out[j] * out[m - j] for j in range(1, m))) / (2 * out[0])
    return out


def stirling(rows: int) -> list:
    """g_k: Gamma*(a) = exp(sum_j B_2j / (2j (2j - 1) a**(2j - 1))) as a series in 1 / a."""
    log = [mpf(0)] * (rows + 1)
    for j in range(1, rows + 1):
        if 2 * j - 1 <= rows:
            log[2 * j - 1] = mpmath.bernoulli(2 * j) / (2 * j * (2 * j - 1))
    out = [mpf(1)] + [mpf(0)] * rows
    for m in range(1, rows + 1):  # (exp of a series: out' = log' out)
        out[m] = sum(k * log[k] * out[m - k] for k in range(1, m + 1)) / m
    return out


def temme(rows: int = ROWS, most: int = MOST) -> list[list[float]]:
    n = most + 2 * rows + 4
    # h(w) = sqrt(2 (w - log(1 + w)) / w**2), eta = mu h(mu); Lagrange: mu = sum_m eta**m
    # / m [w**(m-1)] h(w)**-m
    g = _inverse(_sqrt([2 * mpf(-1) ** j / (j + 2) for j in range(n)], n), n)
    mu, power = [mpf(0)] * n, [mpf(1)] + [mpf(0)] * (n - 1)
    for m in range(1, n):
        power = _mul(power, g, n)
        mu[m] = power[m - 1] / m
    r = _inverse(mu[1:], n - 1)  # 1 / mu = sum_j r[j] eta**(j - 1)
    gammas = stirling(rows)
    c = [r[m + 1] for m in range(n - 2)]  # c_0 = 1 / mu - 1 / eta
    table = [c]
    for k in range(1, rows):
        s = (-1) ** k * gammas[k]
        assert abs(c[1] + s * r[0]) < mpf(10) ** -80  # (the pole at eta = 0 cancels)
        c = [(m + 2) * c[m + 2] + s * r[m + 1] for m in range(len(c) - 2)]
        table.append(c)
    kept = []
    for k, row in enumerate(table):
        count = next(m for m in range(most + 1) if sum(
            abs(v) * mpf(ETA) ** j for j, v in enumerate(row[:most]) if j >= m) * mpf(A) ** -k
            < 3e-18)
        if count:
            kept.append([float(v) for v in row[:count]])
    return kept


def lgamma2(terms: int = LGAMMA_TERMS) -> list[float]:
    return [float(1 - mpmath.euler)] + [
        float((-1) ** k * (mpmath.zeta(k) - 1) / k) for k in range(2, terms + 1)]


if __name__ == "__main__":
    mpmath.mp.dps = 120
    print("TEMME = (")
    for row in temme():
        print(f"    {tuple(row)!r},")
    print(")")
    print(f"LGAMMA2 = {tuple(lgamma2())!r}")
