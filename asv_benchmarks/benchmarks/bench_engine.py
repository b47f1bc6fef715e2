"""What the engine does for each workload: kernels launched and bytes allocated per
call (warm), and kernels compiled from an empty cache in a new process.

These counts are deterministic, so asv's graphs show a fusion or caching regression
(a kernel more per step, a buffer that stopped being reused, a key that stopped being
structural) as a step, where the timings only get noisier.
"""

import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

import numgrad as ng

from .bench_fusion import w1_numgrad, w1b_numgrad
from .bench_overhead import horner
from .workloads import ADAM, MLP_SIZES, ROSEN_N, digits_like, mlp_step, rosenbrock, w1


def _chain(fn, n):
    x = ng.tensor(np.random.default_rng(0).uniform(-2, 2, n), requires_grad=True)

    def step():
        x.grad = None
        fn(x)
    return step


def _by_grad(n):
    """W1's value and gradient by ``ng.grad`` (no ``.grad``), in a loop."""
    x = ng.tensor(np.random.default_rng(0).uniform(-2, 2, n), requires_grad=True)

    def step():
        y = w1(x, ng.tanh, ng.sigmoid, ng.exp, ng.sqrt)
        (g,) = ng.grad(y, x)  # (the value read after: it is computed with the gradient)
        return y.item(), g.numpy()
    return step


def _horner():
    x = ng.tensor(0.7, requires_grad=True)

    def step():
        x.grad = None
        horner(x).backward()
        x.grad.item()
    return step


def _hessian():
    x = ng.tensor(np.random.default_rng(0).uniform(-1.5, 1.5, ROSEN_N))
    return lambda: ng.functional.hessian(rosenbrock, x, vectorize=True).realize()


def _demo_start():
    """A new jitted training step (the demo's: zero biases, Adam) called three times:
    what a training run's first steps compile."""
    from numgrad.demo import init_mlp, train_step

    x, y = digits_like()
    x, y = ng.tensor(x[:64]), ng.tensor(y[:64])

    def run():
        params = init_mlp(MLP_SIZES, np.random.default_rng(0))
        optimizer = ng.optim.Adam(params, **ADAM)
        step = ng.jit(lambda x, y: train_step(x, y, params, optimizer))
        for _ in range(3):
            step(x, y)[0].item()
    return run


#: workload name -> a function making its step (a callable running one call of it)
WORKLOADS = {
    "W1 n=1e5": lambda: _chain(w1_numgrad, 10**5),
    "W1b n=1e5": lambda: _chain(w1b_numgrad, 10**5),
    "W1 n=1e5 by ng.grad": lambda: _by_grad(10**5),
    "MLP training step": lambda: mlp_step(*digits_like()),
    "Horner 398 ops": _horner,
    "Rosenbrock Hessian": _hessian,
    "MLP first 3 jitted steps": _demo_start,
}

COLD = """
    import sys
    sys.path.insert(0, {root!r})
    import numgrad as ng
    from benchmarks.bench_engine import WORKLOADS
    step = WORKLOADS[{name!r}]()
    with ng.engine.record() as rec:
        step()
    print(rec.kernels_compiled)
"""


class EngineWork:
    params = list(WORKLOADS)
    param_names = ["workload"]
    timeout = 300

    def setup(self, name):
        self.step = WORKLOADS[name]()
        self.step()  # compile (or load) the kernels first

    def _record(self):
        with ng.engine.record() as rec:
            self.step()
        return rec

    def track_kernels_launched(self, name):
        return self._record().kernels_launched

    track_kernels_launched.unit = "kernels"

    def track_bytes_allocated(self, name):
        return self._record().bytes_allocated

    track_bytes_allocated.unit = "bytes"

    def track_steps_replayed(self, name):
        """Backward passes of the warm step run as the plan of a step recorded as before
        (`numgrad.plan.step_plans`): one per pass of a training step, none where its rules
        run."""
        for _ in range(2):  # (the second pass on the tape keeps the plan)
            self.step()
        return self._record().steps_replayed

    track_steps_replayed.unit = "passes"

    def track_kernels_compiled_cold(self, name):
        """Distinct kernels the first call compiles in a new process, empty cache."""
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ, NUMGRAD_CACHE_DIR=tempfile.mkdtemp(prefix="numgrad-cold-"))
        code = textwrap.dedent(COLD.format(root=root, name=name))
        out = subprocess.run([sys.executable, "-c", code], env=env, check=True,
                             capture_output=True, text=True).stdout
        return int(out.split()[-1])

    track_kernels_compiled_cold.unit = "kernels"
