"""The op-table test matrix: every primitive of the table, and the composites, checked
against NumPy (values), central differences (`ng.gradcheck`, first and second order)
and the HIPS `autograd` package (an independent gradient oracle).

Rows come from `numgrad.ops.TABLE`, so a new primitive is tested here without a
new test. Tolerances: float64 values agree with NumPy to rtol 1e-12 (libm and
NumPy's SIMD loops may differ in the last bits); float32 to rtol 1e-6.
"""

import autograd
import autograd.numpy as anp
import autograd.scipy.special as aspecial
import numpy as np
import pytest
from autograd.tracer import getval
from budget import sampled, slow

import numgrad as ng
from numgrad.ops import BINARY, BOOL, MATMUL, MOVEMENT, REDUCE, TABLE, TERNARY, UNARY

UNARY_OPS = [p for p in TABLE.values() if p.kind == UNARY]
BINARY_OPS = [p for p in TABLE.values() if p.kind == BINARY]
DIFFERENTIABLE_BINARY = [p for p in BINARY_OPS if p.vjp is not None]
#: ternary rows other than `where` (which `test_composites` and the where tests cover):
#: ``ng.scipy.special``'s, differentiable in their last operand only, as autograd's
TERNARY_OPS = [p for p in TABLE.values() if p.kind == TERNARY and not p.condition]
#: rows whose kernels take seconds to compile (special functions' series): the matrix
#: runs them in `.ci/run` (marked slow); README's command checks them in their own files
#: (tests/numpy/test_special_bessel_gamma.py, test_special_betainc.py)
LONG_COMPILING = {"i0", "i1", "i0e", "i1e", "gammainc", "gammaincc", "betainc", "polygamma"}


def rows(ops: list, few: tuple | None = None, every: int = 1, start: int = 0) -> list:
    """`ops` as parameters, those of `LONG_COMPILING` marked slow, and so are the others
    but those `few` names, if given, or one in `every` from row `start` (README's command
    runs a sample of a sweep; sweeps sample different rows, so that each row runs in some)."""
    return [slow(p) if p.name in LONG_COMPILING or (p.name not in few if few is not None
                                                    else i % every != start)
            else p for i, p in enumerate(ops)]


#: piecewise constant: the gradient is 0
ZERO_GRAD = {"sign", "floor", "ceil", "rint", "trunc", "floor_divide"}
#: binary rows without a gradient for their first operand (autograd's have none): it
#: does not require grad in the gradient tests (a backward pass through it while it
#: does raises: tests/numpy/test_special_bessel_gamma.py)
NO_GRAD_FIRST = {"gammainc", "gammaincc"}
#: numgrad's name -> the Tensor method or module function that applies it
API_NAME = {"rint": "round"}
#: oracles `autograd.numpy` lacks under numgrad's name (autograd's fmod and copysign have
#: no gradient; trunc's is 0 there, so this one has d/dy = -trunc(x / y))
ORACLE = {"sigmoid": lambda a: 1 / (1 + anp.exp(-a)), "reciprocal": lambda a: 1 / a,
          "fmod": lambda a, b: a - anp.trunc(a / b) * b,
          "copysign": lambda a, b: anp.abs(a) * anp.where(b < 0, -1.0, 1.0),
          "cbrt": lambda a: anp.sign(a) * anp.abs(a) ** (1 / 3),  # (autograd's has no VJP)
          # (autograd's where does not sum a broadcast operand's gradient back: b is
          # broadcast by an addition first)
          "heaviside": lambda a, b: anp.where(a < 0, 0.0, anp.where(a > 0, 1.0, b + 0 * a)),
          # (autograd's has no VJP: a step of one spacing, x's gradient passes, y's is 0)
          "nextafter": lambda a, b: a + 0 * b,
          "erf": aspecial.erf, "erfc": aspecial.erfc, "erfinv": aspecial.erfinv,
          "lgamma": aspecial.gammaln, "digamma": aspecial.digamma,
          "i0": aspecial.i0, "i1": aspecial.i1,
          "i0e": lambda a: aspecial.ive(0, a), "i1e": lambda a: aspecial.ive(1, a),
          "gammainc": aspecial.gammainc, "gammaincc": aspecial.gammaincc,
          "betainc": aspecial.betainc,
          # (the order is floored and has no gradient; x is broadcast first, as for where)
          "polygamma": lambda a, b: aspecial.polygamma(
              np.floor(getval(a)), b + np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b))))}


def _draw(op, shape, seed=0, dtype=np.float64):
    lo, hi = op.domain
    rng = np.random.default_rng(seed)
    if op.integral:  # (bitwise: integers only)
        return rng.integers(lo, hi, shape, endpoint=True)
    return rng.uniform(lo, hi, shape).astype(dtype)


def _apply(op, *args):
    name = API_NAME.get(op.name, op.name)
    return getattr(ng, name)(*args)


def _oracle(op):
    fn = ORACLE.get(op.name) or getattr(anp, op.name, None)
    assert fn is not None, f"add an autograd oracle for {op.name} to ORACLE"
    return fn


def test_every_elementwise_primitive_has_a_function_and_method():
    for p in UNARY_OPS + BINARY_OPS:
        assert callable(getattr(ng, API_NAME.get(p.name, p.name))), p.name
    for p in UNARY_OPS:
        assert callable(getattr(ng.Tensor, API_NAME.get(p.name, p.name))), p.name


@pytest.mark.parametrize("op", rows(UNARY_OPS, every=2), ids=lambda p: p.name)
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), slow(np.float32, 1e-6)])
def test_unary_values(op, dtype, rtol):
    a = _draw(op, (3, 4), dtype=dtype)
    got = _apply(op, ng.tensor(a))
    want = op.ref(a)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=0)


INTEGER_INPUTS = [p for p in UNARY_OPS if p.result != BOOL and p.name != "negative"]


# (half the rows in README's command: tests/numpy/test_small_integers.py sweeps more)
@pytest.mark.parametrize("op", rows(INTEGER_INPUTS, every=2),
                         ids=lambda p: p.name)
def test_unary_integer_inputs_follow_numpy_dtypes(op):
    # the integers of the op's domain (the CUDA simulator's math raises outside it;
    # test_numpy_elementwise.py checks NaN and infinities there on the CPU)
    a = np.arange(np.ceil(op.domain[0]), np.floor(op.domain[1]) + 1).astype(np.int32)
    got = _apply(op, ng.tensor(a))
    want = op.ref(a)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("op", rows([p for p in UNARY_OPS if p.result != BOOL and not p.integral],
                                   every=2, start=1), ids=lambda p: p.name)
def test_unary_gradients(op):
    a = _draw(op, (2, 3), seed=1)
    x = ng.tensor(a, requires_grad=True)
    assert ng.gradcheck(lambda t: _apply(op, t), (x,))
    w = np.random.default_rng(2).standard_normal(a.shape)
    (_apply(op, x) * ng.tensor(w)).sum().backward()
    if op.name in ZERO_GRAD:
        want = np.zeros_like(a)
    else:
        want = autograd.grad(lambda v: anp.sum(_oracle(op)(v) * w))(a)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", rows([p for p in UNARY_OPS if p.result != BOOL and
                                p.name not in ZERO_GRAD and not p.integral], every=2),
                         ids=lambda p: p.name)
def test_unary_second_order(op):
    x = ng.tensor(_draw(op, (3,), seed=3), requires_grad=True)
    assert ng.gradgradcheck(lambda t: _apply(op, t), (x,))


@pytest.mark.parametrize("op", rows(BINARY_OPS, every=2), ids=lambda p: p.name)
@pytest.mark.parametrize("shapes", [slow(((3, 4), (3, 4))), ((3, 1), (4,)), slow(((), (2, 3)))],
                         ids=str)
def test_binary_values_broadcast(op, shapes):
    a, b = _draw(op, shapes[0], seed=4), _draw(op, shapes[1], seed=5)
    got = _apply(op, ng.tensor(a), ng.tensor(b))
    want = op.ref(a, b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("op", rows(DIFFERENTIABLE_BINARY, few=(
    "add", "multiply", "divide", "power", "maximum", "arctan2")), ids=lambda p: p.name)
@pytest.mark.filterwarnings("ignore:Output seems independent")  # (floor_divide's is 0)
def test_binary_gradients_sum_back_to_input_shapes(op):
    a, b = _draw(op, (3, 1), seed=6), _draw(op, (4,), seed=7)
    first = op.name not in NO_GRAD_FIRST
    x, y = ng.tensor(a, requires_grad=first), ng.tensor(b, requires_grad=True)
    assert ng.gradcheck(lambda s, t: _apply(op, s, t), (x, y))
    w = np.random.default_rng(8).standard_normal((3, 4))
    (_apply(op, x, y) * ng.tensor(w)).sum().backward()
    wants = autograd.grad(lambda u, v: anp.sum(_oracle(op)(u, v) * w),
                          (0, 1) if first else (1,))(a, b)
    want_b = wants[-1]
    assert (x.grad.shape == a.shape if first else x.grad is None) and y.grad.shape == b.shape
    if first:
        np.testing.assert_allclose(x.grad.numpy(), wants[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(y.grad.numpy(), want_b, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("op", rows(DIFFERENTIABLE_BINARY, every=2, start=1),
                         ids=lambda p: p.name)
def test_binary_second_order(op):
    x = ng.tensor(_draw(op, (3,), seed=9), requires_grad=op.name not in NO_GRAD_FIRST)
    y = ng.tensor(_draw(op, (3,), seed=10), requires_grad=True)
    assert ng.gradgradcheck(lambda s, t: _apply(op, s, t), (x, y))


@pytest.mark.parametrize("op", rows(TERNARY_OPS), ids=lambda p: p.name)
def test_ternary_values_broadcast_and_gradients_for_the_last_operand(op):
    a, b, c = _draw(op, (3, 1), seed=11), _draw(op, (4,), seed=12), _draw(op, (3, 4), seed=13)
    special = getattr(ng.scipy.special, op.name)
    z = ng.tensor(c, requires_grad=True)
    got = special(ng.tensor(a), ng.tensor(b), z)
    want = op.ref(a, b, c)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=0)
    w = np.random.default_rng(14).standard_normal((3, 4))
    (got * ng.tensor(w)).sum().backward()
    want_c = autograd.grad(lambda v: anp.sum(_oracle(op)(a, b, v) * w))(c)
    np.testing.assert_allclose(z.grad.numpy(), want_c, rtol=1e-12, atol=1e-14)
    assert ng.gradgradcheck(lambda t: special(a, b, t), (ng.tensor(c, requires_grad=True),))


@pytest.mark.parametrize("op", rows(DIFFERENTIABLE_BINARY, every=2),
                         ids=lambda p: p.name)
def test_binary_with_weak_python_scalar_keeps_float32(op):
    a = _draw(op, (5,), dtype=np.float32)
    got = _apply(op, ng.tensor(a), 1.5)
    want = op.ref(a, 1.5)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


# ---- composites: Tensor methods built from primitives --------------------------------
# name -> (numgrad function, NumPy reference, autograd.numpy oracle, low, high)
COMPOSITES = {
    "square": (ng.square, np.square, anp.square, -2, 2),
    "relu": (ng.relu, lambda a: np.maximum(a, 0), lambda a: anp.maximum(a, 0), -2, 2),
    "clip": (lambda t: ng.clip(t, -0.5, 0.7), lambda a: np.clip(a, -0.5, 0.7),
             lambda a: anp.clip(a, -0.5, 0.7), -2, 2),
    "mean": (lambda t: t.mean(axis=1), lambda a: a.mean(axis=1),
             lambda a: anp.mean(a, axis=1), -2, 2),
    "var": (lambda t: t.var(axis=0), lambda a: a.var(axis=0), lambda a: anp.var(a, axis=0),
            -2, 2),
    "std_ddof1": (lambda t: t.std(ddof=1), lambda a: a.std(ddof=1),
                  lambda a: anp.std(a, ddof=1), -2, 2),
    "logsumexp": (lambda t: t.logsumexp(axis=1),
                  lambda a: np.log(np.exp(a).sum(axis=1)),
                  lambda a: anp.log(anp.sum(anp.exp(a), axis=1)), -2, 2),
    "prod": (lambda t: t.prod(axis=0), lambda a: a.prod(axis=0),
             lambda a: anp.prod(a, axis=0), 0.5, 2),
    "max": (lambda t: t.max(axis=1), lambda a: a.max(axis=1), lambda a: anp.max(a, axis=1),
            -2, 2),
    "min_keepdims": (lambda t: t.min(axis=0, keepdims=True),
                     lambda a: a.min(axis=0, keepdims=True),
                     lambda a: anp.min(a, axis=0, keepdims=True), -2, 2),
    "sum_tuple_axes": (lambda t: t.sum(axis=(0, 1)), lambda a: a.sum(axis=(0, 1)),
                       lambda a: anp.sum(a, axis=(0, 1)), -2, 2),
}


@pytest.mark.parametrize("name", sampled(list(COMPOSITES), 2))
def test_composites(name):
    fn, ref, oracle, lo, hi = COMPOSITES[name]
    a = np.random.default_rng(11).uniform(lo, hi, (3, 4))
    x = ng.tensor(a, requires_grad=True)
    np.testing.assert_allclose(fn(x).numpy(), ref(a), rtol=1e-12, atol=1e-15)
    assert ng.gradcheck(fn, (x,))
    w = np.random.default_rng(12).standard_normal(np.shape(ref(a)))
    (fn(x) * ng.tensor(w)).sum().backward()
    want = autograd.grad(lambda v: anp.sum(oracle(v) * w))(a)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-14)


def test_where_gradients_flow_to_the_chosen_side():
    a, b = np.array([1.0, -2.0, 3.0]), np.array([4.0, 5.0, -6.0])
    x, y = ng.tensor(a, requires_grad=True), ng.tensor(b, requires_grad=True)
    assert ng.gradcheck(lambda s, t: ng.where(s > 0, s * t, t), (x, y))
    ng.where(x > 0, x * y, y).sum().backward()
    want = autograd.grad(lambda u, v: anp.sum(anp.where(u > 0, u * v, v)), (0, 1))(a, b)
    np.testing.assert_allclose(x.grad.numpy(), want[0], rtol=1e-12)
    np.testing.assert_allclose(y.grad.numpy(), want[1], rtol=1e-12)


def test_kinks_follow_pytorch():
    x = ng.tensor([-1.0, 0.0, 1.0], requires_grad=True)
    (x.relu() + x.abs()).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, 0.0, 2.0])  # relu'(0) = abs'(0) = 0
    x, y = ng.tensor([1.0, 2.0], requires_grad=True), ng.tensor([1.0, 3.0], requires_grad=True)
    ng.maximum(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.0])  # a tie shares evenly
    np.testing.assert_array_equal(y.grad.numpy(), [0.5, 1.0])


# ---- reductions, movements and matmul: every other row of the table --------------------

REDUCE_OPS = [p for p in TABLE.values() if p.kind == REDUCE]


@pytest.mark.parametrize("op", rows(REDUCE_OPS, every=2), ids=lambda p: p.name)
@pytest.mark.parametrize("axis", [None, 0, 2, (0, 2)], ids=str)
def test_reductions(op, axis):
    # distinct values (no ties for max/min) away from 0 (prod's rule for zeros is
    # tested in test_array_ops)
    a = np.random.default_rng(13).permutation(np.linspace(0.5, 2.0, 24)).reshape(2, 3, 4)
    x = ng.tensor(a, requires_grad=True)
    reduce = getattr(ng.Tensor, op.name)
    got = reduce(x, axis=axis)
    np.testing.assert_allclose(got.numpy(), op.ref(a, axis=axis), rtol=1e-12)
    assert ng.gradcheck(lambda t: reduce(t, axis=axis), (x,))
    assert ng.gradgradcheck(lambda t: reduce(t, axis=axis), (x,))
    w = np.random.default_rng(14).standard_normal(np.shape(op.ref(a, axis=axis)))
    (got * ng.tensor(w)).sum().backward()
    want = autograd.grad(lambda v: anp.sum(getattr(anp, op.name)(v, axis=axis) * w))(a)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-14)


_ROWS, _COLS = np.array([1, 0, 1]), np.array([3, 3, 0])  # repeats: gradients add up
#: primitive -> (numgrad function, NumPy reference, autograd oracle or None), on a
#: (2, 3, 4) input. The copy between devices needs two devices: test_cuda.py has it.
MOVEMENTS = {
    "reshape": (lambda t: t.reshape(4, 6), lambda a: a.reshape(4, 6),
                lambda v: anp.reshape(v, (4, 6))),
    "permute": (lambda t: t.transpose(2, 0, 1), lambda a: a.transpose(2, 0, 1),
                lambda v: anp.transpose(v, (2, 0, 1))),
    "expand": (lambda t: t[:, :1].broadcast_to((2, 5, 4)),
               lambda a: np.broadcast_to(a[:, :1], (2, 5, 4)),
               lambda v: anp.broadcast_to(v[:, :1], (2, 5, 4))),
    "index": (lambda t: t[1:, ::2, [0, 3, 3]], lambda a: a[1:, ::2, [0, 3, 3]],
              lambda v: v[1:, ::2, [0, 3, 3]]),
    "index_add": (lambda t: t[0, 0, :3]._index_add((_ROWS, _COLS), (2, 4)),
                  lambda a: _scatter_add(a[0, 0, :3], (_ROWS, _COLS), (2, 4)), None),
    "index_put": (lambda t: t.index_put((slice(None), 1), t[:, 2] * 3),
                  lambda a: _put(a, (slice(None), 1), a[:, 2] * 3), None),
    "concatenate": (lambda t: ng.concatenate([t, t[:, :1] * 2], axis=1),
                    lambda a: np.concatenate([a, a[:, :1] * 2], axis=1),
                    lambda v: anp.concatenate([v, v[:, :1] * 2], axis=1)),
    "roll": (lambda t: t.roll((1, -2), (0, 2)), lambda a: np.roll(a, (1, -2), (0, 2)),
             lambda v: anp.roll(anp.roll(v, 1, 0), -2, 2)),  # (autograd's takes one axis)
    "matmul": (lambda t: t @ t.transpose(0, 2, 1), lambda a: a @ a.transpose(0, 2, 1),
               lambda v: anp.matmul(v, anp.transpose(v, (0, 2, 1)))),
    "copy": None,
}


def _scatter_add(values, key, shape):
    out = np.zeros(shape)
    np.add.at(out, key, values)
    return out


def _put(a, key, values):
    out = a.copy()
    out[key] = values
    return out


def test_every_movement_and_matmul_row_has_a_case():
    rows = {p.name for p in TABLE.values() if p.kind in (MOVEMENT, MATMUL)}
    assert rows == set(MOVEMENTS), "add a case for each new row to MOVEMENTS"


@pytest.mark.parametrize("name", [n for n, case in MOVEMENTS.items() if case])
def test_movements(name):
    fn, ref, oracle = MOVEMENTS[name]
    a = np.random.default_rng(15).standard_normal((2, 3, 4))
    x = ng.tensor(a, requires_grad=True)
    got = fn(x)
    np.testing.assert_allclose(got.numpy(), ref(a), rtol=1e-12, atol=1e-15)
    assert ng.gradcheck(fn, (x,))
    assert ng.gradgradcheck(fn, (x,))
    if oracle is not None:
        w = np.random.default_rng(16).standard_normal(got.shape)
        (got * ng.tensor(w)).sum().backward()
        want = autograd.grad(lambda v: anp.sum(oracle(v) * w))(a)
        np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-14)
