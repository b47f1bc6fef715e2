"""The fusion contract, pinned by the engine's own counters (deterministic).

Kernel counts are asserted exactly where the schedule is fixed; compile counts
check the cache: structural keys, memory, disk, and damaged entries.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from budget import slow

import numgrad as ng
from numgrad import lazy, primitives
from numgrad.autograd.backward import run_backward
from numgrad.engine.lowering import MAX_KERNEL_ARRAYS
from numgrad.engine.schedule import schedule
from numgrad.engine.steps import Launch
from numgrad.kernels import cache

rng = np.random.default_rng(0)


def launched(fn):
    with ng.engine.record() as rec:
        fn()
    return rec.kernels_launched


def ten_op_chain(x):
    y = (x * 1.5 + 0.3).tanh() * x.sigmoid()  # 5 ops
    return (y - (-x * x).exp()) / (x * x + 1)  # 5 more (x * x is computed once)


def test_elementwise_chain_is_one_kernel_and_its_gradient_one():
    x = ng.tensor(rng.standard_normal(100), requires_grad=True)
    assert launched(lambda: ten_op_chain(x).numpy()) == 1
    loss = ten_op_chain(x).sum()
    assert launched(lambda: ng.grad(loss, x)) == 1


def test_mse_forward_is_one_kernel():
    x, y = ng.tensor(rng.standard_normal(50)), ng.tensor(rng.standard_normal(50))
    assert launched(lambda: ((x - y) ** 2).mean().numpy()) == 1


def test_softmax_cross_entropy_at_most_three_kernels_each_way():
    logits = ng.tensor(rng.standard_normal((32, 10)), requires_grad=True)
    target = ng.tensor(rng.integers(0, 10, 32))
    loss = ng.nn.functional.cross_entropy(logits, target)
    assert launched(lambda: loss.numpy()) <= 3
    assert launched(lambda: loss.backward()) <= 3


def test_fused_values_equal_unfused_numpy():
    a = rng.standard_normal((4, 5))
    x = ng.tensor(a)
    got = (((x - x.max(axis=1, keepdims=True)).exp()).sum(axis=1) * 2).numpy()
    want = np.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1) * 2
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_explain_shows_kernels_and_runs_nothing():
    x = ng.tensor(rng.standard_normal(8))
    y = ((x - 1.0) ** 2).mean()
    with ng.engine.record() as rec:
        text = ng.explain(y)
    assert rec.kernels_launched == 0 and rec.kernels_compiled == 0
    assert rec.bytes_allocated == 0
    key = ng.device.as_device("cpu").backend.key  # 'cpu' (Numba), or 'numpy' (interpreted)
    assert text.startswith(f"kernel 0 on {key}: sum of") and "def kernel(" in text
    assert not y._buf.is_realized


def test_rerun_compiles_nothing_and_keys_are_structural(numba_cpu):
    def program(x, s):
        return ((x * s).sin() + 1.25).sum()

    # Compile (or load) once per loop skeleton: serial for small launches, parallel
    # with lanes for large ones (`cpu.variant`).
    program(ng.tensor(rng.standard_normal(7)), 0.5).numpy()
    program(ng.tensor(rng.standard_normal(10**6)), 0.5).numpy()
    with ng.engine.record() as rec:
        program(ng.tensor(rng.standard_normal(7)), 0.5).numpy()
        program(ng.tensor(rng.standard_normal(7)), 0.25).numpy()  # another constant
        program(ng.tensor(rng.standard_normal(10)), 0.5).numpy()  # other sizes
        program(ng.tensor(rng.standard_normal(10**6 + 3)), 0.5).numpy()
    assert rec.kernels_compiled == 0 and rec.disk_hits == 0
    assert rec.cache_hits == rec.kernels_launched == 4


def weight_used(n: int, shape: tuple[int, int, int] = (3, 4, 2)):
    """A weight used `n` times, each time through a matmul, so that each of its
    gradient's `n` terms is an array of its own: the weight, the loss, and the
    gradient by NumPy."""
    data = np.random.default_rng(37)
    rows, inner, cols = shape
    x, w = data.standard_normal((rows, inner)), data.standard_normal((inner, cols))
    scales = 1.0 + np.arange(n) / n

    def loss(w):
        xt, total = ng.tensor(x), 0.0
        for c in scales:
            total = total + ((xt * float(c)) @ w).tanh().sum()
        return total

    want = sum(c * x.T @ (1 - np.tanh(c * x @ w) ** 2) for c in scales)
    return ng.tensor(w, requires_grad=True), loss, want


def kernels(plan) -> tuple[list[int], set]:
    """Each launch's arrays (read or written), and the distinct programs launched."""
    launches = [s for s in plan.steps if isinstance(s, Launch)]
    return [len(s.inputs) + len(s.outputs) + len(s.tables) for s in launches], \
        {s.program for s in launches}


@pytest.fixture
def one_graph(monkeypatch):
    """A long loop recorded as one graph: not cut for depth, scalars not computed at once."""
    monkeypatch.setattr(primitives, "MAX_DEPTH", 10**6)
    monkeypatch.setattr(sys.modules["numgrad.autograd.backward"], "CUT_DEPTH", 10**6)
    monkeypatch.setattr(lazy, "AT_ONCE", False)


@pytest.mark.slow
def test_a_value_used_800_times_sums_its_gradient_by_kernels_of_one_structure(one_graph):
    # The terms were summed by kernels of up to 258 arrays (and of 1,600 under ng.jit:
    # minutes of compiling); now by a chain of kernels that each add about 30 of them to
    # the partial sum before it: the same programs for 400 and 800 uses, but the last.
    programs = []
    for n in (400, 800):
        w, loss, want = weight_used(n)
        (g,) = run_backward(loss(w), None, w, accumulate=False, retain_graph=False,
                            create_graph=False)  # (ng.grad would compute it as a plan)
        arrays, kinds = kernels(schedule([g._buf])[0])
        assert max(arrays) <= MAX_KERNEL_ARRAYS
        programs.append(kinds)
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    assert len(programs[0]) == len(programs[1]) <= 6
    assert len(programs[1] - programs[0]) <= 2


@pytest.mark.slow
def test_a_value_used_800_times_compiles_as_many_kernels_as_400_uses(one_graph, numba_cpu,
                                                                     monkeypatch):
    # Each length in a fresh in-memory cache: every distinct program is looked up once,
    # compiled or loaded from the disk cache. (The loss is computed too: its 800 terms
    # are summed by pieces of a chain as well. Shapes of their own: no plan, schedule
    # or backward recipe of another test is reused.)
    looked_up = []
    for n in (400, 800):
        monkeypatch.setattr(cache, "_memory", {})
        w, loss, want = weight_used(n, (2, 5, 3))
        with ng.engine.record() as rec:
            (g,) = ng.grad(loss(w), w)
            np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
        looked_up.append(rec.kernels_compiled + rec.disk_hits)
    assert looked_up[0] == looked_up[1] <= 12, looked_up


@pytest.mark.slow
def test_a_jitted_plan_of_a_value_used_800_times_keeps_kernels_narrow(monkeypatch):
    # ng.jit's plan is final (merged whole where that stores nothing more): its kernels
    # are bounded and repeat too.
    plans = []

    def final_schedule(targets, final=False):
        plan, slots = schedule(targets, final)
        plans.append(plan)
        return plan, slots

    monkeypatch.setattr(sys.modules["numgrad.capture.trace"], "schedule", final_schedule)
    programs = []
    for n in (400, 800):
        w, loss, want = weight_used(n)
        step = ng.jit(lambda w, loss=loss: ng.grad(loss(w), w)[0])
        np.testing.assert_allclose(step(w).numpy(), want, rtol=1e-12)
        arrays, kinds = kernels(plans[-1])
        assert max(arrays) <= MAX_KERNEL_ARRAYS and len(arrays) > n // 32
        programs.append(kinds)
        np.testing.assert_allclose(step(w).numpy(), want, rtol=1e-12)  # a replay
    assert len(programs[0]) == len(programs[1]) <= 6


@pytest.mark.slow
def test_parallel_kernels_match_serial(monkeypatch, numba_cpu):
    a = rng.standard_normal((6, 50))
    x = ng.tensor(a)
    programs = {
        "elementwise": (lambda t: (t * 2).exp(), lambda v: np.exp(v * 2)),
        "full sum": (lambda t: t.sum(), lambda v: v.sum()),
        "row max": (lambda t: t.max(axis=1) + 1, lambda v: v.max(axis=1) + 1),
        "column sum": (lambda t: t.sum(axis=0), lambda v: v.sum(axis=0)),
    }
    monkeypatch.setattr(numba_cpu, "WAKE_NS", 0)
    for name, (fn, ref) in programs.items():
        np.testing.assert_allclose(fn(x).numpy(), ref(a), rtol=1e-12, err_msg=name)


def _run(code: str, cache: str) -> str:
    # These tests are about the Numba target's disk cache, whatever the suite runs on.
    env = dict(os.environ, NUMGRAD_CACHE_DIR=cache, NUMGRAD_CPU_KERNELS="numba")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


PROGRAM = """
    import numpy as np, numgrad as ng
    x = ng.tensor(np.linspace(-1, 1, 11), requires_grad=True)
    with ng.engine.record() as rec:
        loss = ((x * 1.5).tanh() * x).sum()
        loss.backward()
        values = (loss.item(), x.grad.numpy().sum())
    print(rec.kernels_compiled, rec.disk_hits, repr(values))
"""


def test_new_process_with_the_same_cache_compiles_nothing(tmp_path):
    compiled, disk, first = _run(PROGRAM, str(tmp_path)).split(" ", 2)
    assert int(compiled) > 0 and int(disk) == 0
    compiled, disk, second = _run(PROGRAM, str(tmp_path)).split(" ", 2)
    assert int(compiled) == 0 and int(disk) > 0
    assert first == second


@pytest.mark.slow
def test_truncated_cache_files_cost_a_recompile_not_a_crash(tmp_path):
    first = _run(PROGRAM, str(tmp_path)).split(" ", 2)[2]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for path in files:
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 3])
    compiled, _, second = _run(PROGRAM, str(tmp_path)).split(" ", 2)
    assert int(compiled) > 0 and second == first


@pytest.mark.slow
def test_two_processes_compiling_at_once_both_get_correct_values(tmp_path):
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(tmp_path), NUMGRAD_CPU_KERNELS="numba")
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(PROGRAM)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outputs]
    values = {out.strip().split(" ", 2)[2] for out, _ in outputs}
    assert len(values) == 1


def test_debug_fusion_logs_why_a_group_was_cut(tmp_path):
    code = """
        import numpy as np, numgrad as ng
        x = ng.tensor(np.ones(4))
        y = x.exp() * 3  # y's producer is consumed by two kernels below
        ng.realize(y.sum(), (y @ ng.ones((4, 2))))
    """
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(tmp_path), NUMGRAD_DEBUG="fusion")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "cut at" in result.stderr and "matmul" in result.stderr
    assert "kernels_launched=" in result.stderr  # every level logs each realization


@pytest.mark.parametrize("fusion", [slow("0"), "1"])
def test_fusion_switch_gives_the_same_values(tmp_path, fusion):
    code = """
        import numpy as np, numgrad as ng
        x = ng.tensor(np.linspace(0.1, 2, 12).reshape(3, 4), requires_grad=True)
        with ng.engine.record() as rec:
            loss = (x.log() * x.sum(axis=0)).std() + x.var()
            loss.backward()
            result = (loss.item(), x.grad.numpy().tolist())
        print(rec.kernels_launched, repr(result))
    """
    env = dict(os.environ, NUMGRAD_CACHE_DIR=str(tmp_path), NUMGRAD_FUSION=fusion)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    kernels, result = out.stdout.split(" ", 1)
    value, grad = eval(result)

    anp = pytest.importorskip("autograd.numpy")
    from autograd import value_and_grad

    def loss(a):
        return anp.std(anp.log(a) * anp.sum(a, axis=0)) + anp.var(a)

    want_value, want_grad = value_and_grad(loss)(np.linspace(0.1, 2, 12).reshape(3, 4))
    np.testing.assert_allclose(value, want_value, rtol=1e-12,
                               err_msg=f"float64 loss, NUMGRAD_FUSION={fusion}, rtol 1e-12")
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12,
                               err_msg=f"float64 gradient, NUMGRAD_FUSION={fusion}, rtol 1e-12")
    # the switch really is off: unfused, every operation is a kernel (40, against 10 fused)
    assert (int(kernels) > 20) == (fusion == "0"), kernels
