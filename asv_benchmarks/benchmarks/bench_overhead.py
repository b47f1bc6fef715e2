"""Per-operation Python overhead: a 200-step Horner polynomial on scalar tensors,
planning the schedule of its gradient at two sizes, issue 13's eager loops, and a new
program's first result."""

import os
import subprocess
import sys
import tempfile

import numpy as np

import numgrad as ng
from numgrad import lazy, primitives
from numgrad.autograd.backward import run_backward
from numgrad.engine.schedule import schedule
from numgrad.plan import schedules

from .workloads import mlp_logits, mlp_weights, w1

COEFFS = list(np.random.default_rng(0).uniform(-1, 1, 200))


def horner(x, coeffs=COEFFS, tensor=ng.tensor):
    """The polynomial with `coeffs` (highest power first) at `x`, by Horner's rule;
    `tensor` makes the first coefficient a tensor (numgrad's, or another library's)."""
    p = tensor(coeffs[0])
    for c in coeffs[1:]:
        p = p * x + c
    return p


class Horner:
    """Recording, and value + gradient, of 398 scalar operations (199 mul + 199 add)."""

    def setup(self):
        self.x = ng.tensor(0.7, requires_grad=True)
        self.time_forward_backward()  # compile (or load) the kernels first

    def time_record(self):
        with ng.no_grad():
            horner(self.x)

    def time_forward_backward(self):
        self.x.grad = None
        horner(self.x).backward()
        self.x.grad.item()

    def track_kernels_forward_backward(self):
        with ng.engine.record() as rec:
            self.time_forward_backward()
        return rec.kernels_launched

    track_kernels_forward_backward.unit = "kernels"


#: Issue 13's small eager MLP: 64 rows, layers 64-64-10, tanh, float64.
EAGER_ROWS, EAGER_SIZES = 64, (64, 64, 10)


def eager_steps(lib, functional, rng) -> tuple:
    """Issue 13's eager loops for `lib` (numgrad or torch: the same names), whose
    ``nn.functional`` is `functional`: W2 (Horner's value and derivative), W1 at
    N = 1e3 (value and gradient), the small MLP's step (loss, backward, and SGD
    under no_grad) on one batch, that step on a new batch of labels at every step
    (as training goes through its data: 1,000 batches in turn, more than the engine
    keeps plans of), that step with a learning rate that decays at every step (a
    Python float), and that step with its loss read before ``backward()``, each a
    function of no arguments."""
    x = lib.tensor(0.7, requires_grad=True)

    def w2():
        x.grad = None
        horner(x, tensor=lib.tensor).backward()
        return x.grad.item()

    a = lib.tensor(rng.uniform(-2, 2, 1000), requires_grad=True)

    def chain():
        a.grad = None
        y = w1(a, lib.tanh, lib.sigmoid, lib.exp, lib.sqrt)
        y.backward()
        return y.item(), a.grad.numpy()

    data = lib.tensor(rng.standard_normal((EAGER_ROWS, EAGER_SIZES[0])))
    labels = lib.tensor(rng.integers(0, EAGER_SIZES[-1], EAGER_ROWS))
    params = [lib.tensor(w.astype(np.float64), requires_grad=True)
              for w in mlp_weights(EAGER_SIZES)]

    def mlp(targets=labels, lr=0.1, read_first=False):
        loss = functional.cross_entropy(mlp_logits(data, params, lib.tanh), targets)
        if read_first:  # (the loss printed, or tested for a stop, before backward)
            loss.item()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= lr * p.grad
                p.grad = None
        return loss.item()

    batches = [lib.tensor(rng.integers(0, EAGER_SIZES[-1], EAGER_ROWS)) for _ in range(1000)]
    turn = iter(range(1 << 62))

    def mlp_new_labels():
        return mlp(batches[next(turn) % len(batches)])

    def mlp_decaying_lr():
        return mlp(lr=0.1 * 0.9999 ** next(turn))

    def mlp_read_first():
        return mlp(read_first=True)

    return w2, chain, mlp, mlp_new_labels, mlp_decaying_lr, mlp_read_first


class Eager:
    """Issue 13's eager loops, without ng.jit (`eager_steps`); `tools/eager_table.py`
    times them beside PyTorch's eager autograd."""

    params = ["W2", "W1 1e3", "MLP", "MLP new labels", "MLP decaying lr",
              "MLP loss read first"]
    param_names = ["workload"]

    def setup(self, workload):
        steps = eager_steps(ng, ng.nn.functional, np.random.default_rng(0))
        self.step = dict(zip(self.params, steps))[workload]
        for _ in range(3):  # kernels compiled (or loaded), schedules prepared
            self.step()

    def time_step(self, workload):
        self.step()


class Planning:
    """Planning a new schedule for the value and gradient of an `n`-step Horner
    polynomial (about 6n nodes), in one piece: time per node stays flat with size."""

    params = [100, 1000]
    param_names = ["n"]

    def setup(self, n):
        self._depth, self._at_once = primitives.MAX_DEPTH, lazy.AT_ONCE
        primitives.MAX_DEPTH = 10**6  # one graph, not realized in pieces
        lazy.AT_ONCE = False  # scalars recorded, not computed when recorded
        x = ng.tensor(0.7, requires_grad=True)
        p = horner(x, np.resize(COEFFS, n + 1))
        (g,) = run_backward(p, None, x, accumulate=False, retain_graph=False,
                            create_graph=False)
        self.targets = [p._buf, g._buf]
        with ng.engine.record() as rec:
            self._plan()
        self.nodes, self.steps = rec.nodes_scheduled, rec.scheduler_steps

    def teardown(self, n):
        primitives.MAX_DEPTH, lazy.AT_ONCE = self._depth, self._at_once

    def _plan(self):
        schedules.CACHE.clear()  # plan afresh, as for a graph never seen
        schedule(self.targets)

    def time_plan(self, n):
        self._plan()

    def track_steps_per_node(self, n):
        return self.steps / self.nodes

    track_steps_per_node.unit = "steps"


FIRST_RESULT = """
import time
start = time.perf_counter()
import numgrad as ng
imported = time.perf_counter()
x = ng.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
y = x
for i in range(5):
    y = (y * 1.5 + 0.25).tanh() * x - y.sigmoid()
y.sum().backward()
x.grad.numpy()
print((time.perf_counter() - imported) * 1e3, (imported - start) * 1e3)
"""


def first_result_ms(mode: str) -> tuple[float, float]:
    """Milliseconds from import to the first value and gradient of a never-seen 20-op
    program, in a new process with an empty kernel cache and CPU kernels `mode`; and
    the import's own milliseconds."""
    with tempfile.TemporaryDirectory(prefix="numgrad-first-") as cache:
        env = dict(os.environ, NUMGRAD_CACHE_DIR=cache, NUMGRAD_CPU_KERNELS=mode)
        out = subprocess.run([sys.executable, "-c", FIRST_RESULT], env=env, check=True,
                             capture_output=True, text=True).stdout
    result, imported = map(float, out.split())
    return result, imported


class FirstResult:
    """A new program's first value and gradient, compiled (numba) or tiered."""

    params = ["numba", "tiered"]
    param_names = ["mode"]
    number, repeat = 1, 3

    def track_ms_after_import(self, mode):
        return first_result_ms(mode)[0]

    track_ms_after_import.unit = "ms"
