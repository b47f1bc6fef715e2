"""Deep graphs (long loops) and the kernels they compile: a depth-bound realization
that cuts a loop's graph somewhere new each time compiles a new kernel each time, so
deep backward passes are cut in repeating places (where the loop repeats,
`autograd.pieces`; else by depth, `autograd.backward.CUT_DEPTH`), and kernels read one
buffer once however many views recorded its reads. Counts come from
the engine's counters (deterministic); values are compared with NumPy (float64, rtol
1e-12). The long loops (seconds of compiling each) are marked slow: `.ci/run` runs
them.
"""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from budget import slow
from numpy.testing import assert_allclose

import numgrad as ng
from numgrad import depth, lazy, primitives
from numgrad.__main__ import bench_module
from numgrad.autograd.backward import CUT_DEPTH, STACK_AT, _needed
from numgrad.autograd.pieces import pieces
from numgrad.engine.lowering import MAX_KERNEL_ARRAYS
from numgrad.engine.schedule import schedule
from numgrad.engine.steps import Launch
from numgrad.kernels import cache, interpreter
from numgrad.lazy import MAX_DEPTH
from numgrad.plan import recipes

RTOL = 1e-12


def recurrence(steps: int, w: float = 0.8):
    """h <- tanh(h * w + x) from h = 0, x of two elements: three nodes deep per step."""
    w = ng.tensor(w, requires_grad=True)
    x = ng.tensor(np.array([0.3, -0.2]))
    hs = [ng.zeros(2)]
    for _ in range(steps):
        hs.append((hs[-1] * w + x).tanh())
    return w, hs


def numpy_recurrence(steps: int, w: float = 0.8):
    """The states, and d sum(h_last) / dw by forward mode."""
    x, h, dh = np.array([0.3, -0.2]), np.zeros(2), np.zeros(2)
    hs = [h]
    for _ in range(steps):
        a = h * w + x
        h, dh = np.tanh(a), (1 - np.tanh(a) ** 2) * (dh * w + h)
        hs.append(h)
    return hs, dh.sum()


def launches(targets) -> list[Launch]:
    plan, _ = schedule([t._buf for t in targets])
    return [s for s in plan.steps if isinstance(s, Launch)]


def test_one_buffer_read_through_many_equal_views_is_one_input():
    # w (shape ()) is broadcast by a new expand node at each step: one input, not 80,
    # and those views do not fill the kernel (80 steps, 160 operations: one kernel).
    w, x = ng.tensor(0.5), ng.tensor(np.array([0.3, -0.2]))
    h = ng.zeros(2)
    for _ in range(80):
        h = h * w + x
    (kernel,) = launches([h])
    assert len(kernel.inputs) == 2  # w through its views, and x
    want = np.zeros(2)
    for _ in range(80):
        want = want * 0.5 + np.array([0.3, -0.2])
    assert_allclose(h.numpy(), want, rtol=RTOL)


def test_kernels_stop_merging_at_max_kernel_arrays():
    x = ng.tensor(np.linspace(-1.0, 1.0, 5))
    outs = [(x * (k + 1.0)).exp() for k in range(100)]
    steps = launches(outs)
    assert len(steps) > 1
    assert all(len(s.inputs) + len(s.outputs) <= MAX_KERNEL_ARRAYS for s in steps)
    # A final plan (ng.jit) stores what it is asked for: its kernels are bounded too.
    final, _ = schedule([t._buf for t in outs], final=True)
    assert all(len(s.inputs) + len(s.outputs) <= MAX_KERNEL_ARRAYS for s in final.steps)
    assert len(final.steps) == len(steps)
    for k, out in enumerate(outs):
        assert_allclose(out.numpy(), np.exp(np.linspace(-1.0, 1.0, 5) * (k + 1)), rtol=RTOL)


@pytest.mark.parametrize("steps, stored",
                         [(10, False), slow(60, True)])
def test_a_deep_pass_stores_the_values_it_reads_once(steps, stored):
    # 10 steps (30 deep): the backward kernels recompute the states, fused. 60 steps
    # (180 deep, over CUT_DEPTH): they are computed once, before the pass, band by band.
    assert (3 * steps > CUT_DEPTH) == stored and 3 * steps < MAX_DEPTH
    w, hs = recurrence(steps)
    hs[-1].sum().backward()
    assert hs[steps // 2]._buf.is_realized == stored
    want_hs, want_grad = numpy_recurrence(steps)
    assert_allclose(w.grad.item(), want_grad, rtol=RTOL)
    assert_allclose(hs[steps // 2].numpy(), want_hs[steps // 2], rtol=RTOL)


def kernel_structures(steps: int) -> int:
    """The kernel structures a `steps`-long recurrence's backward pass looks up that
    were not in the in-memory cache (compiled, or loaded from disk)."""
    w, hs = recurrence(steps)
    with ng.engine.record() as rec:
        hs[-1].sum().backward()
        got = w.grad.item()
    assert_allclose(got, numpy_recurrence(steps)[1], rtol=1e-11)
    return rec.kernels_compiled + rec.disk_hits


@pytest.mark.slow
def test_a_deep_recurrences_backward_pass_compiles_few_kernel_structures(monkeypatch):
    # Every kernel structure is looked up once in a fresh in-memory cache: compiled or
    # loaded from disk. Cut where depth first ran out, 300 steps used 74 structures
    # (and compiled them for about 4 minutes); cut in repeating places, 25; with the
    # stored values computed band by band, 19; with w broadcast by one expand (no
    # reshape before it), whose bands start at other nodes of a step, 23; with no kernel
    # of more than MAX_KERNEL_ARRAYS arrays (each cut's sum of about 64 gradient terms
    # was one kernel of 66 arrays; now pieces of at most 32, and a shorter last one), 25,
    # compiled in less time (8.7 s against 10.7 s). A loop three times longer then needs
    # few more (2; 33 when all its stored values were computed in one realization).
    # Cut a piece of 6 steps at a time where the pass repeats, and forward at the same
    # place of a step each time, 16 (and 3 more: its forward cuts, one every 85 steps,
    # fall at other places of a piece).
    monkeypatch.setattr(cache, "_memory", {})
    assert kernel_structures(300) <= 16
    assert kernel_structures(900) <= 3


@pytest.mark.slow
def test_a_deep_pass_rebuilt_from_its_recipe_cuts_where_it_was_recorded():
    # The same 150-step loop three times: the first pass runs the rules and cuts its
    # gradients together when they grow deeper than CUT_DEPTH; the rebuilt passes cut at
    # the same points, so they launch the same kernels and compile none.
    recipes.CACHE.clear()
    counts, grads = [], []
    for _ in range(3):
        w, hs = recurrence(150, w=0.7)
        with ng.engine.record() as rec:
            hs[-1].sum().backward()
            grads.append(w.grad.item())
        counts.append((rec.kernels_launched, rec.kernels_compiled))
    assert counts[1] == counts[2] == (counts[0][0], 0)
    assert grads[0] == grads[1] == grads[2]
    assert_allclose(grads[0], numpy_recurrence(150, w=0.7)[1], rtol=RTOL)



@pytest.mark.slow
def test_a_value_read_at_every_step_sums_its_gradient_the_same_way_for_any_length(
        monkeypatch, numba_cpu):
    # w is read by a product at every step: its gradient has one contribution per step
    # (x_t.T @ ones). Added one after another, they were a chain cut into kernels of
    # about 30 terms, and the last piece's length, so its kernel, changed with the
    # loop's length. Stacked (STACK_AT at a time) and summed over the stacking axis,
    # they make the same kernels for any length: 40 steps look up the backward pass's
    # kernels, 100 and 57 steps none (compiled or loaded from disk).
    monkeypatch.setattr(cache, "_memory", {})
    rng = np.random.default_rng(3)
    w0, looked_up = rng.standard_normal((3, 4)), []
    for steps in (40, 100, 57):
        xs = rng.standard_normal((steps, 2, 3))
        w = ng.tensor(w0, requires_grad=True)
        loss = sum((ng.tensor(x) @ w).sum() for x in xs)
        loss.item()  # (the forward pass's kernels: its scalar sum depends on the length)
        with ng.engine.record() as rec:
            loss.backward()
            got = w.grad.numpy()
        assert_allclose(got, np.broadcast_to(xs.sum((0, 1))[:, None], (3, 4)), rtol=RTOL)
        looked_up.append(rec.kernels_compiled + rec.disk_hits)
    assert looked_up[0] > 0 and looked_up[1:] == [0, 0]


@pytest.mark.parametrize("steps", [3, slow(STACK_AT), slow(2 * STACK_AT + 5)])
def test_stacked_gradient_contributions_differentiate_again(steps):
    # A Hessian-vector product through the stacked sums (second order) of
    # sum_t sin(w * c_t).sum(), against d/dw <grad, v> = sum_t -sin(w c_t) c_t**2 v,
    # and the first order's value.
    rng = np.random.default_rng(steps)
    w0, v, cs = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal((steps, 5))
    w = ng.tensor(w0, requires_grad=True)
    loss = sum((w * ng.tensor(c)).sin().sum() for c in cs)
    (g,) = ng.grad(loss, w, create_graph=True)
    (hv,) = ng.grad((g * ng.tensor(v)).sum(), w)
    assert_allclose(g.numpy(), (np.cos(w0 * cs) * cs).sum(0), rtol=RTOL)
    assert_allclose(hv.numpy(), (-np.sin(w0 * cs) * cs**2 * v).sum(0), rtol=RTOL)


def rk4_loss(np_, steps: int):
    """RK4 (the programs benchmark's) through `steps` steps of ``tanh(y @ W1) @ W2 + b``
    from fixed states (batch 6, state 2, hidden 4): the mean squared final state, a
    function of (W1, W2, b), in the NumPy namespace `np_` (numgrad's or autograd's)."""
    bench_module()  # (the checkout's asv_benchmarks on sys.path)
    from benchmarks.programs import rk4

    y0 = np.random.default_rng(5).standard_normal((6, 2))

    def loss(W1, W2, b):
        y = rk4(lambda y: np_.tanh(y @ W1) @ W2 + b, y0, 1.0 / steps, steps)
        return (y * y).mean()
    return loss


def test_a_loop_of_any_length_launches_the_same_kernels(monkeypatch):
    # Cut by depth counts, the neural ODE's pieces fell at other places of its step for
    # other lengths: 49, 47 and 48 kernel structures for 50, 200 and 400 steps (issue
    # 37), two of them not in all three. Cut where its nodes repeat, a piece per step,
    # and its forward graph cut at the same place of a step each time: the same
    # kernels for every length, but one that a loop whose last step holds a forward
    # cut (every 10 steps here, from the first) does not need. Each length is run
    # from nothing remembered, on the interpreter, which launches the programs the
    # compiled targets would.
    monkeypatch.setattr(ng.device.as_device("cpu"), "_backend", interpreter)
    launched: set = set()
    kernel = interpreter.kernel
    monkeypatch.setattr(interpreter, "kernel",
                        lambda program, variant: launched.add(program) or kernel(program, variant))
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal((2, 4)) / 2, rng.standard_normal((4, 2)) / 2,
               rng.standard_normal(2) / 10]
    programs = []
    for steps in (20, 45, 93, 51):
        ng.plan.clear()
        launched.clear()
        value, grads = ng.value_and_grad(rk4_loss(ng, steps), argnum=(0, 1, 2))(*weights)
        want = autograd.value_and_grad(rk4_loss(anp, steps), argnum=(0, 1, 2))(*weights)
        assert_allclose(value, want[0], rtol=RTOL)
        for got, w in zip(grads, want[1]):
            assert_allclose(got, w, rtol=RTOL)
        programs.append(frozenset(launched))
    assert programs[0] == programs[1] == programs[2]
    assert programs[3] < programs[0] and len(programs[0] - programs[3]) == 1


def test_pieces_follow_the_loops_step():
    # A step of the loop h <- tanh(h * w + x) is four nodes (the expand of w, *, +,
    # tanh); a piece is at least 24 nodes, so 6 steps; the last 1 to 6 steps are a
    # piece each; the node before the loop (w's leaf) is the first piece, the one
    # after it (the sum) the last.
    for steps, single in ((60, 6), (61, 1), (64, 4)):
        w, hs = recurrence(steps)
        number = pieces(_needed([hs[-1].sum()._node], None))
        assert number is not None
        counts = np.bincount(number).tolist()
        assert counts == [1] + [24] * ((steps - single) // 6) + [4] * single + [1]
        assert number.tolist() == sorted(number.tolist())


@pytest.mark.slow
def test_a_forward_cut_falls_at_the_same_place_of_each_step(monkeypatch):
    # The loop's graph grows deeper than MAX_DEPTH every 10 steps: each time it is
    # realized up to the same product of its step, not wherever depth ran out, as
    # many operations after the last cut; the value read after is the same.
    made, cuts = [], []
    make, cut_point = lazy.make, depth.cut_point
    monkeypatch.setattr(primitives.lazy, "make",
                        lambda *args: made.append(None) or make(*args))
    monkeypatch.setattr(depth, "cut_point",
                        lambda chain: cuts.append((len(made), cut_point(chain))) or cuts[-1][1])
    rng = np.random.default_rng(1)
    weights = [ng.tensor(rng.standard_normal(s) / 2) for s in ((2, 4), (4, 2), (2,))]
    got = rk4_loss(ng, 60)(*weights).item()
    assert len(cuts) == 5
    assert {(p.op.name, p.shape) for _, p in cuts} == {("matmul", (6, 2))}
    assert len(set(np.diff([at for at, _ in cuts[1:]]))) == 1  # (the first: from the start)
    want = rk4_loss(np, 60)(*[w.numpy() for w in weights])
    assert_allclose(got, want, rtol=RTOL)


def test_a_cut_works_depths_out_again():
    # A buffer's depth is fixed when made: once a source is realized, it is too deep
    # until worked out again, and is not cut for a depth it does not have.
    x = ng.tensor(np.ones(3))
    for _ in range(200):
        x = x * 1.01
    middle = x
    for _ in range(50):
        x = x + 1.0
    middle.numpy()
    assert x._buf.depth == 251  # (a constant operand is 1 deep)
    assert depth.refresh(x._buf) == 51
    y = x
    for _ in range(10):
        y = y * 0.5
    assert y._buf.depth == 61 and not x._buf.is_realized
    assert_allclose(y.numpy(), (1.01 ** 200 + 50) * 0.5 ** 10, rtol=RTOL)


def test_tracing_for_jit_cuts_nothing(monkeypatch):
    # Nothing is computed while ng.jit traces: the cut is not tried at each operation
    # past MAX_DEPTH (working depths out at each was quadratic: 500 s for RK4's trace).
    refreshed, longest_chain = [], depth.longest_chain
    monkeypatch.setattr(depth, "longest_chain",
                        lambda buf: refreshed.append(buf) or longest_chain(buf))
    rng = np.random.default_rng(2)
    weights = [ng.tensor(rng.standard_normal(s) / 2) for s in ((2, 4), (4, 2), (2,))]
    loss = rk4_loss(ng, 30)
    assert_allclose(ng.jit(loss)(*weights).item(), loss(*weights).item(), rtol=RTOL)
    assert len(refreshed) > 0  # (the eager call's)
    refreshed.clear()
    ng.jit(rk4_loss(ng, 31))(*weights).item()
    assert refreshed == []


@pytest.mark.slow
def test_a_deep_pass_through_freed_nodes_says_so():
    # The first 150 steps' saved values are freed by the first backward pass: the
    # second, deep and repeating, is refused by the freed node's rule, as a shallow one.
    w, hs = recurrence(300)
    hs[150].sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        hs[-1].sum().backward()
