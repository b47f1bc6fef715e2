"""A random-program campaign: numgrad against NumPy, HIPS autograd and finite differences.

    python tests/random_programs.py --programs N --seed S [--second-order-fraction F]
        [--max-ops K] [--variants R] [--no-minimise] [--show]

A program is a straight-line list of steps over 1-3 float64 inputs of broadcastable
shapes (rank 0-3, sizes 1-5: (3, 1) with (4,), 0-d, ...), ending in a scalar: the sum of
its last value times fixed random weights. Each step is one line of Python source over
``m`` (the array module), ``np`` (NumPy's namespace: array constants and, once numgrad
dispatches NumPy's functions, ``np.exp(tensor)``) and ``F`` (what NumPy lacks: sigmoid,
relu, logsumexp, softmax, log_softmax, and a ``where`` autograd can differentiate through
broadcasting). So ONE interpreter, the program compiled to a Python function of
``(m, F, np, inputs..., w)``, runs it on three backends (`Backend`): numgrad, NumPy and
``autograd.numpy``. For each program it checks

1. the value against NumPy (float64; tolerances in `TOLERANCE`);
2. the gradient with respect to every input against autograd, and against central
   differences with ``ng.gradcheck`` (its defaults);
3. for a fraction of the programs, second order: a Hessian-vector product against
   autograd's, and ``ng.gradgradcheck`` (small inputs only: it costs 2 backward passes
   per input element).

The vocabulary is numgrad's: every unary and binary primitive of `numgrad.ops.TABLE`
(new rows join automatically, with their `Primitive.domain`), where/clip/maximum/minimum,
comparisons and logical operators in conditions, reductions (sum, mean, prod, max, min,
var, std, logsumexp, argmax/argmin, any/all) over random axes with keepdims, reshape,
transpose, swapaxes, expand_dims, squeeze, broadcast_to, basic indexing (steps, ints,
None, Ellipsis), integer-array and boolean-mask indexing, concatenate, stack, split,
matmul/dot/outer/einsum (diagonals too), softmax/log_softmax, Python-scalar and ndarray
operands; and the wider NumPy surface of SPEC section 2 as numgrad gains it. The
generator evaluates each step with NumPy as it draws it and keeps it only if the values
stay finite and moderate (|v| <= `BIG`) and its kinks and ties (abs, relu, sign, floor,
maximum, max, clip, comparisons) are at least `MARGIN` from its inputs, so finite
differences mean something. Domain-restricted operations take their input as it is when
inside the primitive's domain, else through a map into it (``log(abs(x) + 0.5)``,
``sqrt(x * x + 0.1)``, ``x / (1 + y * y)``, ...).

Program i of a campaign is variant ``i % R`` of the program of seed ``S + i // R``
(variant 0: as drawn; k: on the k-th redraw of its input values). A mismatch is printed
with its seed and variant and as a numgrad script to paste, then minimised (steps ended
early or bypassed, inputs rounded, while the same check still fails in the same way).

The compile bill: a kernel is cached by its structure, and numgrad collapses loop nests,
so ranks and broadcast patterns hardly matter; what makes a kernel new is its fused chain
of operations, and nearly every random program brings ~3 new ones (0.2-0.4 s each). A run
of new programs is therefore compile-bound (about 1-2 programs/s on 2 cores; 25-30
programs/s once compiled). ``--variants R`` checks each program on R input draws that
reuse its kernels; ``--max-ops`` bounds the chains.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import subprocess
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from types import SimpleNamespace

import autograd
import autograd.numpy as anp
import autograd.scipy.special as aspecial
import numpy as np
from autograd.tracer import getval

import numgrad as ng
from numgrad.ops import BINARY, TABLE, UNARY, Primitive

# ---- tolerances and limits: all in one place -------------------------------------------

#: |got - want| <= rtol * |want| + atol * max(1, max |want| over the array): the floor
#: covers cancellation (a difference of two values of the array's size, rounded apart).
TOLERANCE = {
    "value": (1e-12, 1e-12),  # float64 against NumPy: libm and summation order differ
    "grad": (1e-10, 1e-12),  # against autograd: longer chains, other summation orders
    "hvp": (1e-10, 1e-12),  # Hessian-vector product against autograd
}
#: kinks and ties nearer than this to a step's input are redrawn (gradcheck's eps is 1e-6)
MARGIN = 1e-3
#: values larger than this are redrawn (they make finite differences lose digits)
BIG = 100.0
MAX_RANK = 3
MAX_SIZE = 120  # elements of any value
MAX_INPUT_SIZE = 36  # elements of an input: gradcheck evaluates 2 programs per element
GRADGRAD_MAX_INPUTS = 24  # total input elements for ng.gradgradcheck (2 backward passes each)

# ---- the three backends ------------------------------------------------------------------

#: numgrad's spelling of each F helper (also used to print programs as numgrad scripts)
NUMGRAD_NAMES = {
    "sigmoid": "ng.sigmoid",
    "relu": "ng.relu",
    "logsumexp": "ng.logsumexp",
    "softmax": "ng.nn.functional.softmax",
    "log_softmax": "ng.nn.functional.log_softmax",
    "where": "ng.where",
}


def _reference_helpers(m, stop: Callable) -> SimpleNamespace:
    """The F helpers for NumPy and ``autograd.numpy``, written once over module `m`.

    `stop` takes a value out of differentiation (autograd's ``getval``): a shift by
    the maximum changes nothing mathematically, so it carries no derivative.
    """
    def sigmoid(a):
        return 1 / (1 + m.exp(-a))

    def relu(a):
        return m.where(a > 0, a, 0.0)  # relu'(0) = 0, PyTorch's choice

    def logsumexp(a, axis=None, keepdims=False):
        shift = stop(m.max(a, axis=axis, keepdims=True))
        out = m.log(m.sum(m.exp(a - shift), axis=axis, keepdims=True)) + shift
        return out if keepdims else m.squeeze(out, axis=axis)

    def softmax(a, axis=-1):
        e = m.exp(a - stop(m.max(a, axis=axis, keepdims=True)))
        return e / m.sum(e, axis=axis, keepdims=True)

    def log_softmax(a, axis=-1):
        s = a - stop(m.max(a, axis=axis, keepdims=True))
        return s - m.log(m.sum(m.exp(s), axis=axis, keepdims=True))

    def where(c, a, b):
        # autograd's where cannot send a gradient back through broadcasting: broadcast first
        shape = np.broadcast_shapes(np.shape(c), np.shape(a), np.shape(b))
        return m.where(c, m.broadcast_to(a, shape), m.broadcast_to(b, shape))

    return SimpleNamespace(sigmoid=sigmoid, relu=relu, logsumexp=logsumexp, softmax=softmax,
                           log_softmax=log_softmax, where=where)


class _Module:
    """`module` with some functions replaced (what autograd cannot differentiate as is)."""

    def __init__(self, module, **functions):
        self._module = module
        self.__dict__.update(functions)

    def __getattr__(self, name):
        return getattr(self._module, name)


def _anp_broadcast_to(x, shape):
    # autograd's broadcast_to cannot add leading axes: add them as length 1 first
    shape = tuple(shape)
    x = anp.reshape(x, (1,) * (len(shape) - anp.ndim(x)) + anp.shape(x))
    return anp.broadcast_to(x, shape)


@dataclass(frozen=True)
class Backend:
    name: str
    m: object  # the array module
    F: SimpleNamespace
    #: what programs call ``np``: NumPy, whose functions dispatch on tensors to numgrad
    #: (when numgrad implements ``__array_ufunc__``), or ``autograd.numpy`` for autograd
    np: object = np

    def __call__(self, fn: Callable, *args):
        return fn(self.m, self.F, self.np, *args)


NUMGRAD = Backend("numgrad", ng, SimpleNamespace(
    **{k: eval(v, {"ng": ng}) for k, v in NUMGRAD_NAMES.items()}))  # noqa: S307
NUMPY = Backend("numpy", np, _reference_helpers(np, lambda v: v))
# (autograd.numpy's i0 has no VJP; autograd.scipy.special's has)
_ANP = _Module(anp, broadcast_to=_anp_broadcast_to, i0=aspecial.i0)
AUTOGRAD = Backend("autograd", _ANP, _reference_helpers(_ANP, getval), _ANP)

# ---- programs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One line: `expr` with ``{0}``, ``{1}``, ... standing for the values `args`."""

    expr: str
    args: tuple[int, ...]
    kind: str = ""
    #: on the arguments' NumPy values: False where a kink or tie is too near
    check: Callable[..., bool] | None = field(default=None, compare=False)


@dataclass
class Program:
    """Inputs (values 0..n-1), steps (values n, n+1, ...) and the output's weights."""

    seed: int
    inputs: list[np.ndarray]
    steps: list[Step]
    weights: np.ndarray
    #: the value whose weighted sum is the output (the last one unless minimised)
    final: int = -1
    #: 0: the inputs `generate` drew; k > 0: the k-th redraw of their values (`variant`)
    variant: int = 0

    @property
    def final_index(self) -> int:
        return self.final if self.final >= 0 else len(self.inputs) + len(self.steps) - 1

    def names(self) -> list[str]:
        return [f"x{i}" for i in range(len(self.inputs))] + \
            [f"v{k}" for k in range(len(self.steps))]

    def lines(self) -> list[str]:
        names = self.names()
        return [f"{names[len(self.inputs) + k]} = "
                f"{s.expr.format(*(names[a] for a in s.args))}"
                for k, s in enumerate(self.steps)]

    def source(self) -> str:
        """The program as one Python function of (m, F, np, inputs..., w)."""
        names = self.names()
        body = "".join(f"    {line}\n" for line in self.lines())
        last = names[self.final_index]
        return (f"def program(m, F, np, {', '.join(names[:len(self.inputs)])}, w):\n{body}"
                f"    return m.sum({last} * w), {last}\n")

    def function(self) -> Callable:
        space: dict = {}
        exec(compile(self.source(), f"<program {self.seed}>", "exec"), space)  # noqa: S102
        return space["program"]

    def run(self, backend: Backend, inputs, weights=None):
        w = self.weights if weights is None else weights
        return backend(self.function(), *inputs, w)

    def script(self) -> str:
        """The program as a numgrad script to paste: value and gradients printed."""
        def spell(line: str) -> str:
            line = re.sub(r"\bF\.(\w+)", lambda g: NUMGRAD_NAMES[g.group(1)], line)
            return re.sub(r"\bm\.", "ng.", line)

        names = self.names()
        xs = names[:len(self.inputs)]
        out = ["import numpy as np", "import numgrad as ng", ""]
        out += [f"{x} = ng.tensor({_literal(a)}, requires_grad=True)"
                for x, a in zip(xs, self.inputs)]
        out.append(f"w = ng.tensor({_literal(self.weights)})")
        out += [spell(line) for line in self.lines()]
        out.append(f"out = ng.sum({names[self.final_index]} * w)")
        out.append("print(out.item())")
        out.append(f"print(ng.grad(out, [{', '.join(xs)}], allow_unused=True))")
        return "\n".join(out)


def _literal(a: np.ndarray) -> str:
    return repr(np.asarray(a).tolist())


# ---- generating ---------------------------------------------------------------------------

_DEFAULT_DOMAIN = Primitive.__dataclass_fields__["domain"].default
#: numgrad's function for a primitive named otherwise
_SPELLING = {"rint": "m.round", "sigmoid": "F.sigmoid", "relu": "F.relu"}
#: maps into a primitive's domain, with the kink check their own inputs need
_SAFE = {
    "log": ("m.log(abs({0}) + 0.5)", lambda a: _clear(a)),
    "sqrt": ("m.sqrt({0} * {0} + 0.1)", None),
    "log1p": ("m.log1p({0} * {0})", None),
    "reciprocal": ("m.reciprocal({0} * {0} + 0.25)", None),
    "tan": ("m.tan(m.tanh({0}))", None),
}
#: distance of an input to the kinks of a piecewise operation
_KINKS = {
    "abs": lambda a: a,
    "sign": lambda a: a,
    "relu": lambda a: a,
    "floor": lambda a: a - np.round(a),
    "ceil": lambda a: a - np.round(a),
    "rint": lambda a: a - np.floor(a) - 0.5,
}
#: the wider NumPy surface (SPEC section 2), drawn once numgrad has the function:
#: name -> its domain (None: anything the value bounds allow)
_EXTRA_UNARY = {"sinh": None, "cosh": None, "arcsinh": None, "arctan": None,
                "arcsin": (-0.95, 0.95), "arccos": (-0.95, 0.95), "arctanh": (-0.9, 0.9),
                "arccosh": (1.1, 4.0), "log2": (0.1, 3.0), "log10": (0.1, 3.0), "exp2": None,
                "deg2rad": None, "rad2deg": None}
_EXTRA_BINARY = {"arctan2", "hypot", "logaddexp", "logaddexp2"}
#: binary rows that are steps (a zero gradient between jumps that finite differences
#: cross, and no autograd rule for heaviside), and nextafter (no autograd rule): not drawn
_STEP_BINARY = {"floor_divide", "heaviside", "nextafter"}


#: numgrad implements NumPy's dispatch (SPEC section 8): ``np.exp(tensor)`` is numgrad's
_DISPATCH = hasattr(ng.Tensor, "__array_ufunc__") and hasattr(ng.Tensor, "__array_function__")


def _clear(d) -> bool:
    """No kink distance in `d` is nonzero and under MARGIN (exact hits are constants:
    relu's zeros, floor's integers, copies of one element, which finite differences
    cannot move off the kink)."""
    d = np.abs(np.asarray(d, dtype=np.float64))
    return bool(np.all((d > MARGIN) if _STRICT else (d == 0) | (d > MARGIN)))


_STRICT = False  # set by `validate(strict=True)`


def _gap(a: np.ndarray, axis, which: str) -> np.ndarray:
    """The distance between the extreme of `a` over `axis` and the runner-up."""
    axes = tuple(range(a.ndim)) if axis is None else \
        tuple(np.atleast_1d(axis) % max(a.ndim, 1)) if a.ndim else ()
    kept = [d for d in range(a.ndim) if d not in axes]
    flat = np.transpose(a, kept + list(axes)).reshape(
        tuple(a.shape[d] for d in kept) + (-1,)) if a.ndim else a.reshape(1)
    if flat.shape[-1] < 2:
        return np.zeros(0)
    s = np.sort(flat, axis=-1)
    return s[..., -1] - s[..., -2] if which == "max" else s[..., 1] - s[..., 0]


def _fmt(c: float) -> str:
    return repr(round(float(c), 2))


def _shape_text(shape) -> str:
    return repr(tuple(int(d) for d in shape))


class _Builder:
    """Draws steps over the values so far (kept as NumPy arrays, to check each step)."""

    KINDS = ["unary", "binary", "scalar", "where", "clip", "reduce", "argext", "softmax",
             "reshape", "transpose", "expand_squeeze", "broadcast", "index", "index_array",
             "join", "split", "matmul", "einsum", "extra"]
    WEIGHTS = [18, 14, 7, 5, 3, 12, 1, 2, 5, 4, 3, 2, 6, 4, 3, 1, 5, 4, 2]

    def __init__(self, rng: np.random.Generator, inputs: list[np.ndarray]):
        self.rng = rng
        self.vals = list(inputs)
        self.steps: list[Step] = []
        self.unary = [p.name for p in TABLE.values()
                      if p.kind == UNARY and p.result != "bool" and not p.integral] + \
            ["square", "relu"]
        self.unary += [n for n in _EXTRA_UNARY if hasattr(ng, n)]
        self.binary = [p.name for p in TABLE.values()
                       if p.kind == BINARY and p.result != "bool" and not p.integral
                       and p.name not in _STEP_BINARY]
        self.binary += [n for n in sorted(_EXTRA_BINARY) if hasattr(ng, n)]

    # ---- helpers ----
    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def pick(self) -> int:
        """A value, most likely a recent one."""
        back = min(int(self.rng.geometric(0.45)) - 1, len(self.vals) - 1)
        return len(self.vals) - 1 - back

    def partner(self, i: int, ok: Callable[[tuple], bool]) -> int | None:
        found = [j for j, v in enumerate(self.vals) if ok(v.shape)]
        if not found:
            return None
        return i if i in found and self.rng.random() < 0.25 else self.choice(found)

    def add(self, expr: str, args, kind: str, check=None) -> bool:
        """Append the step if NumPy computes a moderate, finite value for it."""
        if _DISPATCH and self.rng.random() < 0.15:
            expr = re.sub(r"\bm\.", "np.", expr)  # NumPy's function, dispatched to numgrad
        args = tuple(int(a) for a in args)
        arrays = [self.vals[a] for a in args]
        if check is not None and not check(*arrays):
            return False
        value = _evaluate(expr, arrays)
        if value is None:
            return False
        self.vals.append(value)
        self.steps.append(Step(expr, args, kind, check))
        return True

    @staticmethod
    def broadcastable(*shapes) -> bool:
        try:
            out = np.broadcast_shapes(*shapes)
        except ValueError:
            return False
        return len(out) <= MAX_RANK and math.prod(out) <= MAX_SIZE

    def axis(self, ndim: int, allow_tuple: bool = True):
        """None, an int (maybe negative) or a tuple of axes, for a reduction."""
        if ndim == 0:
            return None
        u = self.rng.random()
        if u < 0.25:
            return None
        if u < 0.75 or not allow_tuple:
            ax = int(self.rng.integers(ndim))
            return ax - ndim if self.rng.random() < 0.3 else ax
        k = int(self.rng.integers(1, ndim + 1))
        axes = [int(a) for a in self.rng.permutation(ndim)[:k]]
        return tuple(a - ndim if self.rng.random() < 0.3 else a for a in axes)

    # ---- step kinds: each draws one step and returns whether it was kept ----
    def op_unary(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        name = self.choice(self.unary)
        fn = _SPELLING.get(name, f"m.{name}")
        p = TABLE.get(name)
        domain = _EXTRA_UNARY.get(name) if p is None else \
            (p.domain if p.domain != _DEFAULT_DOMAIN else None)
        check = (lambda x, d=_KINKS[name]: _clear(d(x))) if name in _KINKS else None
        if domain is not None and not (a.min() > domain[0] and a.max() < domain[1]):
            if name in _SAFE:
                expr, check = _SAFE[name]
            else:  # a smooth map of the reals into the domain
                lo, hi = domain
                span = (hi - lo) * 0.9
                expr = f"{fn}({_fmt(lo + 0.05 * (hi - lo))} + {_fmt(span)} * F.sigmoid({{0}}))"
            return self.add(expr, [i], name, check)
        spellings = [f"{fn}({{0}})"]
        if name == "negative":
            spellings.append("-{0}")
        elif name == "abs":
            spellings.append("abs({0})")
        elif name == "square":
            spellings.append("{0} ** 2")
        return self.add(self.choice(spellings), [i], name, check)

    def op_binary(self) -> bool:
        i = self.pick()
        j = self.partner(i, lambda s: self.broadcastable(self.vals[i].shape, s))
        if j is None:
            return False
        a, b = self.vals[i], self.vals[j]
        name = self.choice(self.binary)
        operators = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
        check = None
        if name in operators:
            expr = self.choice([f"{{0}} {operators[name]} {{1}}", f"m.{name}({{0}}, {{1}})"])
            if name == "divide" and np.abs(b).min() < 0.2:
                expr = "{0} / (1 + {1} * {1})"
        elif name == "power":
            if a.min() > 0.2 and a.max() < 2 and np.abs(b).max() < 2:
                expr = self.choice(["{0} ** {1}", "m.power({0}, {1})"])
            else:
                expr = "m.power({0} * {0} + 0.5, m.sin({1}))"
        elif name in ("maximum", "minimum", "fmax", "fmin"):
            expr = f"m.{name}({{0}}, {{1}})"
            check = lambda x, y: _clear(x - y)  # noqa: E731
        elif name == "arctan2":
            expr = "m.arctan2({0}, {1} * {1} + 0.5)"
        else:
            expr = f"m.{name}({{0}}, {{1}})"
        return self.add(expr, [i, j], name, check)

    def op_scalar(self) -> bool:
        i = self.pick()
        c = self.rng.uniform(0.5, 2.5) * self.choice([-1, 1])
        c, p = _fmt(c), _fmt(abs(c))
        forms = [f"{{0}} + {c}", f"{c} - {{0}}", f"{{0}} * {c}", f"{c} * {{0}}",
                 f"{{0}} / {c}", f"{c} / (1 + {{0}} * {{0}})", "{0} ** 2", "{0} ** 3",
                 f"{p} ** {{0}}", "2 * {0}", f"m.maximum({{0}}, {c})", f"m.minimum({c}, {{0}})"]
        a = self.vals[i]
        if a.ndim:  # an ndarray constant, on either side (numgrad's reflected operators)
            shape = a.shape[-int(self.rng.integers(1, a.ndim + 1)):]
            const = f"np.array({np.round(self.rng.uniform(-2, 2, shape), 2).tolist()})"
            forms += [f"{const} * {{0}}", f"{{0}} - {const}", f"{const} + {{0}}"]
        expr = self.choice(forms)
        check = None
        if "maximum" in expr or "minimum" in expr:
            check = lambda x, c=float(c): _clear(x - c)  # noqa: E731
        return self.add(expr, [i], "scalar", check)

    def op_where(self) -> bool:
        i = self.pick()
        j = self.partner(i, lambda s: self.broadcastable(self.vals[i].shape, s))
        k = self.partner(i, lambda s: self.broadcastable(self.vals[i].shape,
                                                         self.vals[j].shape, s))
        if j is None or k is None:
            return False
        c = self.vals[k]
        t = _fmt(self.rng.uniform(c.min(), c.max()) if c.size > 1 else c.item() + 0.5)
        u = self.rng.random()
        if u < 0.4:
            cond, args = f"{{2}} > {t}", [i, j, k]
            check = lambda x, y, z: _clear(z - float(t))  # noqa: E731
        elif u < 0.6:
            l_ = self.partner(k, lambda s: self.broadcastable(
                self.vals[i].shape, self.vals[j].shape, c.shape, s))
            if l_ is None:
                return False
            cond, args = "{2} < {3}", [i, j, k, l_]
            check = lambda x, y, z, v: _clear(z - v)  # noqa: E731
        elif u < 0.7 and c.ndim:
            ax = int(self.rng.integers(-c.ndim, c.ndim))
            red = self.choice(["any", "all"])
            cond = self.choice([f"m.{red}({{2}} > {t}, axis={ax}, keepdims=True)",
                                f"({{2}} < {t}).{red}(axis={ax}, keepdims=True)"])
            args = [i, j, k]
            check = lambda x, y, z: _clear(z - float(t))  # noqa: E731
        elif u < 0.8:
            cond = self.choice([f"({{2}} > {t}) & ({{2}} < {_fmt(float(t) + 1)})",
                                f"({{2}} < {t}) | ({{2}} > {_fmt(float(t) + 1)})",
                                f"~({{2}} > {t})", f"m.logical_not({{2}} < {t})"])
            args = [i, j, k]
            check = lambda x, y, z: _clear(z - float(t)) and _clear(  # noqa: E731
                z - float(t) - 1)
        else:
            cond, args = f"{{2}} >= {t}", [i, j, k]
            check = lambda x, y, z: _clear(z - float(t))  # noqa: E731
        other = "{1}" if self.rng.random() < 0.7 else self.choice(["0.0", "1.5", "-{1}"])
        return self.add(f"F.where({cond}, {{0}}, {other})", args, "where", check)

    def op_clip(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        lo, hi = sorted(self.rng.uniform(a.min() - 0.2, a.max() + 0.2, 2))
        lo, hi = _fmt(lo), _fmt(hi)
        form = self.choice([f"m.clip({{0}}, {lo}, {hi})", f"{{0}}.clip({lo}, {hi})",
                            f"m.clip({{0}}, None, {hi})", f"m.clip({{0}}, {lo}, None)"])
        if float(lo) >= float(hi):
            return False
        return self.add(form, [i], "clip",
                        lambda x: _clear(x - float(lo)) and _clear(x - float(hi)))

    def op_reduce(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        name = self.choice(["sum", "mean", "prod", "max", "min", "var", "std", "logsumexp"])
        axis = self.axis(a.ndim)
        keepdims = self.rng.random() < 0.4
        kwargs = []
        if axis is not None or self.rng.random() < 0.3:
            kwargs.append(f"axis={axis!r}")
        count = a.size if axis is None else math.prod(
            a.shape[x] for x in np.atleast_1d(axis))
        ddof = 0
        if name in ("var", "std") and count > 1 and self.rng.random() < 0.3:
            ddof = 1
            kwargs.append("ddof=1")
        if keepdims or self.rng.random() < 0.2:
            kwargs.append(f"keepdims={keepdims}")
        text = ", ".join(kwargs)
        if name == "logsumexp":
            expr = f"F.logsumexp({{0}}{', ' if text else ''}{text})"
        else:
            expr = self.choice([f"m.{name}({{0}}{', ' if text else ''}{text})",
                                f"{{0}}.{name}({text})"])
        check = None
        if name in ("max", "min"):
            check = lambda x: _clear(_gap(x, axis, name))  # noqa: E731
        elif name == "prod":  # autograd's gradient divides by x
            check = lambda x: bool(np.all(x != 0))  # noqa: E731
        elif name == "std":
            check = lambda x: bool(np.all(x.var(axis=axis, ddof=ddof) > MARGIN))  # noqa: E731
        return self.add(expr, [i], name, check)

    def op_argext(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        if a.ndim == 0:
            return False
        name = self.choice(["argmax", "argmin"])
        axis = self.axis(a.ndim, allow_tuple=False)
        return self.add(f"{{0}} + 0.25 * m.{name}({{0}}, axis={axis}, keepdims=True)", [i],
                        name, lambda x: _clear(_gap(x, axis, name[3:])))

    def op_softmax(self) -> bool:
        i = self.pick()
        if self.vals[i].ndim == 0:
            return False
        name = self.choice(["softmax", "log_softmax"])
        axis = int(self.rng.integers(-self.vals[i].ndim, self.vals[i].ndim))
        return self.add(f"F.{name}({{0}}, axis={axis})", [i], name)

    def op_reshape(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        shapes = [s for r in range(MAX_RANK + 1) for s in itertools.product(
            *[[d for d in range(1, a.size + 1) if a.size % d == 0]] * r)
            if math.prod(s) == a.size]
        shape = list(self.choice(shapes))
        if shape and self.rng.random() < 0.3:
            shape[int(self.rng.integers(len(shape)))] = -1
        text = _shape_text(shape)
        forms = [f"m.reshape({{0}}, {text})", f"{{0}}.reshape({text})"]
        if a.ndim != 1:
            forms += ["m.ravel({0})", "{0}.ravel()", "{0}.flatten()"]
        return self.add(self.choice(forms), [i], "reshape")

    def op_transpose(self) -> bool:
        i = self.pick()
        r = self.vals[i].ndim
        if r < 2:
            return False
        perm = _shape_text(self.rng.permutation(r))
        a, b = (int(x) for x in self.rng.choice(r, 2, replace=False))
        b = b - r if self.rng.random() < 0.3 else b
        forms = [f"m.transpose({{0}}, {perm})", f"{{0}}.transpose({perm})", "{0}.T",
                 "m.transpose({0})", f"m.swapaxes({{0}}, {a}, {b})", f"{{0}}.swapaxes({a}, {b})"]
        return self.add(self.choice(forms), [i], "transpose")

    def op_expand_squeeze(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        ones = [d for d, n in enumerate(a.shape) if n == 1]
        if ones and self.rng.random() < 0.5:
            d = self.choice(ones)
            d = d - a.ndim if self.rng.random() < 0.3 else d
            form = self.choice([f"m.squeeze({{0}}, axis={d})", f"{{0}}.squeeze({d})",
                                "m.squeeze({0})", "{0}.squeeze()"])
            return self.add(form, [i], "squeeze")
        if a.ndim >= MAX_RANK:
            return False
        axis = int(self.rng.integers(-a.ndim - 1, a.ndim + 1))
        if a.ndim <= 1 and self.rng.random() < 0.3:
            axis = (0, -1)
        return self.add(f"m.expand_dims({{0}}, {axis!r})", [i], "expand_dims")

    def op_broadcast(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        shape = [int(self.rng.integers(1, 5)) if n == 1 else n for n in a.shape]
        if len(shape) < MAX_RANK and self.rng.random() < 0.5:
            shape.insert(0, int(self.rng.integers(1, 4)))
        return self.add(f"m.broadcast_to({{0}}, {_shape_text(shape)})", [i], "broadcast_to")

    def op_index(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        items = []
        for n in a.shape[:int(self.rng.integers(0, a.ndim + 1))] if a.ndim else ():
            u = self.rng.random()
            if u < 0.25:
                items.append(str(int(self.rng.integers(-n, n))))
            elif u < 0.8:
                step = self.choice([None, None, 1, 2, -1, -2, 3])
                start = self.choice([None, int(self.rng.integers(-n, n + 1))])
                stop = self.choice([None, int(self.rng.integers(-n - 1, n + 2))])
                items.append(f"{'' if start is None else start}:"
                             f"{'' if stop is None else stop}"
                             f"{'' if step is None else f':{step}'}")
            else:
                items.append(":")
        if self.rng.random() < 0.25:
            items.insert(int(self.rng.integers(len(items) + 1)), "None")
        if self.rng.random() < 0.2:
            items.insert(int(self.rng.integers(len(items) + 1)), "...")
        if not items:
            items = [self.choice(["()", "...", "None"])]
        return self.add(f"{{0}}[{', '.join(items)}]", [i], "index")

    def op_index_array(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        if a.ndim == 0:
            return False
        d = int(self.rng.integers(a.ndim))
        n = a.shape[d]
        lead = ", ".join([":"] * d) + (", " if d else "")
        if d and self.rng.random() < 0.3:
            lead = "..., " if d == a.ndim - 1 else lead
        indices = [int(self.rng.integers(-n, n)) for _ in range(int(self.rng.integers(1, 5)))]
        u = self.rng.random()
        if u < 0.45:
            key = f"{lead}{indices}"
        elif u < 0.6 and d + 1 < a.ndim:
            m_ = a.shape[d + 1]
            other = [int(self.rng.integers(-m_, m_)) for _ in indices]
            key = f"{lead}{indices}, {other}"
        elif u < 0.75:
            rows = [[int(self.rng.integers(-n, n)) for _ in range(2)] for _ in range(2)]
            key = f"{lead}{rows}"
        elif u < 0.9:
            mask = [bool(b) for b in self.rng.random(n) < 0.6]
            if not any(mask):
                return False
            key = f"{lead}np.array({mask})"
        else:
            mask = (self.rng.random(a.shape) < 0.6).tolist()
            key = f"np.array({mask})"
        return self.add(f"{{0}}[{key}]", [i], "index_array")

    def op_join(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        if self.rng.random() < 0.6 and a.ndim >= 1:
            axis = int(self.rng.integers(a.ndim))
            same = lambda s: len(s) == a.ndim and all(  # noqa: E731
                x == y for d, (x, y) in enumerate(zip(s, a.shape)) if d != axis)
            parts = [i] + [self.partner(i, same) for _ in range(int(self.rng.integers(1, 3)))]
            names = ", ".join(f"{{{k}}}" for k in range(len(parts)))
            ax = self.choice([f", axis={axis}", f", axis={axis - a.ndim}"] +
                             ([""] if axis == 0 else []))
            return self.add(f"m.concatenate([{names}]{ax})", parts, "concatenate")
        if a.ndim >= MAX_RANK:
            return False
        parts = [i] + [self.partner(i, lambda s: s == a.shape)
                       for _ in range(int(self.rng.integers(1, 3)))]
        names = ", ".join(f"{{{k}}}" for k in range(len(parts)))
        axis = int(self.rng.integers(-a.ndim - 1, a.ndim + 1))
        return self.add(f"m.stack([{names}], axis={axis})", parts, "stack")

    def op_split(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        axes = [d for d, n in enumerate(a.shape) if n >= 2]
        if not axes:
            return False
        d = self.choice(axes)
        n = a.shape[d]
        if self.rng.random() < 0.5:
            sections = self.choice([k for k in range(2, n + 1) if n % k == 0])
            part = int(self.rng.integers(sections))
            return self.add(f"m.split({{0}}, {sections}, axis={d})[{part}]", [i], "split")
        cut = int(self.rng.integers(1, n))
        return self.add(f"m.split({{0}}, [{cut}], axis={d})[{int(self.rng.integers(2))}]",
                        [i], "split")

    def op_matmul(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        if a.ndim == 0:
            return False
        u = self.rng.random()
        if u < 0.15:
            j = self.partner(i, lambda s: 0 < len(s) and a.size * math.prod(s) <= MAX_SIZE)
            return j is not None and self.add("m.outer({0}, {1})", [i, j], "outer")
        name = "dot" if u < 0.35 else "matmul"
        shape_of = np.dot if name == "dot" else np.matmul

        def fits(s, left=True):
            try:
                x, y = (np.ones(a.shape), np.ones(s)) if left else (np.ones(s), np.ones(a.shape))
                return np.ndim(shape_of(x, y)) <= MAX_RANK and np.size(shape_of(x, y)) <= MAX_SIZE
            except ValueError:
                return False

        left = self.rng.random() < 0.5
        j = self.partner(i, lambda s: fits(s, left))
        if j is not None:
            x, y = (i, j) if left else (j, i)
            forms = ["m.dot({0}, {1})"] if name == "dot" else ["{0} @ {1}", "m.matmul({0}, {1})"]
            return self.add(self.choice(forms), [x, y], name)
        if a.ndim == 1:
            return self.add("{0} @ {0}", [i], "matmul")
        return self.add(self.choice(["{0} @ m.swapaxes({0}, -1, -2)",
                                     "m.swapaxes({0}, -1, -2) @ {0}"]), [i], "matmul")

    def op_einsum(self) -> bool:
        i = self.pick()
        a = self.vals[i]
        fresh = iter("ijklmn")
        sizes: dict[str, int] = {}
        term = []
        for n in a.shape:
            same = [c for c in term if sizes[c] == n]
            if same and self.rng.random() < 0.3:
                term.append(self.choice(same))
            else:
                c = next(fresh)
                sizes[c] = n
                term.append(c)
        terms, args = ["".join(term)], [i]
        if self.rng.random() < 0.6:
            j = self.pick()
            other = []
            for n in self.vals[j].shape:
                reuse = [c for c in sizes if sizes[c] == n and c not in other]
                if reuse and self.rng.random() < 0.6:
                    other.append(self.choice(reuse))
                else:
                    c = next(fresh)
                    sizes[c] = n
                    other.append(c)
            terms.append("".join(other))
            args.append(j)
        letters = "".join(terms)
        unique = list(dict.fromkeys(letters))
        if self.rng.random() < 0.3:
            spec = ",".join(terms)
        else:
            out = [str(c) for c in self.rng.permutation(unique)[
                :int(self.rng.integers(0, min(MAX_RANK, len(unique)) + 1))]]
            spec = ",".join(terms) + "->" + "".join(out)
        operands = ", ".join(f"{{{k}}}" for k in range(len(args)))
        return self.add(f"m.einsum('{spec}', {operands})", args, "einsum")

    def op_extra(self) -> bool:
        """Shape functions of the wider NumPy surface, once numgrad has them."""
        i = self.pick()
        a = self.vals[i]
        if a.ndim == 0:
            return False
        d = int(self.rng.integers(a.ndim))
        forms = {
            "flip": f"m.flip({{0}}, axis={d})",
            "roll": f"m.roll({{0}}, {int(self.rng.integers(-3, 4))}, axis={d})",
            "moveaxis": f"m.moveaxis({{0}}, {d}, {int(self.rng.integers(a.ndim))})",
            "cumsum": f"m.cumsum({{0}}, axis={d})",
            "cumprod": f"m.cumprod({{0}}, axis={d})",
            "diff": f"m.diff({{0}}, axis={d})",
            "tile": f"m.tile({{0}}, {int(self.rng.integers(1, 3))})",
            "repeat": f"m.repeat({{0}}, {int(self.rng.integers(1, 3))}, axis={d})",
        }
        if a.ndim >= 2:
            forms.update(tril="m.tril({0})", triu="m.triu({0}, 1)",
                         diagonal="m.diagonal({0})", trace="m.trace({0})")
        names = [n for n in forms if hasattr(ng, n)]
        if not names:
            return False
        name = self.choice(names)
        return self.add(forms[name], [i], name)


def _evaluate(expr: str, arrays: list[np.ndarray]) -> np.ndarray | None:
    """`expr` over `arrays` with NumPy; None unless a finite, moderate float64 value."""
    names = [f"a{k}" for k in range(len(arrays))]
    space = {"m": np, "F": NUMPY.F, "np": np, **dict(zip(names, arrays))}
    try:
        with np.errstate(all="raise", under="ignore"), warnings.catch_warnings():
            warnings.simplefilter("error")
            value = np.asarray(eval(expr.format(*names), space))  # noqa: S307
    except Exception:  # noqa: BLE001 - a step NumPy rejects is simply redrawn
        return None
    if value.dtype != np.float64 or value.ndim > MAX_RANK or not 0 < value.size <= MAX_SIZE:
        return None
    if not np.all(np.isfinite(value)) or np.abs(value).max() > BIG:
        return None
    return value


def _input_shapes(rng: np.random.Generator) -> list[tuple[int, ...]]:
    """1-3 shapes that broadcast together: a full shape, and variants with leading axes
    dropped and some axes of length 1 (e.g. (3, 1) with (4,), or 0-d)."""
    rank = int(rng.choice([0, 1, 2, 3], p=[0.1, 0.25, 0.35, 0.3]))
    full = [int(n) for n in rng.integers(1, 6, rank)]
    while math.prod(full) > MAX_INPUT_SIZE:
        k = int(rng.integers(rank))
        full[k] = max(1, full[k] - 1)
    shapes = []
    for _ in range(int(rng.choice([1, 2, 3], p=[0.3, 0.45, 0.25]))):
        r = rank if rng.random() < 0.6 else int(rng.integers(0, rank + 1))
        shapes.append(tuple(1 if rng.random() < 0.25 else n for n in full[rank - r:]))
    return shapes


def _weights(seed: int, shape) -> np.ndarray:
    return np.round(np.random.default_rng([seed, 3]).standard_normal(shape), 2)


def generate(seed: int, max_ops: int = 8) -> Program:
    """The random program of `seed`: 1 to `max_ops` steps over 1-3 inputs."""
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-1.5, 1.5, s) for s in _input_shapes(rng)]
    builder = _Builder(rng, inputs)
    wanted = int(rng.integers(1, max_ops + 1))
    p = np.array(_Builder.WEIGHTS, dtype=float)
    for _ in range(40 * wanted):
        if len(builder.steps) >= wanted:
            break
        getattr(builder, "op_" + str(rng.choice(_Builder.KINDS, p=p / p.sum())))()
    return Program(seed, inputs, builder.steps, _weights(seed, builder.vals[-1].shape))


def variant(prog: Program, k: int) -> Program | None:
    """`prog` on other input values (same shapes, so the same kernels): the k-th redraw
    that passes the generator's checks, or None if 20 draws do not."""
    if k == 0:
        return prog
    rng = np.random.default_rng([prog.seed, 4, k])
    for _ in range(20):
        other = replace(prog, inputs=[rng.uniform(-1.5, 1.5, a.shape) for a in prog.inputs],
                        variant=k)
        if validate(other):
            return other
    return None


def validate(prog: Program, strict: bool = False) -> bool:
    """Whether every step of `prog` passes the generator's checks on its inputs (`strict`:
    with no exact kink hits either, see `_clear`)."""
    global _STRICT
    vals = list(prog.inputs)
    for s in prog.steps:
        arrays = [vals[a] for a in s.args]
        _STRICT = strict
        try:
            passed = s.check is None or s.check(*arrays)
        finally:
            _STRICT = False
        if not passed:
            return False
        value = _evaluate(s.expr, arrays)
        if value is None:
            return False
        vals.append(value)
    return vals[prog.final_index].shape == prog.weights.shape


# ---- checking ----------------------------------------------------------------------------


@dataclass
class Mismatch:
    seed: int
    check: str  # value, grad, gradcheck, hvp, gradgradcheck, error
    detail: str
    program: Program
    stage: str = ""  # the check of CHECKS that was running (for an error: where it raised)

    def report(self) -> str:
        v = self.program.variant
        rerun = f"--seed {self.seed} --programs 1" + (f" --variant {v}" if v else "")
        return (f"MISMATCH seed={self.seed} variant={v} check={self.check}: {self.detail}\n"
                f"--- program (rerun: python tests/random_programs.py {rerun}) ---\n"
                f"{self.program.script()}\n---")


class OracleError(Exception):
    """NumPy or autograd could not run a program (not a numgrad bug)."""


def compare(got, want, kind: str) -> str | None:
    """None if `got` matches `want` within TOLERANCE[kind], else a description."""
    rtol, atol = TOLERANCE[kind]
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if not want.size:
        return None
    scale = max(1.0, float(np.nanmax(np.abs(want))) if np.isfinite(want).any() else 1.0)
    both_nan = np.isnan(got) & np.isnan(want)
    excess = np.where(both_nan, -1.0,
                      np.abs(got - want) - (rtol * np.abs(want) + atol * scale))
    excess = np.where(np.isnan(excess), np.inf, excess)
    if excess.max() <= 0:
        return None
    k = np.unravel_index(int(excess.argmax()), want.shape)
    return (f"at {tuple(int(x) for x in k)}: {got[k]!r} vs {want[k]!r} "
            f"(max abs error {np.nanmax(np.abs(got - want)):.3g}; "
            f"got {np.array2string(got.ravel()[:8], precision=17)}, "
            f"want {np.array2string(want.ravel()[:8], precision=17)})")


CHECKS = ("value", "grad", "gradcheck", "hvp", "gradgradcheck")


def check_program(prog: Program, second_order: bool = False,
                  only: tuple[str, ...] = CHECKS,
                  notes: list[str] | None = None) -> list[Mismatch]:
    """Run `prog`'s checks; the mismatches found (an exception in numgrad is one too).

    Raises `OracleError` if NumPy cannot run the program. Where autograd cannot (it
    lacks some gradients: ``outer`` of 2-D operands, ``einsum`` diagonals) or gives a
    non-finite gradient where the values are finite (``prod`` at an exact zero), its
    comparison is skipped, said in `notes`, and finite differences remain.
    """
    notes = [] if notes is None else notes
    fn = prog.function()
    n = len(prog.inputs)
    argnums = tuple(range(n))
    w = prog.weights
    found: list[Mismatch] = []

    def mismatch(check: str, detail: str) -> None:
        found.append(Mismatch(prog.seed, check, detail, prog, stage))

    def f_autograd(*xs):
        return AUTOGRAD(fn, *xs, w)[0]

    try:
        want_out, want_last = NUMPY(fn, *prog.inputs, w)
    except Exception as e:
        raise OracleError(f"NumPy: {type(e).__name__}: {e}") from e
    want_grads = _autograd(autograd.grad(f_autograd, argnums), prog.inputs, notes)

    wt = ng.tensor(w)

    def f_numgrad(*xs):
        return NUMGRAD(fn, *xs, wt)[0]

    def leaves():
        return [ng.tensor(a, requires_grad=True) for a in prog.inputs]

    # Most checks run the program as ng.gradcheck does (fresh leaves; the value alone,
    # and the value with the gradient for an explicit seed, realized together), so the
    # kernels they compile are the ones gradcheck then finds in the cache.
    stage = "value"
    try:
        if "value" in only:
            problem = compare(f_numgrad(*leaves()).numpy(), want_out, "value")
            if problem:
                mismatch("value", f"output {problem}; {_last_values(fn, prog, want_last)}")
        if "grad" in only:
            stage = "grad"
            xs = leaves()
            out = f_numgrad(*xs)
            if prog.seed % 4 == 0:  # a quarter through backward(), value realized first
                out.numpy()
                out.backward()
                grads = [x.grad for x in xs]
            else:
                seed = ng.tensor(np.ones(1).reshape(out.shape)).astype(out.dtype)
                grads = ng.grad(out, xs, grad_outputs=seed, retain_graph=True,
                                allow_unused=True)
            problem = compare(out.numpy(), want_out, "value")
            if problem:
                mismatch("value", f"output (realized with its gradient) {problem}")
            for k, (g, want) in enumerate(zip(grads, want_grads or ())):
                got = np.zeros_like(prog.inputs[k]) if g is None else g.numpy()
                problem = compare(got, want, "grad")
                if problem:
                    mismatch("grad", f"d output / d x{k} {problem} (autograd)")
        if second_order and "hvp" in only:
            stage = "hvp"
            rng = np.random.default_rng([prog.seed, 2])
            vs = [np.round(rng.standard_normal(a.shape), 2) for a in prog.inputs]
            xs = leaves()
            gs = ng.grad(f_numgrad(*xs), xs, create_graph=True, materialize_grads=True)
            s = sum(((g * ng.tensor(v)).sum() for g, v in zip(gs, vs)), ng.tensor(0.0))
            hv = ng.grad(s, xs, materialize_grads=True) if s.requires_grad else \
                [x.zeros_like() for x in xs]

            def g_dot_v(*a):
                g = autograd.grad(f_autograd, argnums)(*a)
                return sum(anp.sum(gi * vi) for gi, vi in zip(g, vs))

            want_hv = _autograd(autograd.grad(g_dot_v, argnums), prog.inputs, notes)
            for k, (g, want) in enumerate(zip(hv, want_hv or ())):
                problem = compare(g.numpy(), want, "hvp")
                if problem:
                    mismatch("hvp", f"Hessian-vector product, x{k}: {problem} (autograd)")
    except OracleError:
        raise
    except Exception as e:
        mismatch("error", f"numgrad raised ({stage} check): {_error(e)}")
    if "gradcheck" in only:
        stage = "gradcheck"
        try:
            ng.gradcheck(f_numgrad, leaves())
        except ng.GradcheckError as e:
            mismatch("gradcheck", str(e))
        except Exception as e:
            mismatch("error", f"numgrad raised in gradcheck: {_error(e)}")
    if second_order and "gradgradcheck" in only and \
            sum(a.size for a in prog.inputs) <= GRADGRAD_MAX_INPUTS:
        stage = "gradgradcheck"
        try:
            ng.gradgradcheck(f_numgrad, leaves())
        except ng.GradcheckError as e:
            mismatch("gradgradcheck", str(e))
        except Exception as e:
            mismatch("error", f"numgrad raised in gradgradcheck: {_error(e)}")
    return found


def _autograd(fn, inputs, notes: list[str]):
    """``fn(*inputs)`` (an autograd gradient), or None (and a note) if autograd fails."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "output seems independent of input"
            out = fn(*inputs)
    except Exception as e:
        notes.append(f"autograd failed: {type(e).__name__}: {e}")
        return None
    if not all(np.all(np.isfinite(g)) for g in out):
        notes.append("autograd's gradient is not finite")
        return None
    return out


def _last_values(fn, prog: Program, want) -> str:
    """For a wrong output: the program's last value, elementwise, against NumPy's."""
    try:
        xs = [ng.tensor(a) for a in prog.inputs]
        got = NUMGRAD(fn, *xs, ng.tensor(prog.weights))[1].numpy()
    except Exception as e:
        return f"its last value raised {_error(e)}"
    return f"its last value: {compare(got, want, 'value') or 'matches'}"


def _error(e: Exception) -> str:
    frames = traceback.extract_tb(e.__traceback__)
    where = next((f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(frames)
                  if "numgrad" in f.filename), "?")
    return f"{type(e).__name__}: {e} (at {where})"


# ---- minimising --------------------------------------------------------------------------


def _prune(prog: Program, final: int) -> Program:
    """`prog` computing value `final`: steps and inputs it does not need removed."""
    n = len(prog.inputs)
    live = {final}
    for k in range(final - n, -1, -1):
        if n + k in live:
            live.update(prog.steps[k].args)
    keep = sorted(live)
    index = {old: new for new, old in enumerate(keep)}
    inputs = [prog.inputs[v] for v in keep if v < n]
    steps = [replace(prog.steps[v - n], args=tuple(index[a] for a in prog.steps[v - n].args))
             for v in keep if v >= n]
    return Program(prog.seed, inputs, steps, prog.weights)


def _structural(prog: Program, shapes: list[tuple]):
    """Programs with fewer steps than `prog`: ended at an earlier value, or with a step
    bypassed (its uses given an earlier value of its shape)."""
    n = len(prog.inputs)
    final = prog.final_index
    for v in range(n, final):
        yield replace(_prune(prog, v), weights=_weights(prog.seed, shapes[v]))
    for k in range(len(prog.steps) - 2, -1, -1):  # (bypassing the last one is ending early)
        v = n + k
        for u in sorted(range(v), key=lambda u: u not in prog.steps[k].args):
            if shapes[u] != shapes[v]:
                continue
            steps = [replace(s, args=tuple(u if a == v else a for a in s.args))
                     if j > k else s for j, s in enumerate(prog.steps)]
            smaller = _prune(replace(prog, steps=steps), final)
            if len(smaller.steps) < len(prog.steps):
                yield smaller


def _cosmetic(prog: Program):
    """`prog` with shorter input literals, or weights of one."""
    for digits in (1, 2):
        rounded = [np.round(a, digits) for a in prog.inputs]
        if any(not np.array_equal(r, a) for r, a in zip(rounded, prog.inputs)):
            yield replace(prog, inputs=rounded)
    if not np.all(prog.weights == 1):
        yield replace(prog, weights=np.ones_like(prog.weights))


def _shapes(prog: Program) -> list[tuple]:
    vals = list(prog.inputs)
    for s in prog.steps:
        vals.append(_evaluate(s.expr, [vals[a] for a in s.args]))
    return [v.shape for v in vals]


def minimise(prog: Program, found: Mismatch, second_order: bool = False,
             budget: float = 120.0) -> Program:
    """The smallest program found (greedily, within `budget` seconds) that still shows
    `found`'s kind of mismatch in the same check, and passes the generator's own checks
    (strictly, no kink hit exactly, once the inputs are rounded), so that it is no
    artefact of the minimising."""
    only = (found.stage,) if found.stage in CHECKS else CHECKS
    deadline = time.perf_counter() + budget

    def fails(p: Program, strict: bool = False) -> bool:
        if not p.steps or not validate(p, strict):
            return False
        try:
            return any(m.check == found.check and m.stage == found.stage
                       for m in check_program(p, second_order, only))
        except OracleError:
            return False

    for smaller, strict in ((lambda p: _structural(p, _shapes(p)), False), (_cosmetic, True)):
        improved = True
        while improved and time.perf_counter() < deadline:
            improved = False
            for cand in smaller(prog):
                if time.perf_counter() > deadline:
                    break
                if fails(cand, strict):
                    prog, improved = cand, True
                    break
    return prog


# ---- campaigns ---------------------------------------------------------------------------


@dataclass
class CampaignResult:
    programs: int = 0  # programs checked (structures times value variants)
    structures: int = 0  # distinct programs generated
    mismatches: list[Mismatch] = field(default_factory=list)
    minimised: list[Mismatch] = field(default_factory=list)
    oracle_errors: list[str] = field(default_factory=list)
    #: programs whose autograd comparison was skipped (autograd failed; see check_program)
    autograd_skipped: int = 0
    second_order: int = 0
    kernels_compiled: int = 0
    seconds: float = 0.0
    #: programs/second and kernels compiled over the second half (after warm-up)
    warm_rate: float = 0.0
    warm_kernels_per_1000: float = 0.0
    steps: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        total = ng.engine.counters.total
        lines = [
            f"programs: {self.programs} ({self.structures} structures; "
            f"{self.second_order} with second order)",
            f"kernels compiled: {self.kernels_compiled} in this run (process total: "
            f"{total.kernels_compiled}; {total.disk_hits} loaded from the disk cache)",
            f"mismatches: {len(self.mismatches)}"
            + (f" (checks: {dict(Counter(m.check for m in self.mismatches))})"
               if self.mismatches else ""),
            f"oracle errors (NumPy could not run the program; skipped): "
            f"{len(self.oracle_errors)}; autograd comparison skipped (autograd failed, "
            f"finite differences only): {self.autograd_skipped}",
            f"time: {self.seconds:.1f} s ({self.programs / max(self.seconds, 1e-9):.2f} "
            f"programs/s overall; after warm-up (second half): {self.warm_rate:.2f} "
            f"programs/s, {self.warm_kernels_per_1000:.0f} kernels compiled per 1,000 "
            f"programs)",
            "steps drawn: " + ", ".join(f"{k} {v}" for k, v in self.steps.most_common()),
        ]
        return "\n".join(lines)


def run_campaign(programs: int, seed: int = 0, second_order_fraction: float = 0.1,
                 max_ops: int = 8, variants: int = 1, minimise_mismatches: bool = True,
                 log: Callable[[str], None] | None = None, progress_every: int = 0,
                 max_minimised: int = 3, only_variant: int | None = None) -> CampaignResult:
    """Generate and check `programs` programs.

    Program i is variant ``i % variants`` (0: as generated; k: on redrawn input values,
    see `variant`) of the program of seed ``seed + i // variants``: variants share their
    kernels, so more of them spend the run on checks rather than compiles.
    """
    log = log or (lambda line: None)
    result = CampaignResult()
    start = time.perf_counter()
    half = programs // 2
    half_time, half_compiled = start, 0
    minimised = Counter()
    base = None
    with ng.engine.record() as rec:
        for i in range(programs):
            if i == half:
                half_time, half_compiled = time.perf_counter(), rec.kernels_compiled
            pseed, k = seed + i // variants, i % variants
            if only_variant is not None:
                pseed, k = seed + i, only_variant
            if base is None or base.seed != pseed:
                base = generate(pseed, max_ops)
                result.structures += 1
                result.steps.update(s.kind for s in base.steps)
            prog = variant(base, k)
            if prog is None:
                continue
            result.programs += 1
            second = np.random.default_rng([pseed, 1, k]).random() < second_order_fraction
            result.second_order += second
            notes: list[str] = []
            try:
                found = check_program(prog, second, notes=notes)
                result.autograd_skipped += bool(notes)
            except OracleError as e:
                result.oracle_errors.append(f"seed {pseed}: {e}")
                log(f"oracle error, seed {pseed} variant {k} (skipped): {e}")
                found = []
            for mm in found:
                result.mismatches.append(mm)
                log(mm.report())
            for check in dict.fromkeys(mm.check for mm in found):
                first = next(m for m in found if m.check == check)
                # errors are told apart by their message, numeric mismatches by check
                kind = (check, _signature(first.detail) if check == "error" else "")
                if not minimise_mismatches or minimised[kind] >= max_minimised:
                    continue
                minimised[kind] += 1
                small = minimise(prog, first, second)
                mm = next((m for m in _safe_check(small, second) if m.check == check),
                          Mismatch(pseed, check, "(not reproduced)", small))
                result.minimised.append(mm)
                log("MINIMISED " + mm.report())
            if progress_every and (i + 1) % progress_every == 0:
                elapsed = time.perf_counter() - start
                log(f"[{i + 1}/{programs}] mismatches {len(result.mismatches)}, oracle errors "
                    f"{len(result.oracle_errors)}, kernels compiled {rec.kernels_compiled}, "
                    f"{elapsed:.0f} s, {(i + 1) / elapsed:.2f} programs/s")
        result.kernels_compiled = rec.kernels_compiled
        end = time.perf_counter()
    result.seconds = end - start
    if programs - half:
        result.warm_rate = (programs - half) / max(end - half_time, 1e-9)
        result.warm_kernels_per_1000 = 1000 * (rec.kernels_compiled - half_compiled) / (
            programs - half)
    return result


def _signature(detail: str) -> str:
    """An error message without its numbers and file names (one bug, one signature)."""
    return re.sub(r"k_[0-9a-f]+\.py|\d+", "#", detail)


def _safe_check(prog: Program, second: bool) -> list[Mismatch]:
    try:
        return check_program(prog, second)
    except OracleError:
        return []


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--second-order-fraction", type=float, default=0.1)
    parser.add_argument("--max-ops", type=int, default=8)
    parser.add_argument("--variants", type=int, default=1,
                        help="check each generated program on this many input draws")
    parser.add_argument("--variant", type=int, default=None,
                        help="check only this input draw of each program (to rerun one)")
    parser.add_argument("--no-minimise", action="store_true",
                        help="print mismatches as found, without minimising them")
    parser.add_argument("--progress-every", type=int, default=0,
                        help="programs between progress lines (default: about 20 lines)")
    parser.add_argument("--show", action="store_true",
                        help="print each program's numgrad script instead of checking")
    parser.add_argument("--chunk", type=int, default=0,
                        help="run the campaign in fresh processes of this many programs, one "
                             "after another (a process keeps every kernel Numba compiled, "
                             "~2 MB each, so a long run in one process grows without bound)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.show:
        for i in range(args.programs):
            print(f"# seed {args.seed + i}\n{generate(args.seed + i, args.max_ops).script()}\n")
        return 0
    if args.chunk and args.programs > args.chunk:
        return _chunked(args)

    def log(line: str) -> None:
        print(line, flush=True)

    print(f"random programs: {args.programs} from seed {args.seed}, at most {args.max_ops} "
          f"steps, {args.variants} input draw(s) each, second order for "
          f"{args.second_order_fraction:.0%}", flush=True)
    result = run_campaign(args.programs, args.seed, args.second_order_fraction, args.max_ops,
                          args.variants, not args.no_minimise, log,
                          args.progress_every or max(1, args.programs // 20),
                          only_variant=args.variant)
    print(result.summary(), flush=True)
    if args.json:
        print("RESULT-JSON " + json.dumps(
            {f.name: getattr(result, f.name) for f in fields(result)
             if f.name not in ("mismatches", "minimised", "oracle_errors")}
            | {"mismatches": len(result.mismatches), "minimised": len(result.minimised),
               "oracle_errors": len(result.oracle_errors),
               "checks": Counter(m.check for m in result.mismatches)}), flush=True)
    return 1 if result.mismatches else 0


def _chunked(args) -> int:
    """The campaign of `args` as a sequence of child processes of ``args.chunk`` programs."""
    chunk = max(args.variants, args.chunk // args.variants * args.variants)
    starts = list(range(0, args.programs, chunk))
    print(f"random programs: {args.programs} from seed {args.seed}, in {len(starts)} "
          f"processes of {chunk}", flush=True)
    total: Counter = Counter()
    steps: Counter = Counter()
    checks: Counter = Counter()
    warm = Counter()
    start_time = time.perf_counter()
    for k, start in enumerate(starts):
        n = min(chunk, args.programs - start)
        cmd = [sys.executable, __file__, "--programs", str(n),
               "--seed", str(args.seed + start // args.variants),
               "--second-order-fraction", str(args.second_order_fraction),
               "--max-ops", str(args.max_ops), "--variants", str(args.variants),
               "--progress-every", str(args.progress_every or max(1, n // 10)), "--json"]
        if args.no_minimise:
            cmd.append("--no-minimise")
        print(f"== process {k + 1}/{len(starts)}: programs {start}-{start + n - 1} "
              f"(seed {args.seed + start // args.variants})", flush=True)
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) as child:
            for line in child.stdout:
                if line.startswith("RESULT-JSON "):
                    got = json.loads(line[len("RESULT-JSON "):])
                    steps.update(got.pop("steps"))
                    checks.update(got.pop("checks"))
                    total.update({key: v for key, v in got.items()
                                  if isinstance(v, (int, float))})
                    if k:  # after the first process: warm-up done
                        warm.update(programs=got["programs"], seconds=got["seconds"],
                                    kernels=got["kernels_compiled"])
                else:
                    print(line, end="", flush=True)
        elapsed = time.perf_counter() - start_time
        print(f"== after process {k + 1}: {total['programs']} programs, {total['mismatches']} "
              f"mismatches, {total['kernels_compiled']} kernels compiled, {elapsed:.0f} s",
              flush=True)
    elapsed = time.perf_counter() - start_time
    print(f"ALL PROCESSES\nprograms: {total['programs']} ({total['structures']} structures; "
          f"{total['second_order']} with second order)\n"
          f"kernels compiled: {total['kernels_compiled']}\n"
          f"mismatches: {total['mismatches']}"
          + (f" (checks: {dict(checks)})" if checks else "") + "\n"
          f"oracle errors (skipped): {total['oracle_errors']}; autograd comparison skipped: "
          f"{total['autograd_skipped']}\n"
          f"time: {elapsed:.1f} s ({total['programs'] / max(elapsed, 1e-9):.2f} programs/s"
          + (f"; after the first process: {warm['programs'] / max(warm['seconds'], 1e-9):.2f}"
             f" programs/s, {1000 * warm['kernels'] / max(warm['programs'], 1):.0f} kernels "
             f"compiled per 1,000 programs" if warm else "") + ")\n"
          "steps drawn: " + ", ".join(f"{k} {v}" for k, v in steps.most_common()), flush=True)
    return 1 if total["mismatches"] else 0


__all__ = [
    "TOLERANCE", "Program", "Step", "Mismatch", "OracleError", "CampaignResult", "generate",
    "variant", "validate", "check_program", "minimise", "run_campaign", "main"]

if __name__ == "__main__":
    sys.exit(main())
