"""The primitive table: every operation the engine can run, with its VJP rule.

Each row says what a primitive is (`kind`), how one element is computed
(`expr`, a Python expression over the inputs ``x``, ``y``, ``z`` that the
kernel generator inlines), its NumPy reference and its vector-Jacobian product.

VJP rules receive Tensors and use only Tensor methods, so this module never
imports the Tensor class: ``vjp(g, out, *inputs, arg)`` returns one gradient (or
None) per input. Composites (sigmoid is the exception: it is a primitive for
precision) are Tensor methods built from these rows and so need no rule here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from numgrad import bessel_math, betainc_math, gammainc_math, special_math

# Kinds. Elementwise kinds fuse into one generated kernel; the rest are run by
# the target's backend (views, gathers, matmul) or are generated reductions.
UNARY, BINARY, TERNARY, CAST, CONST = "unary", "binary", "ternary", "cast", "const"
REDUCE, MOVEMENT, MATMUL, LOAD = "reduce", "movement", "matmul", "load"
# A call of a kept library (NumPy, LAPACK) on host arrays: ``ref(*arrays, arg)`` is the
# whole computation (scans, sorts, decompositions); other devices go through the host.
LIBRARY = "library"
ELEMENTWISE = frozenset({UNARY, BINARY, TERNARY, CAST, CONST})

# Result dtype of an elementwise primitive: that of its inputs, or bool.
SAME, BOOL = "same", "bool"


@dataclass(frozen=True, slots=True)
class Primitive:
    """One row of the table."""

    name: str
    kind: str
    #: the scalar expression kernels inline (`expr`), or a function that writes it at
    #: the first use: the special functions' take tens of milliseconds to write, which
    #: importing numgrad should not pay
    code: str | Callable[[], str] = field(default="", compare=False)
    vjp: Callable | None = None
    ref: Callable | None = None
    result: str = SAME
    #: floating-only: integer inputs are cast to float64 first (NumPy's rule)
    floating: bool = False
    #: integers and bools only: floating inputs are a TypeError (NumPy's bitwise rule)
    integral: bool = False
    #: of an integral row, why bools are a TypeError too (empty: they are taken)
    no_bools: str = ""
    #: the expression on unsigned integers where `expr` takes a sign, or mixes them with
    #: int64 literals (Numba computes uint64 with int64 in float64); empty: `expr`
    unsigned: str = ""
    #: whether one float32 element may be computed at once, in Python's floats, and
    #: rounded (`numgrad.lazy.AT_ONCE`): not where float32's result is not float64's
    #: rounded (nextafter's neighbour)
    float32_at_once: bool = True
    #: (CPU) compiled once as a function that kernels call (`numgrad.kernels.rows`),
    #: not inlined: long code that does not vectorize, whose inlining cost every kernel
    #: that used it 0.3-2 s of compiling
    called: bool = False
    #: (low, high) of the inputs a test should draw, for the op-table test matrix
    domain: tuple[float, float] = (-2.0, 2.0)
    #: a ternary row whose first operand is a boolean condition (`where`), the others
    #: promoted together; a ternary row without one promotes all three (`betainc`)
    condition: bool = False
    #: reductions: the identity and how an element `v` joins the accumulator `acc`
    identity: str = ""
    combine: str = ""

    def __repr__(self) -> str:
        return self.name

    @property
    def expr(self) -> str:
        """The scalar expression over ``x``, ``y``, ``z`` that kernels inline."""
        code = self.code
        if not isinstance(code, str):
            code = code()
            object.__setattr__(self, "code", code)
        return code

    @property
    def cost(self) -> int:
        """The work of one element in cheap operations: a function call (``math.*``, or a
        power) counts 8, so the scheduler stores such values rather than recompute them."""
        return 8 if "math." in self.expr or "**" in self.expr else 1


def cbrt_from(estimate: str) -> str:
    """The cube root's scalar expression, from an `estimate` of it (an expression of
    ``x`` that a target computes once: the same pure call three times): one Newton step,
    ``r - (r - x / r**2) / 3`` (no overflow, and no subnormal product, on the way), lands
    within an ulp of the cube root, exactly on perfect cubes; +-0, +-inf and nan are
    ``x``. (Numba compiles no cube root: neither ``math.cbrt`` nor ``np.cbrt`` to
    NumPy's result.)"""
    r = estimate
    return f"({r} - ({r} - x / ({r} * {r})) / 3.0 if x - x == 0 and x != 0 else x)"


def nextafter_in(bits: int, least: int, top: int) -> str:
    """``nextafter(x, y)`` for ``x != y``, neither NaN, in a binary format of `bits` bits
    of precision whose least subnormal is ``2**least`` and whose values are below
    ``2**top``: from +-0 the least subnormal toward `y`, from +-inf the largest finite
    value; else ``|x|`` one spacing away from or toward zero, the spacing read from `x`'s
    exponent (half of it below a power of two; ``2**least`` among the subnormals and in
    the least normal binade). Computed in float64, exactly: the result is representable."""
    away = "(y > x) == (x > 0)"
    below_power = f"(0 if {away} or math.fabs(math.frexp(x)[0]) != 0.5 else 1)"
    exponent = (f"{least} if math.frexp(x)[1] <= {least + bits} else "
                f"math.frexp(x)[1] - {bits} - {below_power}")
    return (f"math.copysign(math.ldexp(1.0, {least}), y) if x == 0 else "
            f"(math.copysign(math.ldexp(1.0 - math.ldexp(1.0, -{bits}), {top}), x) "
            f"if math.isinf(x) else math.copysign("
            f"math.fabs(x) + math.ldexp(1.0 if {away} else -1.0, {exponent}), x))")


#: ``nextafter(x, y)``, NumPy's (C's) to the bit on every target from arithmetic, frexp
#: and ldexp alone (CUDA has no nextafter in Numba, and Python's is float64's): NaN if
#: either is, `y` if they are equal. Float32 is told from float64 by a rounding in the
#: operands' own type (``x ** 0`` is a 1 of that type on every target, the simulator's
#: NumPy scalars included; a literal would be float64 in Numba), not by the values.
NEXTAFTER = (f"x + y if x != x or y != y else (y if x == y else "
             f"(({nextafter_in(24, -149, 128)}) if x ** 0 + math.ldexp(x ** 0, -30) == x ** 0 "
             f"else ({nextafter_in(53, -1074, 1024)})))")

_2_SQRT_PI, _SQRT_PI_2 = 2 / math.sqrt(math.pi), math.sqrt(math.pi) / 2


def _zero(g, out, x, arg):
    return (g.zeros_like(),)


def _minmax_vjp(g, out, x, y, arg):
    # A tie shares the gradient evenly (PyTorch's choice for maximum/minimum).
    wins_x = (out == x).astype(g.dtype)
    wins_y = (out == y).astype(g.dtype)
    share = wins_x + wins_y
    return g * wins_x / share.where(share > 0, 1), g * wins_y / share.where(share > 0, 1)


def _fmod_vjp(g, out, x, y, arg):
    # fmod(x, y) = x - trunc(x / y) * y: d/dy is -trunc(x / y) (mod's uses floor).
    q = x / y
    return g, -g * q.ceil().where(q < 0, q.floor())


def _arctan2_vjp(g, out, x, y, arg):
    r2 = x * x + y * y
    return g * y / r2, -g * x / r2


def _hypot_vjp(g, out, x, y, arg):
    # 0 at the origin, where hypot is |x| along each axis and abs'(0) = 0 (autograd: NaN).
    r = out.where(out != 0, 1)
    return g * x / r, g * y / r


def _pow_vjp(g, out, x, y, arg):
    # y = 0 takes x ** 1 in the masked branch, so that its own derivative stays finite.
    dx = (g * y * x ** (y - 1).where(y != 0, 1)).where(y != 0, 0)
    dy = (g * out * x.log()).where(x != 0, 0)
    return dx, dy


def _keepdims(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


# Movement and reduction rules keep the gradient's extra leading dimensions: with
# batched seeds (``ng.grad(..., is_grads_batched=True)``) each row is one backward
# pass. Elementwise rules need nothing for that: broadcasting aligns from the right.
def _lead(g, out) -> tuple[int, ...]:
    return g.shape[:g.ndim - out.ndim]


def _lead_key(g, out, key) -> tuple:
    return (slice(None),) * (g.ndim - out.ndim) + key


def _expand_vjp(g, out, x, shape):
    """The sum over the axes the expand added or stretched (a batched gradient's own
    axes lead; those the expand added come after them)."""
    lead = _lead(g, out)
    added = out.ndim - x.ndim
    if lead and added:
        g = g.sum(tuple(range(len(lead), len(lead) + added)))
    return (g._sum_to_shape(lead + x.shape),)


def _sum_vjp(g, out, x, axes):
    lead = _lead(g, out)
    return (g.reshape(lead + _keepdims(x.shape, axes)).broadcast_to(lead + x.shape),)


def _reduce_minmax_vjp(g, out, x, axes):
    # Ties share the gradient evenly, like PyTorch's max/min over a dimension.
    keep = _keepdims(x.shape, axes)
    hits = (x == out.reshape(keep)).astype(g.dtype)
    return (g.reshape(_lead(g, out) + keep) * hits / hits.sum(axis=axes, keepdims=True),)


def _prod_vjp(g, out, x, axes):
    # d prod / d x_i is the product of the others; exact with zeros in x.
    is_zero = x == 0
    zeros = is_zero.astype(x.dtype).sum(axis=axes, keepdims=True)
    prod_nonzero = x.where(~is_zero, 1).prod(axis=axes, keepdims=True)
    others = (prod_nonzero / x.where(~is_zero, 1)).where(zeros == 0, 0)
    others = others.where(~is_zero, prod_nonzero.where(zeros == 1, 0))
    return (g.reshape(_lead(g, out) + _keepdims(x.shape, axes)) * others,)


def _permute_vjp(g, out, x, axes):
    n = g.ndim - out.ndim
    return (g.transpose(tuple(range(n)) + tuple(n + a for a in np.argsort(axes))),)


def _index_vjp(g, out, x, key):
    return (g._index_add(_lead_key(g, out, key), _lead(g, out) + x.shape),)


def _index_put_vjp(g, out, x, v, key):
    key = _lead_key(g, out, key)
    return g.index_put(key, 0), g[key]


def _concat_vjp(g, out, *inputs_and_axis):
    *inputs, axis = inputs_and_axis
    ends = np.cumsum([t.shape[axis] for t in inputs])
    lead = (slice(None),) * (g.ndim - out.ndim + axis)
    return tuple(g[lead + (slice(end - t.shape[axis], end),)] for t, end in zip(inputs, ends))


def _roll_vjp(g, out, x, shifts):
    """The roll back: each axis by minus its shift (a batched gradient's axes lead)."""
    lead = g.ndim - out.ndim
    return (g.roll(tuple(-s for _, s in shifts), tuple(a + lead for a, _ in shifts)),)


def _matmul_vjp(g, out, x, y, arg):
    # matmul broadcasts batch dimensions, batched seeds included; the expand nodes
    # that broadcast x and y sum the gradients back.
    return g @ y.swapaxes(-1, -2), x.swapaxes(-1, -2) @ g


class Table(dict):
    """The table of primitives by name. It counts its changes (`generation`): what was
    derived from its rows and kept (a step plan's kernels and rules) is stale once a row
    is replaced."""

    generation = 0

    def __setitem__(self, name: str, row: Primitive) -> None:
        super().__setitem__(name, row)
        self.generation += 1

    def __delitem__(self, name: str) -> None:
        super().__delitem__(name)
        self.generation += 1


def _shifted(shift: str) -> str:
    """The unsigned shift of x by y (`shift`: << or >>), in steps under 32 as the signed
    one, with uint64 literals."""
    u = "np.uint64"
    step = f"((y & {u}(32)) >> {u}(1))"
    return f"x {shift} (y & {u}(31)) {shift} {step} {shift} {step} if y < {u}(64) else x - x"


P = Primitive
_INT8 = "NumPy shifts bools in int8, numgrad does not (convert with astype first)"
TABLE: Table = Table({p.name: p for p in [
    # ---- elementwise unary ------------------------------------------------------
    P("negative", UNARY, "-x", lambda g, out, x, _: (-g,), np.negative),
    P("abs", UNARY, "abs(x)", lambda g, out, x, _: (g * x.sign(),), np.abs),
    P("exp", UNARY, "math.exp(x)", lambda g, out, x, _: (g * out,), np.exp, floating=True),
    P("expm1", UNARY, "math.expm1(x)", lambda g, out, x, _: (g * (out + 1),), np.expm1,
      floating=True),
    P("log", UNARY, "math.log(x)", lambda g, out, x, _: (g / x,), np.log, floating=True,
      domain=(0.1, 3.0)),
    P("log1p", UNARY, "math.log1p(x)", lambda g, out, x, _: (g / (x + 1),), np.log1p,
      floating=True, domain=(-0.9, 3.0)),
    P("sqrt", UNARY, "math.sqrt(x)", lambda g, out, x, _: (g / (out * 2),), np.sqrt,
      floating=True, domain=(0.1, 3.0)),
    # Integer reciprocal stays integer (truncating), as in NumPy.
    P("reciprocal", UNARY, "1 / x", lambda g, out, x, _: (-g * out * out,), np.reciprocal,
      domain=(0.2, 3.0)),
    P("sin", UNARY, "math.sin(x)", lambda g, out, x, _: (g * x.cos(),), np.sin, floating=True),
    P("cos", UNARY, "math.cos(x)", lambda g, out, x, _: (-g * x.sin(),), np.cos, floating=True),
    P("tan", UNARY, "math.tan(x)", lambda g, out, x, _: (g * (out * out + 1),), np.tan,
      floating=True, domain=(-1.2, 1.2)),
    P("tanh", UNARY, "math.tanh(x)", lambda g, out, x, _: (g * (1 - out * out),), np.tanh,
      floating=True),
    P("sinh", UNARY, "math.sinh(x)", lambda g, out, x, _: (g * x.cosh(),), np.sinh,
      floating=True),
    P("cosh", UNARY, "math.cosh(x)", lambda g, out, x, _: (g * x.sinh(),), np.cosh,
      floating=True),
    P("arcsinh", UNARY, "math.asinh(x)", lambda g, out, x, _: (g / (x * x + 1).sqrt(),),
      np.arcsinh, floating=True),
    P("arccosh", UNARY, "math.acosh(x)", lambda g, out, x, _: (g / (x * x - 1).sqrt(),),
      np.arccosh, floating=True, domain=(1.1, 3.0)),
    P("arctanh", UNARY, "math.atanh(x)", lambda g, out, x, _: (g / (1 - x * x),), np.arctanh,
      floating=True, domain=(-0.9, 0.9)),
    P("arcsin", UNARY, "math.asin(x)", lambda g, out, x, _: (g / (1 - x * x).sqrt(),),
      np.arcsin, floating=True, domain=(-0.9, 0.9)),
    P("arccos", UNARY, "math.acos(x)", lambda g, out, x, _: (-g / (1 - x * x).sqrt(),),
      np.arccos, floating=True, domain=(-0.9, 0.9)),
    P("arctan", UNARY, "math.atan(x)", lambda g, out, x, _: (g / (x * x + 1),), np.arctan,
      floating=True),
    P("log2", UNARY, "math.log2(x)", lambda g, out, x, _: (g / (x * math.log(2)),), np.log2,
      floating=True, domain=(0.1, 3.0)),
    P("log10", UNARY, "math.log10(x)", lambda g, out, x, _: (g / (x * math.log(10)),),
      np.log10, floating=True, domain=(0.1, 3.0)),
    P("exp2", UNARY, "2.0 ** x", lambda g, out, x, _: (g * out * math.log(2),), np.exp2,
      floating=True),
    # Two branches so that neither exp overflows.
    P("sigmoid", UNARY,
      "1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))",
      lambda g, out, x, _: (g * out * (1 - out),), lambda a: 1 / (1 + np.exp(-a)),
      floating=True),
    # (x * 0 + 0: NaN stays NaN, and -0.0 gives 0.0, as in NumPy)
    P("sign", UNARY, "(1 if x > 0 else (-1 if x < 0 else x * 0 + 0))", _zero, np.sign),
    P("floor", UNARY, "np.floor(x)", _zero, np.floor),
    P("ceil", UNARY, "np.ceil(x)", _zero, np.ceil),
    P("rint", UNARY, "np.rint(x)", _zero, np.round),  # ng.round: integers pass through
    P("trunc", UNARY, "np.trunc(x)", _zero, np.trunc),
    P("cbrt", UNARY, cbrt_from("math.copysign(abs(x) ** (1.0 / 3.0), x)"),
      lambda g, out, x, _: (g / (out * out * 3),), np.cbrt, floating=True),
    # (copysign reads the sign bit: signbit(-0.0) and signbit(-nan) are True)
    P("signbit", UNARY, "math.copysign(1.0, x) < 0", ref=np.signbit, result=BOOL),
    P("logical_not", UNARY, "not x", ref=np.logical_not, result=BOOL),
    # (x - x is NaN exactly for an infinity or a NaN, and 0 for an integer)
    P("isnan", UNARY, "x != x", ref=np.isnan, result=BOOL),
    P("isinf", UNARY, "x - x != x - x and x == x", ref=np.isinf, result=BOOL),
    P("isfinite", UNARY, "x - x == x - x", ref=np.isfinite, result=BOOL),
    # ~ of integers (Tensor.invert gives bools logical_not, NumPy's invert of bools:
    # Python's ~True is -2, so no one expression serves both)
    P("invert", UNARY, "~x", ref=np.invert, integral=True,
      no_bools="a bool's invert is its logical_not (Tensor.invert)"),
    # ---- special functions (their expressions and references: numgrad/special_math.py)
    P("erf", UNARY, "math.erf(x)", lambda g, out, x, _: (g * (-(x * x)).exp() * _2_SQRT_PI,),
      special_math.per_element(math.erf, "erf"), floating=True),
    P("erfc", UNARY, "math.erfc(x)", lambda g, out, x, _: (-g * (-(x * x)).exp() * _2_SQRT_PI,),
      special_math.per_element(math.erfc, "erfc"), floating=True),
    P("erfinv", UNARY, special_math.ERFINV,
      lambda g, out, x, _: (g * (out * out).exp() * _SQRT_PI_2,),
      special_math.numpy_form(special_math.ERFINV, "erfinv"), floating=True,
      domain=(-0.9, 0.9)),
    # log|gamma(x)|, inf at the poles (C's lgamma and PyTorch's)
    P("lgamma", UNARY, "math.lgamma(x)", lambda g, out, x, _: (g * x.digamma(),),
      special_math.per_element(math.lgamma, "lgamma"), floating=True, domain=(0.2, 4.0)),
    P("digamma", UNARY, special_math.DIGAMMA, lambda g, out, x, _: (g * x.polygamma(1),),
      special_math.numpy_form(special_math.DIGAMMA, "digamma"), floating=True,
      domain=(0.2, 4.0), called=True),
    # polygamma(n, x): the order n is floored; n carries no gradient (piecewise constant)
    P("polygamma", BINARY, special_math.POLYGAMMA,
      lambda g, out, n, x, _: (g.zeros_like(), g * x.polygamma(n + 1)),
      special_math.numpy_form(special_math.POLYGAMMA, "polygamma", 2), floating=True,
      domain=(0.5, 3.5), called=True),
    # modified Bessel functions of orders 0 and 1, and exp(-|x|) times them
    *[P(name, UNARY, expr, vjp, special_math.numpy_form(expr, name), floating=True,
        domain=(-4.0, 4.0)) for name, expr, vjp in [
        ("i0", bessel_math.I0, bessel_math.i0_vjp), ("i1", bessel_math.I1, bessel_math.i1_vjp),
        ("i0e", bessel_math.I0E, bessel_math.i0e_vjp),
        ("i1e", bessel_math.I1E, bessel_math.i1e_vjp)]],
    # the regularized incomplete gamma functions P(a, x) and Q(a, x): no gradient for a
    *[P(name, BINARY, expr, vjp, special_math.numpy_form(expr, name, 2), floating=True,
        domain=(0.5, 3.5), called=True) for name, expr, vjp in [
        ("gammainc", gammainc_math.GAMMAINC, gammainc_math.gammainc_vjp),
        ("gammaincc", gammainc_math.GAMMAINCC, gammainc_math.gammaincc_vjp)]],
    # the regularized incomplete beta function I_x(a, b): no gradient for a and b
    P("betainc", TERNARY, betainc_math.BETAINC, betainc_math.betainc_vjp,
      special_math.numpy_form(betainc_math.BETAINC, "betainc", 3), floating=True,
      domain=(0.25, 0.75), called=True),
    # ---- elementwise binary -----------------------------------------------------
    P("add", BINARY, "x + y", lambda g, out, x, y, _: (g, g), np.add),
    P("subtract", BINARY, "x - y", lambda g, out, x, y, _: (g, -g), np.subtract),
    P("multiply", BINARY, "x * y", lambda g, out, x, y, _: (g * y, g * x), np.multiply),
    P("divide", BINARY, "x / y", lambda g, out, x, y, _: (g / y, -g * out / y), np.divide,
      floating=True, domain=(0.2, 2.0)),
    P("power", BINARY, "x ** y", _pow_vjp, np.power, domain=(0.2, 2.0)),
    # NaN propagates as in NumPy: a comparison with NaN is False, so test x != x.
    P("maximum", BINARY, "x if (x >= y or x != x) else y", _minmax_vjp, np.maximum),
    P("minimum", BINARY, "x if (x <= y or x != x) else y", _minmax_vjp, np.minimum),
    # fmax/fmin ignore a NaN (NaN only if both are); ties of -0.0 and 0.0 keep x
    # (NumPy's SIMD loops pick either, by array length).
    P("fmax", BINARY, "x if (x >= y or y != y) else y", _minmax_vjp, np.fmax),
    P("fmin", BINARY, "x if (x <= y or y != y) else y", _minmax_vjp, np.fmin),
    P("arctan2", BINARY, "math.atan2(x, y)", _arctan2_vjp, np.arctan2, floating=True),
    P("hypot", BINARY, "math.hypot(x, y)", _hypot_vjp, np.hypot, floating=True),
    # d/dx is sign(x) * sign(out) (0 at x = 0, as PyTorch's); y gives only a sign.
    P("copysign", BINARY, "math.copysign(x, y)",
      lambda g, out, x, y, _: (g * (out * x).sign(), g.zeros_like()), np.copysign,
      floating=True),
    # NumPy's npy_logaddexp(2): x == y first (equal infinities), the larger operand
    # outside log1p, NaN from x - y.
    P("logaddexp", BINARY,
      "x + 0.6931471805599453 if x == y else (x + math.log1p(math.exp(y - x)) if x > y "
      "else (y + math.log1p(math.exp(x - y)) if x < y else x - y))",
      lambda g, out, x, y, _: (g * (x - out).exp(), g * (y - out).exp()), np.logaddexp,
      floating=True),
    P("logaddexp2", BINARY,
      "x + 1.0 if x == y else (x + 1.4426950408889634 * math.log1p(2.0 ** (y - x)) if x > y "
      "else (y + 1.4426950408889634 * math.log1p(2.0 ** (x - y)) if x < y else x - y))",
      lambda g, out, x, y, _: (g * (x - out).exp2(), g * (y - out).exp2()), np.logaddexp2,
      floating=True),
    # Python's % is NumPy's remainder: the sign follows the divisor (and x % 0 is 0 for
    # integers, NaN for floats, under the kernels' error model).
    P("mod", BINARY, "x % y", lambda g, out, x, y, _: (g, -g * (x / y).floor()), np.remainder,
      domain=(-3.0, 3.0)),
    # Python's // is NumPy's floor_divide: the quotient floored (x // 0 is 0 for
    # integers, +-inf or NaN for floats); piecewise constant, so its gradient is 0.
    # Dividing by -1 negates first, so that the least integer wraps to itself as
    # NumPy's does (rather than overflow to 0).
    P("floor_divide", BINARY, "(-x) // 1 if y == -1 else x // y",
      lambda g, out, x, y, _: (g.zeros_like(), g.zeros_like()), np.floor_divide,
      domain=(-3.0, 3.0), unsigned="x // y"),
    # C's fmod (the sign follows x), exact for floats and integers alike: a floored
    # remainder by a divisor of x's sign is the truncated one; -abs(y) <= 0 never
    # overflows, and copysign reads the sign of -0.0.
    P("fmod", BINARY, "x % -abs(y) if math.copysign(1.0, x) < 0 else -(-x % -abs(y))",
      _fmod_vjp, np.fmod, domain=(-3.0, 3.0), unsigned="x % y"),
    P("equal", BINARY, "x == y", ref=np.equal, result=BOOL),
    P("not_equal", BINARY, "x != y", ref=np.not_equal, result=BOOL),
    P("less", BINARY, "x < y", ref=np.less, result=BOOL),
    P("less_equal", BINARY, "x <= y", ref=np.less_equal, result=BOOL),
    P("greater", BINARY, "x > y", ref=np.greater, result=BOOL),
    P("greater_equal", BINARY, "x >= y", ref=np.greater_equal, result=BOOL),
    P("logical_and", BINARY, "(x != 0) and (y != 0)", ref=np.logical_and, result=BOOL),
    P("logical_or", BINARY, "(x != 0) or (y != 0)", ref=np.logical_or, result=BOOL),
    P("logical_xor", BINARY, "(x != 0) != (y != 0)", ref=np.logical_xor, result=BOOL),
    # &, | and ^ as NumPy's: bitwise on integers, logical on bools
    P("bitwise_and", BINARY, "x & y", ref=np.bitwise_and, integral=True),
    P("bitwise_or", BINARY, "x | y", ref=np.bitwise_or, integral=True),
    P("bitwise_xor", BINARY, "x ^ y", ref=np.bitwise_xor, integral=True),
    # << and >> as NumPy 2's on integers: counts outside [0, bits) give 0 (left) or the
    # sign (right), negative ones too. A shift by 64 or more is undefined in LLVM, so the
    # count is taken in steps under 32 (each defined for int32 and int64 alike; shifts
    # compose); on unsigned types in uint64's literals, 0 as x - x. NumPy shifts bools in
    # int8; numgrad does not.
    P("left_shift", BINARY,
      "x << (y & 31) << ((y & 32) >> 1) << ((y & 32) >> 1) if 0 <= y < 64 else 0",
      ref=np.left_shift, integral=True, no_bools=_INT8, unsigned=_shifted("<<")),
    P("right_shift", BINARY,
      "x >> (y & 31) >> ((y & 32) >> 1) >> ((y & 32) >> 1) if 0 <= y < 64 "
      "else (-1 if x < 0 else 0)", ref=np.right_shift, integral=True, no_bools=_INT8,
      unsigned=_shifted(">>")),
    # The neighbour of x toward y: a step of one spacing, so d/dx is 1 and d/dy is 0 (the
    # result moves only where y crosses x).
    P("nextafter", BINARY, NEXTAFTER, lambda g, out, x, y, _: (g, g.zeros_like()),
      np.nextafter, floating=True, float32_at_once=False, called=True),
    # H(x) with H(0) = y (NumPy's heaviside): the gradient goes to y where x is 0
    P("heaviside", BINARY, "x if x != x else (0.0 if x < 0 else (1.0 if x > 0 else y))",
      lambda g, out, x, y, _: (g.zeros_like(), g.where(x == 0, 0)), np.heaviside,
      floating=True),
    # ---- elementwise ternary, casts and constants -------------------------------
    P("where", TERNARY, "y if x else z",
      lambda g, out, c, a, b, _: (None, g.where(c, 0), g.where(~c, 0)), np.where,
      condition=True),
    P("cast", CAST, vjp=lambda g, out, x, _: (g.astype(x.dtype),)),
    P("const", CONST),
    # ---- reductions (the accumulator starts at `identity`) ----------------------
    P("sum", REDUCE, vjp=_sum_vjp, ref=np.sum, identity="0", combine="acc + v"),
    P("prod", REDUCE, vjp=_prod_vjp, ref=np.prod, identity="1", combine="acc * v"),
    P("max", REDUCE, vjp=_reduce_minmax_vjp, ref=np.max, identity="LOWEST",
      combine="v if (v > acc or v != v) and acc == acc else acc"),
    P("min", REDUCE, vjp=_reduce_minmax_vjp, ref=np.min, identity="HIGHEST",
      combine="v if (v < acc or v != v) and acc == acc else acc"),
    # ---- movement: views and copies, run by the target's backend ----------------
    P("reshape", MOVEMENT,
      vjp=lambda g, out, x, shape: (g.reshape(_lead(g, out) + x.shape),)),
    P("permute", MOVEMENT, vjp=_permute_vjp),
    P("expand", MOVEMENT, vjp=_expand_vjp),
    P("index", MOVEMENT, vjp=_index_vjp),
    P("index_add", MOVEMENT, vjp=lambda g, out, x, arg: (g[_lead_key(g, out, arg[0])],)),
    P("index_put", MOVEMENT, vjp=_index_put_vjp),
    P("concatenate", MOVEMENT, vjp=_concat_vjp),
    # a cyclic shift; `arg` is ((axis, shift), ...), each shift in [1, length)
    P("roll", MOVEMENT, vjp=_roll_vjp),
    # to another device; `arg` is the source device, where the gradient goes back
    P("copy", MOVEMENT, vjp=lambda g, out, x, source: (g.to(source),)),
    # ---- hand-written kernels and data ------------------------------------------
    P("matmul", MATMUL, vjp=_matmul_vjp, ref=np.matmul),
    P("load", LOAD),
]})
del P, _INT8


def register(*primitives: Primitive) -> None:
    """Add rows defined beside their front end (library primitives: scans, sorts,
    decompositions, whose rules are long); a name is defined once."""
    for p in primitives:
        if p.name in TABLE:
            raise ValueError(f"primitive {p.name!r} is already in the table")
        TABLE[p.name] = p
