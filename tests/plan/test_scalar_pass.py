"""Backward passes over single numbers made again as Python code
(`numgrad.plan.scalar_pass`): a reused pass whose every buffer was one float64 or
bool value computed at once gives exactly what making it row by row gives (compared
bit for bit, the sign of zero and NaN included), and falls back to that where a row
raises or an operand is not what it was when the pass was recorded. Gradients are
also compared with the HIPS autograd package to 1e-12 relative.
"""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad as hips_grad

import numgrad as ng
from numgrad import lazy
from numgrad.ops import BINARY, TABLE, UNARY
from numgrad.plan import recipes, step_plans
from numgrad.plan.scalar_pass import ScalarPass
from numgrad.primitives import _elementwise

ROWS = [row for row in TABLE.values() if row.kind in (UNARY, BINARY) and row.vjp
        and row.result != "bool"]
#: rows whose scalar backward passes must be made as Python code (the common ones)
AS_CODE = {"add", "subtract", "multiply", "divide", "negative", "exp", "log", "sin",
           "cos", "tanh", "sqrt", "sigmoid", "power", "expm1", "log1p", "abs"}


@pytest.fixture
def runs(monkeypatch):
    """Start with no recipe nor step plan (a plan runs no pass); note each scalar pass
    run: True if it gave the values, False if it fell back to making the recipe row by
    row."""
    recipes.CACHE.clear()
    step_plans.CACHE.clear()
    noted = []
    run = ScalarPass.run
    monkeypatch.setattr(ScalarPass, "run", lambda self, starts, refs: noted.append(
        (r := run(self, starts, refs)) is not None) or r)
    return noted


def _row_by_row(monkeypatch, program, *values):
    """`program`'s gradients with the scalar passes turned off."""
    with monkeypatch.context() as m:
        m.setattr(ScalarPass, "run", lambda self, starts, refs: None)
        return program(*values)


def _bits(values) -> list:
    return [np.float64(v).tobytes() for v in values]


def _points(row) -> list[float]:
    low, high = row.domain
    return [low + (high - low) * f for f in (0.31, 0.57, 0.83)]


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_a_scalar_pass_as_code_gives_the_bits_of_the_pass_made_row_by_row(
        row, runs, monkeypatch):
    def program(a, b):
        x = ng.tensor(a, requires_grad=True)
        w = ng.tensor(b, requires_grad=True)
        # (gammainc's and gammaincc's first operand has no gradient: it is detached)
        first = x.detach() if row.name in ("gammainc", "gammaincc") else x
        y = _elementwise(row.name, *((x,) if row.kind == UNARY else (first, w)))
        ((y * y + x) * w - 0.5).backward()
        return x.grad.item(), w.grad.item()

    points = _points(row)
    for a, b in zip(points, points[::-1]):
        got = program(a, b)
        assert _bits(got) == _bits(_row_by_row(monkeypatch, program, a, b)), (a, b)
    if row.name in AS_CODE:
        assert runs and all(runs), runs


def test_a_scalar_loop_is_made_as_code_and_matches_autograd(runs):
    def f(x, lib):
        p = x * 0 + 1.5
        for c in (0.3, -1.2, 0.7, 2.0, -0.4):
            p = lib.tanh(p * x + c) + lib.exp(-p * p) / (1 + x * x)
        return p

    for value in (0.7, -0.2, 1.3):
        x = ng.tensor(value, requires_grad=True)
        with ng.engine.record() as rec:
            f(x, ng).backward()
            got = x.grad.item()
        assert rec.kernels_launched == 0
        np.testing.assert_allclose(got, hips_grad(lambda v: f(v, anp))(value), rtol=1e-12)
    assert runs == [True, True]


def test_a_row_that_raises_falls_back_to_numpys_values(runs, monkeypatch):
    def program(a):
        x = ng.tensor(a, requires_grad=True)
        (1.0 / x + x).backward()  # d/dx at 0: -1 / 0 ** 2 raises in Python
        return x.grad.item()

    program(2.0)
    assert program(0.0) == -np.inf == _row_by_row(monkeypatch, program, 0.0)
    assert runs == [False]


@pytest.mark.parametrize("first", ["constant", "computed", "pending"])
def test_an_operand_not_as_recorded_falls_back_to_the_pass_made_row_by_row(
        first, runs, monkeypatch):
    def operand(kind, value):
        if kind == "constant":
            return value  # (a constant of the recorded graph)
        if kind == "computed":
            return ng.tensor(value)
        return ng.tensor([value, 0.0]).sum()  # pending: a reduction's result

    def program(kinds, a, c):
        x = ng.tensor(a, requires_grad=True)
        ((x * operand(kinds, c)).sin() * x).backward()
        return x.grad.item()

    others = [k for k in ("constant", "computed", "pending") if k != first]
    program(first, 0.4, 1.5)  # recorded
    assert program(first, 0.6, 2.5) == _row_by_row(monkeypatch, program, first, 0.6, 2.5)
    for kind in others:
        assert program(kind, 0.6, 2.5) == _row_by_row(monkeypatch, program, kind, 0.6, 2.5)
    # as recorded, the pass runs as code; the other kinds fall back. (Work on a pending
    # operand is not computed at once: a pass recorded with one has no code.)
    assert runs == ([True, False, False] if first != "pending" else [])


def test_float32_and_lazy_engine_passes_are_made_row_by_row(runs, monkeypatch):
    def program(a, dtype):
        x = ng.tensor(np.array(a, dtype), requires_grad=True)
        (x.exp() * x).backward()
        return x.grad.item()

    for a in (0.5, 0.7):
        program(a, np.float32)
    assert runs == []  # a float32 pass has no code
    monkeypatch.setattr(lazy, "AT_ONCE", False)
    for a in (0.5, 0.7):
        np.testing.assert_allclose(program(a, np.float64), np.exp(a) * (1 + a), rtol=1e-12)
    assert runs == []  # recorded with AT_ONCE off: its buffers were not computed at once


def test_constant_gradients_keep_their_shape(runs):
    # ceil's rule hands out zeros: a constant of x's shape, which the code gives too
    for values in ([0.3, 1.6], [2.5, -0.5]):
        x = ng.tensor(values, requires_grad=True)
        # (retain_graph: no step plan, whose pass is made row by row the first time)
        (g,) = ng.grad(x.ceil().sum(), x, retain_graph=True)
        np.testing.assert_array_equal(g.numpy(), [0.0, 0.0])
    assert runs == [True]
