"""One-element elementwise work on computed values is computed when recorded
(`numgrad.lazy.AT_ONCE`): by the expression kernels inline, on Python scalars, with
NumPy's reference where Python raises. Values are compared with NumPy's ufuncs: to
4 ulp in float64 and float32 (Python's libm and NumPy's SIMD loops may round
transcendental functions differently), exactly for infinities, NaN and the sign of
zero (but for the max/min family, whose ties of -0.0 and 0.0 NumPy breaks either way).
Gradients are compared with the HIPS autograd package to 1e-12 relative.
"""

import itertools
import warnings

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad as hips_grad

import numgrad as ng
from numgrad import lazy
from numgrad.device import as_device
from numgrad.lazy import LazyBuffer, make
from numgrad.ops import BINARY, TABLE, TERNARY, UNARY

CPU = as_device("cpu")
# (a row that refuses bools takes integers only, which are never computed at once)
ROWS = [row for row in TABLE.values() if row.kind in (UNARY, BINARY, TERNARY)
        and not row.no_bools]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan]
TIES_EITHER_WAY = ("maximum", "minimum", "fmax", "fmin")


def _operands(row, dtype) -> list[tuple]:
    """Three points of the row's domain and the special values, per operand; the
    condition of `where` is boolean."""
    low, high = row.domain
    points = [low, (low + high) / 2 + 0.0123, high] + SPECIAL
    arity = {UNARY: 1, BINARY: 2, TERNARY: 3}[row.kind]
    if row.integral:  # (bitwise: of the dtypes computed at once, bools only)
        return list(itertools.product((True, False), repeat=arity))
    if row.condition:
        return [(c, a, b) for c in (True, False) for a, b in itertools.product(points, repeat=2)]
    return list(itertools.product(points, repeat=arity)) if arity == 1 else \
        list(itertools.product(points[:3] + SPECIAL[:1] + SPECIAL[2:], repeat=arity))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_every_elementwise_row_computed_at_once_gives_numpys_value(row, dtype):
    dtype = np.dtype(bool) if row.integral else np.dtype(dtype)
    result = np.dtype(bool) if row.result == "bool" else dtype
    for values in _operands(row, dtype):
        arrays = [np.array(v, bool if isinstance(v, bool) else dtype) for v in values]
        srcs = tuple(LazyBuffer.load(a, CPU) for a in arrays)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # computing at once warns of nothing
            buf = make(row, srcs, None, (), result, CPU)
        if dtype == np.float32 and not row.float32_at_once:
            assert buf.realized is None, row.name  # (a kernel computes it, in float32)
            continue
        assert buf.realized is not None, (row.name, values)  # no kernel, no schedule
        with np.errstate(all="ignore"):
            want = np.asarray(row.ref(*arrays)).astype(result)
        got = buf.realized
        assert got.shape == () and got.dtype == result
        ulp = np.finfo(dtype).eps * 4 if dtype.kind == "f" else 0
        np.testing.assert_allclose(got, want, rtol=ulp, atol=0, equal_nan=True,
                                   err_msg=f"{row.name}{values}")
        if want == 0 and row.name not in TIES_EITHER_WAY and result.kind == "f":
            assert np.signbit(got) == np.signbit(want), (row.name, values)


def test_a_scalar_loop_runs_no_kernel_and_gives_autograds_gradient():
    coeffs = np.linspace(-1.0, 1.0, 40)

    def horner(x, tensor):
        p = tensor(coeffs[0])
        for c in coeffs[1:]:
            p = p * x + c
        return (p * anp.tanh(x) if tensor is anp.array else p * x.tanh()) / (1 + x * x)

    for value in (0.3, -1.7):
        x = ng.tensor(value, requires_grad=True)
        with ng.engine.record() as rec:
            y = horner(x, ng.tensor)
            y.backward()
            got = y.item(), x.grad.item()
        assert rec.kernels_launched == 0
        want = horner(value, anp.array), hips_grad(lambda v: horner(v, anp.array))(value)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_integers_arrays_and_pending_operands_are_recorded():
    i = ng.tensor(3)
    assert (i * 2)._buf.realized is None  # integers: kernels wrap, Python does not
    assert (ng.tensor([1.0, 2.0]) * 2.0)._buf.realized is None  # two elements
    total = ng.tensor([1.0, 2.0]).sum()
    assert (total * 2.0)._buf.realized is None  # a reduction pending: fused with it
    assert (ng.tensor([2.0]) * ng.tensor([3.0]))._buf.realized is not None  # shape (1,)


def test_python_errors_give_numpys_infinities_and_nans():
    x, zero = ng.tensor(-1.0), ng.tensor(0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [(1.0 / zero).item(), zero.log().item(), x.sqrt().item(),
               (x * -1000).exp().item(), (x ** 0.5).item(), (zero ** -1.0).item()]
    np.testing.assert_array_equal(got, [np.inf, -np.inf, np.nan, np.inf, np.nan, np.inf])


def test_a_trace_records_scalar_work_for_its_replays():
    w = ng.tensor(2.0)

    @ng.jit
    def f(x):
        return x * w + 1.0

    assert f(ng.tensor(3.0)).item() == 7.0
    w -= 1.0  # read again by the replay, not baked into the trace
    assert f(ng.tensor(3.0)).item() == 4.0
    assert f(ng.tensor(5.0)).item() == 6.0


def test_a_row_replaced_at_run_time_computes_by_its_own_expression(monkeypatch):
    import dataclasses

    exp = TABLE["exp"]
    monkeypatch.setitem(TABLE, "exp", dataclasses.replace(exp, code="math.exp(x) + 1"))
    assert ng.tensor(0.0).exp().item() == 2.0
    monkeypatch.setitem(TABLE, "exp", exp)
    assert ng.tensor(0.0).exp().item() == 1.0


def test_turned_off_scalars_are_recorded(monkeypatch):
    monkeypatch.setattr(lazy, "AT_ONCE", False)
    y = ng.tensor(2.0) * 3.0
    assert y._buf.realized is None and y.item() == 6.0


def test_a_one_element_kernel_computes_as_values_computed_when_recorded(numba_cpu):
    # ng.jit's trace records scalar work, and its replay launches a one-element kernel:
    # that calls libm (`cpu.SCALAR`), as eager's values computed when recorded do, so
    # the two give the same bits.
    @ng.jit
    def f(x):
        return ((x * 1.7).exp() - x.tanh()) ** x.sigmoid() + x.log1p() * x.sin()

    for v in np.random.default_rng(0).uniform(0.01, 3.0, 40):
        x = ng.tensor(v)
        want = ((x * 1.7).exp() - x.tanh()) ** x.sigmoid() + x.log1p() * x.sin()
        assert want._buf.is_realized  # computed when recorded
        assert f(x).item() == want.item()
