"""First-use cost (issue 37, "No compile stall"): what a user waits for the first time
they run a new function, in a new process with an empty kernel cache.

- `CELLS`: ten small numeric functions as notebook cells are written (n = 1000 float64
  elements), each a loss and the array to take its value and gradient at by
  ``ng.value_and_grad``.
- `rk4_loss`: the issue's neural ODE, RK4 through `steps` steps of a tanh MLP field
  (batch 64, state 2, hidden 32), the loss the mean of the final state squared, its
  gradient by the field's four weights.
- `cold_report` measures them in the process it runs in (it must be a new one, with
  an empty ``NUMGRAD_CACHE_DIR``); `run_cold` starts such a process and returns the
  report it prints (JSON). ``bench_first_use`` and ``tools/first_use_table.py`` are
  built on it.

The CPU kernel mode is the environment's (``NUMGRAD_CPU_KERNELS``, numgrad's default
where it is not set: `benchmarks.ENVIRONMENT_MODE`) unless `run_cold` is given one.
For each cell the report has the first call's wall time and the time from the end of
that call to the end of the first call that ran within `FAST` times the cell's steady
time, the least time of its calls (`settle`: calls go on until every kernel the call
launches runs compiled, or, on the interpreter-only target, for a short window; at
most `SETTLE` seconds).

(No ``time_``/``track_`` names here: asv would take them for benchmarks.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import numpy as np

from .programs import rk4

#: elements of each cell's arrays
N = 1000
#: a call "at compiled speed" runs within this factor of the cell's steady time
FAST = 1.5
#: seconds a cell is called for, at most, after its first call
SETTLE = 10.0
#: after the first call that compiled and interpreted nothing, calls go on for this
#: long (and at least `MORE_CALLS` calls) to find the steady time
MORE_SECONDS, MORE_CALLS = 0.3, 10


# --- the ten cells -----------------------------------------------------------------
# Each is ``make(ng) -> (loss, w)``: ``ng.value_and_grad(loss)(w)`` is the cell.

def logistic_regression(ng):
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((N // 10, 10)), rng.integers(0, 2, N // 10) * 2.0 - 1

    def loss(w):
        return ng.logaddexp(0.0, -y * (X @ w)).mean()
    return loss, rng.standard_normal(10)


def softplus_logsumexp(ng):
    def loss(x):
        top = x.max()
        return ng.log1p(ng.exp(x)).sum() + top + ng.log(ng.exp(x - top).sum())
    return loss, np.random.default_rng(2).standard_normal(N)


def rosenbrock(ng):
    def loss(x):
        return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    return loss, np.random.default_rng(3).uniform(-1, 1, N)


def gaussian_log_likelihood(ng):
    data = np.random.default_rng(4).normal(1.0, 2.0, N)

    def loss(theta):
        mu, log_sigma = theta[0], theta[1]
        z = (data - mu) / ng.exp(log_sigma)
        return -(-0.5 * z ** 2 - log_sigma - 0.5 * np.log(2 * np.pi)).sum()
    return loss, np.array([0.0, 0.0])


def tanh_layer(ng):
    rng = np.random.default_rng(5)
    X, target = rng.standard_normal((N // 10, 10)), rng.standard_normal((N // 10, 10))

    def loss(W):
        return ((ng.tanh(X @ W + 0.1) - target) ** 2).mean()
    return loss, rng.standard_normal((10, 10)) / 3


def horner(ng):
    coeffs = [0.5, -1.0, 0.25, 2.0, -0.75, 1.5, 0.1, -0.3]

    def loss(x):
        p = coeffs[0]
        for c in coeffs[1:]:
            p = p * x + c
        return p.sum()
    return loss, np.random.default_rng(6).uniform(-1, 1, N)


def cosine_similarity(ng):
    other = np.random.default_rng(7).standard_normal(N)

    def loss(x):
        return (x * other).sum() / (ng.sqrt((x * x).sum()) * np.linalg.norm(other))
    return loss, np.random.default_rng(8).standard_normal(N)


def huber(ng):
    target, delta = np.random.default_rng(9).standard_normal(N), 1.0

    def loss(x):
        r = ng.abs(x - target)
        return ng.where(r < delta, 0.5 * r ** 2, delta * (r - 0.5 * delta)).mean()
    return loss, 2 * np.random.default_rng(10).standard_normal(N)


def normalisation(ng):
    weights = np.random.default_rng(11).standard_normal(N)

    def loss(x):
        z = (x - x.mean()) / x.std()
        return (z * weights).sum() + (z ** 4).mean()
    return loss, np.random.default_rng(12).gamma(2.0, size=N)


def softmax_cross_entropy(ng):
    labels = np.eye(10)[np.random.default_rng(13).integers(0, 10, N // 10)]

    def loss(logits):
        top = logits.max(axis=1, keepdims=True)
        log_p = logits - top - ng.log(ng.exp(logits - top).sum(axis=1, keepdims=True))
        return -(log_p * labels).sum(axis=1).mean()
    return loss, np.random.default_rng(14).standard_normal((N // 10, 10))


CELLS = {"logistic regression": logistic_regression, "softplus + logsumexp": softplus_logsumexp,
         "Rosenbrock": rosenbrock, "Gaussian log likelihood": gaussian_log_likelihood,
         "tanh layer": tanh_layer, "Horner polynomial": horner,
         "cosine similarity": cosine_similarity, "Huber loss": huber,
         "normalisation": normalisation, "softmax cross entropy": softmax_cross_entropy}


# --- the neural ODE ----------------------------------------------------------------

def rk4_loss(ng, steps: int, batch: int = 64, hidden: int = 32):
    """``(loss, weights)``: RK4 through `steps` steps (dt = 1 / steps) of the field
    ``tanh(y @ W1 + b1) @ W2 + b2`` from a fixed batch of 2-D states, the loss the mean
    of the final state squared, a function of the four weights."""
    rng = np.random.default_rng(0)
    y0 = rng.standard_normal((batch, 2))
    weights = [rng.standard_normal((2, hidden)) / np.sqrt(2), np.zeros(hidden),
               rng.standard_normal((hidden, 2)) / np.sqrt(hidden), np.zeros(2)]
    dt = 1.0 / steps

    def loss(W1, b1, W2, b2):
        def field(y):
            return ng.tanh(y @ W1 + b1) @ W2 + b2
        y = rk4(field, y0, dt, steps)
        return (y * y).mean()
    return loss, weights


# --- measuring, in a new process -----------------------------------------------------

def settle(ng, call, first_end: float, seconds: float) -> dict:
    """Call `call` until its kernels run compiled, at most `seconds` after `first_end`
    (the end of its first call, by ``time.perf_counter``): its steady time (the least
    of its calls), the seconds from `first_end` to the end of the first call within
    `FAST` times that, and whether it settled: whether a call ran with every kernel
    compiled (or on the interpreter-only target) before the deadline. Unsettled, the
    least time is not the compiled speed, and ``to_speed_s`` is None: more than
    `seconds`."""
    from numgrad.device import target_name

    interpreting = target_name("cpu") == "interpreter"  # nothing will ever compile
    deadline, ready, calls = first_end + seconds, None, []
    while True:
        with ng.engine.record() as rec:
            start = time.perf_counter()
            call()
            end = time.perf_counter()
        calls.append((end - first_end, end - start))
        if ready is None and (interpreting or rec.kernels_compiled + rec.kernels_interpreted == 0):
            ready = (end, len(calls))
        if end > deadline or (ready is not None and end > ready[0] + MORE_SECONDS
                              and len(calls) >= ready[1] + MORE_CALLS):
            break
    steady = min(took for _, took in calls)
    to_speed = next(at for at, took in calls if took <= FAST * steady)
    return {"steady_s": steady, "to_speed_s": to_speed if ready else None,
            "calls": len(calls), "settled": ready is not None}


def _first(ng, call) -> tuple[dict, float]:
    """Time `call`'s first run, counting what it compiled: its report, and its end."""
    with ng.engine.record() as rec:
        start = time.perf_counter()
        call()
        end = time.perf_counter()
    return {"first_s": end - start, "kernels_compiled": rec.kernels_compiled,
            "kernels_interpreted": rec.kernels_interpreted}, end


def _measure(ng, call, seconds: float) -> dict:
    report, end = _first(ng, call)
    if seconds > 0:
        report.update(settle(ng, call, end, seconds))
    return report


def cold_report(cells: bool = True, rk4: int | None = None, jit: int | None = None,
                seconds: float = SETTLE) -> dict:
    """Measure, in this process (new, with an empty kernel cache), in this order: the
    ten `CELLS` if `cells`, the RK4 loss at ``steps=rk4`` eagerly and at ``steps=jit``
    under ``ng.jit``. Each part's first value-and-gradient call is timed (and its
    kernels compiled and interpreted counted), then the calls that follow (`settle`,
    at most `seconds` each; none if 0). A part sees the kernels of the parts before it:
    run one part per process to measure each from an empty cache."""
    start = time.perf_counter()
    import numgrad as ng
    from numgrad.device import target_name

    report = {"cpu_target": target_name("cpu"), "import_s": time.perf_counter() - start,
              "cache": os.environ.get("NUMGRAD_CACHE_DIR")}
    if cells:
        report["cells"] = {}
        for name, make in CELLS.items():
            loss, w = make(ng)
            step = ng.value_and_grad(loss)
            report["cells"][name] = _measure(ng, lambda step=step, w=w: step(w), seconds)
        cell_reports = report["cells"].values()
        report["cells_first_total_s"] = sum(c["first_s"] for c in cell_reports)
        if seconds > 0:  # (a cell that did not settle counts as `seconds`: at least)
            report["cells_to_speed_max_s"] = max(
                seconds if c["to_speed_s"] is None else c["to_speed_s"] for c in cell_reports)
            report["cells_unsettled"] = [name for name, c in report["cells"].items()
                                         if not c["settled"]]
            report["cells_steady_total_s"] = sum(c["steady_s"] for c in cell_reports)
    if rk4:
        loss, weights = rk4_loss(ng, rk4)
        step = ng.value_and_grad(loss, argnum=(0, 1, 2, 3))
        report["rk4"] = {"steps": rk4, **_measure(ng, lambda: step(*weights), seconds)}
    if jit:
        loss, weights = rk4_loss(ng, jit)
        step = ng.jit(ng.value_and_grad(loss, argnum=(0, 1, 2, 3)))
        tensors = [ng.tensor(w) for w in weights]

        def call():
            value, grads = step(*tensors)
            ng.realize(value, *grads)
            return value.item(), [g.numpy() for g in grads]
        report["jit"] = {"steps": jit, **_measure(ng, call, seconds)}
    report["total_s"] = time.perf_counter() - start
    worker = getattr(sys.modules.get("numgrad.kernels.tiered"), "_worker", None)
    report["worker_pid"] = worker and worker._process.pid
    return report


SCRIPT = """
import json, sys
sys.path.insert(0, {root!r})
from benchmarks.first_use import cold_report
print(json.dumps(cold_report(**{kwargs!r})))
"""


COLD_RUN = """
import sys, time
start = time.perf_counter()
sys.path.insert(0, {root!r})
from benchmarks.programs import gradient
run = gradient({library!r}, {name!r})
calls = 0
while calls < {calls} if {calls} else time.perf_counter() - start < {seconds}:
    run()
    calls += 1
worker = getattr(sys.modules.get("numgrad.kernels.tiered"), "_worker", None)
print(calls, time.perf_counter() - start, worker and worker._process.pid)
"""


def cold_run(name: str, seconds: float = 2.0) -> dict:
    """Real program `name` (`programs.PROGRAMS`) run as a short experiment runs, each
    library in a new process, timed from its first line (imports included): HIPS
    autograd's calls of value and gradient in its first `seconds`, then as many on
    numgrad from an empty kernel cache, in numgrad's default CPU mode. Its seconds
    (``autograd_s``, ``numgrad_s``), the ``calls`` and the ``ratio``."""
    from numgrad.device import DEFAULT_CPU_KERNELS

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    report = {}
    calls = 0
    for library in ("autograd", "numgrad"):
        code = COLD_RUN.format(root=root, library=library, name=name, calls=calls,
                               seconds=seconds)
        with tempfile.TemporaryDirectory(prefix="numgrad-cold-run-") as cache:
            env = dict(os.environ, NUMGRAD_CACHE_DIR=cache,
                       NUMGRAD_CPU_KERNELS=DEFAULT_CPU_KERNELS)
            done = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                                  capture_output=True, text=True)
            ran, took, worker = done.stdout.split()
            _stop(None if worker == "None" else int(worker))
        calls = int(ran)
        report[f"{library}_s"] = float(took)
    report.update(calls=calls, ratio=report["numgrad_s"] / report["autograd_s"])
    return report


def _stop(pid: int | None) -> None:
    """Stop the compile worker `pid` (compiling for a next run that never comes), so
    that the next measurement has the cores to itself."""
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run_cold(mode: str | None = None, timeout: float | None = None, **kwargs) -> dict:
    """`cold_report(**kwargs)` in a new process with an empty kernel cache (a temporary
    folder, removed after), its CPU kernel mode ``NUMGRAD_CPU_KERNELS=mode`` if given
    (else the environment's, `ENVIRONMENT_MODE`, else numgrad's default): the report,
    with the process's wall time (``process_s``: interpreter start to exit, including
    any wait for background work at exit). Its compile worker, which would go on
    compiling for a next run, is stopped (`_stop`)."""
    from numgrad.device import DEFAULT_CPU_KERNELS

    from . import ENVIRONMENT_MODE

    # (named always: the process imports this package, which pins numba where no mode
    # is named)
    mode = mode or ENVIRONMENT_MODE or DEFAULT_CPU_KERNELS
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = textwrap.dedent(SCRIPT.format(root=root, kwargs=kwargs))
    with tempfile.TemporaryDirectory(prefix="numgrad-first-use-") as cache:
        env = dict(os.environ, NUMGRAD_CACHE_DIR=cache, NUMGRAD_CPU_KERNELS=mode)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, timeout=timeout)
        took = time.perf_counter() - start
        if not done.returncode:  # (its compile worker would go on for the next run, in
            _stop(json.loads(done.stdout.strip().splitlines()[-1])["worker_pid"])  # this)
    if done.returncode:
        raise RuntimeError(f"cold_report({kwargs}) in mode {mode} failed "
                           f"(exit code {done.returncode}):\n{done.stderr[-4000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["mode"] = mode
    report["process_s"] = took
    return report
