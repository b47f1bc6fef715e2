"""Shared test configuration: the target under test, hypothesis profiles, the compile
bill.

``NUMGRAD_TEST_DEVICE=cuda`` runs the tests on the CUDA target: every creation
function without a device then makes CUDA tensors (with ``NUMBA_ENABLE_CUDASIM=1``,
in Numba's simulator), and the same assertions against NumPy hold there.

The suite's CPU kernels are compiled in the foreground (``NUMGRAD_CPU_KERNELS=numba``)
unless the environment names another mode: its assertions count compiles and compare
results bit for bit between runs, which the default mode (``tiered``: interpreted until
the worker has compiled a kernel, SPEC §7) leaves to timing. `tests/kernels/test_tiered.py`
tests the default in processes of its own; `.ci/run` runs the suite in the other modes.
"""

import os

os.environ.setdefault("NUMGRAD_CPU_KERNELS", "numba")  # (before numgrad reads it)

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import numgrad as ng  # noqa: E402

ng.set_default_device(os.environ.get("NUMGRAD_TEST_DEVICE", "cpu"))

# Each new program shape compiles a kernel (0.1-0.8 s), so CI runs few examples;
# NUMGRAD_HYPOTHESIS=thorough runs many more.
settings.register_profile(
    "ci", max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("NUMGRAD_HYPOTHESIS", "ci"))


@pytest.fixture
def numba_cpu(monkeypatch):
    """Run the test's CPU work on the Numba target, whatever ``NUMGRAD_CPU_KERNELS`` says:
    for tests of compiling and caching (the interpreter compiles nothing)."""
    from numgrad.kernels import cpu

    monkeypatch.setattr(ng.device.as_device("cpu"), "_backend", cpu)
    return cpu


@pytest.fixture(scope="module", params=["stepwise", "unrolled"] if
                os.environ.get("NUMGRAD_TEST_DEVICE", "cpu") == "cpu" else ["stepwise"])
def replay_mode(request):
    """A module's tests twice: prepared replays run step by step, and written out from
    the first (`numgrad.plan.prepared.UNROLL_AT`). (Plans are prepared on the CPU
    only: on CUDA, once.)"""
    from numgrad.plan import prepared

    default = prepared.UNROLL_AT
    prepared.UNROLL_AT = 10**9 if request.param == "stepwise" else 1
    yield request.param
    prepared.UNROLL_AT = default


def _bill() -> list[int]:
    """This process's kernels compiled, loaded from the disk cache and launched."""
    from numgrad.engine.counters import total

    return [total.kernels_compiled, total.disk_hits, total.kernels_launched]


#: the bills of pytest-xdist's workers (``-n``), as each finishes
_worker_bills: list[list[int]] = []


def pytest_sessionfinish(session):
    """An xdist worker sends its compile bill to the controller."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["numgrad_bill"] = _bill()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _worker_bills.append(node.workeroutput.get("numgrad_bill", [0, 0, 0]))


def pytest_terminal_summary(terminalreporter):
    """Report the suite's compile bill (every worker's, under ``-n``): kernels compiled
    vs loaded from the disk cache."""
    compiled, disk, launched = map(sum, zip(_bill(), *_worker_bills))
    terminalreporter.write_line(
        f"numgrad kernels: {compiled} compiled, {disk} loaded from the disk cache, "
        f"{launched} launched")
