"""How ng.jit replays (numgrad/capture): the final plan, the prepared plan (buffers,
views and launch arguments made once) and the cases that run the plan step by step.
Values are compared with eager calls (float64, rtol 1e-12); counts come from the
engine's counters.
"""

import sys

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numba
import numpy as np
import pytest
from hypothesis import given
from numpy.testing import assert_allclose

import numgrad as ng
from numgrad import lazy, primitives
from numgrad.autograd.backward import run_backward
from numgrad.engine.launch import run
from numgrad.engine.schedule import schedule
from numgrad.kernels import host
from numgrad.plan import runner, views

# Prepared plans are for the CPU target's compiled kernels (the interpreter's and CUDA's
# plans run step by step: the SPEC tests in test_jit.py cover those).
pytestmark = pytest.mark.usefixtures("numba_cpu", "replay_mode")

RTOL = 1e-12
rng = np.random.default_rng(5)


def horner(x, n=40):
    p = ng.tensor(1.0)
    for c in rng.standard_normal(n):
        p = p * x + float(c)
    return p


def value_and_derivative(x):
    p = x.sin()
    for c in (0.5, -1.25, 2.0, 0.75):
        p = p * x + c
    (g,) = ng.grad(p, x)
    return p, g


def prepared(fn, *args):
    """Call jitted `fn` (tracing it) and return its only trace's prepared plan (the
    next calls run it)."""
    fn(*args)
    (trace,) = [t for ts in fn._traces.values() for t in ts]
    assert trace.plan.runs.prepared is not None
    return trace.plan.runs.prepared


def calls(plan) -> list[tuple[str, type]]:
    """The prepared plan's calls left to replay (its launches aside): each one's
    operation and how it runs (its step's type: `runner.CalledInto` and so on)."""
    return [(s.call.op, type(s)) for s in plan.steps if isinstance(s, runner.Called)]


def test_a_final_plan_stores_only_what_is_read_later(monkeypatch):
    monkeypatch.setattr(primitives, "MAX_DEPTH", 10**6)  # one graph
    monkeypatch.setattr(sys.modules["numgrad.autograd.backward"], "CUT_DEPTH", 10**6)
    monkeypatch.setattr(lazy, "AT_ONCE", False)  # scalars recorded, not computed
    x = ng.tensor(0.7, requires_grad=True)
    p = horner(x)
    (g,) = run_backward(p, None, x, accumulate=False, retain_graph=True, create_graph=False)
    eager, _ = schedule([p._buf, g._buf])
    final, slots = schedule([p._buf, g._buf], final=True)
    assert len(final.slots) < len(eager.slots)
    # (both stop merging at MAX_KERNEL_ARRAYS, but a final plan counts only the arrays it
    # keeps: its kernels merge further)
    assert len(final.steps) <= len(eager.steps)
    arrays = run(final, [slots[s].realized for s in final.sources])
    got = [arrays[next(i for i, b in enumerate(slots) if b is t._buf)] for t in (p, g)]
    ng.realize(p, g)
    assert_allclose(got, [p.item(), g.item()], rtol=RTOL)


def test_a_warm_replay_allocates_only_its_results():
    step = ng.jit(value_and_derivative)
    plan = prepared(step, ng.tensor(0.3, requires_grad=True))
    assert not calls(plan)  # launches only
    got = step(ng.tensor(0.3, requires_grad=True))  # held at each call below
    for v in (0.3, -1.1, 2.5):
        x = ng.tensor(v, requires_grad=True)
        with ng.engine.record() as rec:
            got = step(x)
        want = value_and_derivative(x)
        for a, b in zip(got, want):
            assert_allclose(a.numpy(), b.numpy(), rtol=RTOL)
        assert rec.kernels_compiled == 0 and rec.bytes_allocated == 2 * 8  # two float64


def test_results_dropped_before_the_next_call_are_recycled():
    # A replay writes its results into the arrays it handed out last time when nothing
    # refers to them any more (plan.prepared); results still held are left alone.
    step = ng.jit(value_and_derivative)
    prepared(step, ng.tensor(0.3, requires_grad=True))
    held = step(ng.tensor(0.5, requires_grad=True))
    with ng.engine.record() as rec:
        again = step(ng.tensor(-1.5, requires_grad=True))
    assert rec.bytes_allocated == 2 * 8  # `held` keeps the last results
    del again
    with ng.engine.record() as rec:
        last = step(ng.tensor(2.5, requires_grad=True))
    assert rec.bytes_allocated == 0  # the dropped results' arrays, written again
    for got, x in ((held, 0.5), (last, 2.5)):
        want = value_and_derivative(ng.tensor(x, requires_grad=True))
        for a, b in zip(got, want):
            assert_allclose(a.numpy(), b.numpy(), rtol=RTOL)


def test_views_of_the_plans_own_buffers_are_made_once():
    def f(x):
        for _ in range(4):
            x = x + x.sum()  # the sum, broadcast back: a view between two kernels
        return x

    step = ng.jit(f)
    x = ng.tensor(rng.standard_normal(6))
    assert not calls(prepared(step, x))  # no call left
    with ng.engine.record() as rec:
        got = step(x)
    with ng.engine.record() as eager:
        want = f(x).numpy()
    assert_allclose(got.numpy(), want, rtol=RTOL)
    assert rec.kernels_compiled == 0 and rec.kernels_launched == eager.kernels_launched


_VIEWS = {  # views a launch makes of its inputs, as the CPU target makes them
    "reshape": (lambda a: host.reshape(a, (6, 4)), "reshape"),
    "rows broadcast": (lambda a: host.expand(a[:1], (5, 6)), "window"),
    "columns broadcast": (lambda a: host.expand(a[:, :1], (4, 3)), "window"),
    "transposed": (lambda a: host.permute(a, (1, 0)), "window"),
    "a window": (lambda a: a[1:3, 2:5], "window"),
    "reversed": (lambda a: a[::-1, ::2], "window"),
    "a broadcast of a broadcast":
        (lambda a: host.permute(host.expand(a[:, :1], (4, 6)), (1, 0)), "window"),
    "the same": (lambda a: a, "same"),
}


@pytest.mark.parametrize("make, how", list(_VIEWS.values()), ids=list(_VIEWS))
def test_a_prepared_view_is_the_view_an_eager_launch_makes(make, how):
    """A prepared plan makes a launch's view of a new array from what it learnt of the
    first (`numgrad.plan.views.spec_of`): the same elements, strides, flags and Numba type, which
    its compiled kernel is called with unchecked."""
    first, again = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    spec = views.spec_of(make(first), first)
    assert spec[3] == how
    made, want = views.make_view(host, again, spec), make(again)
    assert made.shape == want.shape and made.strides == want.strides
    assert np.array_equal(made, want)
    assert {f: made.flags[f] for f in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE")} == \
        {f: want.flags[f] for f in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE")}
    assert numba.typeof(made) == numba.typeof(want)


_VIEWS_OF_VIEWS = {  # (the base, itself a view; a launch's view of it)
    "a column block, transposed": (lambda a: a[:, :3], lambda b: host.permute(b, (1, 0))),
    "a broadcast column, as a row": (
        lambda a: host.expand(a[:, :1].reshape(4), (6, 4)).T,
        lambda b: np.lib.stride_tricks.as_strided(b, (1, 4), (0, b.strides[0]))),
    "every other row of a block": (lambda a: a[:, 1:5], lambda b: b[::2]),
}


@pytest.mark.parametrize("base, make", list(_VIEWS_OF_VIEWS.values()),
                         ids=list(_VIEWS_OF_VIEWS))
def test_a_view_of_a_view_is_made_by_indexing_it(base, make):
    """A launch's view of an array that is itself a view (a column block of a source, a
    broadcast one) is made again by indexing the new array ("indexed"), not by NumPy's
    as_strided: the same elements, strides (of the axes longer than 1: the others are
    never stepped along), flags and Numba type."""
    first, again = base(rng.standard_normal((4, 6))), base(rng.standard_normal((4, 6)))
    spec = views.spec_of(make(first), first)
    assert spec[3] == "indexed"
    made, want = views.make_view(host, again, spec), make(again)
    assert made.shape == want.shape
    assert all(a == b for a, b, n in zip(made.strides, want.strides, want.shape) if n > 1)
    assert np.array_equal(made, want)
    assert {f: made.flags[f] for f in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE")} == \
        {f: want.flags[f] for f in ("C_CONTIGUOUS", "F_CONTIGUOUS", "WRITEABLE")}
    assert numba.typeof(made) == numba.typeof(want)


def test_matmuls_run_between_launches():
    w = ng.tensor(rng.standard_normal((4, 3)))

    def f(x):
        return ((x.tanh() @ w).exp() @ w.T).sum()

    step = ng.jit(f)
    x = ng.tensor(rng.standard_normal((5, 4)))
    matmuls = [c for c in calls(prepared(step, x)) if c[0] == "matmul"]
    assert matmuls == [("matmul", runner.CalledInto)] * 2
    held = step(x)  # noqa: F841 (the last result, held: the next one is a new array)
    with ng.engine.record() as rec:
        got = step(x)
    assert_allclose(got.numpy(), f(x).numpy(), rtol=RTOL)
    assert rec.bytes_allocated == 8  # the result only: the products reuse the plan's buffers


def test_scatter_adds_of_slices_assign_into_the_plans_buffers():
    def f(x):  # the gradient of a difference of shifted slices: two slice scatter-adds
        (g,) = ng.grad(((x[:, 1:] - x[:, :-1]) ** 2).sum(), x)
        return g * 1.0

    step = ng.jit(f)
    plan = prepared(step, ng.tensor(rng.standard_normal((3, 5)), requires_grad=True))
    assert [c for c in calls(plan) if c[0] == "index_add"] == [("index_add", runner.CalledInto)] * 2
    got = step(ng.tensor(rng.standard_normal((3, 5)), requires_grad=True))  # held
    for _ in range(3):  # the buffers' zeros outside the slices stay zeros
        x = ng.tensor(rng.standard_normal((3, 5)), requires_grad=True)
        with ng.engine.record() as rec:
            got = step(x)
        assert_allclose(got.numpy(), f(x).numpy(), rtol=RTOL)
        assert rec.bytes_allocated == 3 * 5 * 8  # the result only


def test_arguments_with_other_strides_run_the_plan_step_by_step():
    step = ng.jit(lambda x: (x.exp() * 2.0).sum(axis=0))
    a = rng.standard_normal((3, 3))
    plain = ng.tensor(a)
    transposed = ng.tensor(a.T.copy()).T.realize()  # a transposed view of its array
    replay = prepared(step, plain)
    assert replay.matches([plain._buf.realized])
    assert not replay.matches([transposed._buf.realized])
    assert_allclose(step(plain).numpy(), np.exp(a).sum(axis=0) * 2.0, rtol=RTOL)
    assert_allclose(step(transposed).numpy(), np.exp(a).sum(axis=0) * 2.0, rtol=RTOL)
    assert step.traces == 1


def test_an_argument_passed_twice_is_part_of_the_signature():
    step = ng.jit(lambda a, b: a * 2.0 - b)
    x, y = ng.tensor([1.0, 2.0]), ng.tensor([5.0, 7.0])
    assert step(x, x).tolist() == [1.0, 2.0]
    assert step(x, y).tolist() == [-3.0, -3.0]
    assert step.traces == 2


def test_integer_indexing_gives_views_of_the_argument():
    def f(x):
        return (x[0] * x[1:]).exp().sum() + x[2] ** 2

    step = ng.jit(f)
    x = ng.tensor(rng.standard_normal(5))
    prepared(step, x)
    assert_allclose(step(x).numpy(), f(x).numpy(), rtol=RTOL)


@pytest.mark.parametrize("key", [np.s_[1:3], np.s_[::2], (np.array([0, 0, 2]),)])
def test_scatter_add_of_basic_and_integer_keys(key):
    x = ng.tensor(rng.standard_normal(4), requires_grad=True)
    (g,) = ng.grad((x[key] * ng.tensor([1.0, 2.0, 3.0])[: len(np.arange(4)[key])]).sum(), x)
    want = np.zeros(4)
    np.add.at(want, key, np.array([1.0, 2.0, 3.0])[: len(np.arange(4)[key])])
    assert_allclose(g.numpy(), want, rtol=RTOL)


@pytest.mark.parametrize("make", [
    lambda ps: ng.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: ng.optim.Adam(ps, lr=0.05),
])
def test_training_steps_replayed_equal_eager_steps(make):
    data = ng.tensor(rng.standard_normal((8, 3)))
    labels = ng.tensor(rng.integers(0, 2, 8))
    start = [rng.standard_normal((3, 2)), rng.standard_normal(2)]

    def model():
        params = [ng.tensor(p, requires_grad=True) for p in start]
        optimizer = make(params)

        def step(x, y):
            optimizer.zero_grad()
            loss = ng.nn.functional.cross_entropy((x @ params[0] + params[1]).tanh(), y)
            loss.backward()
            optimizer.step()
            return loss

        return params, step

    eager_params, eager_step = model()
    jit_params, jit_step = model()
    jit_step = ng.jit(jit_step)
    for _ in range(5):
        assert_allclose(jit_step(data, labels).item(), eager_step(data, labels).item(),
                        rtol=RTOL)
    for a, b in zip(jit_params, eager_params):
        assert_allclose(a.numpy(), b.numpy(), rtol=RTOL)
    assert jit_step.traces == 2
    assert all(t.plan.runs.prepared is not None for ts in jit_step._traces.values()
               for t in ts)


def test_threads_calling_one_jitted_function_trace_it_once():
    import threading

    step = ng.jit(lambda x: (x.sin() * 2.0).sum())
    xs = [ng.tensor(rng.standard_normal(4)) for _ in range(8)]
    results = [None] * len(xs)

    def call(i):
        results[i] = step(xs[i]).item()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert step.traces == 1
    assert_allclose(results, [np.sin(x.numpy()).sum() * 2.0 for x in xs], rtol=RTOL)


def test_gathers_read_index_arrays_uploaded_once():
    def f(x):
        return (x[np.array([0, 2, 2])] * x[np.array([1, 1, 0])]).exp().sum()

    step = ng.jit(f)
    prepared(step, ng.tensor(rng.standard_normal(3)))
    for _ in range(2):
        x = ng.tensor(rng.standard_normal(3))
        assert_allclose(step(x).numpy(), f(x).numpy(), rtol=RTOL)


def test_an_error_while_tracing_leaves_no_trace_and_eager_code_runs():
    calls = []

    def f(x):
        calls.append(1)
        if len(calls) == 1:
            raise KeyError("first call fails")
        return x * 2.0

    step = ng.jit(f)
    x = ng.tensor([1.0, 2.0])
    with pytest.raises(KeyError):
        step(x)
    assert (x + 1.0).tolist() == [2.0, 3.0]  # eager again: realizing is not deferred
    assert step(x).tolist() == [2.0, 4.0] and step.traces == 1


# ---- random programs: a replay equals an eager call ---------------------------------

UNARY = ["exp", "tanh", "sin", "sigmoid", "abs"]
BINARY = ["add", "multiply", "subtract", "maximum"]


@st.composite
def programs(draw):
    """A random program over two broadcastable arguments: each step applies a unary
    function, a binary one (to two earlier values), or a reduction with keepdims."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3))
    steps = draw(st.lists(st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(UNARY), st.integers(0, 99)),
        st.tuples(st.just("binary"), st.sampled_from(BINARY), st.integers(0, 99),
                  st.integers(0, 99)),
        st.tuples(st.just("sum"), st.integers(0, 99)),
    ), min_size=1, max_size=6))
    return shapes.input_shapes, steps


def run_program(steps, a, b):
    values = [a, b]
    for step in steps:
        pick = [values[i % len(values)] for i in step[2:]] if step[0] == "binary" else \
            [values[step[-1] % len(values)]]
        if step[0] == "unary":
            values.append(getattr(pick[0], step[1])())
        elif step[0] == "binary":
            values.append(getattr(ng, step[1])(*pick))
        else:
            values.append(pick[0].sum(axis=-1, keepdims=True) if pick[0].ndim else pick[0])
    return sum((v.sum() for v in values[2:]), values[0].sum() * 0.0)


@pytest.mark.slow
@given(program=programs(), seed=st.integers(0, 2**16))
def test_random_programs_replay_values_and_gradients_of_eager_calls(program, seed):
    shapes, steps = program
    r = np.random.default_rng(seed)
    step = ng.jit(lambda a, b: run_program(steps, a, b))
    for _ in range(2):  # the trace, then a replay with new values
        a = ng.tensor(r.uniform(-1, 1, shapes[0]), requires_grad=True)
        b = ng.tensor(r.uniform(-1, 1, shapes[1]))
        got, want = step(a, b), run_program(steps, a, b)
        assert_allclose(got.numpy(), want.numpy(), rtol=RTOL, atol=1e-12)
        assert_allclose(ng.grad(got, a)[0].numpy(), ng.grad(want, a)[0].numpy(),
                        rtol=RTOL, atol=1e-12)
    assert step.traces == 1


def test_a_thread_tracing_leaves_another_threads_recording_as_it_is():
    # The trace is the tracing thread's (its recorder's client): while it traces, another
    # thread computes scalar work at once, reads values and replays its step plan.
    import threading

    inside, done = threading.Event(), threading.Event()

    def traced(x):
        inside.set()
        assert done.wait(10)
        return (x * 2.0).sum()

    step = ng.jit(traced)
    tracing = threading.Thread(target=lambda: step(ng.tensor(np.ones(3))))
    tracing.start()
    assert inside.wait(10)
    try:
        assert (ng.tensor(2.0) * 3.0)._buf.realized is not None  # computed at once
        w = ng.tensor(np.arange(3.0), requires_grad=True)
        with ng.engine.record() as rec:
            for _ in range(4):
                w.grad = None
                loss = (w * w).sum()
                assert loss.item() == 5.0  # (a read: it raises inside a trace)
                loss.backward()
        assert rec.steps_replayed >= 1
        assert_allclose(w.grad.numpy(), 2 * np.arange(3.0), rtol=RTOL)
    finally:
        done.set()
        tracing.join()
    assert step.traces == 1
