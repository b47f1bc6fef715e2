"""Threads (SPEC §9): recording, backward and realization in several threads at once give
each thread the values one thread alone gets; grad mode and ``ng.engine.record()`` are
per thread; a pending graph shared by threads is computed once.

Every thread runs under `concurrent.futures` with a timeout: a timeout is a deadlock.
The interpreter (``NUMGRAD_CPU_KERNELS=numpy``) and the CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1 NUMGRAD_TEST_DEVICE=cuda``) run these tests too.
"""

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor, TimeoutError

import numpy as np
import pytest

import numgrad as ng
from numgrad.engine import counters

THREADS = 4
DEADLOCK = 120  # seconds a thread may take before the test calls it a deadlock
#: The simulator runs each CUDA thread of a kernel as a Python thread: fewer steps there.
SIMULATOR = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
STEPS, MATMULS = (2, 4) if SIMULATOR else (4, 20)


@pytest.fixture(autouse=True)
def _switch_often():
    """Let threads interleave at every few bytecodes, not every 5 ms, so races show
    (not in the simulator, whose own threads would then crawl)."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(interval if SIMULATOR else 1e-5)
    yield
    sys.setswitchinterval(interval)


def in_threads(fn, args):
    """``[fn(a) for a in args]``, each call in its own thread, all running at once."""
    with ThreadPoolExecutor(len(args)) as pool:
        futures = [pool.submit(fn, a) for a in args]
        try:
            return [f.result(timeout=DEADLOCK) for f in futures]
        except TimeoutError:
            pytest.fail(f"a thread did not finish within {DEADLOCK} s: deadlock")


def train(seed: int, steps: int = STEPS, barrier: threading.Barrier | None = None):
    """A few SGD steps of a tiny MLP on data of its own; every loss and parameter."""
    rng = np.random.default_rng(seed)
    x = ng.tensor(rng.normal(size=(16, 3)))
    y = ng.tensor(rng.normal(size=(16, 1)))
    w1 = ng.tensor(rng.normal(size=(3, 5)) * 0.5, requires_grad=True)
    b1 = ng.tensor(np.zeros(5), requires_grad=True)
    w2 = ng.tensor(rng.normal(size=(5, 1)) * 0.5, requires_grad=True)
    opt = ng.optim.SGD([w1, b1, w2], lr=0.1, momentum=0.9)
    if barrier is not None:
        barrier.wait(timeout=DEADLOCK)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (((x @ w1 + b1).tanh() @ w2 - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.numpy() for p in (w1, b1, w2)]


def assert_same(got, expected):
    (losses, params), (ref_losses, ref_params) = got, expected
    np.testing.assert_array_equal(losses, ref_losses)
    for p, ref in zip(params, ref_params):
        np.testing.assert_array_equal(p, ref)


def test_four_threads_training_at_once_get_one_threads_values():
    expected = [train(seed) for seed in range(THREADS)]
    barrier = threading.Barrier(THREADS)
    got = in_threads(lambda seed: train(seed, barrier=barrier), list(range(THREADS)))
    for g, e in zip(got, expected):
        assert_same(g, e)


def test_grad_mode_is_per_thread_and_no_grad_threads_run_beside_recording_ones():
    expected = train(7)
    x = ng.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    inside = threading.Barrier(THREADS)

    def work(i):
        if i % 2:  # training, with grad mode on, while other threads are in no_grad
            inside.wait(timeout=DEADLOCK)
            assert ng.is_grad_enabled()
            return train(7)
        with ng.no_grad():
            inside.wait(timeout=DEADLOCK)
            values = []
            for k in range(20):
                y = (x * k).sin().sum(axis=0)
                assert not ng.is_grad_enabled() and not y.requires_grad and y.grad_fn is None
                values.append(y.numpy())
            return values

    results = in_threads(work, list(range(THREADS)))
    for i, result in enumerate(results):
        if i % 2:
            assert_same(result, expected)
        else:
            ref = [np.sin(x.detach().numpy() * k).sum(axis=0) for k in range(20)]
            np.testing.assert_allclose(result, ref, rtol=1e-12)
    assert ng.is_grad_enabled()


def test_a_thread_that_ends_in_no_grad_leaves_grad_mode_as_it_is_elsewhere():
    """Grad mode reads a count of the threads that turned it off (`grad_mode._off`): a
    thread that ends with it off, and nested or repeated switches, change no other
    thread's mode."""
    in_threads(lambda i: ng.set_grad_enabled(False), [0])
    with ng.no_grad():
        with ng.no_grad():
            ng.set_grad_enabled(False)
            assert not ng.is_grad_enabled()
        assert not ng.is_grad_enabled()
    assert ng.is_grad_enabled()
    x = ng.tensor(2.0, requires_grad=True)
    assert (x * 3).requires_grad
    assert in_threads(lambda i: ng.is_grad_enabled(), [0]) == [True]


def shared_graph():
    """A pending graph (matmuls, tanh between) and its value, from NumPy."""
    a = np.random.default_rng(0).normal(size=(8, 8)) * 0.3
    h, ref = ng.tensor(a), a
    for _ in range(MATMULS):
        h, ref = (h @ ng.tensor(a)).tanh(), np.tanh(ref @ a)
    return h, ref


def test_threads_realizing_one_pending_graph_compute_each_buffer_once():
    h, ref = shared_graph()
    with ng.engine.record() as alone:
        shared_graph()[0].numpy()
    barrier = threading.Barrier(THREADS)

    def read(_):
        barrier.wait(timeout=DEADLOCK)
        with ng.engine.record() as rec:
            value = h.numpy()
        return value, rec.kernels_launched

    before = counters.total.kernels_launched
    results = in_threads(read, list(range(THREADS)))
    for value, _ in results:
        np.testing.assert_allclose(value, ref, rtol=1e-10)
        np.testing.assert_array_equal(value, results[0][0])
    # One thread computed the graph; the others found it computed.
    assert sorted(n for _, n in results) == [0] * (THREADS - 1) + [alone.kernels_launched]
    assert counters.total.kernels_launched - before == alone.kernels_launched


def test_threads_reading_different_consumers_of_one_pending_graph():
    # Each thread realizes its own consumer of the shared graph: the shared buffers are
    # computed once, by whichever thread comes first, the rest read them.
    h, ref = shared_graph()
    h2, _ = shared_graph()
    with ng.engine.record() as alone:
        for i in range(THREADS):
            (h2 + i).numpy()
    barrier = threading.Barrier(THREADS)

    def read(i):
        barrier.wait(timeout=DEADLOCK)
        with ng.engine.record() as rec:
            return (h + i).numpy(), rec.kernels_launched

    before = counters.total.kernels_launched
    results = in_threads(read, list(range(THREADS)))
    for i, (value, _) in enumerate(results):
        np.testing.assert_allclose(value, ref + i, rtol=1e-10)
    launched = counters.total.kernels_launched - before
    assert launched == alone.kernels_launched
    # Each thread's record counts its own launches only: they add up to the total.
    assert sum(n for _, n in results) == launched


def test_record_counts_only_its_own_threads_kernels():
    x = ng.tensor(np.arange(6.0))
    started, done = threading.Event(), threading.Event()

    def busy(_):
        with ng.engine.record() as rec:
            started.set()
            for k in range(30):
                (x * k + 1).numpy()
        done.set()
        return rec.kernels_launched

    with ng.engine.record() as rec:
        with ThreadPoolExecutor(1) as pool:
            future = pool.submit(busy, None)
            assert started.wait(DEADLOCK) and done.wait(DEADLOCK), "deadlock"
            theirs = future.result(timeout=DEADLOCK)
    assert theirs == 30
    assert rec.kernels_launched == 0 and rec.bytes_allocated == 0


def test_threads_compiling_the_same_new_kernel_get_one_kernel():
    # A structure no other test runs (int32 maximum, sign, abs, square): every
    # thread needs the same new kernel at once, and it is built once.
    a = np.arange(1, 9, dtype=np.int32)
    x = ng.tensor(a)
    barrier = threading.Barrier(THREADS)

    def run(i):
        barrier.wait(timeout=DEADLOCK)
        with ng.engine.record() as rec:
            return (ng.maximum(x * 3 - i * 7, 2).sign() * (x - 9).abs() ** 2).numpy(), rec

    results = in_threads(run, list(range(THREADS)))
    for i, (value, rec) in enumerate(results):
        np.testing.assert_array_equal(
            value, np.sign(np.maximum(a * 3 - i * 7, 2)) * np.abs(a - 9) ** 2)
        assert rec.kernels_launched == 1
    assert sum(r.kernels_compiled + r.disk_hits for _, r in results) <= 1


@pytest.mark.slow
@pytest.mark.skipif(SIMULATOR, reason="hundreds of simulated kernels: too slow there")
def test_threads_backward_through_deep_graphs_at_once():
    def deep(seed):
        rng = np.random.default_rng(seed)
        w = ng.tensor(0.9, requires_grad=True)
        x = ng.tensor(rng.normal(size=3))
        h = ng.zeros(3)
        for _ in range(300):  # past the depth bound: realizes while recording
            h = (h * w + x).tanh()
        h.sum().backward()
        return h.numpy(), w.grad.item()

    expected = [deep(s) for s in range(2)]
    got = in_threads(deep, [0, 1])
    for (h, g), (ref_h, ref_g) in zip(got, expected):
        np.testing.assert_array_equal(h, ref_h)
        assert g == ref_g


def test_threads_sharing_pending_tensors_get_one_threads_values():
    """Threads that read pending tensors of another thread's (computed by whichever
    reads one first) and differ in a constant run plans of one structure: each gets
    its own constant (a prepared plan replayed with no constants of its own ran with
    those the last rebinding left in its argument lists)."""
    rs = np.random.default_rng(11)
    a, wa = rs.standard_normal((12, 5)), rs.standard_normal((5, 3))
    w, base = ng.tensor(wa, requires_grad=True), ng.tensor(a)
    steps = 3 if SIMULATOR else 30

    def work(t, shared):
        out = []
        for k in range(steps):
            loss = (ng.tanh(shared[k] @ w) * (t + 1.0)).sum()
            (g,) = ng.grad(loss, w)
            out.append((loss.item(), g.numpy()))
        return out

    def pending():
        return [ng.sin(base * (0.1 * (k + 1))) + 1.0 for k in range(steps)]

    expected = [work(t, pending()) for t in range(THREADS)]
    shared = pending()  # (not computed yet)
    got = in_threads(lambda t: work(t, shared), list(range(THREADS)))
    for runs, ref in zip(got, expected):
        for (loss, g), (ref_loss, ref_g) in zip(runs, ref):
            np.testing.assert_allclose(loss, ref_loss, rtol=1e-12)
            np.testing.assert_allclose(g, ref_g, rtol=1e-12)
