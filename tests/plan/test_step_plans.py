"""Eager steps run again as they were (`numgrad.plan.step_plans`): a loop that records the
same step at every iteration runs its backward pass as the last step's plan, and gets
what the pass as it ran before gives, exactly.

Each test runs a loop twice from the same values, once as it is and once with the step
plans forgotten before every backward pass (so every pass runs as before), and compares
every value exactly (float64, rtol 0: the plan is the pass's own schedule, so its
kernels). `steps_replayed` (``record()``) counts the passes run as a plan.
"""

import dataclasses
import os
import threading

import numpy as np
import pytest
from budget import slow
from hypothesis import given
from hypothesis import strategies as st

import numgrad as ng
from numgrad import plan as remembering
from numgrad.autograd.graph import OpNode
from numgrad.engine import counters
from numgrad.plan import recipes, step_plans
from numgrad.plan.prepared import nbytes
from numgrad.plan.refs import AtOnce

F = ng.nn.functional
rng = np.random.default_rng(5)
ROWS, SIZES = 8, (5, 6, 3)

# Every test twice: prepared replays run step by step, and written out.
pytestmark = pytest.mark.usefixtures("replay_mode")


#: tests of what does not depend on the device, or that launch hundreds of kernels a
#: step (the deep recurrences: many minutes in Numba's CUDA simulator, which runs every
#: thread of every launch in Python): the CPU runs cover them, and a GPU runs them
SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" and \
    os.environ.get("NUMGRAD_TEST_DEVICE") == "cuda"
not_simulated = pytest.mark.skipif(SIMULATED, reason="too slow in the simulator")


def _params():
    r = np.random.default_rng(1)
    return [ng.tensor(r.standard_normal(shape), requires_grad=True)
            for shape in ((SIZES[0], SIZES[1]), (SIZES[1],), (SIZES[1], SIZES[2]), (SIZES[2],))]


def _mlp_step(params, data, labels, lr=0.1, act="tanh"):
    w1, b1, w2, b2 = params
    h = getattr(data @ w1 + b1, act)()
    loss = F.cross_entropy(h @ w2 + b2, labels)
    loss.backward()
    with ng.no_grad():
        for p in params:
            p -= lr * p.grad
    grads = [p.grad.numpy() for p in params]
    for p in params:
        p.grad = None
    return loss.item(), grads


def _run(loop, plans: bool):
    """`loop(k)` for k in 0..n-1 (a list of anything), and per step the number of
    passes run as a plan; with `plans` False, every pass runs as before."""
    step_plans.CACHE.clear()
    step_plans.STORING_ALL.clear()
    out, replayed = [], []
    for k in range(8):
        if not plans:
            step_plans.CACHE.clear()
        with counters.record() as rec:
            out.append(loop(k))
        replayed.append(rec.steps_replayed)
    return out, replayed


def _same(a, b) -> None:
    """Equal, exactly: nested lists and tuples of floats and arrays."""
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        np.testing.assert_array_equal(a, b)


def _compare(make_loop):
    """Run the loop `make_loop()` makes twice, with plans and without: the same values;
    returns the steps' replay counts with plans."""
    ours, replayed = _run(make_loop(), plans=True)
    theirs, none = _run(make_loop(), plans=False)
    _same(ours, theirs)
    assert not any(none)
    return replayed


def _mlp_loop(labels_at=None):
    r = np.random.default_rng(2)  # (each loop from the same values)
    data = ng.tensor(r.standard_normal((ROWS, SIZES[0])))
    labels = ng.tensor(r.integers(0, SIZES[2], ROWS))
    params = _params()
    return lambda k: _mlp_step(params, data, labels if labels_at is None else labels_at(k))


def test_a_training_loop_runs_its_passes_as_plans_with_the_same_values():
    replayed = _compare(_mlp_loop)
    # the first pass records the plan (or, on a thread's first, starts the tape and the
    # second records it); the rest run it
    assert replayed[0] == 0 and replayed[2:] == [1] * 6


@not_simulated
def test_plans_need_no_backward_recipe(monkeypatch):
    # A step plan is kept from a pass whose gradients follow from its structure, however
    # it ran: here every pass runs the VJP rules (no recipe is ever made again).
    monkeypatch.setattr(recipes, "recall", lambda key: None)
    replayed = _compare(_mlp_loop)
    assert replayed[0] == 0 and replayed[2:] == [1] * 6


@not_simulated
def test_a_pass_whose_rules_read_a_value_keeps_no_plan(monkeypatch):
    apply = OpNode.apply

    def reading(node, g):
        g.sum().item()  # (what a rule makes after this may depend on the value)
        return apply(node, g)

    monkeypatch.setattr(OpNode, "apply", reading)
    monkeypatch.setattr(recipes, "recall", lambda key: None)  # (no recipe says it either)
    assert not any(_compare(_mlp_loop))


def test_a_row_replaced_in_the_table_makes_the_plans_stale(monkeypatch):
    x = ng.tensor([0.5, 1.0], requires_grad=True)
    for _ in range(3):  # (a plan kept, then replayed)
        ng.grad(x.exp().sum(), x)
    exp = ng.ops.TABLE["exp"]
    monkeypatch.setitem(ng.ops.TABLE, "exp", dataclasses.replace(
        exp, vjp=lambda g, out, x, _: (g * 2.0,)))  # the same forward, another gradient
    replayed = []
    for _ in range(3):
        with counters.record() as rec:
            (g,) = ng.grad(x.exp().sum(), x)
        np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])
        replayed.append(rec.steps_replayed)
    assert replayed == [0, 1, 1]  # (the new row's plan from then on)


def _recurrent_loop(carried: bool, launched: list | None):
    """A value-and-gradient step of a small recurrence, as ``ng.value_and_grad`` users
    write it: its hidden state, if `carried`, carried to the next step (detached), and
    read after the pass where `launched` is a list (the kernels the read launched noted
    there). Returns a maker of the loop (`_run`'s)."""
    def make():
        r = np.random.default_rng(3)
        w, xs = ng.tensor(r.standard_normal((4, 4)) / 2), r.standard_normal((5, 4))
        state = [ng.tensor(np.zeros(4))]

        def loss(w):
            h = state[0]
            for x in xs:
                h = (h @ w + x).tanh()
            if carried:
                state[0] = h.detach()
            kept.append(h)
            return (h * h).sum()
        step, kept = ng.value_and_grad(loss), []

        def loop(k):
            value, grad = step(w)
            if launched is None:
                return [value.item(), grad.numpy()]
            with counters.record() as rec:
                hidden = kept[-1].numpy()
            launched.append(rec.kernels_launched)
            return [value.item(), grad.numpy(), hidden]
        return loop
    return make


def test_a_step_plan_stores_what_its_caller_reads_and_what_it_changes_in_place():
    """A step plan stores the pass's outputs (and the tensors changed in place: an SGD
    loop's parameters, `test_a_training_loop_runs_its_passes_as_plans_with_the_same_values`);
    the tape's other values it computes are its own, as ng.jit's are, left pending."""
    kept = []
    x = ng.tensor(rng.standard_normal(6))

    def loss(x):
        kept.append((x * 2.0).exp())
        return (kept[-1] @ x).sin()
    step = ng.value_and_grad(loss)
    values = [step(x) for _ in range(4)]
    assert kept[-1]._buf.realized is None
    for value, grad in values[1:]:
        assert value.item() == values[0][0].item()
        np.testing.assert_array_equal(grad.numpy(), values[0][1].numpy())
    np.testing.assert_array_equal(kept[-1].numpy(), kept[0].numpy())  # (computed now)


@pytest.mark.parametrize("carried", [False, True])
def test_a_value_read_after_a_replay_is_stored_by_its_plan_from_then_on(carried):
    """A value the plan kept as its own and the caller reads afterwards (the hidden state,
    also carried to the next step) is computed from its graph, with the same bits; the
    plan then stores every value it computes: the read launches what it launches with
    nothing remembered (the state's last tanh, fused into the loss's kernel), and every
    step replays."""
    launched, launched_before = [], []
    ours, replayed = _run(_recurrent_loop(carried, launched)(), plans=True)
    theirs, _ = _run(_recurrent_loop(carried, launched_before)(), plans=False)
    _same(ours, theirs)
    assert replayed[4:] == [1] * 4 and launched[4:] == launched_before[4:]
    assert max(launched[:4]) > max(launched_before)  # (the first replay's read: the
    # state's graph computed again, before the plan stored it)


def test_a_state_carried_to_the_next_step_unread_is_computed_before_its_tape_is_keyed():
    """A hidden state carried over (detached) and never read is pending when the next
    step's tape reads it: it is computed first, and the step replays its plan (its tape
    described no step before: every pass ran its rules)."""
    replayed = _compare(_recurrent_loop(carried=True, launched=None))
    assert replayed[4:] == [1] * 4


def test_new_labels_at_every_step_are_bound_into_the_plan():
    batches = [ng.tensor(rng.integers(0, SIZES[2], ROWS)) for _ in range(8)]
    replayed = _compare(lambda: _mlp_loop(labels_at=lambda k: batches[k]))
    assert replayed[3:] == [1] * 5


def test_new_data_and_new_parameters_every_step():
    batches = [rng.standard_normal((ROWS, SIZES[0])) for _ in range(8)]
    labels = rng.integers(0, SIZES[2], ROWS)

    def make():
        def loop(k):
            params = _params()  # new leaves: the gradients go to them
            return _mlp_step(params, ng.tensor(batches[k]), ng.tensor(labels))
        return loop

    assert _compare(make)[3:] == [1] * 5


@pytest.mark.parametrize("change", ["op", "shape"])
def test_a_step_that_records_otherwise_runs_as_before(change):
    data = {n: rng.standard_normal((n, SIZES[0])) for n in (ROWS, ROWS + 1)}
    labels = {n: rng.integers(0, SIZES[2], n) for n in (ROWS, ROWS + 1)}

    def make():
        params = _params()

        def loop(k):
            odd = k == 5
            n = ROWS + 1 if odd and change == "shape" else ROWS
            return _mlp_step(params, ng.tensor(data[n]), ng.tensor(labels[n]),
                             act="sigmoid" if odd and change == "op" else "tanh")
        return loop

    replayed = _compare(make)
    assert replayed[3:5] == [1, 1] and replayed[5] == 0 and replayed[6:] == [1, 1]


def test_a_learning_rate_that_changes_at_every_step_replays_one_plan():
    """A Python scalar is an argument of the plan, not part of its key: a decaying
    learning rate (on the next step's tape, with its update) is bound at each replay."""
    def make():
        params, data, labels = _params(), ng.tensor(rng.standard_normal((ROWS, SIZES[0]))), \
            ng.tensor(rng.integers(0, SIZES[2], ROWS))
        return lambda k: _mlp_step(params, data, labels, lr=0.5 * 0.7 ** k)

    state = rng.bit_generator.state
    replayed = _compare_from(state, make)
    assert replayed[2:] == [1] * 6
    assert len(step_plans.CACHE) == 1


def _compare_from(state, make_loop):
    """`_compare`, each run from the module generator's `state`."""
    def make():
        rng.bit_generator.state = state
        return make_loop()
    return _compare(make)


@pytest.mark.parametrize("weight", ["product", "exponent", "folded"])
def test_constants_the_backward_pass_folds_are_folded_again_from_the_new_ones(weight):
    """A loss weight annealed at every step: the pass folds its seed (1.0) with the
    weight into a constant no tape holds; the plan folds it again from the tape's."""
    start = rng.standard_normal(5)

    def make():
        w = ng.tensor(start, requires_grad=True)

        def loop(k):
            w.grad = None
            c = 0.25 + 0.5 * k
            if weight == "product":
                y = (w * w).sum() * c + (w.tanh() * (1 - c)).sum()
            elif weight == "exponent":
                y = (w.abs() + 1.0) ** c
                y = y.sum()
            else:  # folded on the tape: (c * 3) - 1 is one constant there
                y = ((w * (c * 3.0 - 1.0)).sin() * c).sum()
            y.backward()
            return w.grad.numpy(), y.item()
        return loop

    replayed = _compare(make)
    assert replayed[2:] == [1] * 6


def test_gradients_accumulated_without_zeroing_run_as_before():
    x = rng.standard_normal(6)

    def make():
        w = ng.tensor(x, requires_grad=True)

        def loop(k):
            ((w * w).sin().sum()).backward()  # .grad not None from the second step
            return w.grad.numpy()
        return loop

    assert not any(_compare(make))


def _chain(special):
    """A loop of small steps whose step 5 runs `special(a, h, y)` (a leaf, an
    intermediate, the loss) in place of ``y.backward()``."""
    start = rng.standard_normal(6)

    def make():
        a = ng.tensor(start, requires_grad=True)

        def loop(k):
            a.grad = None
            h = (a * 1.5).tanh()
            y = (h * h).sum()
            extra = special(a, h, y) if k == 5 else y.backward()
            return a.grad.numpy(), y.item(), extra
        return loop
    return make


def _hooked(a, h, y):
    h.register_hook(lambda g: g * 2.0)
    y.backward()


def _retained(a, h, y):
    h.retain_grad()
    y.backward()
    return h.grad.numpy()


@pytest.mark.parametrize("special", [
    _hooked, _retained,
    lambda a, h, y: y.backward(retain_graph=True),
    lambda a, h, y: y.backward(create_graph=True),
    lambda a, h, y: y.backward(inputs=[a]),
    lambda a, h, y: y.backward(ng.tensor(2.0)),
], ids=["hook", "retain_grad", "retain_graph", "create_graph", "inputs", "gradient"])
def test_passes_with_hooks_retained_gradients_or_options_run_as_before(special):
    replayed = _compare(_chain(special))
    assert replayed[3:5] == [1, 1] and replayed[5] == 0


def _read_first(a):
    def make():
        x = ng.tensor(a, requires_grad=True)

        def loop(k):
            x.grad = None
            y = (x * x).exp().sum() * (1.0 + 0.1 * k)
            value = y.item()  # computes the step so far; its tape goes on (`Recorder.cut`)
            y.backward()
            return value, x.grad.numpy()
        return loop
    return make


def test_a_value_read_before_backward_keeps_the_steps_plan():
    replayed = _compare(_read_first(rng.standard_normal(6)))
    assert replayed[2:] == [1] * 6


def test_a_tape_holds_no_more_than_its_bytes_across_reads(monkeypatch):
    from numgrad.plan import recorder

    monkeypatch.setattr(recorder, "MAX_HELD_BYTES", 0)  # (a read starts a new tape)
    assert not any(_compare(_read_first(rng.standard_normal(6))))
    # inference with grad on, read by read, and no backward: the tape does not grow
    monkeypatch.setattr(recorder, "MAX_HELD_BYTES", 200)  # (6 float64s a buffer: 48 bytes)
    w = ng.tensor(rng.standard_normal(6), requires_grad=True)
    for _ in range(50):
        (w * w).sum().item()
        assert recorder.current().held <= 200


def test_an_index_that_would_need_wrapping_runs_as_before():
    # A gather from a pending value reads its index in the kernel (an upload); one with
    # a negative index is wrapped first, which the plan does not do: the pass as before.
    keys = [np.array([0, 2, 1]), np.array([3, 0, 0]), np.array([1, -1, 0])]
    start = rng.standard_normal((3, 4))

    def make():
        x = ng.tensor(start, requires_grad=True)

        def loop(k):
            x.grad = None
            (x * 2.0)[np.arange(3), keys[min(k // 3, 2)]].exp().sum().backward()
            return x.grad.numpy()
        return loop

    assert _compare(make)[2:] == [1, 1, 1, 1, 0, 0]


def test_a_replayed_pass_frees_the_saved_values_and_computes_what_it_returns():
    a = ng.tensor(rng.standard_normal(6), requires_grad=True)
    for _ in range(4):
        a.grad = None
        h = (a * 2.0).sin()
        y = (h * h).sum()
        with counters.record() as rec:
            y.backward()
    assert rec.steps_replayed == 1
    # stored (computed by a kernel: Numba's sin may differ from NumPy's by an ulp)
    np.testing.assert_allclose(h.numpy(), np.sin(a.numpy() * 2.0), rtol=1e-15)
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_threads_keep_tapes_of_their_own():
    """Two threads train at once, with learning rates of their own at every step: they
    replay one plan, each binding its own constants, and get what each gets alone with
    nothing remembered."""
    def train(results, seed):
        r = np.random.default_rng(seed)
        data, labels = ng.tensor(r.standard_normal((ROWS, SIZES[0]))), \
            ng.tensor(r.integers(0, SIZES[2], ROWS))
        params = _params()
        results.extend(_mlp_step(params, data, labels, lr=0.1 * seed + 0.01 * k)
                       for k in range(6 if SIMULATED else 12))

    alone = {}
    remembering.ON = False
    try:
        for seed in (1, 2):
            alone[seed] = []
            train(alone[seed], seed)
    finally:
        remembering.ON = True
    together = {1: [], 2: []}
    threads = [threading.Thread(target=train, args=(together[s], s)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _same(together[1], alone[1])
    _same(together[2], alone[2])


def test_a_trace_between_steps_runs_the_pass_after_it_as_before():
    a = ng.tensor(rng.standard_normal(4), requires_grad=True)
    double = ng.jit(lambda t: t * 2.0)
    replayed = []
    for k in range(6):
        a.grad = None
        y = (a.exp() * 3.0).sum()
        if k == 4:
            double(ng.tensor(np.ones(2)))
        with counters.record() as rec:
            y.backward()
        replayed.append(rec.steps_replayed)
        np.testing.assert_allclose(a.grad.numpy(), 3 * np.exp(a.numpy()), rtol=1e-15)
    assert replayed[2:4] == [1, 1] and replayed[4] == 0


def test_a_graph_built_up_without_realizing_is_let_go_by_the_tape(monkeypatch):
    from numgrad.plan import recorder

    monkeypatch.setattr(recorder, "MAX_ENTRIES", 50)
    x = ng.tensor(np.ones(3), requires_grad=True)
    (x * 2.0).sum().backward()  # (this thread keeps a tape from now on)
    y = ng.tensor(np.ones(3))
    for i in range(200):  # 200 values never computed, dropped as they go
        _ = y * float(i)
    assert recorder.current().broken and not recorder.current().bufs  # stopped, holding nothing
    ng.realize(y * 2.0)
    assert not recorder.current().broken  # (a realization starts a new tape)


def test_a_plan_made_first_keeps_its_constants_after_rebindings_with_others():
    """A step plan that holds the schedule as first made (a pass whose recipe was kept,
    on an input computed this time: a new schedule) replays with its own constant after
    rebindings of that schedule to other constants ran (they left theirs in the
    prepared plan's argument lists)."""
    xa = rng.standard_normal((4, 3))
    w = ng.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    want = {}
    for i, c in enumerate([1.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0]):
        x = ng.tensor(xa) + 1.0
        if i:
            x.numpy()  # (computed from the second step on: another schedule)
        (g,) = ng.grad((ng.tanh(x @ w) * c).sum(), w)
        want.setdefault(c, g.numpy())
        np.testing.assert_array_equal(g.numpy(), want[c])
        np.testing.assert_allclose(
            g.numpy(), (xa + 1).T @ ((1 - np.tanh((xa + 1) @ w.numpy()) ** 2) * c),
            rtol=1e-12)


def _bits(values) -> list[bytes]:
    """Each value's bytes: equal bits, -0.0 and NaN payloads included."""
    return [np.asarray(v).tobytes() for v in values]


#: (the CUDA simulator runs kernels on Python's math, which raises for sin(inf) where a
#: GPU gives NaN: constants there that keep every value finite)
SCALARS = st.one_of(st.floats(min_value=-1e6, max_value=1e6) if SIMULATED else
                    st.floats(allow_nan=True, allow_infinity=True, width=64),
                    st.sampled_from([0.0, -0.0, 1.0, 2.0, 5e-324]))


@given(st.lists(st.tuples(SCALARS, SCALARS), min_size=6, max_size=6))
def test_random_constants_at_every_step_give_the_bits_of_a_run_with_nothing_remembered(
        constants):
    """Two Python scalars per step, any float64 (signed zeros, infinities, NaN,
    subnormals): read by kernels, folded on the tape and folded by the backward pass.
    Every value has the bits of the same loop with nothing remembered."""
    start = np.linspace(-1.0, 1.0, 4)

    def run():
        w = ng.tensor(start, requires_grad=True)
        out = []
        for a, b in constants:
            w.grad = None
            y = ((w * a + (b - 1.0)).sin() * (a * b)).sum() * b
            y.backward()
            out.append((w.grad.numpy(), y.numpy()))
        return out

    step_plans.CACHE.clear()
    with np.errstate(all="ignore"):
        with counters.record() as rec:
            ours = run()
        remembering.ON = False
        try:
            theirs = run()
        finally:
            remembering.ON = True
    assert _bits(v for pair in ours for v in pair) == _bits(v for pair in theirs for v in pair)
    assert rec.steps_replayed >= 3  # (a pass whose values are all NaN replays too)


def test_a_constant_of_another_sign_of_zero_is_bound_with_its_sign():
    # 0.0 == -0.0, but 1 / (x * 0.0) and 1 / (x * -0.0) are infinities of two signs.
    def make():
        x = ng.tensor(np.ones(3), requires_grad=True)

        def loop(k):
            x.grad = None
            zero = -0.0 if k >= 4 else 0.0
            y = (1.0 / (x * zero)).exp().sum() + (x * 2.0).sum()
            y.backward()
            return x.grad.numpy(), y.item()
        return loop

    with np.errstate(all="ignore"):
        replayed = _compare(make)
    assert replayed[2:] == [1] * 6


@pytest.mark.parametrize("make_optimizer", [
    lambda ps: ng.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: ng.optim.Adam(ps, lr=1e-2),
], ids=["sgd-momentum", "adam"])
def test_an_optimizer_loop_runs_its_passes_as_plans(make_optimizer):
    # zero_grad sets .grad to None; step realizes the new values (and the state), so
    # each pass's tape is the forward alone.
    r = np.random.default_rng(3)
    data, labels = r.standard_normal((ROWS, SIZES[0])), r.integers(0, SIZES[2], ROWS)

    def make():
        params = _params()
        optimizer = make_optimizer(params)
        x, y = ng.tensor(data), ng.tensor(labels)

        def loop(k):
            optimizer.zero_grad()
            w1, b1, w2, b2 = params
            loss = F.cross_entropy((x @ w1 + b1).tanh() @ w2 + b2, y)
            loss.backward()
            optimizer.step()
            return loss.item(), [p.numpy() for p in params]
        return loop

    assert _compare(make)[2:] == [1] * 6


def _grad_loop(wrt, special=None):
    """A loop of ``ng.grad`` calls on a small step, of the loss with respect to
    `wrt(a, b, h)` (leaves `a` and `b`, the intermediate `h`); at step 5,
    `special(y, inputs)` in place of ``ng.grad(y, inputs)``. `b` keeps a ``.grad`` of
    its own, which ``ng.grad`` leaves as it is."""
    start = rng.standard_normal(6)

    def make():
        a = ng.tensor(start, requires_grad=True)
        b = ng.tensor(start[::-1].copy(), requires_grad=True)
        b.grad = ng.tensor(np.full(6, 7.0))

        def loop(k):
            h = (a * b).tanh()
            y = (h * h + a).sum()
            inputs = wrt(a, b, h)
            if special is not None and k == 5:
                grads = special(y, inputs)
            else:
                grads = ng.grad(y, inputs)
                assert all(g.grad_fn is None for g in grads)
            return [g.numpy() for g in grads if g is not None], y.item(), b.grad.numpy()
        return loop
    return make


@pytest.mark.parametrize("wrt", [
    lambda a, b, h: a,
    lambda a, b, h: [b, a],
    lambda a, b, h: (h, a),
], ids=["a leaf", "two leaves", "an intermediate and a leaf"])
def test_grad_in_a_loop_runs_its_passes_as_plans(wrt):
    assert _compare(_grad_loop(wrt))[2:] == [1] * 6


@pytest.mark.parametrize("special", [
    lambda y, xs: ng.grad(y, xs, retain_graph=True),
    lambda y, xs: ng.grad(y, xs, create_graph=True),
    lambda y, xs: ng.grad(y, xs, ng.tensor(2.0)),
    lambda y, xs: ng.grad(y, xs[:1]),
], ids=["retain_graph", "create_graph", "gradient", "other inputs"])
def test_grad_with_other_options_or_inputs_runs_as_before(special):
    replayed = _compare(_grad_loop(lambda a, b, h: [a, b], special))
    assert replayed[3:5] == [1, 1] and replayed[5] == 0 and replayed[7] == 1


@pytest.mark.parametrize("option", ["allow_unused", "materialize_grads"])
def test_grad_allowing_unused_inputs_runs_the_plan_where_every_input_is_used(option):
    # (a plan is kept only where each input's gradient is the plan's: none is left out)
    replayed = _compare(_grad_loop(lambda a, b, h: [a, b],
                                   lambda y, xs: ng.grad(y, xs, **{option: True})))
    assert replayed[2:] == [1] * 6


@pytest.mark.parametrize("option", ["allow_unused", "materialize_grads"])
def test_an_unused_input_keeps_no_plan(option):
    start = rng.standard_normal(6)

    def make():
        a, unused = ng.tensor(start, requires_grad=True), ng.tensor(2.0, requires_grad=True)

        def loop(k):
            ga, gu = ng.grad((a * 1.5).tanh().sum(), [a, unused], **{option: True})
            return ga.numpy(), None if gu is None else gu.numpy()
        return loop

    ours, replayed = _run(make(), plans=True)
    assert not any(replayed)
    _same(ours, _run(make(), plans=False)[0])
    assert ours[-1][1] == (0.0 if option == "materialize_grads" else None)


def test_a_gradient_function_in_a_loop_runs_its_passes_as_plans():
    # (``ng.value_and_grad(f)`` asks for materialized gradients: zeros for an unused input)
    x0 = rng.standard_normal(6)

    def make():
        step = ng.value_and_grad(lambda x: ((x * 1.5).tanh() * x).sum())
        return lambda k: step(x0 + k)

    assert _compare(make)[2:] == [1] * 6


def test_backward_and_grad_of_one_tape_keep_plans_of_their_own():
    start = rng.standard_normal(6)

    def make():
        a = ng.tensor(start, requires_grad=True)

        def loop(k):
            a.grad = None
            y = (a * 3.0).sin().sum()
            if k % 2:
                return ng.grad(y, a)[0].numpy()
            y.backward()
            return a.grad.numpy()
        return loop

    assert _compare(make)[4:] == [1] * 4


@pytest.mark.parametrize("loss", [
    lambda a: ng.log(ng.diagonal(ng.linalg.cholesky(a))).sum(),
    lambda a: (ng.linalg.eigh(a).eigenvalues ** 2).sum(),
    lambda a: (ng.triu(a, 1) * a).sum(),
], ids=["cholesky", "eigh", "triu"])
def test_rules_reading_a_mask_or_an_identity_run_their_passes_as_plans(loss):
    # (their masks and identities are fixed buffers, `lazy.fixed`: the same at every pass)
    x = rng.standard_normal((4, 4))
    spd = x @ x.T + 4 * np.eye(4)

    def make():
        step = ng.value_and_grad(lambda s: loss(ng.tensor(spd) * s))
        return lambda k: step(1.0 + 0.25 * k)

    assert _compare(make)[3:] == [1] * 5


def test_a_fixed_buffer_is_one_per_description():
    from numgrad import lazy

    a, b = ng.tensor(rng.standard_normal((3, 4))), ng.tensor(rng.standard_normal((3, 4)))
    masks = [t._buf.srcs[0] for t in (ng.tril(a), ng.tril(b), ng.tril(a, 1), ng.triu(a))]
    assert masks[0] is masks[1] and len({id(m) for m in masks[1:]}) == 3
    assert all(lazy.is_fixed(m) for m in masks)
    np.testing.assert_array_equal(masks[3].realized, ~np.tri(3, 4, -1, dtype=bool))


# ---- passes that realize on their way, forwards cut for depth -----------------------

def _recurrence(steps: int, read_at=None, log: bool = False):
    """A loop over a recurrence of `steps` steps (deep enough, at 120, for its forward
    to be cut for depth and its backward pass to realize in stages), trained with a
    learning rate that changes; at step 5, its hidden state is read at `read_at`. With
    `log`, the loss is the log of the sum, whose gradient the pass computes at once
    (the sum is one computed number by then)."""
    r = np.random.default_rng(7)
    xs = r.standard_normal((steps, 1, 4))
    start = [r.standard_normal((4, 6)) * 0.5, r.standard_normal((6, 6)) * 0.3]

    def make():
        w, u = (ng.tensor(a, requires_grad=True) for a in start)

        def loop(k):
            h, total = ng.zeros((1, 6)), 0.0
            for t in range(steps):
                h = (ng.tensor(xs[t]) @ w + h @ u).tanh()
                if k == 5 and t == read_at:
                    h.numpy()  # (a realization elsewhere than at step 4)
                total = total + (h * h).sum()
            if log:
                total = total.log() * 2.0
            total.backward()
            with ng.no_grad():
                for p in (w, u):
                    p -= (0.01 + 0.001 * k) * p.grad
            grads = [p.grad.numpy() for p in (w, u)]
            w.grad = u.grad = None
            return total.item(), grads
        return loop
    return make


@not_simulated
@pytest.mark.parametrize("steps", [30, slow(120)])  # (120: a forward cut too, `.ci/run`)
def test_a_pass_that_realizes_on_its_way_replays_as_one_plan(steps, monkeypatch):
    # The pass realizes in pieces (its saved values, its gradients cut for depth); its
    # step plan joins them into one stage, one plan run at each replay.
    realized = []  # per pass remembered: its realizations' steps
    remember = step_plans.remember
    monkeypatch.setattr(step_plans, "remember", lambda segment, *rest: (
        segment and realized.append([len(plan.template) for plan, _, _ in segment.ran]),
        remember(segment, *rest))[1])
    replayed = _compare(_recurrence(steps))
    assert replayed[2:] == [1] * 6
    assert len(realized[-1]) > 1, realized[-1]
    (plan,) = step_plans.CACHE.values()  # (the last pass's)
    assert len(plan.stages) == 1 and bool(plan.cut) == (steps == 120), plan.cut
    assert len(plan.stages[0].plan.template) == sum(realized[-1])


def _forward_recursion():
    """An HMM's forward recursion in log space (a gather, a max and a logsumexp per
    step): its backward pass realizes in stages, each of which computes scatter-adds
    and broadcasts that no later stage reads."""
    r = np.random.default_rng(3)
    observed = r.integers(0, 2, 40)
    logits = ng.tensor(r.standard_normal((3, 5)), requires_grad=True)

    def loop(k):
        trans, emit = logits[:, :3], logits[:, 3:]
        alpha = emit[:, observed[0]]
        for t in range(1, 40):
            a = alpha[:, None] + trans
            top = a.max(axis=0)
            alpha = top + (a - top).exp().sum(axis=0).log() + emit[:, observed[t]]
        loss = alpha.sum() * (1.0 + 0.1 * k)
        loss.backward()
        grad = logits.grad.numpy()
        logits.grad = None
        return loss.item(), grad
    return loop


@not_simulated
def test_a_stage_computes_only_what_the_plan_reads_and_keeps_its_own_buffers():
    # Each stage is prepared for the slots that later stages, the stores and the
    # gradients read (and the large ones): the steps that compute nothing of those are
    # left out, the others write the stage's own buffers, and the values are the bits
    # of a run with nothing remembered.
    ours, replayed = _run(_forward_recursion(), plans=True)
    assert replayed[2:] == [1] * 6
    # (the plan that replayed: the pass of an earlier step may have keyed another)
    (plan,) = [p for p in step_plans.CACHE.values() if p.stages[0].plan.runs.count]
    stages = [(stage.plan, stage.plan.runs.prepared) for stage in plan.stages]
    assert all(p.runs.needed < set(range(len(p.slots))) for p, _ in stages)
    assert all(prepared is not None for _, prepared in stages)
    assert sum(len(prepared.steps) for _, prepared in stages) < \
        sum(len(p.template) for p, _ in stages)
    _same(ours, _run(_forward_recursion(), plans=False)[0])


def _stencil():
    """A diffusion-like loop over a 64x64 grid (32 KiB arrays), its rate annealed."""
    start = np.random.default_rng(5).standard_normal((64, 64))
    u0 = ng.tensor(start, requires_grad=True)

    def loop(k):
        u = u0
        for _ in range(40):
            u = u + (0.1 + 0.01 * k) * (ng.roll(u, 1, 0) + ng.roll(u, -1, 1) - 2 * u).tanh()
        loss = (u * u).sum()
        loss.backward()
        grad = u0.grad.numpy()
        u0.grad = None
        return loss.item(), grad
    return loop


@not_simulated
def test_large_intermediates_are_let_go_of_within_a_replay():
    # Intermediates of STAGE_BUFFER_BYTES or more are written anew at each replay (not
    # held between steps); those that no step reads any more and the plan hands to no
    # one are let go of there (an eager program's memory is reused as it goes), and
    # the values are the bits of a run with nothing remembered.
    ours, replayed = _run(_stencil(), plans=True)
    assert replayed[2:] == [1] * 6
    (plan,) = [p for p in step_plans.CACHE.values() if p.stages[0].plan.runs.count]
    for stage in plan.stages:
        prepared, slots = stage.plan.runs.prepared, stage.plan.slots
        dropped = [slot for step in prepared.steps for slot in step.drops]
        assert dropped and not set(dropped) & stage.plan.runs.handed
        assert all(nbytes(slots[slot]) >= step_plans.STAGE_BUFFER_BYTES for slot in dropped)
    _same(ours, _run(_stencil(), plans=False)[0])


@not_simulated
def test_values_the_pass_computed_at_once_are_computed_again_at_each_replay():
    replayed = _compare(_recurrence(120, log=True))
    assert replayed[2:] == [1] * 6
    (plan,) = step_plans.CACHE.values()
    assert any(type(ref) is AtOnce for stage in plan.stages for ref in stage.sources)


@not_simulated
@pytest.mark.parametrize("read_at", [None, 7, 100])
def test_a_forward_cut_or_read_elsewhere_runs_its_pass_as_before(read_at):
    replayed = _compare(_recurrence(120, read_at))
    # A read keeps the tape (a cut, `Tape.cut`), and moves the forward's later cuts for
    # depth. Read at t = 7, step 5's tape lacks values the plan reads from its cuts: its
    # pass runs as before and keeps its own plan, which step 6 (no read) lacks in turn;
    # step 7 replays. Read at t = 100, every value the plan reads is still computed.
    assert replayed[2:] == {None: [1] * 6, 7: [1, 1, 1, 0, 0, 1], 100: [1] * 6}[read_at]


@not_simulated
def test_threads_replay_plans_of_stages_at_once():
    """Two threads train the deep recurrence at once, each with a plan of stages: each
    gets what it gets alone with nothing remembered."""
    def train(results, make):
        loop = make()
        results.extend(loop(k) for k in range(8))

    remembering.ON = False
    try:
        alone = []
        train(alone, _recurrence(120))
    finally:
        remembering.ON = True
    together = [[], []]
    threads = [threading.Thread(target=train, args=(together[i], _recurrence(120)))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _same(together[0], alone)
    _same(together[1], alone)
