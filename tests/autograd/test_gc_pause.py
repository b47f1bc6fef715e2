"""The cyclic garbage collector is paused while numgrad differentiates
(`numgrad.autograd.collector`), and resumes as it was, whatever happens in between."""

import gc
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import numgrad as ng


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def _loss(seen: list):
    def loss(x):
        seen.append(gc.isenabled())
        return (ng.tanh(x) * x).sum()
    return loss


def test_a_transform_runs_its_function_and_backward_pass_without_the_collector():
    seen = []
    value, grad = ng.value_and_grad(_loss(seen))(np.arange(3.0))
    assert seen == [False] and gc.isenabled()
    x = np.arange(3.0)
    np.testing.assert_allclose(grad, np.tanh(x) + x / np.cosh(x) ** 2, rtol=1e-12)


def test_nested_transforms_resume_the_collector_once_the_outermost_returns():
    seen = []

    def inner(x):
        return ng.grad(_loss(seen))(x).sum()
    ng.grad(inner)(ng.tensor(np.arange(3.0)))
    assert seen == [False] and gc.isenabled()


def test_an_error_in_the_function_resumes_the_collector():
    def fails(x):
        raise ValueError("in the user's function")
    with pytest.raises(ValueError, match="user's function"):
        ng.grad(fails)(1.0)
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off():
    gc.disable()
    ng.grad(_loss([]))(np.arange(3.0))
    assert not gc.isenabled()


class _Seen(ng.autograd.Function):
    """The identity, noting whether the collector runs during its backward pass."""

    during: list = []

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        _Seen.during.append(gc.isenabled())
        return g


def test_backward_and_autograd_grad_run_without_the_collector():
    _Seen.during = []
    x = ng.tensor([1.0, 2.0], requires_grad=True)
    _Seen.apply(x).sum().backward()
    ng.autograd.grad(_Seen.apply(x).sum(), x)
    assert _Seen.during == [False, False] and gc.isenabled()


def test_transforms_in_threads_resume_the_collector_when_the_last_one_returns():
    barrier, seen = threading.Barrier(2), []

    def loss(x):
        barrier.wait(timeout=30)  # both threads inside a transform at once
        seen.append(gc.isenabled())
        result = (x * x).sum()
        barrier.wait(timeout=30)
        return result

    threads = [threading.Thread(target=ng.grad(loss), args=(np.arange(3.0),))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert seen == [False, False] and gc.isenabled()


@pytest.mark.slow
def test_numgrads_graphs_leave_no_cyclic_garbage():
    """What pausing relies on: reference counting frees every graph (the collector
    finds nothing to collect after value-and-gradient calls, backward passes, ng.jit
    and a recurrence deep enough to be cut and replayed)."""
    def loss(w):
        h = ng.zeros(4)
        for t in range(40):
            h = ng.tanh(h * w + 0.1 * t)
        return (h * h).sum()

    def backward(w):
        x = ng.tensor(w, requires_grad=True)
        loss(x).backward()
        return x.grad.numpy()

    jitted = ng.jit(ng.value_and_grad(loss))
    calls = [lambda w: ng.value_and_grad(loss)(w), backward,
             lambda w: jitted(ng.tensor(w))]
    w = np.linspace(0.1, 0.4, 4)
    for call in calls:  # compiled and remembered first
        for _ in range(3):
            call(w)
    gc.collect()
    gc.disable()
    for call in calls:
        for _ in range(5):
            call(w)
    gc.set_debug(gc.DEBUG_SAVEALL)  # (what it finds is kept in gc.garbage, to look at)
    try:
        gc.collect()
        ours = [o for o in gc.garbage if type(o).__module__.startswith("numgrad")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert not ours  # (other threads, xdist's own, may leave cycles of their own meanwhile)


def test_the_environment_can_leave_the_collector_running():
    code = ("import gc, numgrad as ng\n"
            "seen = []\n"
            "ng.grad(lambda x: (seen.append(gc.isenabled()), (x * x).sum())[1])(2.0)\n"
            "print(seen)\n")
    env = dict(os.environ, NUMGRAD_PAUSE_GC="0", NUMGRAD_CPU_KERNELS="numpy")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[True]"
