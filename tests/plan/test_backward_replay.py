"""Backward passes reused by structure (`numgrad.plan.recipes`): a pass over an
autograd graph of a structure seen before rebuilds the gradients' lazy graph from the
new saved values, without running the VJP rules, and gives what the rules give.

Values are float64. A rebuilt pass is the recorded graph again, so it runs the same
kernels: its gradients are compared exactly (rtol 0) with a pass that runs the rules;
random programs are compared with autograd at the campaign's tolerances.
"""

import dataclasses
import threading

import numpy as np
import pytest
import random_programs as rp

import numgrad as ng
from numgrad import lazy
from numgrad.autograd.graph import OpNode
from numgrad.plan import keys, recipes, step_plans

rng = np.random.default_rng(11)


@pytest.fixture
def rules(monkeypatch):
    """Count the VJP rules run, and start with no recipe (and no step plan: a step
    plan runs no pass at all, `numgrad.plan.step_plans`)."""
    recipes.CACHE.clear()
    step_plans.CACHE.clear()
    ran = []
    apply = OpNode.apply
    monkeypatch.setattr(OpNode, "apply", lambda node, g: ran.append(node.op.name) or
                        apply(node, g))
    return ran


def _step(x, w, c=2.0):
    return ((x @ w).tanh() * c + x.sum(axis=1, keepdims=True)).sum()


def test_a_pass_of_a_structure_seen_before_runs_no_rule_and_gives_the_same_gradients(rules):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 3))
    grads = []
    for step in range(3):
        x = ng.tensor(a + step, requires_grad=True)
        w = ng.tensor(b, requires_grad=True)
        _step(x, w).backward()
        grads.append((x.grad.numpy(), w.grad.numpy()))
        assert bool(rules) == (step == 0), step
        rules.clear()
    recipes.CACHE.clear()  # the rules again, on the last step's values
    step_plans.CACHE.clear()
    x = ng.tensor(a + 2, requires_grad=True)
    w = ng.tensor(b, requires_grad=True)
    _step(x, w).backward()
    assert rules
    np.testing.assert_array_equal(grads[-1][0], x.grad.numpy())
    np.testing.assert_array_equal(grads[-1][1], w.grad.numpy())


def test_work_on_constants_is_folded_again_from_the_new_values(rules):
    # d/dx sum(x * c) = c: the rule's g * c folds (g is the seed's constant ones).
    x = ng.tensor(np.ones(3), requires_grad=True)
    for c in (2.0, 3.0, -1.5):
        (g,) = ng.grad((x * c).sum(), x)
        np.testing.assert_array_equal(g.numpy(), [c] * 3)
    assert rules == ["sum", "multiply"]  # one structure: the rules ran once


def test_which_saved_values_are_one_buffer_is_part_of_the_structure(rules):
    # The same nodes and shapes: x times its own value, then x times another tensor.
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    w = ng.tensor([5.0, 7.0])
    (g_same,) = ng.grad((x * x.detach()).sum(), x)
    (g_other,) = ng.grad((x * w).sum(), x)
    np.testing.assert_array_equal(g_same.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(g_other.numpy(), [5.0, 7.0])


def test_gradients_accumulate_into_grad_across_reused_passes(rules):
    x = ng.tensor([1.0, -2.0], requires_grad=True)
    for _ in range(3):
        (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, -12.0])
    assert rules == ["sum", "multiply"]


@pytest.mark.parametrize("how", ["hook", "retain_grad", "create_graph"])
def test_passes_with_hooks_retained_gradients_or_history_run_the_rules(rules, how):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        x.grad = None
        y = x * 3
        if how == "hook":
            y.register_hook(lambda g: g * 2)
        elif how == "retain_grad":
            y.retain_grad()
        y.sum().backward(create_graph=how == "create_graph")
    assert rules.count("multiply") == 2
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 6.0] if how == "hook" else [3.0, 3.0])


def test_a_freed_graph_still_raises_the_retain_graph_error(rules):
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


@pytest.mark.slow
def test_a_pass_that_computes_as_it_goes_is_rebuilt_computing_at_the_same_points(
        rules, monkeypatch):
    """W2's long chains, of scalars recorded (not computed at once, `lazy.AT_ONCE`):
    the pass realizes graphs deeper than MAX_DEPTH as it records them; the rebuilt pass
    computes at the same points and gives the same values."""
    monkeypatch.setattr(lazy, "AT_ONCE", False)
    x = ng.tensor(0.5, requires_grad=True)
    values = []
    for _ in range(3):
        p = ng.tensor(1.0)
        for c in np.linspace(-1, 1, 200):
            p = p * x + float(c)
        with ng.engine.record() as rec:
            values.append(ng.grad(p, x)[0].item())
        assert rec.kernels_launched > 1  # computed in pieces
    assert rules.count("multiply") == 200  # the first pass only
    assert values[0] == values[1] == values[2]


def test_a_pass_whose_rules_read_a_value_is_not_kept(rules, monkeypatch):
    # A rule that reads its input's value (none of numgrad's do): its result holds that
    # value, so the pass runs its rules each time.
    exp = ng.ops.TABLE["exp"]
    monkeypatch.setitem(ng.ops.TABLE, "exp", dataclasses.replace(
        exp, vjp=lambda g, out, x, _: (g * float(x.sum().item()),)))
    for value in (1.0, 2.0):
        x = ng.tensor([value], requires_grad=True)
        (g,) = ng.grad(x.exp().sum(), x)
        assert g.item() == value
    assert rules.count("exp") == 2


@pytest.mark.slow
def test_replayed_passes_of_random_programs_match_autograd(monkeypatch):
    """The campaign's programs (so its kernels, from the disk cache) on their inputs,
    then on redrawn ones: the second pass is rebuilt, and must match autograd."""
    recipes.CACHE.clear()
    rebuilt = []
    rebuild = recipes.rebuild
    monkeypatch.setattr(recipes, "rebuild", lambda *a: rebuilt.append(1) or rebuild(*a))
    checked = 0
    for seed in range(7000, 7020):
        base = rp.generate(seed)
        other = rp.variant(base, 1)
        if other is None:
            continue
        try:
            rp.check_program(base, only=("grad",))
            before = len(rebuilt)
            found = rp.check_program(other, only=("grad",))
        except rp.OracleError:
            continue
        assert not found, "\n\n".join(m.report() for m in found)
        checked += len(rebuilt) > before
    assert checked >= 15


def test_a_row_replaced_in_the_table_is_used_at_the_next_pass(rules, monkeypatch):
    x = ng.tensor([0.5, 1.0], requires_grad=True)
    ng.grad(x.exp().sum(), x)
    # A new rule for exp: its nodes have another rule, so the pass is another structure.
    exp = ng.ops.TABLE["exp"]
    monkeypatch.setitem(ng.ops.TABLE, "exp", dataclasses.replace(
        exp, vjp=lambda g, out, x, _: (g * 2.0,)))
    (g,) = ng.grad(x.exp().sum(), x)
    np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])
    # A new row for an operation the rules make (exp's own: g * out): the first pass's
    # recipe is recorded again.
    monkeypatch.setitem(ng.ops.TABLE, "exp", exp)
    rules.clear()
    monkeypatch.setitem(ng.ops.TABLE, "multiply", dataclasses.replace(
        ng.ops.TABLE["multiply"]))
    (g,) = ng.grad(x.exp().sum(), x)
    assert rules == ["sum", "exp"]


def test_another_threads_work_while_a_pass_is_recorded_is_not_part_of_it(rules):
    """What a pass's rules make is noted on its own thread: another thread that records
    operations and reads a value while the pass is recorded neither lands in its recipe
    nor costs it the recipe (a value read, noted in the pass, would drop it), and that
    thread never sees the notes go away under it."""
    recording, done = threading.Event(), threading.Event()
    errors = []

    def other():
        try:
            recording.wait(5)
            y = ng.tensor([3.0, 4.0])
            for _ in range(200):
                y = (y * 0.5).exp()
            float(y.sum().item())  # a value read, while the pass is recorded
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
        finally:
            done.set()

    record = recipes.record

    def recorded(run, key, starts, order):
        def waiting(delivered):
            recording.set()
            done.wait(5)  # (the other thread's work falls inside this pass)
            run(delivered)
        record(waiting, key, starts, order)

    thread = threading.Thread(target=other)
    thread.start()
    x = ng.tensor([0.5, 1.5], requires_grad=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recipes, "record", recorded)
        (first,) = ng.grad((x.exp() * 2.0).sum(), x)
    thread.join()
    assert not errors, errors
    rules.clear()
    (again,) = ng.grad((x.exp() * 2.0).sum(), x)
    assert rules == []  # the recipe was kept: no rule ran
    np.testing.assert_array_equal(again.numpy(), first.numpy())


def test_threads_record_and_rebuild_passes_side_by_side():
    """Threads record passes side by side (each notes what its own rules make) and
    rebuild them, and every gradient is right (to 1e-12)."""
    recipes.CACHE.clear()
    errors = []

    def work(seed):
        try:
            r = np.random.default_rng(seed)
            for _ in range(5):
                a, b = r.standard_normal((4, 3)), r.standard_normal((3, 2))
                x = ng.tensor(a, requires_grad=True)
                w = ng.tensor(b, requires_grad=True)
                (gx, gw) = ng.grad(((x @ w).tanh() * 1.5).sum(), (x, w))
                d = 1.5 * (1 - np.tanh(a @ b) ** 2)
                np.testing.assert_allclose(gx.numpy(), d @ b.T, rtol=1e-12)
                np.testing.assert_allclose(gw.numpy(), a.T @ d, rtol=1e-12)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_a_rebuilt_pass_numbers_its_buffers_as_a_walk_would(rules, monkeypatch):
    # A rebuilt buffer takes its signature from the recipe (`numgrad.plan.keys.signature`):
    # it must be the one the engine's walk finds for it, or schedules would be mixed up.
    checked = []
    rebuild = recipes.rebuild

    def check(recipe, starts, order):
        bufs = rebuild(recipe, starts, order)
        for buf in bufs[len(starts):]:
            if buf.sig is not None:  # (pending: nothing realizes it before the walk)
                assert buf.sig == keys.signature(buf.op, buf.arg, buf.shape, buf.dtype,
                                                 buf.device, len(buf.srcs))
                checked.append(buf)
        return bufs

    monkeypatch.setattr(recipes, "rebuild", check)
    for step in range(2):
        x = ng.tensor(rng.standard_normal((4, 3)), requires_grad=True)
        w = ng.tensor(rng.standard_normal((3, 3)), requires_grad=True)
        step_plans.CACHE.clear()  # (the second pass would run as the first one's step plan)
        _step(x, w, c=1.0 + step).backward()
    assert len(checked) > 5


def test_a_rebuilt_pass_hands_gradients_to_non_leaf_inputs_and_leaves_only(rules):
    # ng.grad with respect to an intermediate, and backward(inputs=...) into one: the
    # rebuilt pass hands each its gradient (exactly the rules' values), nothing else.
    a = rng.standard_normal((3, 2))
    got = []
    for step in range(3):
        x = ng.tensor(a, requires_grad=True)
        h = (x * 2.0).tanh()
        loss = (h * h).sum()
        (gh,) = ng.grad(loss, h, retain_graph=True)
        loss.backward(inputs=[h])
        got.append((gh.numpy(), h.grad.numpy(), x.grad))
        assert bool(rules) == (step == 0), step
        rules.clear()
    want = 2 * np.tanh(2 * a)
    for gh, hg, xg in got:
        np.testing.assert_array_equal(gh, got[0][0])
        np.testing.assert_allclose(gh, want, rtol=1e-12)
        np.testing.assert_array_equal(hg, gh)
        assert xg is None  # not an input: no gradient
