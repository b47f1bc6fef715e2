"""The special functions' scalar code for the primitive table (`numgrad.ops`): erf, erfc,
erfinv, lgamma, digamma and polygamma, as kernel expressions and as NumPy references.

A row's expression is inlined into the generated kernels of every target (Numba on the CPU
and in CUDA) and evaluated by Python for a value computed at once, so erfinv, digamma and
polygamma are each one Python expression, built here from their coefficients: conditional
expressions for the branches, and immediately called lambdas, ``(lambda t: ...)(value)``,
for values used more than once (Numba inlines them; it compiles no ``:=``), which take
what they read as parameters (`_let`). `numpy_form` turns such an expression into NumPy
code over whole arrays (each conditional a ``np.where``): the row's reference, which the
NumPy interpreter runs and the tests compare with. erf, erfc and lgamma are libm's
(``math.erf``, ``math.erfc``, ``math.lgamma`` compile on the CPU and in CUDA); their
references call Python's math per element (`per_element`).

The algorithms (their accuracy, measured against mpmath: docs/decisions.md):

- digamma: poles first (0 gives -inf or inf by its sign, as SciPy's; negative integers and
  -inf NaN); below -1 the reflection ``psi(1 - x) - pi / tan(pi x)`` (the tangent of x's
  fraction, which is exact); within `ROOT_WINDOW` of the positive root x0 the Taylor series
  in ``x - x0`` (x0 as two doubles), so that the relative accuracy holds where psi
  crosses 0; elsewhere below `SHIFT` the recurrence ``psi(x) = psi(x + 10) - sum_k 1 / (x +
  k)``, then the asymptotic series.
- polygamma(n, x): ``(-1)**(n + 1) n! zeta(n + 1, x)``, the Hurwitz zeta by Euler-Maclaurin
  summation (`_zeta`): up to `ZETA_TERMS` terms ``(x + k)**-s``, until ``x + k`` reaches
  ``s + ZETA_START``, then twelve Bernoulli corrections. The order is floored (PyTorch's is
  an integer); a negative order is NaN; n = 0 is digamma by the same sum (without the
  Taylor series at the root: `numgrad.Tensor.polygamma` sends an integer 0 to digamma).
  Poles give +-inf by the order's parity, as SciPy's; x below -10 gives NaN (the terms
  summed do not reach the tail).
- erfinv: a guess (a series below 0.5, Winitzki's formula above, both within 2e-3) and two
  Halley steps on erf, or on erfc above 0.5, where ``1 - |x|`` is exact.
"""

from __future__ import annotations

import ast
import builtins
import functools
import math
from collections.abc import Callable

import numpy as np

__all__ = ["DIGAMMA", "POLYGAMMA", "ERFINV", "digamma", "polygamma", "erfinv",
           "numpy_form", "per_element", "ZETA_TERMS"]


def _horner(var: str, coefficients) -> str:
    """``c0 + var * (c1 + var * (...))``."""
    text = repr(float(coefficients[-1]))
    for c in reversed(coefficients[:-1]):
        text = f"{float(c)!r} + {var} * ({text})"
    return text


def _let(name: str, value: str, body: str) -> str:
    """`body` with `name` bound to `value`, evaluated once (`_let_all`)."""
    return _let_all({name: value}, body)


def _let_all(values: dict[str, str], body: str) -> str:
    """`body` with each name of `values` bound to its value, each evaluated once: an
    immediately called lambda, which takes every other value `body` reads as a parameter
    too. (One that reads an enclosing lambda's parameter is a closure, which Numba
    compiles several times slower: a kernel of betainc alone took 8.4 s so, 2.4 s this
    way.)"""
    free = sorted(_free_names(body) - values.keys())
    return (f"(lambda {', '.join([*free, *values])}: {body})"
            f"({', '.join([*free, *values.values()])})")


#: Names an expression reads that are not values: modules and Python's builtins
_NOT_VALUES = frozenset({"math", "np", *dir(builtins)})


def _free_names(expr: str) -> set[str]:
    """The values `expr` reads that it does not bind (as a lambda's parameters)."""
    free: set[str] = set()
    stack = [(ast.parse(expr, mode="eval").body, frozenset())]
    while stack:
        node, bound = stack.pop()
        if isinstance(node, ast.Name):
            if node.id not in bound and node.id not in _NOT_VALUES:
                free.add(node.id)
            continue
        if isinstance(node, ast.Lambda):
            bound = bound | {a.arg for a in node.args.args}
        stack.extend((child, bound) for child in ast.iter_child_nodes(node))
    return free


# ---- digamma -------------------------------------------------------------------------

#: the positive root of digamma, as a sum of two doubles
ROOT_HI, ROOT_LO = 1.4616321449683622, 9.549995429965697e-17
#: psi^(k)(x0) / k! for k = 1, 2, ... (mpmath, 40 digits): the Taylor series at the root
ROOT_TAYLOR = (
    0.9676722454476212, -0.4427631689835921, 0.258499760955651, -0.16394270544240652,
    0.10782405069126237, -0.07219956125645471, 0.04880428816414311, -0.03316112647484736,
    0.022597648232218104, -0.01542476590494896, 0.010538791616612175, -0.007204534386356869,
    0.004926781395729853, -0.003369801655439328, 0.002305126326734928, -0.0015769367714301972,
    0.0010788252019162967, -0.0007380709389960052, 0.000504953265834602,
    -0.0003454680251063077, 0.00023635601564027053)
#: the series serves |x - x0| < ROOT_WINDOW (its terms fall by 0.14 each there)
ROOT_WINDOW = 0.2
#: B_2k / (2k) for k = 1, 2, ...: psi(t) ~ log t - 1 / 2t - sum(B_2k / (2k t**2k))
ASYMPTOTIC = (0.08333333333333333, -0.008333333333333333, 0.003968253968253968,
              -0.004166666666666667, 0.007575757575757576, -0.021092796092796094,
              0.08333333333333333, -0.4432598039215686)
#: the recurrence shifts arguments below this by this much, into the asymptotic series
SHIFT = 10


def digamma(x: str) -> str:
    """The expression of digamma at the value of expression `x` (a name)."""
    harmonic = " + ".join(f"1.0 / (dg_u + {float(k)!r})" for k in range(SHIFT - 1, 0, -1))
    series = _let("dg_s", "1.0 / (dg_t * dg_t)", f"dg_s * ({_horner('dg_s', ASYMPTOTIC)})")
    shifted = _let("dg_t", f"dg_u + {SHIFT:.1f} if dg_u < {SHIFT:.1f} else dg_u",
                   f"math.log(dg_t) - 0.5 / dg_t - {series}")
    taylor = _let("dg_d", f"(dg_u - {ROOT_HI!r}) - {ROOT_LO!r}",
                  f"dg_d * ({_horner('dg_d', ROOT_TAYLOR)})")
    positive = _let(
        "dg_u", f"1.0 - {x} if {x} < -1.0 else {x} + 0.0",
        f"{taylor} if abs(dg_u - {ROOT_HI!r}) < {ROOT_WINDOW!r} else "
        f"{shifted} - ({harmonic} + 1.0 / dg_u if dg_u < {SHIFT:.1f} else 0.0)")
    # (x - floor(x) is exact below -1; the tangent's period is 1 in x)
    cotangent = _let("dg_r", f"{x} - {x} // 1.0",
                     "math.pi / math.tan(math.pi * (dg_r - 1.0 if dg_r > 0.5 else dg_r))")
    return (f"(-math.copysign(math.inf, {x}) if {x} == 0.0 else math.nan "
            f"if {x} < 0.0 and ({x} == -math.inf or {x} == {x} // 1.0) else "
            f"{positive} - ({cotangent} if {x} < -1.0 else 0.0))")


# ---- polygamma -----------------------------------------------------------------------

#: the most terms ``(x + k)**-s`` summed before the Euler-Maclaurin tail
ZETA_TERMS = 16
#: the tail starts where ``x + k`` reaches ``s + ZETA_START`` (or after `ZETA_TERMS`)
ZETA_START = 10.0
#: B_2j / (2j)! for j = 1, 2, ...: the Euler-Maclaurin corrections
EULER_MACLAURIN = (0.08333333333333333, -0.001388888888888889, 3.306878306878307e-05,
                   -8.267195767195768e-07, 2.08767569878681e-08, -5.284190138687493e-10,
                   1.3382536530684679e-11, -3.3896802963225827e-13, 8.586062056277845e-15,
                   -2.174868698558062e-16, 5.5090028283602295e-18, -1.3954464685812522e-19)


def _zeta(s: str, q: str) -> str:
    """The Hurwitz zeta ``sum((q + k)**-s)`` (q not a pole) by Euler-Maclaurin summation:
    the first `pg_m` terms (the smallest first), then the tail from ``a = q + m``,
    ``a**-s (a / (s - 1) + 1/2 + sum_j b_j s (s+1) ... (s+2j-2) / a**(2j-1))``. At s = 1
    it is ``-digamma(q)`` (``a / (s - 1)`` becomes ``-a log a``). NaN where q is too
    negative for the terms to reach the tail's start (whose accuracy needs a >= 6)."""
    corrections = repr(EULER_MACLAURIN[-1])
    for j in range(len(EULER_MACLAURIN) - 1, 0, -1):
        rising = f"({s} + {2 * j - 1:.1f}) * ({s} + {2 * j:.1f})"
        corrections = f"{EULER_MACLAURIN[j - 1]!r} + pg_w * {rising} * ({corrections})"
    main = f"(pg_a / ({s} - 1.0) if {s} > 1.0 else -pg_a * math.log(pg_a))"
    tail = _let("pg_a", f"{q} + pg_m", _let(
        "pg_w", "1.0 / (pg_a * pg_a)",
        f"pg_a ** -{s} * ({main} + 0.5 + {s} / pg_a * ({corrections}))"))
    terms = " + ".join(f"(({q} + {float(k)!r}) ** -{s} if pg_m > {float(k)!r} else 0.0)"
                       for k in range(ZETA_TERMS - 1, -1, -1))
    # (conditionals, not min and max, whose NaN rules differ between Python and NumPy)
    count = _let("pg_c", f"-(({q} - {s} - {ZETA_START!r}) // 1.0)",
                 f"(pg_c if pg_c < {float(ZETA_TERMS)!r} else {float(ZETA_TERMS)!r}) "
                 f"if pg_c > 0.0 else 0.0")
    return _let("pg_m", count, f"math.nan if {q} + pg_m < 6.0 else {tail} + {terms}")


def polygamma(n: str, x: str) -> str:
    """The expression of the polygamma function of order floor(`n`) at `x` (names)."""
    return _let(
        "pg_s", f"{n} // 1.0 + 1.0",
        f"math.nan if not ({n} >= 0.0 and {n} < math.inf) else "
        f"(1.0 if pg_s % 2.0 == 0.0 else -1.0) * math.gamma(pg_s) * ("
        f"math.inf if {x} == -math.inf or {x} <= 0.0 and {x} == {x} // 1.0 else "
        f"0.0 if {x} == math.inf else {_zeta('pg_s', x)})")


# ---- erfinv --------------------------------------------------------------------------

#: sqrt(pi) / 2, erfinv'(0)
HALF_SQRT_PI = 0.8862269254527580
#: erfinv(x) / (x sqrt(pi) / 2) = 1 + pi x**2 / 12 + 7 pi**2 x**4 / 480 + ...: the guess
#: below 0.5 (2e-3 relative at 0.5)
ERFINV_SERIES = (1.0, math.pi / 12, 7 * math.pi ** 2 / 480)
#: Winitzki's erf approximation's constant: its inverse is the guess above 0.5 (2e-3)
WINITZKI = 0.147


def erfinv(x: str) -> str:
    """The expression of the inverse error function at `x` (a name): NaN beyond [-1, 1],
    +-inf at +-1."""
    guess = (f"{HALF_SQRT_PI!r} * ei_a * ({_horner('ei_a * ei_a', ERFINV_SERIES)}) "
             f"if ei_a <= 0.5 else " + _let(
                 "ei_l", "math.log((1.0 - ei_a) * (1.0 + ei_a))", _let(
                     "ei_t", f"{2 / (math.pi * WINITZKI)!r} + 0.5 * ei_l",
                     f"math.sqrt(math.sqrt(ei_t * ei_t - ei_l / {WINITZKI!r}) - ei_t)")))
    # Halley's step for erf(y) = a: u = f / f', y - u / (1 - u f'' / (2 f')), f''/f' = -2y
    # (f from erfc beyond 0.5: 1 - a is exact there, erf(y) rounds away its digits)
    y = guess
    for _ in range(2):
        residual = "math.erf(ei_y) - ei_a if ei_a <= 0.5 else (1.0 - ei_a) - math.erfc(ei_y)"
        y = _let("ei_y", y, _let("ei_u", f"({residual}) * {HALF_SQRT_PI!r} * "
                                         "math.exp(ei_y * ei_y)",
                                 "ei_y - ei_u / (1.0 + ei_y * ei_u)"))
    return _let("ei_a", f"abs({x}) + 0.0",
                f"math.copysign(math.nan if not ei_a <= 1.0 else math.inf if ei_a == 1.0 "
                f"else {y}, {x})")


# (in float64 on every target: a float32 operand is rounded only in the result, as the
# references do; the CUDA simulator would otherwise sum in float32)
#: the rows' expressions, written at their first use (`numgrad.ops.Primitive.code`)
DIGAMMA = functools.cache(lambda: _let("sx", "float(x)", digamma("sx")))
POLYGAMMA = functools.cache(
    lambda: _let("sn", "float(x)", _let("sx", "float(y)", polygamma("sn", "sx"))))
ERFINV = functools.cache(lambda: _let("sx", "float(x)", erfinv("sx")))


# ---- NumPy forms: the references -----------------------------------------------------

def _per_element(fn: Callable[[float], float]) -> Callable:
    """`fn` (a function of Python's math) over an array of float64, an infinity where
    Python raises (lgamma's poles, an overflow)."""
    def safe(v: float) -> float:
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return math.inf
    ufunc = np.frompyfunc(safe, 1, 1)
    return lambda a: np.asarray(ufunc(a), np.float64)


#: NumPy's spelling of the calls in the expressions
_CALLS = {"float": "np.float64", "math.log": "np.log", "math.exp": "np.exp",
          "math.sqrt": "np.sqrt", "math.log1p": "np.log1p", "math.expm1": "np.expm1",
          "math.tan": "np.tan", "math.copysign": "np.copysign", "math.erf": "erf",
          "math.erfc": "erfc", "math.gamma": "gamma", "math.lgamma": "lgamma"}
_NAMESPACE = {"np": np, "math": math, **{name: _per_element(getattr(math, name))
                                        for name in ("erf", "erfc", "gamma", "lgamma")}}


class _Arrays(ast.NodeTransformer):
    """A scalar expression as NumPy code: ``a if c else b`` is ``np.where(c, a, b)``,
    ``and``/``or``/``not`` the logical ufuncs, math's functions NumPy's (or Python's per
    element). (Every branch is computed, so a branch must not assign what another reads:
    these expressions bind names only as lambda parameters.)"""

    @staticmethod
    def _call(name: str, args: list) -> ast.Call:
        return ast.Call(ast.parse(name, mode="eval").body, args, [])

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        return self._call("np.where", [node.test, node.body, node.orelse])

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        name = "np.logical_and" if isinstance(node.op, ast.And) else "np.logical_or"
        out = node.values[0]
        for value in node.values[1:]:
            out = self._call(name, [out, value])
        return out

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        return self._call("np.logical_not", [node.operand]) \
            if isinstance(node.op, ast.Not) else node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1:
            return node
        # a < b < c: (a < b) & (b < c)
        parts = [ast.Compare(left, [op], [right]) for left, op, right in
                 zip([node.left, *node.comparators], node.ops, node.comparators)]
        out = parts[0]
        for part in parts[1:]:
            out = self._call("np.logical_and", [out, part])
        return out

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = _CALLS.get(ast.unparse(node.func))
        if name is not None:
            node.func = ast.parse(name, mode="eval").body
        return node


def numpy_form(expr: str | Callable[[], str], name: str, arity: int = 1) -> Callable:
    """The NumPy reference of a row whose kernel expression is `expr` (over ``x``, ``y``,
    ``z``): the same code over whole arrays, in float64, whose result has NumPy's floating
    dtype of the operands (float32 stays float32; integers and bools give float64). It is
    written at its first call: the special functions' trees take a fifth of a second to
    transform, which importing numgrad should not pay."""
    @functools.cache
    def arrays():
        tree = _Arrays().visit(ast.parse(expr if isinstance(expr, str) else expr(),
                                         mode="eval"))
        body = ast.unparse(ast.fix_missing_locations(tree))
        source = f"lambda {', '.join('xyz'[:arity])}: {body}"
        return eval(compile(source, f"<numgrad.special_math {name}>", "eval"),
                    dict(_NAMESPACE))
    return _reference(lambda *operands: arrays()(*operands), name)


def per_element(fn: Callable[[float], float], name: str) -> Callable:
    """The NumPy reference of a row whose expression calls `fn` of Python's math: `fn` per
    element (an infinity where Python raises: lgamma's poles)."""
    return _reference(_per_element(fn), name)


def _reference(arrays: Callable, name: str) -> Callable:
    def reference(*operands):
        dtype = np.result_type(*operands)
        dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
        with np.errstate(all="ignore"):
            out = arrays(*(np.asarray(o, np.float64) for o in operands))
        return np.asarray(out).astype(dtype, copy=False)

    reference.__name__ = reference.__qualname__ = name
    return reference
