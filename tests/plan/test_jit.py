"""ng.jit (SPEC §6): trace once per signature, replay the plan after.

Every test compares a jitted function with an eager call of the same function on
the same inputs (or on identical copies of the parameters it updates): rtol 1e-12
in float64, 1e-5 in float32. Arrays stay small and a few function shapes are
reused, so the suite compiles few kernels.
"""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import numgrad as ng

RTOL = 1e-12
ATOL = 1e-14
rng = np.random.default_rng(11)


def arr(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def close(actual, expected, rtol=RTOL, atol=ATOL):
    """`actual` (a Tensor) against `expected` (a Tensor or an array)."""
    if isinstance(expected, ng.Tensor):
        expected = expected.numpy()
    assert_allclose(actual.numpy(), expected, rtol=rtol, atol=atol)


# ---- the function shapes most tests reuse ---------------------------------------

def program(x, y):
    """Elementwise, a reduction and a matmul: shapes (3, 4) and (3, 4) -> (3,)."""
    return (x.exp() * y).sum(axis=1) + (x @ y.T).tanh().mean()


def smooth(x):
    """A scalar function with nonzero second derivatives."""
    return (x * x * x).sum() + (x.sin() * x).sum()


# ---- values and signatures --------------------------------------------------------

def test_values_equal_eager_float64():
    step = ng.jit(program)
    for _ in range(3):
        a, b = arr(3, 4), arr(3, 4)
        x, y = ng.tensor(a), ng.tensor(b)
        close(step(x, y), program(x, y))
    assert step.traces == 1


def test_values_equal_eager_float32():
    step = ng.jit(program)
    for _ in range(3):
        x, y = ng.tensor(arr(3, 4, dtype=np.float32)), ng.tensor(arr(3, 4, dtype=np.float32))
        out = step(x, y)
        assert out.dtype == ng.float32
        close(out, program(x, y), rtol=1e-5, atol=1e-6)
    assert step.traces == 1


def test_decorator_form():
    @ng.jit
    def scaled(x):
        return x * 2.0 + 1.0

    x = ng.tensor(arr(6))
    assert scaled.traces == 0
    close(scaled(x), x.numpy() * 2.0 + 1.0)
    close(scaled(x), x.numpy() * 2.0 + 1.0)
    assert isinstance(scaled.traces, int) and scaled.traces == 1


def test_new_shape_dtype_or_requires_grad_retraces_new_values_do_not():
    step = ng.jit(program)
    calls = [
        ((3, 4), np.float64, False, 1),
        ((3, 4), np.float64, False, 1),  # new values, same signature
        ((2, 4), np.float64, False, 2),  # new shape
        ((3, 4), np.float32, False, 3),  # new dtype
        ((3, 4), np.float64, True, 4),   # requires_grad
        ((3, 4), np.float64, False, 4),  # each signature's plan is kept
        ((2, 4), np.float64, False, 4),
        ((3, 4), np.float32, False, 4),
    ]
    for shape, dtype, requires_grad, traces in calls:
        x = ng.tensor(arr(*shape, dtype=dtype), requires_grad=requires_grad)
        y = ng.tensor(arr(*shape, dtype=dtype))
        tol = {"rtol": RTOL, "atol": ATOL} if dtype == np.float64 else {"rtol": 1e-5, "atol": 1e-6}
        close(step(x, y), program(x, y).detach(), **tol)
        assert step.traces == traces, (shape, dtype, requires_grad)


def test_static_arguments_retrace_by_value():
    def powered(x, n, mode="sum"):
        y = x ** n
        return y.sum() if mode == "sum" else y.max()

    step = ng.jit(powered)
    x = ng.tensor(arr(6))
    a = x.numpy()
    close(step(x, 2), (a ** 2).sum())
    close(step(x, 2), (a ** 2).sum())
    assert step.traces == 1
    close(step(x, 3), (a ** 3).sum())
    assert step.traces == 2
    close(step(x, 3, mode="max"), (a ** 3).max())
    assert step.traces == 3
    close(step(x, 2), (a ** 2).sum())
    close(step(x, 3, mode="max"), (a ** 3).max())
    assert step.traces == 3


def test_grad_mode_is_part_of_the_signature():
    step = ng.jit(program)
    x = ng.tensor(arr(3, 4), requires_grad=True)
    y = ng.tensor(arr(3, 4))
    out = step(x, y)
    assert out.requires_grad and step.traces == 1
    with ng.no_grad():
        quiet = step(x, y)
        assert not quiet.requires_grad
        assert step.traces == 2
        step(x, y)
    assert step.traces == 2
    close(quiet, out.detach())


def test_tensor_keyword_arguments():
    def fn(x, *, scale, shift=0.0):
        return x * scale + shift

    step = ng.jit(fn)
    for _ in range(2):
        x, s = ng.tensor(arr(6)), ng.tensor(arr(6))
        close(step(x, scale=s, shift=0.5), x.numpy() * s.numpy() + 0.5)
    assert step.traces == 1


def test_keyword_order_and_aliased_arguments():
    step = ng.jit(program)
    x, y = ng.tensor(arr(3, 4)), ng.tensor(arr(3, 4))
    close(step(x=x, y=y), program(x, y))
    close(step(y=y, x=x), program(x, y))
    close(step(x, x), program(x, x))  # one tensor passed twice
    close(step(x, y), program(x, y))
    close(step(y, y), program(y, y))
    close(step(y, x), program(y, x))


def test_numpy_arrays_are_tensor_arguments():
    seen = []

    def fn(x, y):
        seen.append((type(x), type(y)))
        return program(x, y)

    step = ng.jit(fn)
    a, b = arr(3, 4), arr(3, 4)
    close(step(a, b), program(ng.tensor(a), ng.tensor(b)))
    assert seen == [(ng.Tensor, ng.Tensor)]
    a2 = arr(3, 4)
    close(step(a2, b), program(ng.tensor(a2), ng.tensor(b)))
    a2 *= -0.5  # the same array, changed: its value is read at the call
    close(step(a2, b), program(ng.tensor(a2), ng.tensor(b)))
    assert step.traces == 1 and len(seen) == 1


def test_containers_in_and_out():
    def fn(batch, pair):
        x, ys = batch["x"], batch["ys"]
        u, v = pair
        return {"sum": x + ys[0], "parts": [u * ys[1], None], "both": (v.exp(), x.sum())}

    step = ng.jit(fn)
    for _ in range(2):
        a, b, c, d, e = (arr(2, 3) for _ in range(5))
        batch = {"x": ng.tensor(a), "ys": [ng.tensor(b), ng.tensor(c)]}
        out = step(batch, (ng.tensor(d), ng.tensor(e)))
        assert set(out) == {"sum", "parts", "both"}
        assert isinstance(out["parts"], list) and isinstance(out["both"], tuple)
        assert len(out["parts"]) == 2 and out["parts"][1] is None
        close(out["sum"], a + b)
        close(out["parts"][0], d * c)
        close(out["both"][0], np.exp(e))
        close(out["both"][1], a.sum())
    assert step.traces == 1


def test_a_container_of_another_structure_retraces():
    def fn(xs):
        return sum(xs[1:], xs[0] * 1.0)

    step = ng.jit(fn)
    a, b, c = arr(4), arr(4), arr(4)
    close(step([ng.tensor(a), ng.tensor(b)]), a + b)
    close(step([ng.tensor(a), ng.tensor(b), ng.tensor(c)]), a + b + c)
    assert step.traces == 2
    close(step([ng.tensor(c), ng.tensor(a)]), c + a)
    assert step.traces == 2


def test_results_are_new_tensors_every_call():
    step = ng.jit(program)
    x1, y1 = ng.tensor(arr(3, 4)), ng.tensor(arr(3, 4))
    x2, y2 = ng.tensor(arr(3, 4)), ng.tensor(arr(3, 4))
    first = step(x1, y1)
    again = step(x1, y1)
    assert first is not again
    second = step(x2, y2)
    third = step(x1, y1)
    # no result shares memory with the plan's reused buffers
    close(first, program(x1, y1))
    close(second, program(x2, y2))
    close(third, program(x1, y1))
    close(again, program(x1, y1))


def test_the_same_tensor_returned_twice():
    def fn(x):
        y = x.exp()
        return y, [y, x * 2.0], {"again": y}

    step = ng.jit(fn)
    for _ in range(2):
        a = arr(4)
        y1, (y2, z), d = step(ng.tensor(a))
        for y in (y1, y2, d["again"]):
            close(y, np.exp(a))
        close(z, a * 2.0)
    assert step.traces == 1


def test_returning_none():
    seen = []

    def fn(x):
        seen.append(1)

    step = ng.jit(fn)
    assert step(ng.tensor(arr(3))) is None
    assert step(ng.tensor(arr(3))) is None
    assert step.traces == 1 and len(seen) == 1


@pytest.mark.parametrize("result", [
    lambda t: 1.5,
    lambda t: "done",
    lambda t: (t, 3),
    lambda t: {"loss": t, "note": "x"},
    lambda t: [t, object()],
], ids=["float", "str", "tuple-int", "dict-str", "list-object"])
def test_other_results_are_a_type_error(result):
    step = ng.jit(lambda x: result(x * 2.0))
    with pytest.raises(TypeError):
        step(ng.tensor(arr(3)))


# ---- captured tensors -------------------------------------------------------------

def test_captured_tensor_values_are_read_afresh():
    w = ng.tensor(arr(4))

    def fn(x):
        return x * w + w.sum()

    step = ng.jit(fn)
    x = ng.tensor(arr(4))
    close(step(x), fn(x))
    with ng.no_grad():
        w -= 1.0
    close(step(x), fn(x))
    w[...] = arr(4)
    close(step(x), fn(x))
    w[1:3] = 0.0
    close(step(x), fn(x))
    assert step.traces == 1


GLOBAL_W = ng.tensor(arr(3, 4))


def test_captured_global_values_are_read_afresh():
    global GLOBAL_W  # `GLOBAL_W *= 0.5` updates the same tensor in place

    def fn(x):
        return (x @ GLOBAL_W).exp().sum(axis=0)

    step = ng.jit(fn)
    x = ng.tensor(arr(2, 3))
    close(step(x), fn(x))
    with ng.no_grad():
        GLOBAL_W *= 0.5
    close(step(x), fn(x))
    assert step.traces == 1


def test_captured_tensor_requires_grad_change_retraces():
    w = ng.tensor(arr(3, 4))
    step = ng.jit(lambda x: program(x, w))
    x = ng.tensor(arr(3, 4))
    assert not step(x).requires_grad
    w.requires_grad_()
    out = step(x)
    assert step.traces == 2
    assert out.requires_grad
    (g,) = ng.grad(out.sum(), w)
    (g_eager,) = ng.grad(program(x, w).sum(), w)
    close(g, g_eager)


# ---- effects: optimizers, backward, .grad -----------------------------------------

P0, W0 = arr(4), arr(3, 4)
BATCHES = [(arr(5, 3), arr(5, 4)) for _ in range(6)]


def make_training(opt_factory):
    p = ng.tensor(P0, requires_grad=True)
    w = ng.tensor(W0, requires_grad=True)
    opt = opt_factory([p, w])

    def train_step(x, y):
        opt.zero_grad()
        loss = (((x @ w) * p - y) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    return (p, w), train_step


@pytest.mark.parametrize("opt_factory", [
    lambda ps: ng.optim.SGD(ps, lr=0.1),
    lambda ps: ng.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: ng.optim.Adam(ps, lr=0.05),
], ids=["sgd", "sgd-momentum", "adam"])
def test_optimizer_steps_equal_eager_steps(opt_factory):
    (p, w), eager = make_training(opt_factory)
    (jp, jw), fn = make_training(opt_factory)
    step = ng.jit(fn)
    for i, (a, b) in enumerate(BATCHES[:4]):
        x, y = ng.tensor(a), ng.tensor(b)
        loss = step(x, y)
        assert not loss.requires_grad  # a step with effects returns no history
        close(loss, eager(x, y))
        close(jp, p)
        close(jw, w)
        assert jp.grad is not None and jw.grad is not None
        close(jp.grad, p.grad)
        close(jw.grad, w.grad)
        if i == 2:
            traces = step.traces
    assert traces <= 2
    for a, b in BATCHES[4:]:
        x, y = ng.tensor(a), ng.tensor(b)
        close(step(x, y), eager(x, y))
    close(jp, p)
    close(jw, w)
    assert step.traces == traces


def test_manual_update_and_grad_none_inside():
    lr = 0.05

    def make():
        p = ng.tensor(P0, requires_grad=True)

        def fn(x):
            nonlocal p  # `p -= ...` updates the same tensor in place
            loss = (x * p).sin().sum()
            loss.backward()
            with ng.no_grad():
                p -= lr * p.grad
            p.grad = None
            return loss

        return p, fn

    p, eager = make()
    jp, fn = make()
    step = ng.jit(fn)
    for a, _ in BATCHES[:4]:
        x = ng.tensor(a[:4, 0])
        close(step(x), eager(x))
        close(jp, p)
        assert jp.grad is None
    assert step.traces == 1


def test_grad_accumulates_across_calls_without_zero_grad():
    def make():
        p = ng.tensor(P0, requires_grad=True)

        def fn(x):
            (x * p * p).sum().backward()

        return p, fn

    p, eager = make()
    jp, fn = make()
    step = ng.jit(fn)
    for a, _ in BATCHES[:5]:
        x = ng.tensor(a[:4, 0])
        assert step(x) is None
        eager(x)
        close(jp.grad, p.grad)
        close(jp, P0)  # only .grad changes
    assert step.traces <= 2  # .grad None on the first call only


def test_grad_set_to_none_outside_between_calls():
    def make():
        p = ng.tensor(P0, requires_grad=True)

        def fn(x):
            (x * p).tanh().sum().backward()

        return p, fn

    p, eager = make()
    jp, fn = make()
    step = ng.jit(fn)
    for i, (a, _) in enumerate(BATCHES[:6]):
        x = ng.tensor(a[:4, 0])
        step(x)
        eager(x)
        close(jp.grad, p.grad)
        if i % 3 == 2:  # forget the gradients outside the step
            p.grad = None
            jp.grad = None
    assert step.traces <= 2


def test_in_place_update_of_a_captured_buffer():
    def make():
        mean = ng.zeros(4)
        scale = ng.tensor(P0)

        def fn(x):
            nonlocal mean  # `mean *= ...` updates the same tensor in place
            with ng.no_grad():
                mean *= 0.9
                mean += 0.1 * x.mean(axis=0)
            return (x - mean) * scale

        return mean, scale, fn

    mean, scale, eager = make()
    jmean, jscale, fn = make()
    step = ng.jit(fn)
    for i, (_, b) in enumerate(BATCHES[:5]):
        x = ng.tensor(b)
        close(step(x), eager(x))
        close(jmean, mean)
        if i == 2:  # changed outside too: read afresh
            with ng.no_grad():
                scale *= -2.0
                jscale *= -2.0
    assert step.traces == 1


def test_results_keep_their_values_after_later_calls_with_effects():
    (p, w), eager = make_training(lambda ps: ng.optim.SGD(ps, lr=0.1))
    (jp, jw), fn = make_training(lambda ps: ng.optim.SGD(ps, lr=0.1))

    def with_params(x, y):
        loss = fn(x, y)
        return loss, jp * 1.0

    step = ng.jit(with_params)
    results, expected = [], []
    for a, b in BATCHES[:4]:
        x, y = ng.tensor(a), ng.tensor(b)
        results.append(step(x, y))
        expected.append((eager(x, y).numpy(), p.numpy()))
    for (loss, params), (e_loss, e_params) in zip(results, expected):
        close(loss, e_loss)
        close(params, e_params)


def test_zero_grad_inside_after_grads_from_outside():
    def make():
        p = ng.tensor(P0, requires_grad=True)
        opt = ng.optim.SGD([p], lr=0.1)

        def fn(x):
            opt.zero_grad()
            (x * p).exp().sum().backward()
            return p.grad * 1.0

        return p, fn

    p, eager = make()
    jp, fn = make()
    step = ng.jit(fn)
    for a, _ in BATCHES[:4]:
        x = ng.tensor(a[:4, 0])
        for t in (p, jp):  # a gradient left over from outside, to be forgotten
            (t * 3.0).sum().backward()
        close(step(x), eager(x))
        close(jp.grad, p.grad)
    assert step.traces <= 2


# ---- reading values while tracing -------------------------------------------------

def _branch(t):
    if t > 0:
        return 1.0
    return 0.0


READS = {
    "item": lambda t: t.item(),
    "numpy": lambda t: t.numpy(),
    "tolist": lambda t: t.tolist(),
    "float": float,
    "bool": bool,
    "if": _branch,
    "np.asarray": np.asarray,
}


@pytest.mark.parametrize("read", list(READS.values()), ids=list(READS))
def test_reading_a_value_while_tracing_names_the_function(read):
    def peeking_step(x):
        s = x.sum()
        read(s)
        return s

    step = ng.jit(peeking_step)
    with pytest.raises(RuntimeError) as info:
        step(ng.tensor(arr(5)))
    message = str(info.value)
    assert "peeking_step" in message and "ng.where" in message
    # the failed trace leaves eager reads working
    assert ng.tensor([1.5, 2.0]).sum().item() == 3.5


def test_where_instead_of_a_branch():
    def fn(x):
        s = x.sum()
        return ng.where(s > 0, x * 2.0, -x)

    step = ng.jit(fn)
    for sign in (1.0, -1.0, 1.0):
        x = ng.tensor(np.abs(arr(5)) * sign)
        close(step(x), fn(x))
    assert step.traces == 1


def test_python_side_effects_happen_only_while_tracing(capsys):
    log = []

    def fn(x):
        log.append(x.shape)
        print("tracing", x.shape)
        return x.exp()

    step = ng.jit(fn)
    for _ in range(3):
        x = ng.tensor(arr(4))
        close(step(x), np.exp(x.numpy()))
    assert log == [(4,)]
    step(ng.tensor(arr(2, 2)))
    step(ng.tensor(arr(2, 2)))
    assert log == [(4,), (2, 2)]
    assert capsys.readouterr().out.count("tracing") == 2


# ---- differentiable -----------------------------------------------------------------

def test_first_order_gradients_through_the_result():
    step = ng.jit(program)
    for _ in range(2):
        x = ng.tensor(arr(3, 4), requires_grad=True)
        y = ng.tensor(arr(3, 4), requires_grad=True)
        gx, gy = ng.grad(step(x, y).sum(), (x, y))
        ex, ey = ng.grad(program(x, y).sum(), (x, y))
        close(gx, ex)
        close(gy, ey)
    assert step.traces == 1


def test_only_arguments_that_require_grad_get_history():
    step = ng.jit(program)
    x = ng.tensor(arr(3, 4), requires_grad=True)
    y = ng.tensor(arr(3, 4))
    (gx,) = ng.grad(step(x, y).sum(), x)
    close(gx, ng.grad(program(x, y).sum(), x)[0])
    with pytest.raises(RuntimeError):
        ng.grad(step(x, y).sum(), y)  # y does not require grad


def test_backward_through_the_result():
    step = ng.jit(smooth)
    a = arr(5)
    x, ex = ng.tensor(a, requires_grad=True), ng.tensor(a, requires_grad=True)
    for _ in range(2):
        step(x).backward()
        smooth(ex).backward()
        close(x.grad, ex.grad)


def test_second_order_gradients_through_the_result():
    step = ng.jit(smooth)
    for _ in range(2):
        x = ng.tensor(arr(5), requires_grad=True)
        (g,) = ng.grad(step(x), x, create_graph=True)
        (gg,) = ng.grad(g.sum(), x)
        (eg,) = ng.grad(smooth(x), x, create_graph=True)
        (egg,) = ng.grad(eg.sum(), x)
        close(g, eg)
        close(gg, egg)


def test_gradients_to_captured_tensors_that_require_grad():
    w = ng.tensor(arr(3, 4), requires_grad=True)
    step = ng.jit(lambda x: program(x, w))
    for _ in range(2):
        x = ng.tensor(arr(3, 4), requires_grad=True)
        gx, gw = ng.grad(step(x).sum(), (x, w))
        ex, ew = ng.grad(program(x, w).sum(), (x, w))
        close(gx, ex)
        close(gw, ew)
    assert step.traces == 1


# ---- anything numgrad offers, inside ----------------------------------------------

def test_ng_grad_with_create_graph_inside():
    def fn(x):
        (g,) = ng.grad(smooth(x), x, create_graph=True)
        (gg,) = ng.grad(g.sum(), x)
        return g, gg

    step = ng.jit(fn)
    for _ in range(2):
        x = ng.tensor(arr(5), requires_grad=True)
        (g, gg), (eg, egg) = step(x), fn(x)
        close(g, eg)
        close(gg, egg)
    assert step.traces == 1


def test_gradients_through_a_function_that_takes_gradients():
    def fn(x):
        (g,) = ng.grad(smooth(x), x, create_graph=True)
        return g

    step = ng.jit(fn)
    for _ in range(2):
        x = ng.tensor(arr(5), requires_grad=True)
        g = step(x)
        close(g, fn(x))
        (gg,) = ng.grad(g.sum(), x)
        close(gg, ng.grad(fn(x).sum(), x)[0])


def test_hessian_inside():
    def fn(x):
        return ng.functional.hessian(smooth, x)

    step = ng.jit(fn)
    for _ in range(2):
        x = ng.tensor(arr(4))
        h = step(x)
        assert h.shape == (4, 4)
        close(h, fn(x))
    assert step.traces == 1


def test_indexing_and_index_assignment_inside():
    def fn(x, w):
        rows = x[1:, ::2] @ w[::2]          # (2, 2) @ (2, 4)
        picked = x[np.array([2, 0, 2])]      # gathered rows, (3, 4)
        out = picked.zeros_like()
        out[0] = rows.sum(axis=0)
        out[1:] = picked[1:] * 2.0
        return out

    step = ng.jit(fn)
    for _ in range(2):
        x, w = ng.tensor(arr(3, 4)), ng.tensor(arr(4, 4))
        close(step(x, w), fn(x, w))
    assert step.traces == 1


def test_nested_jit_is_inlined():
    inner = ng.jit(smooth)
    x = ng.tensor(arr(5))
    close(inner(x), smooth(x))  # traced alone first

    def outer_fn(x):
        return inner(x) * 2.0 + inner(x * 3.0)

    outer = ng.jit(outer_fn)
    for _ in range(3):
        x = ng.tensor(arr(5))
        close(outer(x), smooth(x) * 2.0 + smooth(x * 3.0))
    assert outer.traces == 1
    x = ng.tensor(arr(5))
    close(inner(x), smooth(x))  # the inner one still works alone


# ---- counters -----------------------------------------------------------------------

def test_a_warm_replay_compiles_nothing_and_launches_no_more_than_eager(numba_cpu):
    step = ng.jit(program)
    x, y = ng.tensor(arr(3, 4)), ng.tensor(arr(3, 4))
    program(x, y).numpy()  # eager, warm
    step(x, y).numpy()     # the trace
    with ng.engine.record() as eager_rec:
        program(x, y).numpy()
    x2, y2 = ng.tensor(arr(3, 4)), ng.tensor(arr(3, 4))
    with ng.engine.record() as rec:
        out = step(x2, y2)
        out.numpy()
    assert rec.kernels_compiled == 0
    assert rec.kernels_launched <= eager_rec.kernels_launched
    close(out, program(x2, y2))


def test_a_warm_training_step_compiles_nothing_and_launches_no_more_than_eager(numba_cpu):
    factory = lambda ps: ng.optim.SGD(ps, lr=0.1, momentum=0.9)  # noqa: E731
    (p, w), eager = make_training(factory)
    (jp, jw), fn = make_training(factory)
    step = ng.jit(fn)
    batches = [(ng.tensor(a), ng.tensor(b)) for a, b in BATCHES]
    for x, y in batches[:3]:  # the traces, and a warm eager step
        step(x, y).numpy()
        eager(x, y).numpy()
    x, y = batches[3]
    with ng.engine.record() as eager_rec:
        eager(x, y).numpy()
    with ng.engine.record() as rec:
        step(x, y).numpy()
    assert rec.kernels_compiled == 0
    assert rec.kernels_launched <= eager_rec.kernels_launched
    close(jp, p)
    close(jw, w)


def test_a_function_traced_again_and_again_warns_once_naming_the_fix():
    """A Python number argument is part of the signature by value: a learning rate that
    changes at every call traces at every call. The eighth trace says so, once."""
    from numgrad.capture import RETRACES_WARNED, RetraceWarning

    step = ng.jit(lambda x, lr: (x * lr).sum())
    x = ng.tensor([1.0, 2.0])
    with pytest.warns(RetraceWarning, match=r"traced 8 times.*ng\.tensor\(value\)"):
        for i in range(RETRACES_WARNED):
            step(x, 0.5 + i)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RetraceWarning)
        step(x, 100.0)  # (once)
        steady = ng.jit(lambda x, lr: (x * lr).sum())
        for i in range(2 * RETRACES_WARNED):
            assert steady(x, ng.tensor(0.5 + i)).item() == 3.0 * (0.5 + i)
    assert steady.traces == 1
